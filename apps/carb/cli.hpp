// The subcommand registry of the carb CLI. Each apps/carb/cmd_*.cpp registers
// itself with a static Registrar: it declares its flags and calls the library.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

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

struct Registrar {
  explicit Registrar(Command c) { commands().push_back(std::move(c)); }
};

/// Adds the common `--format` option restricted to `choices`; default is choices.front().
inline CLI::Option* add_format(CLI::App& app, std::string& fmt, std::vector<std::string> choices) {
  fmt = choices.front();
  return app.add_option("--format", fmt, "Output format")
      ->check(CLI::IsMember(choices))
      ->capture_default_str();
}

}  // namespace carb::cli
