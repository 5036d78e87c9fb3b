// Helpers for tests that run the `carb` binary (CARB_BINARY) as a separate process: spawn it
// with its output in files, wait for it, signal it, and read a store it is writing without
// ever creating or changing that store.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace carb::test {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Starts `carb ARGS` with stdin from /dev/null and stdout, stderr into the given files.
inline pid_t spawn_carb(const std::vector<std::string>& args, const fs::path& out, const fs::path& err) {
  std::vector<std::string> all = {CARB_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int in = ::open("/dev/null", O_RDONLY);
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(in, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

/// What a finished carb process left: its wait status and its output.
struct Finished {
  int status = -1;
  std::string out, err;
  bool exited_with(int code) const { return WIFEXITED(status) && WEXITSTATUS(status) == code; }
  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

inline int wait_status(pid_t pid) {
  int status = -1;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

/// Runs `carb ARGS` to completion; tag names its output files in dir.
inline Finished run_carb(const std::vector<std::string>& args, const fs::path& dir, const std::string& tag) {
  const fs::path out = dir / (tag + ".stdout"), err = dir / (tag + ".stderr");
  Finished f;
  f.status = wait_status(spawn_carb(args, out, err));
  f.out = slurp(out);
  f.err = slurp(err);
  return f;
}

/// Runs a read-only query on the store and returns each row's columns joined by '|'; empty
/// while the file or its schema does not exist yet. Never creates or alters the store.
inline std::vector<std::string> query_store(const fs::path& db, const std::string& sql) {
  std::vector<std::string> rows;
  if (!fs::exists(db)) return rows;
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(h, 5000);
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(h, sql.c_str(), -1, &s, nullptr) == SQLITE_OK)
      while (sqlite3_step(s) == SQLITE_ROW) {
        std::string row;
        for (int c = 0; c < sqlite3_column_count(s); ++c) {
          const auto* t = sqlite3_column_text(s, c);
          row += (c ? "|" : "") + (t ? std::string(reinterpret_cast<const char*>(t)) : std::string("NULL"));
        }
        rows.push_back(row);
      }
    sqlite3_finalize(s);
  }
  sqlite3_close(h);
  return rows;
}

inline int stored_rows(const fs::path& db) {
  const auto r = query_store(db, "SELECT count(*) FROM measurements");
  return r.empty() ? 0 : std::stoi(r.front());
}

/// True once the process has ended; it is not reaped, so wait_status still reads its status.
inline bool has_ended(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

/// Polls until the store holds at least n rows, the process ends or the time limit passes;
/// returns the rows seen last.
inline int wait_for_rows(const fs::path& db, int n, pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int rows = 0;
  while ((rows = stored_rows(db)) < n && !has_ended(pid) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return rows;
}

}  // namespace carb::test
