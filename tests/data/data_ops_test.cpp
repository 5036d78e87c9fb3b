// Tests of the `carb data` operations: export from a store with its provenance sidecar,
// duplicate-free merging with protocol conflict reports, and dataset summaries.
#include "carb/data_ops.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include "temp_dir_test.hpp"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "carb/combine.hpp"
#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/store.hpp"
#include "carb/store_export.hpp"
#include "carb/warning.hpp"
#include "data/provenance.hpp"
#include "util/fnv.hpp"
#include "util/stop_signal.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class DataOps : public TempDirTest {
 protected:
  DataOps() : TempDirTest("carb_data_ops_") {}

  // Whether carb can be run as other users here (root, and setpriv to drop to them).
  static bool can_run_as_other_users() {
    return ::geteuid() == 0 && std::system("command -v setpriv >/dev/null 2>&1") == 0;
  }
  // A closed WAL store at `db` with one row under protocol p1 (SQLite removes -wal and -shm on a
  // clean close).
  static void one_row_store(const fs::path& db) {
    fs::create_directories(db.parent_path());
    Store s(db);
    s.put_protocol("p1", {{"warmup", 10}});
    s.put({row("cpu2t", 1, 10.0), "p1", ""});
  }

  // A store with rows on two platforms under protocol p1 (test data, not a measurement).
  fs::path make_store() const {
    const fs::path db = dir_ / "m.db";
    Store s(db);
    s.put_protocol("p1", {{"warmup", 10}, {"passes", 100}});
    s.put_protocol("unused", {{"warmup", 1}});
    for (int b : {1, 2, 4}) s.put({row("cpu2t", b, 10.0 * b), "p1", ""});
    s.put({row("gpu", 1, 1.5), "p1", ""});
    StoredMeasurement oom{row("gpu", 4096, 0), "p1", "out of memory"};
    oom.record.status = Status::oom;
    oom.record.latency_ms.reset();
    oom.record.energy_j.reset();
    s.put(oom);
    return db;
  }
  static Record row(const std::string& platform, int batch, double latency) {
    Record r;
    r.platform = platform;
    r.config = {Family::basic, 18, 1.0, 64, batch, Precision::fp32};
    r.latency_ms = latency;
    if (platform == "gpu") r.energy_j = 0.25 * batch;
    return r;
  }

};

// Fourth hostile pass: rows of a protocol whose settings were deleted exported with no word of how
// they were measured.
TEST_F(DataOps, ExportRefusesRowsOfAProtocolTheStoreHasNoSettingsFor) {
  const fs::path db = dir_ / "bare.db";
  { Store(db).put({row("cpu2t", 1, 10.0), "gone", ""}); }
  EXPECT_THROW(export_store({db, dir_ / "bare.csv", std::nullopt, ""}), MeasureError);
  EXPECT_FALSE(fs::exists(dir_ / "bare.csv"));
  // Fifth hostile pass: settings that hold nothing passed for settings.
  { Store(db).put_protocol("gone", nlohmann::json::object()); }
  EXPECT_THROW(export_store({db, dir_ / "bare.csv", std::nullopt, ""}), MeasureError);
}

// Sixth hostile pass: every shipped dataset is an export, and an export of another store replaced one
// without --force; and --out's sidecar could be the store itself.
TEST_F(DataOps, AnExportReplacesOnlyAnEarlierExportOfTheSameStore) {
  const fs::path db = make_store(), other = dir_ / "other.db";
  fs::copy_file(db, other);
  export_store({db, dir_ / "gpu.csv", "gpu", ""});
  EXPECT_NO_THROW(export_store({db, dir_ / "gpu.csv", "gpu", ""}));  // again from the same store
  EXPECT_THROW(export_store({other, dir_ / "gpu.csv", "gpu", ""}), InputError);
  ExportOptions forced{other, dir_ / "gpu.csv", "gpu", ""};
  forced.force = true;
  EXPECT_NO_THROW(export_store(forced));
  const fs::path store_json = dir_ / "st.json";
  fs::copy_file(db, store_json);
  ExportOptions onto_sidecar{store_json, dir_ / "st.csv", "gpu", ""};
  onto_sidecar.force = true;
  EXPECT_THROW(export_store(onto_sidecar), InputError);
  EXPECT_NO_THROW(Store(store_json).to_dataset());  // still the store
}

// Seventh hostile pass: a fresh store profiled at the old store's path (how measuring rounds are
// made) replaced the only copy of the earlier round's export, 8 rows with 1, without --force. An
// earlier output is replaced only when the new one keeps every configuration it holds.
TEST_F(DataOps, AnExportNeverDropsTheConfigurationsOfTheExportItReplaces) {
  const fs::path db = make_store();
  export_store({db, dir_ / "round1.csv", "cpu2t", ""});
  fs::copy_file(db, dir_ / "m.db.round1");
  const std::string before = [&] {
    std::ifstream in(dir_ / "round1.csv");
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }();
  fs::remove(db);
  {
    Store fresh(db);
    fresh.put_protocol("p1", {{"warmup", 10}, {"passes", 100}});
    fresh.put({row("cpu2t", 1, 11.0), "p1", ""});
  }
  EXPECT_THROW(export_store({db, dir_ / "round1.csv", "cpu2t", ""}), InputError);
  // Ninth hostile pass: a fresh round of the same configurations (all ok, other latencies) replaced
  // the earlier round's export: a store never rewrites a row, so a changed row is another store's.
  fs::remove(db);
  {
    Store again(db);
    again.put_protocol("p1", {{"warmup", 10}, {"passes", 100}});
    for (int b : {1, 2, 4}) again.put({row("cpu2t", b, 11.0 * b), "p1", ""});
  }
  EXPECT_THROW(export_store({db, dir_ / "round1.csv", "cpu2t", ""}), InputError);
  std::ifstream in(dir_ / "round1.csv");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), before);
  fs::remove(db);
  fs::copy_file(dir_ / "m.db.round1", db);
  {
    Store grown(db);  // the same rows and more: an update, not a loss
    grown.put({row("cpu2t", 8, 80.0), "p1", ""});
  }
  EXPECT_NO_THROW(export_store({db, dir_ / "round1.csv", "cpu2t", ""}));
  EXPECT_EQ(read_dataset_csv(dir_ / "round1.csv").rows.size(), 4u);
}

// Eighth hostile pass: a store copied without its -wal and -shm files into a directory the reader
// cannot write failed to export ("attempt to write a readonly database"): export reads a store as
// it is. Run as another user (root can write anywhere); skipped where that is not possible.
TEST_F(DataOps, ExportReadsAStoreInADirectoryItCannotWrite) {
  if (!can_run_as_other_users()) GTEST_SKIP() << "needs root and setpriv to run carb as another user";
  const fs::path ro = dir_ / "ro", out = dir_ / "out";
  fs::create_directories(out);
  one_row_store(ro / "s.db");
  ASSERT_FALSE(fs::exists(ro / "s.db-shm"));
  fs::permissions(ro, fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write, fs::perm_options::remove);
  fs::permissions(out, fs::perms::all);
  fs::permissions(dir_, fs::perms::others_exec | fs::perms::others_read, fs::perm_options::add);
  const std::string cmd = "setpriv --reuid=65534 --regid=65534 --clear-groups '" + std::string(CARB_BINARY) +
                          "' data export --db '" + (ro / "s.db").string() + "' --out '" + (out / "s.csv").string() +
                          "' >/dev/null 2>'" + (out / "err.txt").string() + "'";
  const int rc = std::system(cmd.c_str());
  fs::permissions(ro, fs::perms::owner_write, fs::perm_options::add);
  std::ifstream err(out / "err.txt");
  EXPECT_EQ(rc, 0) << std::string((std::istreambuf_iterator<char>(err)), {});
  EXPECT_EQ(read_dataset_csv(out / "s.csv").rows.size(), 1u);
}

// Sixty-seventh hostile pass: another user's export of a store in a shared (sticky) directory made
// a -wal and -shm it could not remove, nor could the store's owner, whose next profile failed with
// SQLite's "attempt to write a readonly database". The reader makes nothing now; side files another
// user left are named in a clear refusal. Run as other users; skipped where that is not possible.
TEST_F(DataOps, AnotherUsersExportLeavesNothingAndTheirLeftoversAreNamed) {
  if (!can_run_as_other_users()) GTEST_SKIP() << "needs root and setpriv to run carb as other users";
  const fs::path shared = dir_ / "shared", out = dir_ / "out";
  fs::create_directories(out);
  one_row_store(shared / "s.db");
  ASSERT_EQ(::chown((shared / "s.db").c_str(), 1000, 1000), 0);
  fs::permissions(shared, fs::perms::all | fs::perms::sticky_bit);
  fs::permissions(out, fs::perms::all);
  fs::permissions(dir_, fs::perms::others_exec | fs::perms::others_read, fs::perm_options::add);
  const auto as = [&](int uid, const std::string& args) {
    const std::string cmd = "cd '" + shared.string() + "' && setpriv --reuid=" + std::to_string(uid) + " --regid=" +
                            std::to_string(uid) + " --clear-groups '" + std::string(CARB_BINARY) + "' " + args +
                            " >/dev/null 2>'" + (out / "err.txt").string() + "'";
    const int rc = std::system(cmd.c_str());
    std::ifstream err(out / "err.txt");
    return std::make_pair(rc, std::string((std::istreambuf_iterator<char>(err)), {}));
  };
  const auto [rc, err] = as(65534, "data export --db s.db --out '" + (out / "s.csv").string() + "'");
  EXPECT_EQ(rc, 0) << err;
  EXPECT_EQ(read_dataset_csv(out / "s.csv").rows.size(), 1u);
  EXPECT_FALSE(fs::exists(shared / "s.db-wal"));
  EXPECT_FALSE(fs::exists(shared / "s.db-shm"));
  // Leftovers of another user's reader (the sqlite3 command makes them): named, with what to do.
  for (const char* side : {"s.db-wal", "s.db-shm"}) {
    std::ofstream(shared / side).flush();
    ASSERT_EQ(::chown((shared / side).c_str(), 65534, 65534), 0);
  }
  const auto [refused, why] = as(1000, "profile --preset tiny --db s.db --warmup 1 --min-passes 1 --max-passes 1 "
                                       "--cooldown 0 --no-meter-check --quiet");
  EXPECT_NE(refused, 0);
  EXPECT_NE(why.find("s.db-wal is not writable by this user"), std::string::npos) << why;
  EXPECT_NE(why.find("it holds no rows: with no run using the store, remove"), std::string::npos) << why;
  EXPECT_EQ(Store(shared / "s.db", StoreAccess::read_only).count(), 1u);
}

