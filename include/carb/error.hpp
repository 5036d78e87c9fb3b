// Typed errors thrown by the carb library. The CLI catches them once, in main,
// and prints a single line; library code never exits.
#pragma once
#include <stdexcept>
#include <string>

namespace carb {

/// Base of every error carb throws on purpose.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// A flag, configuration or preset the user gave is invalid.
struct InputError : Error {
  using Error::Error;
};
/// A dataset or CSV file is malformed (message names file and line).
struct DataError : Error {
  using Error::Error;
};
/// A model bundle is missing, corrupted or of another schema.
struct ModelError : Error {
  using Error::Error;
};
/// Profiling could not run (backend unavailable, store unusable).
struct MeasureError : Error {
  using Error::Error;
};

}  // namespace carb
