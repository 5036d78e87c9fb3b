// A property of `carb profile`: SIGKILL at 20 random moments never loses a committed row, never
// changes one, never stores one twice and never leaves a store that does not open; resuming after
// the last kill completes every configuration. The moments are drawn from a seeded RNG and spread
// over a run: some during start-up (plugin load, lock, store creation), most just after a row was
// committed, somewhere within the time one more row takes (mid-measurement, mid-commit).
// A store that is complete is finished off and checked, and the next kills go to a fresh store.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "carb/store.hpp"
#include "carb_process.hpp"
#include "temp_dir_test.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kKills = 20;
constexpr int kConfigs = 8;  // the tiny preset

std::vector<std::string> profile_args(const fs::path& db) {
  return {"profile", "--preset",     "tiny", "--threads",  "1", "--warmup", "0",    "--min-passes",
          "2",       "--max-passes", "3",    "--cooldown", "0", "--quiet",  "--db", db.string()};
}

// Every committed row, keyed by its unique key, with every stored column as text.
using Rows = std::map<std::string, std::string>;

Rows committed_rows(const fs::path& db) {
  Rows rows;
  for (const auto& r : test::query_store(
           db,
           "SELECT platform || ' ' || config_key || ' ' || protocol_id, id, family, depth, width, "
           "resolution, "
           "batch, precision, status, latency_ms, energy_j, peak_memory_mb, avg_sm_util, avg_mem_util, "
           "extra_json, error_text, created_at FROM measurements ORDER BY id")) {
    const auto bar = r.find('|');
    EXPECT_TRUE(rows.emplace(r.substr(0, bar), r.substr(bar + 1)).second) << "stored twice: " << r;
  }
  return rows;
}