// Seventh hostile pass: export switched another application's SQLite database to WAL mode, and
// wrote carb's schema into an empty file, before refusing them.
TEST_F(DataOps, ExportNeverChangesAFileThatIsNotACarbStore) {
  const fs::path empty = dir_ / "empty.db";
  std::ofstream(empty).flush();
  EXPECT_THROW(export_store({empty, dir_ / "e.csv", std::nullopt, ""}), MeasureError);
  EXPECT_EQ(fs::file_size(empty), 0u);
  EXPECT_FALSE(fs::exists(dir_ / "empty.db-wal"));
  // Another tool's database, made here by carb's own store and then stripped of its version mark.
  const fs::path app = dir_ / "app.sqlite";
  { Store s(app); }
  const std::string sql = "sqlite3 " + app.string() + " 'PRAGMA journal_mode=DELETE; PRAGMA user_version=0;' >/dev/null";
  if (std::system(sql.c_str()) != 0) GTEST_SKIP() << "no sqlite3 command";
  std::ifstream in(app, std::ios::binary);
  std::string head(20, '\0');
  in.read(head.data(), 20);
  in.close();
  EXPECT_THROW(export_store({app, dir_ / "a.csv", std::nullopt, ""}), MeasureError);
  std::ifstream again(app, std::ios::binary);
  std::string after(20, '\0');
  again.read(after.data(), 20);
  EXPECT_EQ(after, head);  // bytes 18-19 say the journal mode: still rollback, not WAL
}

// The same overflow fuzz_store found in a store's protocol settings, in a sidecar: a DataError.
TEST_F(DataOps, ASidecarWithAnOverflowingNumberIsADataError) {
  export_store({make_store(), dir_ / "a.csv", "gpu", ""});
  std::ofstream(dir_ / "a.json") << R"({"kind": "carb-export", "rows": 9e999})";
  EXPECT_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", ""), DataError);
}

// Fifth hostile pass: `export --db S.csv --out S.csv --force` replaced the store with its export.
TEST_F(DataOps, ExportNeverWritesOverItsStore) {
  const fs::path db = make_store(), named_csv = dir_ / "store.csv";
  fs::copy_file(db, named_csv);
  ExportOptions o{named_csv, named_csv, "gpu", ""};
  o.force = true;
  EXPECT_THROW(export_store(o), InputError);
  EXPECT_NO_THROW(Store(named_csv).to_dataset());  // still the store
}

TEST_F(DataOps, ExportWritesCsvAndProvenance) {
  const fs::path db = make_store(), out = dir_ / "gpu.csv";
  const ExportSummary s = export_store({db, out, "gpu", "carb data export --db m.db"});
  EXPECT_EQ(s.rows, 2u);
  EXPECT_EQ(s.platforms, (std::vector<std::string>{"gpu"}));
  EXPECT_EQ(s.provenance, dir_ / "gpu.json");
  const Dataset d = read_dataset_csv(out);
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(d.rows[1].status, Status::oom);
  EXPECT_EQ(d.rows[1].latency_ms, std::nullopt);
  EXPECT_EQ(d.rows[1].extra.at("error_text"), "out of memory");
  const nlohmann::json prov = read_provenance(out);
  EXPECT_EQ(prov["command"], "carb data export --db m.db");
  EXPECT_EQ(prov["protocols"],
            (nlohmann::json{{"p1", {{"warmup", 10}, {"passes", 100}}}}));  // only used ones
  EXPECT_TRUE(prov["exported_on"].contains("hostname"));
  EXPECT_EQ(prov["rows"], 2);
  export_store({db, dir_ / "cpu.csv", "cpu2t", ""});
  EXPECT_EQ(read_dataset_csv(dir_ / "cpu.csv").rows[0].energy_j, std::nullopt);  // never measured: stays empty
}

// A store whose rows were put without a plan (as by a carb before plans were recorded, or test code)
// knows nothing of what was planned: null, not 0, and no campaign in the sidecar. A plan recorded
// later for another pair says nothing of this one.
TEST_F(DataOps, AnExportOfRowsNoRunPlannedKnowsNothingOfACampaign) {
  const fs::path db = make_store();
  Store(db).put_planned("other", "p1", {Config{Family::basic, 10, 0.25, 32, 1, Precision::fp32}});
  const ExportSummary s = export_store({db, dir_ / "gpu.csv", "gpu", ""});
  EXPECT_FALSE(s.planned.has_value());
  EXPECT_TRUE(s.to_json()["planned"].is_null());
  EXPECT_FALSE(read_provenance(dir_ / "gpu.csv").contains("campaign"));
}

// Seventy-eighth hostile pass: an edited campaign record was dropped without a word, and validate
// passed it. data info warns and shows none; validate lists it with the file's problems.
TEST_F(DataOps, AnEditedCampaignRecordIsSaidNotDropped) {
  const fs::path out = dir_ / "gpu.csv";
  export_store({make_store(), out, "gpu", ""});
  EXPECT_TRUE(validate_dataset_csv(out).empty());
  const auto with_campaign = [&](const nlohmann::json& c) {
    nlohmann::json prov = read_provenance(out);
    prov["campaign"] = c;
    std::ofstream(provenance_path(out)) << prov.dump(2);
  };
  with_campaign({{"planned", 8}, {"unmeasured", 2}});
  EXPECT_EQ(dataset_info(out).campaign->unmeasured, 2u);
  for (const nlohmann::json& bad : {nlohmann::json{{"planned", 5}, {"unmeasured", 9}},
                                    nlohmann::json{{"planned", 8}, {"unmeasured", -3}},
                                    nlohmann::json{{"planned", "8"}, {"unmeasured", "2"}},
                                    nlohmann::json{{"planned", 8}}, nlohmann::json{{"planned", 0}, {"unmeasured", 0}},
                                    nlohmann::json{{"planned", 8}, {"unmeasured", 2.5}}, nlohmann::json("yes")}) {
    with_campaign(bad);
    std::vector<std::string> said;
    const auto before = set_warning_handler([&](const std::string& w) { said.push_back(w); });
    new_warning_round();
    const DatasetInfo info = dataset_info(out);
    set_warning_handler(before);
    EXPECT_FALSE(info.campaign) << bad.dump();
    bool warned = false;
    for (const auto& w : said) warned = warned || w.find("campaign record") != std::string::npos;
    EXPECT_TRUE(warned) << bad.dump();
    const auto problems = validate_dataset_csv(out);
    bool listed = false;
    for (const auto& p : problems) listed = listed || p.find("campaign record") != std::string::npos;
    EXPECT_TRUE(listed) << bad.dump();
  }
}

// A dataset is one platform; a store of two is exported one platform at a time, and says so.
TEST_F(DataOps, ExportOfTwoPlatformsAsksForOne) {
  try {
    export_store({make_store(), dir_ / "all.csv", std::nullopt, ""});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("holds rows of 2 platforms (cpu2t, gpu): export one at a time with --platform"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "all.csv"));
}

// The same configuration under two protocols: export one of them.
TEST_F(DataOps, ExportOfTwoProtocolsAsksForOne) {
  const fs::path db = make_store();
  {
    Store s(db);
    s.put_protocol("p2", {{"warmup", 3}});
    s.put({row("gpu", 1, 1.7), "p2", ""});
  }
  try {
    export_store({db, dir_ / "g.csv", "gpu", ""});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("2 protocols (p1, p2): export one at a time with --protocol"),
              std::string::npos)
        << e.what();
  }
  ExportOptions o{db, dir_ / "g.csv", "gpu", ""};
  o.protocol = "p2";
  EXPECT_EQ(export_store(o).rows, 1u);
}

// carb replaces a dataset it wrote; anything else at --out is refused unless forced.
TEST_F(DataOps, ExportNeverReplacesAFileItDidNotWrite) {
  const fs::path db = make_store();
  std::ofstream(dir_ / "notes.csv") << "my notes\n";
  EXPECT_THROW(export_store({db, dir_ / "notes.csv", "gpu", ""}), InputError);
  std::ofstream(dir_ / "data.json") << "{\"mine\": true}";
  EXPECT_THROW(export_store({db, dir_ / "data.csv", "gpu", ""}), InputError);  // its sidecar would be replaced
  std::ifstream in(dir_ / "notes.csv");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "my notes\n");
  export_store({db, dir_ / "gpu.csv", "gpu", ""});
  EXPECT_NO_THROW(export_store({db, dir_ / "gpu.csv", "gpu", ""}));  // its own output: replaced
  ExportOptions forced{db, dir_ / "notes.csv", "gpu", ""};
  forced.force = true;
  EXPECT_NO_THROW(export_store(forced));
  EXPECT_THROW(export_store({db, dir_, "gpu", ""}), InputError);  // a directory
}

TEST_F(DataOps, ExportFiltersByPlatform) {
  const fs::path db = make_store();
  const ExportSummary s = export_store({db, dir_ / "gpu.csv", "gpu", ""});
  EXPECT_EQ(s.rows, 2u);
  for (const Record& r : read_dataset_csv(dir_ / "gpu.csv").rows) EXPECT_EQ(r.platform, "gpu");
  try {
    export_store({db, dir_ / "x.csv", "tpu", ""});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no rows for platform 'tpu' (platforms in the store: cpu2t, gpu)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "x.csv"));
}

TEST_F(DataOps, ExportOfMissingStoreDoesNotCreateOne) {
  EXPECT_THROW(export_store({dir_ / "typo.db", dir_ / "x.csv", std::nullopt, ""}), InputError);
  EXPECT_FALSE(fs::exists(dir_ / "typo.db"));
}

// Ninety-sixth hostile pass: SIGINT/SIGTERM ended merge, combine and export without a word,
// sometimes leaving temporaries. A signal during the reading stops each before its write, by name
// (combine: Combine.ASignalWhileReadingStopsItWritingNothing).
TEST_F(DataOps, ASignalWhileReadingStopsMergeAndExportWritingNothing) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  export_store({db, dir_ / "b.csv", "cpu2t", ""});
  const auto stopped = [&](const char* what, const std::function<void()>& run) {
    detail::StopOnSignals signals;  // as the CLI's: the signal comes while the command reads
    ASSERT_EQ(std::raise(SIGINT), 0);
    try {
      run();
      ADD_FAILURE() << what << " went on after a signal";
    } catch (const Interrupted& e) {
      EXPECT_EQ(std::string(e.what()), std::string(what) + " interrupted by SIGINT; nothing was written; what was at "
                                                            "--out is unchanged");
    }
  };
  stopped("data merge", [&] { merge_datasets({dir_ / "a.csv", dir_ / "b.csv"}, dir_ / "out.csv", "merge"); });
  stopped("data export", [&] { export_store({db, dir_ / "out.csv", "cpu2t", ""}); });
  for (const auto& e : fs::directory_iterator(dir_)) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name.rfind("out.", 0) != 0 && name.rfind(".out.", 0) != 0) << name << " was written";
  }
}

