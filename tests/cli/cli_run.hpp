// Running the `carb` binary from tests: a scratch directory per test process, and a run that
// captures exit status, stdout and stderr. Shared by the CLI contract tests.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace carb_cli_test {

namespace fs = std::filesystem;

struct CliRun {
  int status = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A scratch directory per test process, removed at exit.
class Scratch {
 public:
  Scratch() : dir_(fs::temp_directory_path() / ("carb_cli_test_" + std::to_string(::getpid()))) {
    fs::create_directories(dir_);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

inline const Scratch& scratch() {
  static Scratch s;
  return s;
}

// Runs `carb ARGS` through the shell with stdout and stderr captured in files named by `tag`
// (distinct tags can run concurrently).
inline CliRun carb(const std::string& args, const std::string& tag = "run") {
  const fs::path out = scratch().dir() / (tag + ".stdout"), err = scratch().dir() / (tag + ".stderr");
  const std::string cmd = std::string("cd '") + scratch().dir().string() + "' && '" + CARB_BINARY + "' " +
                          args + " >'" + out.string() + "' 2>'" + err.string() + "' </dev/null";
  const int rc = std::system(cmd.c_str());
  CliRun r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + (WIFSIGNALED(rc) ? WTERMSIG(rc) : 0);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

inline void write_file(const std::string& name, const std::string& text) {
  std::ofstream(scratch().dir() / name) << text;
}

}  // namespace carb_cli_test
