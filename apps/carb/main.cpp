// carb's entry point: builds the CLI from the registered subcommands and is the one
// place that catches errors, printing a single line and returning non-zero.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <iostream>
#include <mutex>
#include <regex>

#include <unistd.h>

#include "carb/error.hpp"
#include "carb/version.hpp"
#include "carb/warning.hpp"
#include "util/utf8.hpp"
#include "cli.hpp"

namespace carb::cli {
std::vector<Command>& commands() {
  static std::vector<Command> all;
  return all;
}
// Every integer and floating-point option of every (sub)command reads its numbers by one rule
// (decimal_text), added here rather than at each of the 100-odd declarations.
void decimal_numbers_only(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    const std::string type = o->get_type_name();
    if (type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0)
      o->transform(decimal_number(true));
    else if (type.rfind("FLOAT", 0) == 0)
      o->transform(decimal_number(false));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) decimal_numbers_only(*sub);
}
std::string& command_line() {
  static std::string line;
  return line;
}

// Error text can carry bytes from the user's input (a field, a path): control bytes, C1 controls
// and bytes that are not UTF-8 are escaped so that one error is one printable line on any
// terminal; well-formed UTF-8 (a path in Greek) is kept.
std::string printable(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t n = c < 0x80 ? (c >= 0x20 && c != 0x7f ? 1 : 0) : detail::utf8_sequence_length(text, i);
    if (n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) n = 0;  // C1 controls act on terminals
    if (n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
      ++i;
    }
  }
  return out;
}

// An error as one line a person can read: printable, and with the middle of a very long message
// left out (fifteenth hostile pass: a 10 MB cell in a configuration file was echoed whole, a
// 10 MB "one-line" error). The start names the file, line and column; the end holds the hint.
std::string error_line(std::string_view text) {
  constexpr std::size_t kHead = 1500, kTail = 500;
  if (text.size() <= kHead + kTail + 100) return printable(text);
  auto on_boundary = [&](std::size_t i) {  // never inside a UTF-8 sequence
    while (i > 0 && (static_cast<unsigned char>(text[i]) & 0xc0) == 0x80) --i;
    return i;
  };
  const std::size_t head = on_boundary(kHead), tail = on_boundary(text.size() - kTail);
  return printable(text.substr(0, head)) + " [... " + std::to_string(tail - head) + " bytes left out ...] " +
         printable(text.substr(tail));
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
  // Recorded in JSON provenance, which holds UTF-8 only (hundred-and-thirty-first hostile pass: a
  // file name with a byte 0xFF ended `carb profile` in an internal error).
  for (int i = 0; i < argc; ++i) carb::cli::command_line() += (i ? " " : "") + carb::detail::replace_invalid_utf8(argv[i]);
  app.require_subcommand(1);
  app.set_version_flag("--version", "carb " CARB_VERSION_STRING);
  auto& cmds = carb::cli::commands();
  std::sort(cmds.begin(), cmds.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (auto& c : cmds) c.setup(*app.add_subcommand(c.name, c.help));
  carb::cli::decimal_numbers_only(app);
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(cmds.begin(), cmds.end(), [&](const auto& c) { return c.name == argv[1]; })) {
    std::string known;
    for (const auto& c : cmds) known += (known.empty() ? "" : ", ") + c.name;
    std::cerr << "carb: error: unknown subcommand '" << carb::cli::printable(argv[1]) << "' (known: " << known << ")\n";
    return 2;
  }
  // The same one level down (hundred-and-thirty-first hostile pass: `carb data bogus` said only "A
  // subcommand is required").
  if (argc > 1 && argv[1][0] != '-') {
    const auto subs = app.get_subcommand(argv[1])->get_subcommands([](const CLI::App*) { return true; });
    const std::string next = argc > 2 ? argv[2] : "";
    const bool help = std::any_of(argv + 2, argv + argc, [](const char* a) {
      return std::string(a) == "--help" || std::string(a) == "-h";
    });
    const bool known_sub =
        std::any_of(subs.begin(), subs.end(), [&](const CLI::App* c) { return c->get_name() == next; });
    if (!subs.empty() && !help && !known_sub) {
      std::string known;
      for (const CLI::App* c : subs) known += (known.empty() ? "" : ", ") + c->get_name();
      if (next.empty() || next[0] == '-')
        std::cerr << "carb: error: carb " << argv[1] << " needs a subcommand first (known: " << known << ")\n";
      else
        std::cerr << "carb: error: unknown " << argv[1] << " subcommand '" << carb::cli::printable(next)
                  << "' (known: " << known << ")\n";
      return 2;
    }
  }
  // The library's warnings, as one printable line each (a path may hold control bytes).
  carb::set_warning_handler([](const std::string& w) {
    static std::mutex m;  // one whole line at a time, whichever thread warns
    const std::lock_guard<std::mutex> g(m);
    std::cerr << "carb: warning: " << carb::cli::printable(w) << '\n';
  });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ConversionError& e) {
    // CLI11's "Could not convert: --batch = 99999999999" for a decimal the option's type cannot hold
    // (too large, or negative for a count or a seed): said in carb's words (a hostile tester).
    static const std::regex what(R"(Could not convert: (\S+) = (-?[0-9]+(\.[0-9]*)?))");
    std::smatch m;
    const std::string text = e.what();
    std::cerr << "carb: error: "
              << carb::cli::error_line(std::regex_match(text, m, what)
                                           ? m[1].str() + ": '" + m[2].str() + "' is out of the range this option takes"
                                           : text)
              << "\n";
    return 2;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "carb: error: " << carb::cli::error_line(e.what()) << "\n";
    return 2;
  } catch (const carb::Interrupted& e) {  // what was finished is kept; 128 + signal, as a shell reports it
    std::cerr << "carb: " << e.what() << "\n";
    return 128 + e.signal_number;
  } catch (const carb::Error& e) {
    std::cerr << "carb: error: " << carb::cli::error_line(e.what()) << "\n";
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {  // a path carb could not use: the user's to fix
    std::cerr << "carb: error: " << carb::cli::error_line(e.what()) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "carb: internal error: " << carb::cli::error_line(e.what()) << "\n";
    return 3;
  }
  // Output that could not be written (a full disk behind a redirect) is a failure: exit 0 with
  // nothing written told a script all was well (eighteenth hostile pass).
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "carb: error: cannot write the output to standard output\n";
    return 1;
  }
  return 0;
}