// Ninety-seventh hostile pass: the same file twice merged as "1958 duplicates dropped" (train,
// evaluate, report and combine refuse it); under a second name too.
TEST_F(DataOps, MergeRefusesTheSameFileTwice) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  for (const fs::path& again : {dir_ / "a.csv", dir_ / "." / "a.csv"}) {
    try {
      merge_datasets({dir_ / "a.csv", again}, dir_ / "m.csv", "merge");
      ADD_FAILURE() << "merged " << again << " with itself";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("is given twice (also as " + (dir_ / "a.csv").string() + "): give each once"),
                std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(fs::exists(dir_ / "m.csv"));
}

TEST_F(DataOps, MergeKeepsFirstAndCountsDuplicates) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  export_store({db, dir_ / "b.csv", "cpu2t", ""});
  const MergeSummary s = merge_datasets({dir_ / "a.csv", dir_ / "b.csv"}, dir_ / "m.csv", "merge");
  EXPECT_EQ(s.rows_in, 6u);
  EXPECT_EQ(s.rows_out, 3u);
  EXPECT_EQ(s.dropped, 3u);
  EXPECT_TRUE(s.conflicts.empty()) << s.conflicts.front();
  EXPECT_EQ(read_dataset_csv(dir_ / "m.csv").rows.size(), 3u);
  const nlohmann::json prov = read_provenance(dir_ / "m.csv");
  EXPECT_EQ(prov["inputs"].size(), 2u);
  EXPECT_EQ(prov["dropped_duplicates"], 3);
  EXPECT_TRUE(prov["protocols"].contains("p1"));
  EXPECT_EQ(s.disagreeing, 0u);  // the same measurements twice
  // Thirty-fourth hostile pass: duplicates measured differently were "dropped" with no word that
  // they disagreed, though which value survives depends on the inputs' order.
  Dataset other = read_dataset_csv(dir_ / "b.csv");
  *other.rows.back().latency_ms *= 40;  // the largest batch: slower, not cheaper, than the others
  write_dataset_csv(other, dir_ / "c.csv");
  const MergeSummary d = merge_datasets({dir_ / "a.csv", dir_ / "c.csv"}, dir_ / "m2.csv", "merge");
  EXPECT_EQ(d.dropped, 3u);
  EXPECT_EQ(d.disagreeing, 1u);
  // Sixty-second hostile pass: it read "first: c.csv ... differs from a.csv", calling the dropped
  // row's file first. It names the kept row's input, then the dropped one's.
  EXPECT_EQ(d.first_disagreeing.rfind("kept " + (dir_ / "a.csv").string(), 0), 0u) << d.first_disagreeing;
  EXPECT_NE(d.first_disagreeing.find(", dropped " + (dir_ / "c.csv").string()), std::string::npos)
      << d.first_disagreeing;
  EXPECT_EQ(d.to_json().at("disagreeing_duplicates"), 1);
}

// Seventeenth hostile pass: notes a user added to an output's sidecar were lost on the next run.
// The sidecar carries its own hash; an edited one is replaced only with --force.
TEST_F(DataOps, AnAnnotatedSidecarIsNotReplacedWithoutForce) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "merge");
  merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "merge");  // an unedited output is replaced
  nlohmann::json side = read_provenance(dir_ / "m.csv");
  EXPECT_FALSE(sidecar_edited(side));
  side["notes"] = "thermal issue, ticket 42";
  std::ofstream(provenance_path(dir_ / "m.csv")) << side.dump(2);
  EXPECT_TRUE(sidecar_edited(read_provenance(dir_ / "m.csv")));
  EXPECT_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "merge"), InputError);
  EXPECT_EQ(read_provenance(dir_ / "m.csv")["notes"], "thermal issue, ticket 42");
  merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "merge", true);
  EXPECT_FALSE(read_provenance(dir_ / "m.csv").contains("notes"));
}

// Thirty-third hostile pass: `--out bundle/manifest.csv --force` was refused, rightly, but called the
// bundle's manifest "a file carb did not write". The refusal says what it is, with or without --force.
TEST_F(DataOps, ABundlesManifestAtTheSidecarsNameIsNamedAsOne) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  fs::create_directories(dir_ / "model");
  std::ofstream(dir_ / "model" / "manifest.json") << R"({"format": "carb-model", "platform": "cpu2t"})";
  const std::string before = slurp(dir_ / "model" / "manifest.json");
  for (const bool force : {false, true}) {
    try {
      merge_datasets({dir_ / "a.csv"}, dir_ / "model" / "manifest.csv", "merge", force);
      ADD_FAILURE() << "a bundle's manifest was replaced, force " << force;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("carb model bundle"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("did not write"), std::string::npos) << e.what();
    }
    EXPECT_EQ(slurp(dir_ / "model" / "manifest.json"), before);
    EXPECT_FALSE(fs::exists(dir_ / "model" / "manifest.csv"));
  }
  // Thirty-fourth hostile pass: `report --out model/manifest.json --force` broke the bundle. No output
  // (report, window study, dataset) replaces a bundle's own files, even with --force.
  std::ofstream(dir_ / "model" / "m.0.gbdt.model") << "x";
  for (const char* name : {"manifest.json", "m.0.gbdt.model"})
    for (const bool force : {false, true}) {
      try {
        check_not_a_link(dir_ / "model" / name, force);
        ADD_FAILURE() << name << " of a bundle may be replaced, force " << force;
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("is a file of the carb model bundle"), std::string::npos) << e.what();
      }
    }
  check_not_a_link(dir_ / "model" / "report.html", true);  // a new file beside them breaks nothing
}

// Twentieth hostile pass: a sidecar from before sidecars carried their own hash (every shipped one
// then) had notes added and lost on a re-combine. Without that hash nothing tells an edit from none.
TEST_F(DataOps, ASidecarWithoutItsOwnHashIsNotReplacedWithoutForce) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "merge");
  nlohmann::json side = read_provenance(dir_ / "m.csv");
  side.erase(kSidecarHashKey);
  side["notes"] = "reviewed; keep";
  std::ofstream(provenance_path(dir_ / "m.csv")) << side.dump(2);
  EXPECT_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "merge"), InputError);
  EXPECT_EQ(read_provenance(dir_ / "m.csv")["notes"], "reviewed; keep");
  merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "merge", true);
}

// Eighteenth hostile pass: with the CSV moved away (archived), its sidecar was replaced without a
// word, notes and all: it is that CSV's only provenance.
TEST_F(DataOps, ASidecarWhoseCsvWasMovedAwayIsNotReplacedWithoutForce) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "merge");
  const std::string side = provenance_path(dir_ / "m.csv").string();
  std::ifstream before_in(side);
  const std::string before((std::istreambuf_iterator<char>(before_in)), {});
  fs::create_directories(dir_ / "archive");
  fs::rename(dir_ / "m.csv", dir_ / "archive" / "m.csv");
  EXPECT_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "merge"), InputError);
  std::ifstream after_in(side);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(after_in)), {}), before);
  merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "merge", true);
  EXPECT_TRUE(fs::exists(dir_ / "m.csv"));
}

// Seventeenth hostile pass: a --out name that fits but whose temporaries do not (236+ characters)
// wrote the CSV, then failed on the sidecar: half a pair, and the next run asked for --force.
TEST_F(DataOps, AnOutNameTooLongForItsTemporariesIsRefusedBeforeWriting) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  const fs::path out = dir_ / (std::string(236, 'n') + ".csv");
  EXPECT_THROW(merge_datasets({dir_ / "a.csv"}, out, "merge"), InputError);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(provenance_path(out)));
}

// Fifteenth hostile pass: an error row in the first input dropped the ok measurement of the same
// configuration in the second. A measurement that succeeded is kept over one that failed.
TEST_F(DataOps, MergeKeepsTheOkMeasurementOverAFailedOne) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  Dataset failed = read_dataset_csv(dir_ / "a.csv");
  std::size_t i = 0;
  while (failed.rows[i].status != Status::ok) ++i;
  const Record ok = failed.rows[i];
  failed.rows[i].status = Status::error;
  failed.rows[i].latency_ms.reset();
  failed.rows[i].energy_j.reset();
  failed.rows[i].peak_memory_mb.reset();
  write_dataset_csv(failed, dir_ / "failed.csv");
  for (const auto& order : {std::vector<fs::path>{dir_ / "failed.csv", dir_ / "a.csv"},
                            std::vector<fs::path>{dir_ / "a.csv", dir_ / "failed.csv"}}) {
    const MergeSummary s = merge_datasets(order, dir_ / "m.csv", "merge", true);
    EXPECT_EQ(s.dropped, failed.rows.size());
    const Dataset m = read_dataset_csv(dir_ / "m.csv");
    const auto it = std::find_if(m.rows.begin(), m.rows.end(), [&](const Record& r) { return r.config == ok.config; });
    ASSERT_NE(it, m.rows.end());
    EXPECT_EQ(it->status, Status::ok) << order.front();
    EXPECT_EQ(it->latency_ms, ok.latency_ms) << order.front();
  }
}

TEST_F(DataOps, MergeReportsConflictingProtocolSettings) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  // The same protocol id with other settings in the second input's sidecar.
  Dataset other;
  Record r = row("cpu2t", 8, 80);
  r.extra["protocol_id"] = "p1";
  other.rows.push_back(r);
  write_dataset_with_provenance(other, dir_ / "b.csv",
                                {{"kind", "carb dataset"}, {"protocols", {{"p1", {{"warmup", 0}}}}}});
  const MergeSummary s = merge_datasets({dir_ / "a.csv", dir_ / "b.csv"}, dir_ / "m.csv", "");
  ASSERT_EQ(s.conflicts.size(), 1u);
  EXPECT_NE(s.conflicts[0].find("protocol 'p1' has different settings"), std::string::npos) << s.conflicts[0];
  EXPECT_EQ(s.rows_out, 4u);
  // Thirty-third hostile pass: the same settings recorded beside another command line (another
  // --db) and meter check are the same protocol, not a conflict.
  Dataset same;
  Record q = row("cpu2t", 16, 160);
  q.extra["protocol_id"] = "p1";
  same.rows.push_back(q);
  write_dataset_with_provenance(
      same, dir_ / "c.csv",
      {{"kind", "carb dataset"},
       {"protocols",
        {{"p1", {{"warmup", 10}, {"passes", 100}, {"command", "carb profile --db other.db"}, {"meter_check", 1}}}}}});
  EXPECT_TRUE(merge_datasets({dir_ / "a.csv", dir_ / "c.csv"}, dir_ / "m2.csv", "").conflicts.empty());
}

