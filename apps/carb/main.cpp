// carb's entry point: builds the CLI from the registered subcommands and is the one
// place that catches errors, printing a single line and returning non-zero.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <iostream>

#include <unistd.h>

#include "carb/error.hpp"
#include "cli.hpp"

namespace carb::cli {
std::vector<Command>& commands() {
  static std::vector<Command> all;
  return all;
}
std::string& command_line() {
  static std::string line;
  return line;
}
}  // namespace carb::cli

int main(int argc, char** argv) {
  // XGBoost's OpenMP threads spin while waiting, which on a busy 2-core machine made training
  // many times slower. Passive waiting costs nothing there; the profiler keeps OpenMP's default
  // so that measurements match what LibTorch users see. libgomp reads the variable when it is
  // loaded, before main, so carb re-executes itself once with it set (unless the user set it).
  if ((argc < 2 || std::string(argv[1]) != "profile") && !std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: then run with OpenMP's default
  }
  CLI::App app{
      "carb - predict what a CNN configuration costs to run (energy, latency, peak memory)\n"
      "and screen configuration spaces against deployment budgets."};
  for (int i = 0; i < argc; ++i) carb::cli::command_line() += (i ? " " : "") + std::string(argv[i]);
  app.require_subcommand(1);
  app.set_version_flag("--version", "carb 0.1.0");
  auto& cmds = carb::cli::commands();
  std::sort(cmds.begin(), cmds.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (auto& c : cmds) c.setup(*app.add_subcommand(c.name, c.help));
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(cmds.begin(), cmds.end(), [&](const auto& c) { return c.name == argv[1]; })) {
    std::string known;
    for (const auto& c : cmds) known += (known.empty() ? "" : ", ") + c.name;
    std::cerr << "carb: error: unknown subcommand '" << argv[1] << "' (known: " << known << ")\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "carb: error: " << e.what() << "\n";
    return 2;
  } catch (const carb::Error& e) {
    std::cerr << "carb: error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "carb: internal error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
