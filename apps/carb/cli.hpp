// The subcommand registry of the carb CLI. Each apps/carb/cmd_*.cpp registers
// itself with a static Registrar: it declares its flags and calls the library.
#pragma once
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "carb/model.hpp"

namespace carb::cli {

struct Command {
  std::string name;
  std::string help;
  /// Adds the subcommand's options to `app` and sets its callback.
  std::function<void(CLI::App& app)> setup;
};

std::vector<Command>& commands();
/// The whole command line as typed (recorded in provenance).
std::string& command_line();
/// Text from the user's input made one printable line: control bytes, C1 controls and bytes that
/// are not UTF-8 become \xNN escapes (errors, and problem lines that quote cells or paths).
std::string printable(std::string_view text);

struct Registrar {
  explicit Registrar(Command c) { commands().push_back(std::move(c)); }
};

/// The one validator of every numeric flag: a finite number in [lo, hi]. CLI::Range alone lets
/// "nan" through (every comparison with NaN is false) and "inf" whenever hi is infinite, so a
/// flag declared with this cannot hand the library a NaN, an infinity or an out-of-range value.
inline CLI::Validator in_range(double lo, double hi) {
  auto show = [](double v) {
    std::ostringstream s;
    s << v;
    return s.str();
  };
  return CLI::Validator(
      [lo, hi, show](std::string& text) -> std::string {
        const char* b = text.c_str();
        char* end = nullptr;
        const double v = std::strtod(b, &end);
        if (end == b || *end != '\0') return "'" + text + "' is not a number";
        if (!std::isfinite(v)) return "'" + text + "' is not a finite number";
        if (v < lo || v > hi) return text + " is outside [" + show(lo) + ", " + show(hi) + "]";
        return {};
      },
      "NUMBER in [" + show(lo) + ", " + show(hi) + "]");
}

/// A --confidence: one of the levels a bundle calibrates (carb::kConfidenceLevels), refused otherwise
/// before any work (a level between them used to answer the next stored one's interval).
inline CLI::Validator confidence_level() {
  std::ostringstream s;
  for (double l : kConfidenceLevels) s << (s.tellp() > 0 ? "|" : "") << l;
  const std::string levels = s.str();
  return CLI::Validator(
      [levels](std::string& text) -> std::string {
        const char* b = text.c_str();
        char* end = nullptr;
        const double v = std::strtod(b, &end);
        if (end == b || *end != '\0') return "'" + text + "' is not a number";
        for (double l : kConfidenceLevels)
          if (v == l) return {};
        return text + " is not a calibrated level; use one of " + levels;
      },
      levels);
}

/// Adds the common `--format` option restricted to `choices`; default is choices.front().
inline CLI::Option* add_format(CLI::App& app, std::string& fmt, std::vector<std::string> choices) {
  fmt = choices.front();
  return app.add_option("--format", fmt, "Output format")
      ->check(CLI::IsMember(choices))
      ->capture_default_str();
}

}  // namespace carb::cli