// Thirty-first session: an export made before carb recorded the device's memory, merged first, dropped
// the newer export's memory and was said to have "different settings". A lasting device fact one
// record lacks is merged in, in either order; another value of it, or another device, is a conflict.
TEST_F(DataOps, MergeKeepsTheDevicesMemoryOneExportLacksInEitherOrder) {
  const auto write_with = [&](const std::string& name, int batch, const nlohmann::json& info) {
    Dataset d;
    Record r = row("cpu2t", batch, 10.0 * batch);
    r.extra["protocol_id"] = "p1";
    d.rows.push_back(r);
    const nlohmann::json settings = {{"warmup", 10}, {"backend", "cpu"}, {"platform_info", info}};
    write_dataset_with_provenance(d, dir_ / name, {{"kind", "carb dataset"}, {"protocols", {{"p1", settings}}}});
    return dir_ / name;
  };
  const nlohmann::json older = {{"cpu_model", "AMD EPYC 7B13"}, {"clock_mhz", 2450}};
  nlohmann::json newer = older;
  newer["device_memory_mb"] = 25276;
  newer["clock_mhz"] = 2450;
  const auto a = write_with("a.csv", 1, older), b = write_with("b.csv", 2, newer);
  for (const auto& [first, second] : {std::pair{a, b}, std::pair{b, a}}) {
    const MergeSummary s = merge_datasets({first, second}, dir_ / "m.csv", "", true);
    EXPECT_TRUE(s.conflicts.empty()) << s.conflicts.front();
    EXPECT_EQ(s.rows_out, 2u);
    const auto info = read_provenance(dir_ / "m.csv")["protocols"]["p1"]["platform_info"];
    EXPECT_EQ(info.value("device_memory_mb", 0), 25276) << first;
    EXPECT_EQ(info.value("cpu_model", ""), "AMD EPYC 7B13") << first;
  }
  // Readings of the moment (a GPU's clocks when each run began) differ between runs: no conflict, and
  // the memory is merged all the same.
  nlohmann::json reading = newer;
  reading["sm_clock_mhz_now"] = 1755;
  const auto r = write_with("r.csv", 8, reading);
  const MergeSummary with_reading = merge_datasets({a, r}, dir_ / "m3.csv", "", true);
  EXPECT_TRUE(with_reading.conflicts.empty()) << with_reading.conflicts.front();
  EXPECT_EQ(read_provenance(dir_ / "m3.csv")["protocols"]["p1"]["platform_info"].value("device_memory_mb", 0), 25276);
  // A memory that is no size is never merged in (a hostile tester: "25276" was, without a word).
  nlohmann::json unusable = older;
  unusable["device_memory_mb"] = "25276";
  const auto u = write_with("u.csv", 16, unusable);
  merge_datasets({a, u}, dir_ / "m4.csv", "", true);
  EXPECT_FALSE(read_provenance(dir_ / "m4.csv")["protocols"]["p1"]["platform_info"].contains("device_memory_mb"));
  // A conflict names every input whose facts the kept record holds (the memory came from b.csv).
  nlohmann::json third = newer;
  third["device_memory_mb"] = 16000;
  const auto t = write_with("t.csv", 32, third);
  const MergeSummary named = merge_datasets({a, b, t}, dir_ / "m5.csv", "", true);
  ASSERT_EQ(named.conflicts.size(), 1u);
  EXPECT_NE(named.conflicts[0].find("in " + a.string() + ", " + b.string() + " and " + t.string()), std::string::npos)
      << named.conflicts[0];
  // Another memory, or the same memory on another device: settings that differ, said so.
  nlohmann::json other_memory = newer, other_device = newer;
  other_memory["device_memory_mb"] = 16000;
  other_device["cpu_model"] = "Intel Xeon";
  for (const auto& info : {other_memory, other_device}) {
    const auto c = write_with("c.csv", 4, info);
    const MergeSummary s = merge_datasets({b, c}, dir_ / "m2.csv", "", true);
    ASSERT_EQ(s.conflicts.size(), 1u) << info.dump();
    EXPECT_NE(s.conflicts[0].find("protocol 'p1' has different settings"), std::string::npos) << s.conflicts[0];
    EXPECT_EQ(read_provenance(dir_ / "m2.csv")["protocols"]["p1"]["platform_info"].value("device_memory_mb", 0), 25276);
  }
}

// Thirty-first session: `data info` showed no device facts; it says per protocol the rows name the
// device its record names and that device's memory, as `carb train` reads it.
TEST_F(DataOps, InfoSaysTheDeviceAndItsMemoryPerProtocol) {
  Dataset d;
  for (auto [batch, protocol] : {std::pair{1, "p1"}, std::pair{2, "p2"}, std::pair{4, "p3"}}) {
    Record r = row("cpu2t", batch, 10.0 * batch);
    r.extra["protocol_id"] = protocol;
    d.rows.push_back(r);
  }
  const nlohmann::json protocols = {
      {"p1", {{"warmup", 10}, {"backend", "cpu"}, {"platform_info", {{"cpu_model", "AMD EPYC 7B13"}, {"device_memory_mb", 25276}}}}},
      {"p2", {{"warmup", 10}, {"backend", "cuda"}, {"platform_info", {{"cuda_device", "0"}}}}},
      {"p3", {{"warmup", 10}, {"backend", "cuda"}, {"platform_info", {{"gpu_name", "NVIDIA H200"}, {"device_memory_mb", "lots"}}}}},
      {"p9", {{"warmup", 10}, {"backend", "cpu"}, {"platform_info", {{"cpu_model", "no row names me"}}}}}};
  write_dataset_with_provenance(d, dir_ / "d.csv", {{"kind", "carb dataset"}, {"protocols", protocols}});
  const DatasetInfo info = dataset_info(dir_ / "d.csv");
  ASSERT_EQ(info.devices.size(), 3u);
  EXPECT_EQ(info.devices[0].device, "cpu AMD EPYC 7B13");
  EXPECT_EQ(info.devices[0].memory_mb, 25276.0);
  EXPECT_EQ(info.devices[1].device, "");
  EXPECT_FALSE(info.devices[1].memory_mb);
  EXPECT_EQ(info.devices[2].device, "cuda NVIDIA H200");
  EXPECT_FALSE(info.devices[2].memory_mb) << "a memory that is no size is not one";
  const std::string text = format_dataset_info(info);
  EXPECT_NE(text.find("measured on: cpu AMD EPYC 7B13, 25276 MB of memory (protocol p1)"), std::string::npos) << text;
  EXPECT_NE(text.find("measured on: a device its record does not name, its memory not recorded (protocol p2)"),
            std::string::npos) << text;
  EXPECT_EQ(text.find("no row names me"), std::string::npos) << text;
  const nlohmann::json j = info.to_json();
  ASSERT_EQ(j["devices"].size(), 3u);
  EXPECT_EQ(j["devices"][0]["memory_mb"], 25276.0);
  EXPECT_TRUE(j["devices"][1]["device"].is_null());
  EXPECT_TRUE(j["devices"][2]["memory_mb"].is_null());
  // Without a sidecar: no device said.
  write_dataset_csv(d, dir_ / "bare.csv");
  EXPECT_TRUE(dataset_info(dir_ / "bare.csv").devices.empty());
  // Rows of a protocol the sidecar lacks, a memory that is no size, and a name that would break the
  // line (a hostile tester): each said, on one line.
  Record more = row("cpu2t", 8, 80);
  more.extra["protocol_id"] = "p7";
  d.rows.push_back(more);
  nlohmann::json odd = protocols;
  odd["p1"]["platform_info"]["cpu_model"] = "AMD\nEPYC";
  odd["p1"]["platform_info"]["device_memory_mb"] = "25276";
  write_dataset_with_provenance(d, dir_ / "odd.csv", {{"kind", "carb dataset"}, {"protocols", odd}});
  const DatasetInfo o = dataset_info(dir_ / "odd.csv");
  ASSERT_EQ(o.devices.size(), 4u);
  EXPECT_FALSE(o.devices[3].recorded);
  EXPECT_EQ(o.devices[3].protocol_id, "p7");
  EXPECT_NE(o.devices[0].memory_unusable.find("device_memory_mb"), std::string::npos) << o.devices[0].memory_unusable;
  const std::string said = format_dataset_info(o);
  EXPECT_NE(said.find("measured under protocol p7, which the sidecar does not record"), std::string::npos) << said;
  EXPECT_NE(said.find("measured on: cpu AMD\\nEPYC, its memory unusable (platform_info.device_memory_mb"),
            std::string::npos) << said;
  EXPECT_EQ(said.find("AMD\nEPYC"), std::string::npos) << said;
  EXPECT_EQ(o.to_json()["devices"][3]["recorded"], false);
}

// Rows of a second protocol or platform would make a file every reader refuses: merge refuses it.
TEST_F(DataOps, MergeRefusesMixedProtocolsOrPlatforms) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  export_store({db, dir_ / "g.csv", "gpu", ""});
  Dataset other;
  Record r = row("cpu2t", 8, 80);
  r.extra["protocol_id"] = "p2";
  other.rows.push_back(r);
  write_dataset_csv(other, dir_ / "b.csv");
  EXPECT_THROW(merge_datasets({dir_ / "a.csv", dir_ / "b.csv"}, dir_ / "m.csv", ""), DataError);
  EXPECT_THROW(merge_datasets({dir_ / "a.csv", dir_ / "g.csv"}, dir_ / "m.csv", ""), DataError);
  EXPECT_FALSE(fs::exists(dir_ / "m.csv"));
}

TEST_F(DataOps, MergeRefusesToWriteOverAnInput) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  export_store({db, dir_ / "b.csv", "cpu2t", ""});
  const std::string before = [&] {
    std::ifstream in(dir_ / "a.csv");
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }();
  EXPECT_THROW(merge_datasets({dir_ / "b.csv", dir_ / "a.csv"}, dir_ / "a.csv", ""), InputError);
  std::ifstream in(dir_ / "a.csv");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), before);
}

