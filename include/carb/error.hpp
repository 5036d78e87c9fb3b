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
/// A run was stopped by a signal (SIGINT, SIGTERM) after keeping everything it had finished.
/// An error so that `carb profile ... && next step` does not go on with partial results: main
/// exits with 128 + signal_number, as a shell reports a process killed by that signal.
struct Interrupted : Error {
  Interrupted(int signal, const std::string& what) : Error(what), signal_number(signal) {}
  int signal_number;
};

}  // namespace carb