// The store opens as SQLite and as a carb store, is consistent, and holds no half-made schema.
void expect_store_sound(const fs::path& db, const std::string& when) {
  if (!fs::exists(db)) return;  // killed before the store was created
  const auto check = test::query_store(db, "PRAGMA integrity_check");
  ASSERT_EQ(check, std::vector<std::string>{"ok"}) << when;
  const auto version = test::query_store(db, "PRAGMA user_version");
  const auto tables = test::query_store(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'");
  ASSERT_EQ(version.size(), 1u) << when;
  if (version.front() == "0") {
    EXPECT_EQ(tables, std::vector<std::string>{"0"}) << when << ": tables without a schema version";
    return;
  }
  EXPECT_EQ(version.front(), "1") << when;
  EXPECT_EQ(tables, std::vector<std::string>{"4"}) << when;  // measurements, protocols, planned, plan_runs
  try {
    const Store store(db);  // what `carb data export` opens
    for (const auto& r : store.to_dataset().rows) {
      EXPECT_EQ(r.status, Status::ok) << when;
      EXPECT_TRUE(r.latency_ms && *r.latency_ms > 0) << when;
      const std::string passes = r.extra.count("passes") ? r.extra.at("passes") : "";
      EXPECT_TRUE(passes == "2" || passes == "3") << when << ": passes " << passes;
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << when << ": the store does not open: " << e.what();
  }
}

// Every row of `before` is in `after`, unchanged.
void expect_kept(const Rows& before, const Rows& after, const std::string& when) {
  for (const auto& [key, row] : before) {
    const auto it = after.find(key);
    if (it == after.end())
      ADD_FAILURE() << when << ": lost " << key;
    else
      EXPECT_EQ(it->second, row) << when << ": changed " << key;
  }
}

class KillProperty : public TempDirTest {
 protected:
  KillProperty() : TempDirTest("carb_kill_property_") {}

  // Runs a profile of db to completion and checks that it completed what was left.
  void finish(const fs::path& db, const std::string& tag) {
    const Rows before = committed_rows(db);
    auto args = profile_args(db);
    args.insert(args.end(), {"--format", "json"});
    const test::Finished r = test::run_carb(args, dir_, tag);
    ASSERT_EQ(r.exit_code(), 0) << tag << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r.out;
    EXPECT_EQ(j.value("total", -1), kConfigs) << tag;
    EXPECT_EQ(j.value("skipped", -1), static_cast<int>(before.size())) << tag;
    EXPECT_EQ(j.value("ok", -1), kConfigs - static_cast<int>(before.size())) << tag;
    const Rows after = committed_rows(db);
    EXPECT_EQ(after.size(), static_cast<std::size_t>(kConfigs)) << tag;
    expect_kept(before, after, tag);
    expect_store_sound(db, tag);
  }
};

TEST_F(KillProperty, SigkillAtRandomMomentsNeverLosesOrCorruptsCommittedRows) {
  // Calibrate on an uninterrupted run: how long start-up takes and how long one row takes.
  const fs::path calib = dir_ / "calibration.db";
  const auto t0 = Clock::now();
  const pid_t cp = test::spawn_carb(profile_args(calib), dir_ / "calib.out", dir_ / "calib.err");
  ASSERT_GE(test::wait_for_rows(calib, 1, cp, std::chrono::seconds(120)), 1)
      << test::slurp(dir_ / "calib.err");
  const auto t1 = Clock::now();
  ASSERT_EQ(test::wait_status(cp), 0) << test::slurp(dir_ / "calib.err");
  const double startup_s = std::chrono::duration<double>(t1 - t0).count();
  const double row_s =
      std::max(0.005, std::chrono::duration<double>(Clock::now() - t1).count() / (kConfigs - 1));
  ASSERT_EQ(test::stored_rows(calib), kConfigs);

  std::mt19937 rng(16);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int kills = 0, stores = 0, early = 0, mid = 0;
  fs::path db = dir_ / "store0.db";
  std::string log;
  for (int attempt = 0; kills < kKills && attempt < 3 * kKills; ++attempt) {
    if (test::stored_rows(db) == kConfigs) {  // complete: finish it off, go on with a fresh store
      finish(db, "finish" + std::to_string(stores));
      db = dir_ / ("store" + std::to_string(++stores) + ".db");
    }
    const Rows before = committed_rows(db);
    const std::string tag = "kill" + std::to_string(attempt);
    const auto start = Clock::now();
    const pid_t pid = test::spawn_carb(profile_args(db), dir_ / (tag + ".out"), dir_ / (tag + ".err"));
    ASSERT_GT(pid, 0);
    const bool in_startup = unit(rng) < 0.25;
    if (in_startup) {
      std::this_thread::sleep_for(std::chrono::duration<double>(unit(rng) * startup_s));
    } else {
      test::wait_for_rows(db, static_cast<int>(before.size()) + 1, pid, std::chrono::seconds(120));
      std::this_thread::sleep_for(std::chrono::duration<double>(unit(rng) * row_s));
    }
    ::kill(pid, SIGKILL);
    const int status = test::wait_status(pid);
    const double at = std::chrono::duration<double>(Clock::now() - start).count();
    const std::string when = tag + " (store " + std::to_string(stores) + ", " + std::to_string(at) + " s)";
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
      ++kills;
      (in_startup ? early : mid)++;
    } else {  // it finished first: then it must have finished well
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << when << ": status " << status << ": " << test::slurp(dir_ / (tag + ".err"));
    }
    // Never refused (no stale lock): nothing but the end-of-run warning of rows `data export` would
    // refuse, which tiny networks timed on a machine busy with the other tests can earn.
    const std::string err = test::slurp(dir_ / (tag + ".err"));
    EXPECT_TRUE(err.empty() || (err.rfind("carb: warning: `data export` would refuse", 0) == 0 &&
                                std::count(err.begin(), err.end(), '\n') == 1))
        << when << ": " << err;
    expect_store_sound(db, when);
    const Rows after = committed_rows(db);
    expect_kept(before, after, when);
    log += when + ": " + std::to_string(before.size()) + " -> " + std::to_string(after.size()) + " rows\n";
    if (HasFatalFailure()) return;
  }
  finish(db, "final");
  EXPECT_EQ(kills, kKills) << log;
  EXPECT_GT(early, 0) << log;
  EXPECT_GT(mid, 0) << log;
  std::printf("startup %.2f s, %.3f s per row, %d kills (%d in start-up) over %d stores\n%s", startup_s,
              row_s, kills, early, stores + 1, log.c_str());
}

}  // namespace
}  // namespace carb