// Third hostile pass: `combine|merge --out round3.csv` replaced a measuring round (a dataset of
// another kind, kept nowhere else) without a word. Only an earlier output of the same command is
// replaced; anything else takes --force.
TEST_F(DataOps, MergeReplacesOnlyAnEarlierMerge) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  export_store({db, dir_ / "round.csv", "gpu", ""});
  EXPECT_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "round.csv", ""), InputError);
  EXPECT_EQ(read_dataset_csv(dir_ / "round.csv").rows.front().platform, "gpu");
  merge_datasets({dir_ / "a.csv"}, dir_ / "merged.csv", "");
  EXPECT_NO_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "merged.csv", ""));  // its own earlier output
  fs::remove(dir_ / "merged.json");  // a dataset whose provenance is gone: nobody knows what it holds
  EXPECT_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "merged.csv", ""), InputError);
  EXPECT_NO_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "round.csv", "", true));
}

// Fifty-eighth hostile pass: on a full disk, `merge --force` onto a user's file failed (the file was
// left as it was) after it had kept a copy of it and said it replaced it. The write is staged in full
// before anything is kept: a write that cannot be made keeps nothing and says nothing.
// Sixty-second hostile pass: a symbolic link at --out was replaced by merge --force with no copy
// and no word (what it pointed to stayed). The link is kept, as a link, under the earlier name.
TEST_F(DataOps, ForceKeepsASymbolicLinkAtTheOutputAsALink) {
  export_store({make_store(), dir_ / "in.csv", "cpu2t", ""});
  fs::create_directories(dir_ / "elsewhere");
  std::ofstream(dir_ / "elsewhere" / "u.csv") << "precious\n";
  merge_datasets({dir_ / "in.csv"}, dir_ / "o.csv", "merge");  // carb's provenance at o.json
  fs::remove(dir_ / "o.csv");
  fs::create_symlink("elsewhere/u.csv", dir_ / "o.csv");
  const std::string side = slurp(dir_ / "o.json");
  EXPECT_THROW(merge_datasets({dir_ / "in.csv"}, dir_ / "o.csv", "merge"), InputError);
  merge_datasets({dir_ / "in.csv"}, dir_ / "o.csv", "merge", true);
  EXPECT_EQ(slurp(dir_ / "o.earlier.json"), side);  // kept with the link
  EXPECT_FALSE(fs::is_symlink(dir_ / "o.csv"));
  ASSERT_TRUE(fs::is_symlink(dir_ / "o.earlier.csv"));
  EXPECT_EQ(fs::read_symlink(dir_ / "o.earlier.csv"), fs::path("elsewhere/u.csv"));
  EXPECT_EQ(slurp(dir_ / "elsewhere" / "u.csv"), "precious\n");
}

TEST_F(DataOps, AForcedWriteThatCannotBeMadeKeepsNothingAndSaysNothing) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  { std::ofstream(dir_ / "mine.csv") << "user,data\n"; }
  std::vector<std::string> said;
  const WarningHandler before = set_warning_handler([&](const std::string& w) { said.push_back(w); });
  // A file-size limit stands in for a full disk: writes past 64 bytes fail (EFBIG), the user's
  // 10-byte file could still be copied.
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit small = old;
  small.rlim_cur = 64;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  EXPECT_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "mine.csv", "", true), Error);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old), 0);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(slurp(dir_ / "mine.csv"), "user,data\n");
  EXPECT_FALSE(fs::exists(dir_ / "mine.earlier.csv"));
  EXPECT_TRUE(said.empty()) << said.front();
  // With room, it is replaced and kept.
  merge_datasets({dir_ / "a.csv"}, dir_ / "mine.csv", "", true);
  EXPECT_EQ(slurp(dir_ / "mine.earlier.csv"), "user,data\n");
  EXPECT_EQ(said.size(), 1u);
  set_warning_handler(before);
}

// Sixtieth hostile pass: a merge killed between its two renames (the CSV's, then the provenance's)
// left the new CSV with no provenance, the one it wrote staged beside it: readers took the CSV
// without a word, and a --force rerun removed the staged provenance as a stale temporary, keeping
// the CSV without it. Readers now name it, and --force keeps it with the CSV.
TEST_F(DataOps, AProvenanceAKilledRunLeftStagedIsNamedAndKept) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  merge_datasets({dir_ / "a.csv"}, dir_ / "out.csv", "");
  const std::string prov = slurp(dir_ / "out.json");
  const fs::path staged = dir_ / ".out.json.carb-4194303-AbCdEf";  // no process has that pid
  fs::rename(dir_ / "out.json", staged);
  std::vector<std::string> said;
  const WarningHandler before = set_warning_handler([&](const std::string& w) { said.push_back(w); });
  (void)read_dataset_csv(dir_ / "out.csv");
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("has no provenance beside it"), std::string::npos) << said[0];
  EXPECT_NE(said[0].find(staged.string()), std::string::npos) << said[0];
  const std::string csv = slurp(dir_ / "out.csv");
  EXPECT_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "out.csv", ""), InputError);
  merge_datasets({dir_ / "a.csv"}, dir_ / "out.csv", "", true);
  EXPECT_EQ(slurp(dir_ / "out.earlier.csv"), csv);
  EXPECT_EQ(slurp(dir_ / "out.earlier.json"), prov);  // kept with its CSV, not removed
  EXPECT_NE(said.back().find("its provenance from the staging file"), std::string::npos) << said.back();
  // Sixty-first hostile pass: killed replacing its own earlier output, a run leaves the earlier
  // provenance beside the new CSV and the new one staged; --force kept the CSV with the earlier one
  // and removed the staged one. The staged one, the CSV's, is kept with it.
  export_store({db, dir_ / "g.csv", "gpu", ""});
  merge_datasets({dir_ / "g.csv"}, dir_ / "g_out.csv", "");
  fs::copy_file(dir_ / "g_out.csv", dir_ / "out.csv", fs::copy_options::overwrite_existing);
  const std::string g_prov = slurp(dir_ / "g_out.json");
  fs::rename(dir_ / "g_out.json", dir_ / ".out.json.carb-4194303-GhIjKl");
  const std::string g_csv = slurp(dir_ / "out.csv");
  merge_datasets({dir_ / "a.csv"}, dir_ / "out.csv", "", true);
  EXPECT_EQ(slurp(dir_ / "out.earlier-1.csv"), g_csv);
  EXPECT_EQ(slurp(dir_ / "out.earlier-1.json"), g_prov);
  set_warning_handler(before);
}

// Thirtieth hostile pass: `merge --out results.csv --force` replaced results.json, a measurement
// store the user kept there, with the merge's provenance; the store's rows were gone, exit 0.
// --force replaces --out; at the sidecar's name, which the user never named, only carb's provenance.
TEST_F(DataOps, ForceNeverReplacesAFileCarbDidNotWriteAtTheSidecarsName) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  const fs::path store_there = dir_ / "results.json";
  fs::copy_file(db, store_there);
  const std::string before = slurp(store_there);
  for (const bool force : {false, true}) {
    try {
      merge_datasets({dir_ / "a.csv"}, dir_ / "results.csv", "", force);
      ADD_FAILURE() << "the file at the sidecar's name was replaced, force " << force;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("results.json"), std::string::npos) << e.what();
      // A hostile tester: without --force the refusal offered --force, which then refused too.
      EXPECT_EQ(std::string(e.what()).find("pass --force"), std::string::npos) << e.what();
    }
    EXPECT_EQ(slurp(store_there), before);
    EXPECT_FALSE(fs::exists(dir_ / "results.csv"));
  }
  EXPECT_THROW(export_store({db, dir_ / "results.csv", "cpu2t", "", std::nullopt, true}), InputError);
  EXPECT_EQ(slurp(store_there), before);
  // Thirty-first hostile pass: a user's JSON whose "kind" merely starts with "carb" passed for carb's.
  const fs::path emissions = dir_ / "emissions.json";
  { std::ofstream(emissions) << R"({"kind": "carbon emissions", "tonnes_co2e": [1.2, 3.4]})" << '\n'; }
  const std::string notes = slurp(emissions);
  EXPECT_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "emissions.csv", "", true), InputError);
  EXPECT_EQ(slurp(emissions), notes);
  // Thirty-sixth hostile pass: a window study's sidecar is its --out with ".json" added, so study
  // `ws`'s ws.json sits where ws.csv's goes: another file's provenance, never replaced.
  const fs::path study = dir_ / "ws.json";
  { std::ofstream(study) << R"({"kind": "carb window study", "meter_check": {"period_ms": 100}})" << '\n'; }
  const std::string study_text = slurp(study);
  for (const bool force : {false, true}) {
    try {
      merge_datasets({dir_ / "a.csv"}, dir_ / "ws.csv", "", force);
      ADD_FAILURE() << "a window study's provenance was replaced, force " << force;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("holds the provenance of the window study"), std::string::npos) << e.what();
    }
    EXPECT_EQ(slurp(study), study_text);
  }
  // Another command's provenance there is carb's own: --force replaces it, as before.
  merge_datasets({dir_ / "a.csv"}, dir_ / "other.csv", "");
  fs::remove(dir_ / "other.csv");
  EXPECT_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "other.csv", ""), InputError);
  EXPECT_NO_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "other.csv", "", true));
}

// Thirteenth hostile pass: a latency corrected by hand in a merge's output was merged over without a
// word. The sidecar holds the CSV's hash as carb wrote it; an edited output needs --force.
TEST_F(DataOps, AnEditedOutputIsNotReplacedWithoutForce) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "");
  const nlohmann::json prov = read_provenance(dir_ / "m.csv");
  ASSERT_TRUE(prov.contains(kCsvHashKey)) << prov.dump();
  EXPECT_EQ(prov[kCsvHashKey], file_fnv1a64(dir_ / "m.csv").value());
  std::string text = slurp(dir_ / "m.csv");
  const std::size_t at = text.find(",10,");  // batch 1's latency
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 4, ",10.5,");
  { std::ofstream(dir_ / "m.csv", std::ios::binary) << text; }
  try {
    merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "");
    ADD_FAILURE() << "an edited merge was replaced";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("was changed since carb wrote it"), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(dir_ / "m.csv"), text);
  EXPECT_NO_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "", /*force=*/true));
  EXPECT_NO_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", ""));  // unedited again: replaced
  // Fourteenth hostile pass: a sidecar without the hash (an older carb's) let an edit be merged
  // over; it cannot tell an edit from none, so it needs --force too.
  nlohmann::json old_sidecar = read_provenance(dir_ / "m.csv");
  old_sidecar.erase(kCsvHashKey);
  { std::ofstream(dir_ / "m.json") << old_sidecar.dump(2); }
  try {
    merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "");
    ADD_FAILURE() << "an output whose sidecar has no hash was replaced";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("does not record the CSV's hash"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "", /*force=*/true));
  // An export's output the same way.
  export_store({db, dir_ / "e.csv", "cpu2t", ""});
  { std::ofstream(dir_ / "e.csv", std::ios::app) << "\n"; }
  EXPECT_THROW(export_store({db, dir_ / "e.csv", "cpu2t", ""}), InputError);
}

