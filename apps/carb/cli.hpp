// The subcommand registry of the carb CLI. Each apps/carb/cmd_*.cpp registers
// itself with a static Registrar: it declares its flags and calls the library.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "carb/error.hpp"
#include "carb/model.hpp"

namespace carb::cli {

struct Command {
  std::string name;
  std::string help;
  /// Adds the subcommand's options to `app` and sets its callback.
  std::function<void(CLI::App& app)> setup;
};

std::vector<Command>& commands();
/// Puts decimal_number on every integer and floating-point option of `app` and its subcommands.
void decimal_numbers_only(CLI::App& app);
/// The whole command line as typed (recorded in provenance).
std::string& command_line();
/// `j` as JSON text (`indent` as nlohmann's dump), each byte that is not UTF-8 (a path's, an
/// argument's) written as U+FFFD: a file name with a byte 0xFF ended `--format json` in an internal
/// error after the work was done (hundred-and-thirty-first hostile pass).
inline std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}
/// Text from the user's input made one printable line: control bytes, C1 controls and bytes that
/// are not UTF-8 become \xNN escapes (errors, and problem lines that quote cells or paths).
std::string printable(std::string_view text);

struct Registrar {
  explicit Registrar(Command c) { commands().push_back(std::move(c)); }
};

/// The one rule for a number typed on the command line, the same as for a number in a CSV cell
/// (csv::parse_number): decimal, spaces around it ignored, no '+' sign, no hex. Returns the text
/// trimmed (an integer's canonical decimal form) or nullopt with `why` set. CLI11 alone read an
/// integer flag's "010" as octal 8 and "0x10" as 16, where a cell's "010" is 10 (twenty-third
/// hostile pass: `predict --batch 010` answered batch 8).
inline std::optional<std::string> decimal_text(const std::string& text, bool integral, std::string& why) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (integral) {
    long long v = 0;
    const auto [end, ec] = std::from_chars(b, e, v);
    if (ec == std::errc::result_out_of_range) return why = "'" + text + "' is out of range", std::nullopt;
    if (s.empty() || ec != std::errc() || end != e) return why = "'" + text + "' is not a whole decimal number", std::nullopt;
    return std::to_string(v);
  }
  double v = 0;
  const auto [end, ec] = std::from_chars(b, e, v);
  if (ec == std::errc::result_out_of_range) return why = "'" + text + "' is out of range", std::nullopt;
  if (s.empty() || ec != std::errc() || end != e) return why = "'" + text + "' is not a decimal number", std::nullopt;
  return std::string(s);
}

/// --util all | none | sample:P  ->  Protocol::util_sample (profile and plan).
inline double util_share(const std::string& v) {
  if (v == "all") return 1.0;
  if (v == "none") return 0.0;
  if (v.rfind("sample:", 0) == 0) {
    std::string why;
    if (const auto num = decimal_text(v.substr(7), false, why)) {
      const double p = std::strtod(num->c_str(), nullptr);
      if (p >= 0 && p <= 1) return p;
    }
  }
  throw InputError("--util must be all, none or sample:P with P between 0 and 1, not '" + v + "'");
}

/// decimal_text as a CLI11 transform; main() puts it on every integer and floating-point option.
inline CLI::Validator decimal_number(bool integral) {
  return CLI::Validator(
      [integral](std::string& text) -> std::string {
        std::string why;
        const auto canonical = decimal_text(text, integral, why);
        if (!canonical) return why;
        text = *canonical;
        return {};
      },
      "");
}

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
        std::string why;
        const auto canonical = decimal_text(text, false, why);
        if (!canonical) return why;
        const double v = std::strtod(canonical->c_str(), nullptr);
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
        std::string why;
        const auto canonical = decimal_text(text, false, why);
        if (!canonical) return why;
        const double v = std::strtod(canonical->c_str(), nullptr);
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
