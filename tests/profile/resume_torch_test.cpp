// Crash-resume of `carb profile`: a run killed with SIGKILL leaves only complete rows,
// rerunning the same command finishes the space without duplicates, and a further rerun
// skips everything.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "carb/store.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kProfileArgs = {"profile", "--preset",     "tiny", "--warmup",
                                               "1",       "--min-passes", "2",    "--max-passes",
                                               "2",       "--cooldown",   "0.3",  "--quiet"};

// Rows in the store, read through SQLite directly (read-only) so that polling never
// creates or alters the file the profiler is writing; 0 while the schema does not exist yet.
int stored_rows(const fs::path& db) {
  if (!fs::exists(db)) return 0;
  sqlite3* h = nullptr;
  int n = 0;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(h, 2000);
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(h, "SELECT count(*) FROM measurements", -1, &s, nullptr) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
      n = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
  }
  sqlite3_close(h);
  return n;
}

pid_t spawn_profile(const fs::path& db, const fs::path& log) {
  std::vector<std::string> args = {CARB_BINARY};
  args.insert(args.end(), kProfileArgs.begin(), kProfileArgs.end());
  args.insert(args.end(), {"--db", db.string()});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// Runs the profile command to completion; returns its --format json summary.
nlohmann::json run_profile_json(const fs::path& db) {
  const fs::path err = db.parent_path() / "rerun.err";
  std::string cmd = std::string("'") + CARB_BINARY + "'";
  for (const auto& a : kProfileArgs) cmd += " " + a;
  // stderr apart: a run on a machine busy with other tests may warn of rows `data export` would
  // refuse (tiny networks' timings), which is no part of the JSON summary (CI, 2026-12-05).
  cmd += " --db '" + db.string() + "' --format json 2>'" + err.string() + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int rc = ::pclose(p);
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << out << std::ifstream(err).rdbuf();
  return nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
}

// Every row complete and ok, and no configuration stored twice for a platform.
void expect_intact(const fs::path& db, std::size_t expected_rows_at_least) {
  Store store(db);
  const Dataset d = store.to_dataset();
  EXPECT_GE(d.rows.size(), expected_rows_at_least);
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& r : d.rows) {
    const std::string key = config_key(r.config);
    EXPECT_TRUE(seen.insert({r.platform, key}).second) << "duplicate " << r.platform << " " << key;
    EXPECT_EQ(r.status, Status::ok) << key;
    EXPECT_TRUE(r.latency_ms && *r.latency_ms > 0) << key;
    EXPECT_TRUE(r.peak_memory_mb && *r.peak_memory_mb > 0) << key;
    EXPECT_EQ(r.extra.count("passes") ? r.extra.at("passes") : "", "2") << key;
  }
}

class Resume : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("carb_resume_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(Resume, KilledRunResumesWithoutLossOrDuplicates) {
  const fs::path db = dir_ / "store.db", log = dir_ / "first.log";
  const pid_t pid = spawn_profile(db, log);
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  int rows = 0;
  while ((rows = stored_rows(db)) < 2 && std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "profiler exited early:\n"
                                                   << std::ifstream(log).rdbuf();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_GE(rows, 2) << "no rows within the deadline";
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the profiler finished before the kill";

  const int after_kill = stored_rows(db);
  ASSERT_LT(after_kill, 8) << "the kill came too late to test resuming";
  expect_intact(db, static_cast<std::size_t>(after_kill));

  const auto resumed = run_profile_json(db);
  ASSERT_TRUE(resumed.is_object()) << "no JSON summary";
  EXPECT_EQ(resumed.value("total", -1), 8);
  EXPECT_EQ(resumed.value("skipped", -1), after_kill);
  EXPECT_EQ(resumed.value("ok", -1), 8 - after_kill);
  EXPECT_EQ(stored_rows(db), 8);
  expect_intact(db, 8);

  const auto again = run_profile_json(db);
  ASSERT_TRUE(again.is_object()) << "no JSON summary";
  EXPECT_EQ(again.value("skipped", -1), 8);
  EXPECT_EQ(again.value("ok", -1), 0);
  EXPECT_EQ(stored_rows(db), 8);
}

}  // namespace
}  // namespace carb