// Thirteenth hostile pass: an --out that was a symbolic link was replaced by a file (a dangling
// link became a file; a link to a carb output left its target stale).
TEST_F(DataOps, AnOutputThatIsASymbolicLinkNeedsForce) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "");
  fs::create_symlink(dir_ / "m.csv", dir_ / "link.csv");
  fs::create_symlink(dir_ / "nowhere.csv", dir_ / "dangling.csv");
  for (const char* out : {"link.csv", "dangling.csv"}) {
    try {
      merge_datasets({dir_ / "a.csv"}, dir_ / out, "");
      ADD_FAILURE() << out << " was written over";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("symbolic link"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(fs::is_symlink(dir_ / out)) << out;
  }
}

// Thirteenth hostile pass: a directory where an input's sidecar belongs ended in "internal error".
TEST_F(DataOps, ASidecarThatIsADirectoryIsADataError) {
  const fs::path db = make_store();
  export_store({db, dir_ / "a.csv", "cpu2t", ""});
  fs::remove(dir_ / "a.json");
  fs::create_directories(dir_ / "a.json");
  try {
    merge_datasets({dir_ / "a.csv"}, dir_ / "m.csv", "");
    ADD_FAILURE() << "a directory was read as a sidecar";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
}

// Seventh hostile pass: an earlier merge was replaced by the merge of unrelated inputs.
TEST_F(DataOps, AMergeNeverDropsTheConfigurationsOfTheMergeItReplaces) {
  const fs::path db = make_store();
  export_store({db, dir_ / "cpu.csv", "cpu2t", ""});
  export_store({db, dir_ / "gpu.csv", "gpu", ""});
  merge_datasets({dir_ / "cpu.csv"}, dir_ / "m.csv", "");
  EXPECT_THROW(merge_datasets({dir_ / "gpu.csv"}, dir_ / "m.csv", ""), InputError);
  EXPECT_EQ(read_dataset_csv(dir_ / "m.csv").rows.front().platform, "cpu2t");
  EXPECT_NO_THROW(merge_datasets({dir_ / "gpu.csv"}, dir_ / "m.csv", "", /*force=*/true));
  // Eighth hostile pass: the same configurations as error rows, or without their energy, emptied
  // every measured value of the earlier merge.
  Dataset failed = read_dataset_csv(dir_ / "gpu.csv");
  for (Record& r : failed.rows) {
    r.status = Status::error;
    r.latency_ms.reset(), r.energy_j.reset(), r.peak_memory_mb.reset();
  }
  write_dataset_csv(failed, dir_ / "failed.csv");
  EXPECT_THROW(merge_datasets({dir_ / "failed.csv"}, dir_ / "m.csv", ""), InputError);
  Dataset no_energy = read_dataset_csv(dir_ / "gpu.csv");
  for (Record& r : no_energy.rows) r.energy_j.reset();
  write_dataset_csv(no_energy, dir_ / "noenergy.csv");
  EXPECT_THROW(merge_datasets({dir_ / "noenergy.csv"}, dir_ / "m.csv", ""), InputError);
  EXPECT_EQ(*read_dataset_csv(dir_ / "m.csv").rows.front().energy_j, 0.25);
  // Eleventh hostile pass: the same rows without a column they recorded (reference_ms, which drift
  // correction reads) replaced them.
  Dataset with_ref = read_dataset_csv(dir_ / "gpu.csv");
  with_ref.extra_columns.push_back("reference_ms");
  for (Record& r : with_ref.rows) r.extra["reference_ms"] = "3.5";
  write_dataset_csv(with_ref, dir_ / "ref.csv");
  merge_datasets({dir_ / "ref.csv"}, dir_ / "r.csv", "");
  EXPECT_THROW(merge_datasets({dir_ / "gpu.csv"}, dir_ / "r.csv", ""), InputError);
  EXPECT_EQ(read_dataset_csv(dir_ / "r.csv").rows.front().extra.at("reference_ms"), "3.5");
  // An input's sidecar is never the output's, whatever --out is spelled as.
  fs::create_symlink(dir_ / "cpu.csv", dir_ / "link.csv");
  EXPECT_THROW(check_not_an_input(dir_ / "cpu.json", {dir_ / "link.csv"}), InputError);
  EXPECT_THROW(check_not_an_input(dir_ / "." / "cpu.csv", {dir_ / "link.csv"}), InputError);
  EXPECT_NO_THROW(check_not_an_input(dir_ / "other.csv", {dir_ / "link.csv"}));
}

// Thirty-ninth hostile pass: an input named through a hard link had its real sidecar replaced by
// --out h200.json --force (report, train, meter --study).
TEST_F(DataOps, AnInputsSidecarIsRefusedThroughItsHardLinks) {
  Dataset d;
  d.rows.push_back(row("gpu", 1, 1.5));
  write_dataset_csv(d, dir_ / "in.csv");
  merge_datasets({dir_ / "in.csv"}, dir_ / "h200.csv", "");  // h200.json: {"csv": "h200.csv", ...}
  ASSERT_TRUE(fs::exists(dir_ / "h200.json"));
  fs::create_hard_link(dir_ / "h200.csv", dir_ / "hl.csv");
  EXPECT_THROW(check_not_an_input(dir_ / "h200.json", {dir_ / "hl.csv"}), InputError);
  // A link in another directory: the sidecar names the CSV it describes.
  fs::create_directories(dir_ / "sub");
  fs::create_hard_link(dir_ / "h200.csv", dir_ / "sub" / "far.csv");
  EXPECT_THROW(check_not_an_input(dir_ / "h200.json", {dir_ / "sub" / "far.csv"}), InputError);
  // Still free: the sidecar of another file, and a sidecar name that belongs to no link.
  EXPECT_NO_THROW(check_not_an_input(dir_ / "in.json", {dir_ / "hl.csv"}));
  EXPECT_NO_THROW(check_not_an_input(dir_ / "other.json", {dir_ / "sub" / "far.csv"}));
  EXPECT_EQ(read_dataset_csv(dir_ / "hl.csv").rows.size(), 1u);
}

// Fortieth hostile pass: `merge a.csv --out all.csv`, a.csv deleted, then `merge b.csv --out all.csv`
// with the same configurations measured again replaced every value of all.csv, exit 0.
TEST_F(DataOps, AMergeOfOtherMeasurementsNeverReplacesTheValuesOfAnEarlierOne) {
  Dataset a, b;
  for (int batch : {1, 2}) a.rows.push_back(row("gpu", batch, 1.5 * batch)), b.rows.push_back(row("gpu", batch, 2.0 * batch));
  write_dataset_csv(a, dir_ / "a.csv");
  write_dataset_csv(b, dir_ / "b.csv");
  merge_datasets({dir_ / "a.csv"}, dir_ / "all.csv", "");
  fs::remove(dir_ / "a.csv");
  EXPECT_THROW(merge_datasets({dir_ / "b.csv"}, dir_ / "all.csv", ""), InputError);
  EXPECT_EQ(*read_dataset_csv(dir_ / "all.csv").rows.front().latency_ms, 1.5);
  // What it was made from, again (by hash, under another name), may change nothing or grow it.
  write_dataset_csv(a, dir_ / "a-again.csv");
  EXPECT_NO_THROW(merge_datasets({dir_ / "a-again.csv", dir_ / "b.csv"}, dir_ / "all.csv", ""));
  // The same input path that grew (a store's re-export) is the same input: it adds rows.
  Dataset grown = a;
  grown.rows.push_back(row("gpu", 4, 6.0));
  write_dataset_csv(grown, dir_ / "a-again.csv");
  EXPECT_NO_THROW(merge_datasets({dir_ / "a-again.csv", dir_ / "b.csv"}, dir_ / "all.csv", ""));
  EXPECT_EQ(read_dataset_csv(dir_ / "all.csv").rows.size(), 3u);
  // Forty-first hostile pass: the same path with other values in it (overwritten with cp, exported
  // again from another store) is not the same input: a store never rewrites a committed row.
  grown.rows[0].latency_ms = 1.6;
  write_dataset_csv(grown, dir_ / "a-again.csv");
  EXPECT_THROW(merge_datasets({dir_ / "a-again.csv", dir_ / "b.csv"}, dir_ / "all.csv", ""), InputError);
  EXPECT_EQ(*read_dataset_csv(dir_ / "all.csv").rows.front().latency_ms, 1.5);
  // --force replaces it.
  EXPECT_NO_THROW(merge_datasets({dir_ / "b.csv"}, dir_ / "all.csv", "", /*force=*/true));
  EXPECT_EQ(*read_dataset_csv(dir_ / "all.csv").rows.front().latency_ms, 2.0);
}

// Hundred-and-thirty-fourth hostile pass: the refusal to replace an earlier output named, as its
// first changed row, one whose latency differed in the last bit only (0.64097036 against
// 0.6409703600000001, a median taken again); the real changes lay elsewhere. The same number printed
// otherwise is no change.
TEST_F(DataOps, ALastBitDifferenceIsNoChangeOfAnEarlierOutputsValues) {
  Dataset a, b;
  for (int batch : {1, 2}) a.rows.push_back(row("gpu", batch, 0.64097036 * batch));
  b = a;
  b.rows[0].latency_ms = 0.6409703600000001;  // the same measurement, printed otherwise
  b.rows[1].energy_j = 0.6;                   // a change
  write_dataset_csv(a, dir_ / "a.csv");
  write_dataset_csv(b, dir_ / "b.csv");
  merge_datasets({dir_ / "a.csv"}, dir_ / "all.csv", "");
  fs::remove(dir_ / "a.csv");
  try {
    merge_datasets({dir_ / "b.csv"}, dir_ / "all.csv", "");
    ADD_FAILURE() << "values of an earlier merge were replaced";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the measured values of 1 of its rows would"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("basic-18-w1-r64-b2-fp32 energy_j"), std::string::npos) << e.what();
  }
}

// Hundred-and-fifteenth hostile pass: a sidecar written before carb recorded its inputs' places and
// bytes (the shipped data/cpu-2t.json) told the README's own re-combine that a round it was given
// "is not among these inputs". It cannot tell, and says so; the values are kept all the same.
TEST_F(DataOps, AnOlderSidecarThatCannotNameItsInputsSaysSo) {
  Dataset r1, r2, r3;
  for (int batch : {1, 2}) {
    r1.rows.push_back(row("gpu", batch, 1.0 * batch));
    r2.rows.push_back(row("gpu", batch, 1.4 * batch));
    r3.rows.push_back(row("gpu", batch, 3.0 * batch));
  }
  write_dataset_csv(r1, dir_ / "r1.csv");
  write_dataset_csv(r2, dir_ / "r2.csv");
  write_dataset_csv(r3, dir_ / "r3.csv");
  combine_rounds({dir_ / "r1.csv", dir_ / "r2.csv"}, dir_ / "c.csv", "");
  const double before = *read_dataset_csv(dir_ / "c.csv").rows.front().latency_ms;
  nlohmann::json prov = nlohmann::json::parse(std::ifstream(dir_ / "c.json"));
  ASSERT_TRUE(prov.contains("rounds"));
  for (auto& e : prov["rounds"]) {
    e.erase(kResolvedPathKey);
    e.erase(kCsvHashKey);
    if (e.contains("provenance") && e["provenance"].is_object()) e["provenance"].erase(kCsvHashKey);
    e["file"] = fs::path(e["file"].get<std::string>()).filename().string();  // relative, as typed
  }
  prov.erase(kSidecarHashKey);  // sealed again, as carb seals what it writes (an unsealed one is refused apart)
  const std::string body = prov.dump();
  prov[kSidecarHashKey] = detail::hex64(detail::fnv1a64(reinterpret_cast<const unsigned char*>(body.data()), body.size()));
  std::ofstream(dir_ / "c.json") << prov.dump(1);
  try {
    combine_rounds({dir_ / "r1.csv", dir_ / "r2.csv", dir_ / "r3.csv"}, dir_ / "c.csv", "");
    ADD_FAILURE() << "values of an earlier combine were replaced";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("was made from r1.csv, but its provenance (written by an older carb) records neither where"),
              std::string::npos) << m;
    EXPECT_EQ(m.find("not among these inputs"), std::string::npos) << m;
  }
  EXPECT_EQ(*read_dataset_csv(dir_ / "c.csv").rows.front().latency_ms, before);
}

TEST_F(DataOps, ACombineOfOtherRoundsNeverReplacesTheValuesOfAnEarlierOne) {
  Dataset r1, r2, r3, r4;
  for (int batch : {1, 2}) {
    r1.rows.push_back(row("gpu", batch, 1.0 * batch));
    r2.rows.push_back(row("gpu", batch, 1.2 * batch));
    r3.rows.push_back(row("gpu", batch, 3.0 * batch));
    r4.rows.push_back(row("gpu", batch, 3.4 * batch));
  }
  int n = 0;
  for (const Dataset* d : {&r1, &r2, &r3, &r4}) write_dataset_csv(*d, dir_ / ("r" + std::to_string(++n) + ".csv"));
  combine_rounds({dir_ / "r1.csv", dir_ / "r2.csv"}, dir_ / "c.csv", "");
  const double before = *read_dataset_csv(dir_ / "c.csv").rows.front().latency_ms;
  EXPECT_THROW(combine_rounds({dir_ / "r3.csv", dir_ / "r4.csv"}, dir_ / "c.csv", ""), InputError);
  EXPECT_EQ(*read_dataset_csv(dir_ / "c.csv").rows.front().latency_ms, before);
  // Another round added to the same rounds changes the medians, as it should.
  EXPECT_NO_THROW(combine_rounds({dir_ / "r1.csv", dir_ / "r2.csv", dir_ / "r3.csv"}, dir_ / "c.csv", ""));
  const double three = *read_dataset_csv(dir_ / "c.csv").rows.front().latency_ms;
  EXPECT_NE(three, before);
  // Forty-first hostile pass: a round file overwritten with another round's values kept its path
  // and passed as the same round; only a configuration that gains a round may change.
  Dataset low;
  for (int batch : {1, 2}) low.rows.push_back(row("gpu", batch, 0.5 * batch));
  write_dataset_csv(low, dir_ / "low.csv");
  fs::copy_file(dir_ / "low.csv", dir_ / "r3.csv", fs::copy_options::overwrite_existing);
  EXPECT_THROW(combine_rounds({dir_ / "r1.csv", dir_ / "r2.csv", dir_ / "r3.csv"}, dir_ / "c.csv", ""), InputError);
  EXPECT_EQ(*read_dataset_csv(dir_ / "c.csv").rows.front().latency_ms, three);
  // A round that grew (a configuration measured later in it) is the same round.
  Dataset r2_grown = r2, r1_grown = r1;
  r2_grown.rows.push_back(row("gpu", 4, 4.8));
  r1_grown.rows.push_back(row("gpu", 4, 4.0));
  write_dataset_csv(r1_grown, dir_ / "r1.csv");
  write_dataset_csv(r2_grown, dir_ / "r2.csv");
  write_dataset_csv(r3, dir_ / "r3.csv");
  EXPECT_NO_THROW(combine_rounds({dir_ / "r1.csv", dir_ / "r2.csv", dir_ / "r3.csv"}, dir_ / "c.csv", ""));
  EXPECT_EQ(read_dataset_csv(dir_ / "c.csv").rows.size(), 3u);
  // Forty-second hostile pass: a round overwritten while another round was added passed as "more
  // rounds"; a changed round never excuses a changed value.
  const double kept = *read_dataset_csv(dir_ / "c.csv").rows.front().latency_ms;
  fs::copy_file(dir_ / "low.csv", dir_ / "r1.csv", fs::copy_options::overwrite_existing);
  EXPECT_THROW(combine_rounds({dir_ / "r1.csv", dir_ / "r2.csv", dir_ / "r3.csv", dir_ / "r4.csv"}, dir_ / "c.csv", ""),
               InputError);
  EXPECT_EQ(*read_dataset_csv(dir_ / "c.csv").rows.front().latency_ms, kept);
}

// Forty-first hostile pass: the sidecar recorded "a.csv" as typed, and a merge run from another
// directory with its own a.csv was taken for the same input (the original deleted): every value
// replaced, exit 0. So is a symlink pointed at another file.
TEST_F(DataOps, AnInputIsKnownByWhereItWasNotByTheNameTyped) {
  Dataset a, b;
  for (int batch : {1, 2}) a.rows.push_back(row("gpu", batch, 1.5 * batch)), b.rows.push_back(row("gpu", batch, 2.0 * batch));
  fs::create_directories(dir_ / "x");
  fs::create_directories(dir_ / "y");
  write_dataset_csv(a, dir_ / "x" / "a.csv");
  write_dataset_csv(b, dir_ / "y" / "a.csv");
  const fs::path cwd = fs::current_path();
  fs::current_path(dir_ / "x");
  merge_datasets({"a.csv"}, dir_ / "all.csv", "");
  fs::remove(dir_ / "x" / "a.csv");
  fs::current_path(dir_ / "y");
  EXPECT_THROW(merge_datasets({"a.csv"}, dir_ / "all.csv", ""), InputError);
  fs::current_path(cwd);
  EXPECT_EQ(*read_dataset_csv(dir_ / "all.csv").rows.front().latency_ms, 1.5);
  const nlohmann::json prov = read_provenance(dir_ / "all.csv");
  EXPECT_EQ(prov["inputs"][0]["file"], "a.csv");
  EXPECT_EQ(fs::path(prov["inputs"][0]["resolved_path"].get<std::string>()), resolved_path(dir_ / "x" / "a.csv"));

  write_dataset_csv(a, dir_ / "x" / "a.csv");
  fs::create_symlink(dir_ / "x" / "a.csv", dir_ / "link.csv");
  merge_datasets({dir_ / "link.csv"}, dir_ / "l.csv", "");
  fs::remove(dir_ / "link.csv");
  fs::create_symlink(dir_ / "y" / "a.csv", dir_ / "link.csv");
  EXPECT_THROW(merge_datasets({dir_ / "link.csv"}, dir_ / "l.csv", ""), InputError);
  EXPECT_EQ(*read_dataset_csv(dir_ / "l.csv").rows.front().latency_ms, 1.5);
}

// Forty-second hostile pass: an input overwritten with another CSV (cp, its sidecar left as it
// was) counted as unchanged by the hash its stale sidecar claimed, and an oom row that became
// another input's error counted as no change at all. Forty-third: an input whose sidecar was
// already stale when it was merged was vouched for by the bytes that sidecar named.
TEST_F(DataOps, AnInputIsKnownByItsOwnBytesAndAChangedStatusIsAChange) {
  Dataset a, b;
  for (int batch : {1, 2}) a.rows.push_back(row("gpu", batch, 1.5 * batch)), b.rows.push_back(row("gpu", batch, 2.0 * batch));
  write_dataset_csv(a, dir_ / "a.csv");
  write_dataset_csv(b, dir_ / "b.csv");
  merge_datasets({dir_ / "a.csv"}, dir_ / "in.csv", "");  // in.csv has a sidecar naming its hash
  merge_datasets({dir_ / "in.csv"}, dir_ / "all.csv", "");
  fs::copy_file(dir_ / "in.csv", dir_ / "in-a.csv");
  fs::copy_file(dir_ / "b.csv", dir_ / "in.csv", fs::copy_options::overwrite_existing);  // in.json stays
  EXPECT_THROW(merge_datasets({dir_ / "in.csv"}, dir_ / "all.csv", ""), InputError);
  EXPECT_EQ(*read_dataset_csv(dir_ / "all.csv").rows.front().latency_ms, 1.5);

  // Merged while stale (in.csv holds b, in.json names a's bytes); a's bytes put back later are
  // not what was merged.
  merge_datasets({dir_ / "in.csv"}, dir_ / "stale.csv", "");
  EXPECT_EQ(*read_dataset_csv(dir_ / "stale.csv").rows.front().latency_ms, 2.0);
  fs::copy_file(dir_ / "in-a.csv", dir_ / "in.csv", fs::copy_options::overwrite_existing);
  EXPECT_THROW(merge_datasets({dir_ / "in.csv"}, dir_ / "stale.csv", ""), InputError);
  EXPECT_EQ(*read_dataset_csv(dir_ / "stale.csv").rows.front().latency_ms, 2.0);

  Dataset failed;
  failed.rows.push_back(row("gpu", 1, 1.5));
  failed.rows.push_back(row("gpu", 2, 0));
  failed.rows.back().status = Status::oom;
  failed.rows.back().latency_ms.reset();
  failed.rows.back().energy_j.reset();
  write_dataset_csv(failed, dir_ / "f.csv");
  merge_datasets({dir_ / "f.csv"}, dir_ / "fall.csv", "");
  failed.rows.back().status = Status::error;
  write_dataset_csv(failed, dir_ / "f.csv");
  EXPECT_THROW(merge_datasets({dir_ / "f.csv"}, dir_ / "fall.csv", ""), InputError);
  EXPECT_EQ(read_dataset_csv(dir_ / "fall.csv").rows.back().status, Status::oom);
}

// Forty-fourth hostile pass: the same inputs in the other order replaced every value of the
// earlier output, said only as "duplicates measured differently". Allowed (every source is there),
// but said: which rows of the earlier output now hold another input's values.
TEST_F(DataOps, AMergeSaysWhichValuesOfTheEarlierOutputItReplaces) {
  Dataset a, b;
  for (int batch : {1, 2}) a.rows.push_back(row("gpu", batch, 1.5 * batch)), b.rows.push_back(row("gpu", batch, 2.0 * batch));
  write_dataset_csv(a, dir_ / "a.csv");
  write_dataset_csv(b, dir_ / "b.csv");
  EXPECT_EQ(merge_datasets({dir_ / "a.csv", dir_ / "b.csv"}, dir_ / "all.csv", "").replaced, "");
  EXPECT_EQ(merge_datasets({dir_ / "a.csv", dir_ / "b.csv"}, dir_ / "all.csv", "").replaced, "");  // nothing changes
  const MergeSummary s = merge_datasets({dir_ / "b.csv", dir_ / "a.csv"}, dir_ / "all.csv", "");
  EXPECT_EQ(s.replaced, "2 rows (first: gpu basic-18-w1-r64-b1-fp32 latency_ms)");
  EXPECT_EQ(s.to_json()["replaced_in_earlier_output"], s.replaced);
  EXPECT_EQ(*read_dataset_csv(dir_ / "all.csv").rows.front().latency_ms, 2.0);
}

// Forty-seventh hostile pass: a Latin-1 byte in an input's name made the sidecar's JSON throw after
// the CSV had replaced an earlier output (exit 3, a stale sidecar, and carb refusing its own file).
// The name is recorded with U+FFFD; the output and its sidecar are written together, and agree.
TEST_F(DataOps, AnInputNamedInAnotherEncodingIsRecordedNotHalfWritten) {
  Dataset a, b;
  for (int batch : {1, 2}) a.rows.push_back(row("gpu", batch, 1.5 * batch)), b.rows.push_back(row("gpu", batch, 1.5 * batch));
  b.rows.push_back(row("gpu", 4, 6.0));
  write_dataset_csv(a, dir_ / "a.csv");
  const fs::path latin1 = dir_ / "b-\xe9.csv";
  write_dataset_csv(b, latin1);
  merge_datasets({dir_ / "a.csv"}, dir_ / "all.csv", "");
  const MergeSummary s = merge_datasets({dir_ / "a.csv", latin1}, dir_ / "all.csv", "");
  EXPECT_EQ(s.rows_out, 3u);
  EXPECT_EQ(read_dataset_csv(dir_ / "all.csv").rows.size(), 3u);
  const nlohmann::json prov = read_provenance(dir_ / "all.csv");
  EXPECT_EQ(prov["inputs"][1]["file"], (dir_ / "b-\xef\xbf\xbd.csv").string());
  // Its sidecar agrees with it: the same merge again is carb's own output, not "changed since".
  EXPECT_NO_THROW(merge_datasets({dir_ / "a.csv", latin1}, dir_ / "all.csv", ""));
}

// Forty-ninth hostile pass: an input of other measurements that matched the earlier output only in
// the measured columns replaced every row's reference_ms with its own, exit 0.
TEST_F(DataOps, AMergeOfOtherMeasurementsNeverReplacesTheirOtherColumnsEither) {
  Dataset a, b;
  for (int batch : {1, 2}) {
    a.rows.push_back(row("gpu", batch, 1.5 * batch));
    a.rows.back().extra["reference_ms"] = "3";
    b.rows.push_back(a.rows.back());
    b.rows.back().extra["reference_ms"] = "4.5";
  }
  a.add_extra_columns({"reference_ms"});
  b.add_extra_columns({"reference_ms"});
  write_dataset_csv(a, dir_ / "a.csv");
  write_dataset_csv(b, dir_ / "b.csv");
  merge_datasets({dir_ / "a.csv"}, dir_ / "all.csv", "");
  fs::remove(dir_ / "a.csv");
  EXPECT_THROW(merge_datasets({dir_ / "b.csv"}, dir_ / "all.csv", ""), InputError);
  EXPECT_EQ(read_dataset_csv(dir_ / "all.csv").rows.front().extra.at("reference_ms"), "3");
}

TEST_F(DataOps, MergeOfMalformedInputFailsWithoutWriting) {
  std::ofstream(dir_ / "bad.csv") << "platform,family\n";
  EXPECT_THROW(merge_datasets({dir_ / "bad.csv"}, dir_ / "m.csv", ""), DataError);
  EXPECT_FALSE(fs::exists(dir_ / "m.csv"));
  EXPECT_THROW(merge_datasets({}, dir_ / "m.csv", ""), InputError);
}

// Info describes any well-formed file, even one that mixes platforms (which readers refuse).
TEST_F(DataOps, InfoSummarizesRowsRangesAndTargets) {
  write_dataset_csv(Store(make_store()).to_dataset(), dir_ / "d.csv");
  const DatasetInfo typed = dataset_info(dir_ / "d.csv");
  const nlohmann::json info = typed.to_json();
  EXPECT_EQ(info["rows"], 5);
  EXPECT_EQ(info["status"], (nlohmann::json{{"ok", 4}, {"oom", 1}}));
  EXPECT_EQ(info["precision"]["fp32"], 5);
  EXPECT_EQ(info["batch"]["min"], 1);
  EXPECT_EQ(info["batch"]["max"], 4096);
  EXPECT_EQ(info["platforms"]["cpu2t"]["targets"]["energy_j"]["ok_rows_with_value"], 0);
  EXPECT_EQ(info["platforms"]["gpu"]["targets"]["energy_j"]["ok_rows_with_value"], 1);
  EXPECT_EQ(info["platforms"]["gpu"]["targets"]["energy_j"]["ok_rows"], 1);
  const std::string table = format_dataset_info(typed);
  EXPECT_NE(table.find("cpu2t"), std::string::npos) << table;
  EXPECT_NE(table.find("batch: 1 .. 4096"), std::string::npos) << table;
}

// Fifteenth-pass leftover: info said nothing of the duplicates that make every reader refuse a
// file, a respelled width (0.250 builds 0.25's channels) included.
TEST_F(DataOps, InfoCountsDuplicatesByNetwork) {
  Dataset d = Store(make_store()).to_dataset();
  EXPECT_EQ(dataset_info([&] { write_dataset_csv(d, dir_ / "d.csv"); return dir_ / "d.csv"; }()).duplicates, 0u);
  EXPECT_EQ(format_dataset_info(dataset_info(dir_ / "d.csv")).find("duplicates"), std::string::npos);
  Record again = d.rows.front();
  again.config.width += 0.0001;  // the same channels
  ASSERT_EQ(network_key(again.config), network_key(d.rows.front().config));
  d.rows.push_back(again);
  d.rows.push_back(d.rows.front());
  write_dataset_csv(d, dir_ / "dup.csv");
  const DatasetInfo info = dataset_info(dir_ / "dup.csv");
  EXPECT_EQ(info.duplicates, 2u);
  EXPECT_EQ(info.to_json()["duplicates"], 2);
  EXPECT_NE(format_dataset_info(info).find("duplicates: 2 rows repeat an earlier row's network"), std::string::npos)
      << format_dataset_info(info);
  // Every problem readers refuse the file for is counted, as validate lists them (hundred-and-ninth
  // hostile pass: a file of 736 problems was summarised with only its 7 duplicates said).
  const auto listed = validate_dataset_csv(dir_ / "dup.csv");
  EXPECT_EQ(info.problems, listed.size());
  EXPECT_EQ(info.to_json()["problems"], listed.size());
  Dataset bad = d;
  bad.rows.pop_back();
  bad.rows.pop_back();
  bad.rows.front().status = Status::oom;  // an oom row with a latency: no duplicate, one problem
  write_dataset_csv(bad, dir_ / "bad.csv");
  const DatasetInfo bad_info = dataset_info(dir_ / "bad.csv");
  EXPECT_EQ(bad_info.duplicates, 0u);
  ASSERT_EQ(bad_info.problems, validate_dataset_csv(dir_ / "bad.csv").size());
  EXPECT_GT(bad_info.problems, 0u);
  EXPECT_NE(format_dataset_info(bad_info).find("problems: " + std::to_string(bad_info.problems) +
                                               ": readers refuse the file; carb data validate lists them"),
            std::string::npos)
      << format_dataset_info(bad_info);
  // A file readers take says no problems (the store's rows of one platform).
  Dataset sound = d;
  std::erase_if(sound.rows, [&](const Record& r) { return r.platform != d.rows.front().platform; });
  sound.rows.pop_back();  // the two repeats
  sound.rows.pop_back();
  write_dataset_csv(sound, dir_ / "sound.csv");
  ASSERT_TRUE(validate_dataset_csv(dir_ / "sound.csv").empty()) << ::testing::PrintToString(validate_dataset_csv(dir_ / "sound.csv"));
  EXPECT_EQ(dataset_info(dir_ / "sound.csv").problems, 0u);
  EXPECT_EQ(format_dataset_info(dataset_info(dir_ / "sound.csv")).find("problems"), std::string::npos);
  // A sidecar readers refuse is warned of and counted, and the CSV still summarised.
  std::ofstream(dir_ / "sound.json") << "{broken";
  EXPECT_EQ(dataset_info(dir_ / "sound.csv").problems, 1u);
}

TEST_F(DataOps, ExportedDatasetValidates) {
  export_store({make_store(), dir_ / "d.csv", "gpu", ""});
  const auto problems = validate_dataset_csv(dir_ / "d.csv");
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
}

}  // namespace
}  // namespace carb
