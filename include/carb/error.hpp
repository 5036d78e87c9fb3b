// Typed errors thrown by the carb library. The CLI catches them once, in main,
// and prints a single line; library code never exits.
#pragma once
#include <stdexcept>
#include <string>

namespace carb {

namespace detail {
/// what() is a C string: a NUL from the user's input (a CSV field) would cut the message short.
inline std::string without_nul(std::string s) {
  for (std::size_t i = s.find('\0'); i != std::string::npos; i = s.find('\0', i + 4)) s.replace(i, 1, "\\x00");
  return s;
}
}  // namespace detail

/// Base of every error carb throws on purpose.
struct Error : std::runtime_error {
  explicit Error(const std::string& what) : std::runtime_error(detail::without_nul(what)) {}
  explicit Error(const char* what) : std::runtime_error(what) {}
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
