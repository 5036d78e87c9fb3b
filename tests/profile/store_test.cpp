// Tests of the SQLite measurement store: resume queries, NULL handling, persistence,
// replacement on the unique key, export to a Dataset and refusal of foreign files.
#include "carb/store.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <csignal>
#include <sys/resource.h>
#include <unistd.h>

#include "profile/store_lock.hpp"
#include "small_disk_test.hpp"
#include "temp_dir_test.hpp"
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "carb/error.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class StoreTest : public TempDirTest {
 protected:
  StoreTest() : TempDirTest("carb_store_") {}
  fs::path db() const { return dir_ / "m.db"; }
  // Six rows committed, the last five still only in the -wal: a reader's snapshot kept the writer's
  // close from folding them into the file. Defined below sample().
  void close_with_rows_in_wal() const;

};

StoredMeasurement sample(int batch, Status status = Status::ok) {
  StoredMeasurement m;
  m.record.platform = "cpu2t";
  m.record.config = {Family::basic, 18, 0.5, 64, batch, Precision::fp32};
  m.record.status = status;
  if (m.record.status == Status::ok) {
    m.record.latency_ms = 12.25 * batch;
    m.record.peak_memory_mb = 100.0 + batch;
  }
  m.protocol_id = "p1";
  return m;
}

void StoreTest::close_with_rows_in_wal() const {
  { Store s(db(), StoreAccess::sole_writer); s.put(sample(1)); }
  sqlite3* reader = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db().c_str(), &reader, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM measurements;", nullptr, nullptr, nullptr), SQLITE_OK);
  {
    Store s(db(), StoreAccess::sole_writer);
    for (int b = 2; b <= 6; ++b) s.put(sample(b));
  }  // the reader's snapshot keeps the writer's close from checkpointing
  sqlite3_exec(reader, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(reader);
}

TEST_F(StoreTest, PutHasDoneKeysRoundTrip) {
  Store s(db());
  EXPECT_EQ(s.count(), 0u);
  const auto a = sample(1), b = sample(4);
  s.put(a);
  s.put(b);
  EXPECT_TRUE(s.has("cpu2t", a.record.config, "p1"));
  EXPECT_FALSE(s.has("cpu2t", a.record.config, "p2"));
  EXPECT_FALSE(s.has("gpu", a.record.config, "p1"));
  EXPECT_FALSE(s.has("cpu2t", sample(2).record.config, "p1"));
  const auto keys = s.done_keys("cpu2t", "p1");
  EXPECT_EQ(keys,
            (std::unordered_set<std::string>{config_key(a.record.config), config_key(b.record.config)}));
  EXPECT_TRUE(s.done_keys("cpu2t", "other").empty());
  EXPECT_EQ(s.count(), 2u);
}

// A hostile tester: `profile --db $'n\nl.db'` made a store whose name broke every line naming it. A
// new store is named printably; one that exists already is the user's, and opens.
TEST_F(StoreTest, ANewStoresNameHoldsNoControlCharacter) {
  const fs::path odd = db().parent_path() / "n\nl.db";
  EXPECT_THROW(Store(odd, StoreAccess::sole_writer), InputError);
  EXPECT_FALSE(fs::exists(odd));
  { Store made(db(), StoreAccess::sole_writer); made.put(sample(1)); }
  fs::rename(db(), odd);
  EXPECT_EQ(Store(odd, StoreAccess::sole_writer).count(), 1u);
}

// Twenty-ninth hostile pass: a torn copy (taken with `cp` while a profiler wrote) was resumed and
// exported without a word. Here one index entry's key no longer matches its row: the store opens
// as SQLite, but its integrity check fails, and carb refuses it for writing and for reading alike.
TEST_F(StoreTest, ADamagedStoreIsRefusedAndLeftAsItWas) {
  {
    Store s(db());
    for (int b : {1, 2, 4}) s.put(sample(b));
  }
  int root = 0, page_size = 0;
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    sqlite3_prepare_v2(raw, "SELECT rootpage FROM sqlite_master WHERE type = 'index' AND tbl_name = 'measurements' "
                            "AND name LIKE 'sqlite_autoindex%'", -1, &q, nullptr);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    root = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    sqlite3_prepare_v2(raw, "PRAGMA page_size", -1, &q, nullptr);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    page_size = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    sqlite3_close(raw);
  }
  ASSERT_FALSE(fs::exists(db().string() + "-wal")) << "the last close folds the WAL in";
  std::string bytes;
  {
    std::ifstream in(db(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::size_t start = static_cast<std::size_t>(root - 1) * page_size;
  const std::size_t at = bytes.find("basic-18", start);
  ASSERT_LT(at, start + page_size) << "the index page holds the configuration keys";
  bytes[at] = 'X';  // the index entry now names a configuration no row has
  {
    std::ofstream out(db(), std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  for (const auto access : {StoreAccess::sole_writer, StoreAccess::read_only}) {
    try {
      Store s(db(), access);
      ADD_FAILURE() << "a damaged store was opened";
    } catch (const MeasureError& e) {
      EXPECT_NE(std::string(e.what()).find("the store is damaged"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(".recover"), std::string::npos) << e.what();
    }
    // Nor is anything left beside it (hundred-and-third hostile pass: the refused reader's -wal and -shm).
    for (const char* side : {"-wal", "-shm"})
      EXPECT_FALSE(fs::exists(db().string() + side)) << side << " after " << (access == StoreAccess::read_only ? "reading" : "writing");
  }
  std::ifstream in(db(), std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), bytes)
      << "a refused store is not changed";
}

// Twenty-ninth hostile pass: exporting a store through a second name (a hard link) left a -wal and
// a -shm beside that name. It is read as it is, and nothing is created beside it.
TEST_F(StoreTest, ReadingThroughASecondNameCreatesNothingBesideIt) {
  {
    Store s(db());
    for (int b : {1, 2}) s.put(sample(b));
  }
  const fs::path other = dir_ / "second_name.db";
  fs::create_hard_link(db(), other);
  {
    const Store s(other, StoreAccess::read_only);
    EXPECT_EQ(s.to_dataset().rows.size(), 2u);
  }
  for (const char* side : {"-wal", "-shm"}) {
    EXPECT_FALSE(fs::exists(other.string() + side)) << side;
    EXPECT_FALSE(fs::exists(db().string() + side)) << side;
  }
}

// A read-only open makes a -wal and a -shm, which its own close cannot remove: `data export` left
// them beside every store it read. They are removed when the reader was the last connection, and
// kept while another reader or a writer has the store open, with the writer's rows.
TEST_F(StoreTest, AReaderLeavesNoSideFilesButKeepsThoseOthersUse) {
  const auto sides = [&] { return fs::exists(db().string() + "-wal") || fs::exists(db().string() + "-shm"); };
  {
    Store s(db());
    for (int b : {1, 2}) s.put(sample(b));
  }
  ASSERT_FALSE(sides());
  const auto before = fs::last_write_time(db());
  {
    const Store s(db(), StoreAccess::read_only);
    EXPECT_EQ(s.count(), 2u);
    EXPECT_TRUE(sides()) << "SQLite reads a WAL store through them";
  }
  EXPECT_FALSE(sides());
  EXPECT_EQ(fs::last_write_time(db()), before) << "the store file is not written";
  {
    const Store first(db(), StoreAccess::read_only);
    { const Store second(db(), StoreAccess::read_only); }
    EXPECT_TRUE(sides()) << "the first reader still uses them";
    EXPECT_EQ(first.count(), 2u);
  }
  EXPECT_FALSE(sides());
  {
    Store writer(db(), StoreAccess::sole_writer);
    writer.put(sample(3));
    { EXPECT_EQ(Store(db(), StoreAccess::read_only).count(), 3u); }
    EXPECT_TRUE(sides()) << "the writer's";
    writer.put(sample(4));
  }
  EXPECT_EQ(Store(db(), StoreAccess::read_only).count(), 4u);
  EXPECT_FALSE(sides());
  // The case that needs SQLite's rule (its review): the reader made the side files, a writer opened
  // the store after it and has not written yet, and the reader ends first. They stay, for the writer.
  {
    auto reader = std::make_unique<Store>(db(), StoreAccess::read_only);
    ASSERT_TRUE(sides());
    Store writer(db(), StoreAccess::sole_writer);
    EXPECT_EQ(writer.count(), 4u);
    reader.reset();
    EXPECT_TRUE(sides()) << "the writer has the store open";
    writer.put(sample(5));
    EXPECT_EQ(Store(db(), StoreAccess::read_only).count(), 5u);
  }
  EXPECT_EQ(Store(db(), StoreAccess::read_only).count(), 5u);
  EXPECT_FALSE(sides());
}

// Sixty-sixth hostile pass: on a full disk SQLite cannot make the -shm it reads a WAL store
// through, and `profile` said the store could not be read "as a carb measurement store", which
// read as damage. It says the disk is full, and the rows are all there once there is room. Needs
// root (a tmpfs).
TEST(StoreFullDisk, AFullDiskIsSaidAndTheStoreIsUnharmed) {
  const fs::path dir = fs::temp_directory_path() / ("carb_store_full_" + std::to_string(::getpid()));
  if (!testing::mount_small_disk(dir, "256k")) GTEST_SKIP() << "mounting a tmpfs needs root";
  const fs::path db = dir / "f.db";
  {
    Store s(db, StoreAccess::sole_writer);
    for (int b : {1, 2, 4}) s.put(sample(b));
  }
  {
    std::ofstream fill(dir / "fill", std::ios::binary);
    const std::string block(1024, '\0');
    while (fill.write(block.data(), block.size())) fill.flush();
  }
  for (const auto access : {StoreAccess::sole_writer, StoreAccess::read_only}) {
    try {
      Store s(db, access);
      ADD_FAILURE() << "opened on a full disk";
    } catch (const MeasureError& e) {
      EXPECT_NE(std::string(e.what()).find("the disk holding it is full"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("as a carb measurement store"), std::string::npos) << e.what();
    }
  }
  fs::remove(dir / "fill");
  EXPECT_EQ(Store(db, StoreAccess::sole_writer).count(), 3u);
  // Lazily: this process holds a descriptor of every store file it opened (held_file.hpp).
  EXPECT_EQ(std::system(("umount -l '" + dir.string() + "'").c_str()), 0);
  fs::remove_all(dir);
}

TEST_F(StoreTest, NullsStayNull) {
  Store s(db());
  StoredMeasurement m = sample(2, Status::oom);
  m.error_text = "CUDA out of memory";
  s.put(m);
  const Dataset d = s.to_dataset();
  ASSERT_EQ(d.rows.size(), 1u);
  const Record& r = d.rows[0];
  for (const char* col : {"latency_ms", "energy_j", "peak_memory_mb", "avg_sm_util", "avg_mem_util"})
    EXPECT_EQ(r.value(col), std::nullopt) << col;  // never 0
  EXPECT_EQ(r.status, Status::oom);
  EXPECT_EQ(r.extra.at("error_text"), "CUDA out of memory");
}

TEST_F(StoreTest, ReopenPersistsRowsAndProtocols) {
  {
    Store s(db());
    s.put(sample(1));
    s.put_protocol("p1", {{"warmup", 10}, {"backend", "cpu"}});
  }
  Store s(db());
  EXPECT_EQ(s.count(), 1u);
  EXPECT_TRUE(s.has("cpu2t", sample(1).record.config, "p1"));
  EXPECT_EQ(s.protocols(), (nlohmann::json{{"p1", {{"warmup", 10}, {"backend", "cpu"}}}}));
}

TEST_F(StoreTest, ProtocolIsStoredOnce) {
  Store s(db());
  s.put_protocol("p1", {{"warmup", 10}});
  s.put_protocol("p1", {{"warmup", 99}});  // first settings are kept
  s.put_protocol("p2", {{"warmup", 5}});
  EXPECT_EQ(s.protocols()["p1"]["warmup"], 10);
  EXPECT_EQ(s.protocols().size(), 2u);
}

// A store begun by an older carb has a protocol record without the device's memory; a run of
// today's carb on the same device adds it (so that its export and `train` know the device) and
// changes nothing it holds. Not to a record naming another device or none, and not a reading of
// the moment.
TEST_F(StoreTest, ARecordLackingADeviceFactGainsItAndKeepsTheRest) {
  const nlohmann::json xeon = {{"cpu_model", "Xeon"}, {"logical_cores", 2}};
  {
    Store s(db());
    s.put_protocol("p1", {{"warmup", 10}, {"backend", "cpu"}, {"platform_info", xeon}});
    s.put_protocol("p2", {{"warmup", 5}, {"backend", "cpu"}});  // names no device
    s.put_protocol("p3", {{"backend", "cuda"}, {"platform_info", {{"gpu_name", "H100"}}}});
  }
  Store s(db(), StoreAccess::sole_writer);
  const nlohmann::json now = {
      {"cpu_model", "Xeon"}, {"logical_cores", 4}, {"device_memory_mb", 25276}, {"load_avg_1m", 0.5}};
  s.put_protocol("p1", {{"warmup", 99}, {"backend", "cpu"}, {"platform_info", now}});
  s.put_protocol("p2", {{"warmup", 6}, {"backend", "cpu"}, {"platform_info", now}});
  s.put_protocol("p3", {{"backend", "cuda"}, {"platform_info", {{"gpu_name", "H200"}, {"device_memory_mb", 150000}}}});
  const nlohmann::json p = s.protocols();
  EXPECT_EQ(p["p1"]["warmup"], 10);
  nlohmann::json gained = xeon;
  gained["device_memory_mb"] = 25276;  // the lasting fact; logical_cores held, the load average not added
  EXPECT_EQ(p["p1"]["platform_info"], gained);
  EXPECT_EQ(p["p2"], (nlohmann::json{{"warmup", 5}, {"backend", "cpu"}}));
  EXPECT_EQ(p["p3"]["platform_info"], (nlohmann::json{{"gpu_name", "H100"}}));
  // Nothing new: the record is as it was.
  s.put_protocol("p1", {{"backend", "cpu"}, {"platform_info", {{"cpu_model", "Xeon"}, {"device_memory_mb", 1}}}});
  EXPECT_EQ(s.protocols()["p1"], p["p1"]);
  // A memory recorded as no size (a hostile tester: null or "big" was kept while the run read the
  // machine's) is repaired by a run on the device; a value that is none is never written.
  s.put_protocol("p4", {{"backend", "cpu"}, {"platform_info", {{"cpu_model", "Xeon"}, {"device_memory_mb", nullptr}}}});
  s.put_protocol("p4", {{"backend", "cpu"}, {"platform_info", {{"cpu_model", "Xeon"}, {"device_memory_mb", "25276"}}}});
  EXPECT_TRUE(s.protocols()["p4"]["platform_info"]["device_memory_mb"].is_null());
  s.put_protocol("p4", {{"backend", "cpu"}, {"platform_info", now}});
  EXPECT_EQ(s.protocols()["p4"]["platform_info"]["device_memory_mb"], 25276);
}

// A hostile tester: settings that are JSON but no object ('[]', null, "x") let a resumed profile
// measure into a store that export then refused, saying it held no settings for the protocol.
TEST_F(StoreTest, SettingsThatAreNoObjectAreADamagedStore) {
  { Store(db()).put_protocol("p1", {{"warmup", 1}}); }
  for (const char* settings : {"[]", "null", "\"x\"", "3"}) {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
    const std::string sql = std::string("UPDATE protocols SET settings = '") + settings + "'";
    ASSERT_EQ(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    try {
      (void)Store(db(), StoreAccess::read_only).protocols();
      ADD_FAILURE() << settings << " was read as settings";
    } catch (const MeasureError& e) {
      EXPECT_NE(std::string(e.what()).find("protocol 'p1' has unreadable settings"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("not a JSON object"), std::string::npos) << e.what();
    }
  }
}

TEST_F(StoreTest, DuplicatePutReplaces) {
  Store s(db());
  StoredMeasurement m = sample(1);
  s.put(m);
  s.put(sample(2));
  m.record.latency_ms = 99.5;
  s.put(m);
  EXPECT_EQ(s.count(), 2u);
  const Dataset d = s.to_dataset();
  ASSERT_EQ(d.rows.size(), 2u);
  EXPECT_EQ(d.rows[1].config.batch, 1);  // the replaced row is now the latest insert
  EXPECT_EQ(d.rows[1].latency_ms, 99.5);
}

TEST_F(StoreTest, ToDatasetMatchesWhatWasPut) {
  Store s(db());
  StoredMeasurement a = sample(1);
  a.record.energy_j = 0.123456789012345;
  a.record.avg_sm_util = 87.5;
  a.record.extra = {{"latency_std_ms", "0.5"}, {"passes", "100"}};
  StoredMeasurement b = sample(8);
  b.record.config.precision = Precision::bf16;
  b.record.config.family = Family::bottleneck;
  b.record.config.depth = 50;
  s.put(a);
  s.put(b);
  const Dataset d = s.to_dataset();
  ASSERT_EQ(d.rows.size(), 2u);
  const Record& r = d.rows[0];
  EXPECT_EQ(r.platform, a.record.platform);
  EXPECT_EQ(r.config, a.record.config);
  EXPECT_EQ(r.latency_ms, a.record.latency_ms);
  EXPECT_EQ(r.energy_j, a.record.energy_j);  // bit-exact, REAL is a double
  EXPECT_EQ(r.avg_sm_util, 87.5);
  EXPECT_EQ(r.extra.at("passes"), "100");
  EXPECT_EQ(r.extra.at("protocol_id"), "p1");
  EXPECT_FALSE(r.extra.contains("error_text"));
  EXPECT_EQ(d.rows[1].config, b.record.config);
  EXPECT_EQ(d.extra_columns, (std::vector<std::string>{"protocol_id", "latency_std_ms", "passes"}));
}

TEST_F(StoreTest, NonSqliteFileIsRefused) {
  std::ofstream(db()) << "platform,family\nthis is a csv, not a database\n";
  try {
    Store s(db());
    FAIL() << "expected MeasureError";
  } catch (const MeasureError& e) {
    EXPECT_NE(std::string(e.what()).find(db().string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not a database"), std::string::npos) << e.what();
  }
}

// Hostile tester: `data export --db /dev/null` quoted a raw "cannot get file size", a writer's open
// of it "disk I/O error"; a FIFO could block the open. Both are refused by name, untouched.
TEST_F(StoreTest, ADeviceOrFifoIsRefusedByName) {
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const fs::path& f : {fifo, fs::path("/dev/null")})
    for (StoreAccess a : {StoreAccess::read_only, StoreAccess::sole_writer}) {
      try {
        Store s(f, a);
        ADD_FAILURE() << f << " was opened as a store";
      } catch (const MeasureError& e) {
        EXPECT_NE(std::string(e.what()).find("is not a regular file"), std::string::npos) << e.what();
      }
    }
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_FALSE(fs::exists(fifo.string() + "-wal"));
}

// A hostile tester: a store made at a dataset's provenance name (h200.json beside h200.csv) made
// the dataset unreadable, every reader taking the store for its sidecar. An empty name is named so.
TEST_F(StoreTest, AStoreIsNeverMadeAtADatasetsSidecarNameNorAtAnEmptyName) {
  std::ofstream(dir_ / "h200.csv") << "platform,family\n";
  const fs::path side = dir_ / "h200.json";
  try {
    Store s(side, StoreAccess::sole_writer);
    ADD_FAILURE() << "a store was made at a dataset's sidecar name";
  } catch (const MeasureError& e) {
    EXPECT_NE(std::string(e.what()).find("is the provenance file name of"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(side));
  { Store ok(dir_ / "other.json", StoreAccess::sole_writer); }  // no dataset beside it: a name like any
  try {
    Store s("", StoreAccess::sole_writer);
    ADD_FAILURE() << "an empty store name was taken";
  } catch (const MeasureError& e) {
    EXPECT_NE(std::string(e.what()).find("file name is empty"), std::string::npos) << e.what();
  }
}

// What runs were given (put_planned) is recorded once per configuration, and a store made before the
// record existed (no `planned` table) says nothing is known, read-only too, and gets the table when
// a writer records a plan in it.
TEST_F(StoreTest, PlannedConfigurationsAreRecordedOnceAndAnOlderStoreKnowsNone) {
  const Config a{Family::basic, 10, 0.25, 32, 1, Precision::fp32}, b{Family::basic, 10, 0.25, 32, 2, Precision::fp32};
  {
    Store s(db(), StoreAccess::sole_writer);
    s.put_planned("cpu", "p1", {a, b});
    s.put_planned("cpu", "p1", {b});
    s.put_planned("gpu", "p1", {a});
    EXPECT_EQ(s.planned_keys("cpu", "p1"), (std::vector<std::string>{config_key(a), config_key(b)}));
    EXPECT_EQ(s.planned_keys("gpu", "p1")->size(), 1u);
    EXPECT_EQ(s.planned_keys("cpu", "p2")->size(), 0u);
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "DROP TABLE planned", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  EXPECT_FALSE(Store(db(), StoreAccess::read_only).planned_keys("cpu", "p1").has_value());
  {
    Store s(db(), StoreAccess::sole_writer);
    EXPECT_FALSE(s.planned_keys("cpu", "p1").has_value());
    s.put_planned("cpu", "p1", {a});
    EXPECT_EQ(s.planned_keys("cpu", "p1")->size(), 1u);
  }
  EXPECT_EQ(Store(db(), StoreAccess::read_only).planned_keys("cpu", "p1")->size(), 1u);
  // A plan that cannot be recorded (a configuration no key can name) leaves no transaction open:
  // a row put after it is kept (a review: it went into a transaction rolled back at close).
  {
    Store s(db(), StoreAccess::sole_writer);
    Config bad = a;
    bad.family = static_cast<Family>(7);
    EXPECT_THROW(s.put_planned("cpu", "p1", {b, bad}), InputError);
    Record r;
    r.platform = "cpu", r.config = b, r.latency_ms = 1.0, r.peak_memory_mb = 1.0;
    s.put({r, "p1", ""});
  }
  EXPECT_EQ(Store(db(), StoreAccess::read_only).count(), 1u);
  EXPECT_EQ(Store(db(), StoreAccess::read_only).planned_keys("cpu", "p1")->size(), 1u);  // b was not planned either
  EXPECT_EQ(Store(db(), StoreAccess::read_only).planned_pairs().size(), 1u);  // the gpu plan went with the dropped table
}

TEST_F(StoreTest, OtherSchemaVersionAndForeignDatabaseAreRefused) {
  { Store s(db()); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version=7", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  EXPECT_THROW(Store{db()}, MeasureError);

  const fs::path other = dir_ / "other.db";
  ASSERT_EQ(sqlite3_open(other.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE t(x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  const auto bytes = [&] {
    std::ifstream in(other, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  const std::string before = bytes();
  EXPECT_THROW(Store{other}, MeasureError);
  // Tenth hostile pass: `profile --db` switched another application's database to WAL before
  // refusing it (export had been fixed, the profiler's writer open had not).
  EXPECT_THROW(Store(other, StoreAccess::sole_writer), MeasureError);
  EXPECT_EQ(bytes(), before);
  EXPECT_FALSE(fs::exists(other.string() + "-wal"));
  // Read (as `data export` does), another application's database is said to be one: the hint about
  // a store that lost its -wal is for an empty file only (hostile tester).
  const auto refusal = [](const fs::path& f) -> std::string {
    try {
      Store s(f, StoreAccess::read_only);
    } catch (const MeasureError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(refusal(other).find("(it has other tables)"), std::string::npos) << refusal(other);
  const fs::path empty = dir_ / "empty.db";
  ASSERT_EQ(sqlite3_open(empty.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version=0; VACUUM", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  EXPECT_NE(refusal(empty).find("without its -wal file"), std::string::npos) << refusal(empty);
  // Eleventh hostile pass: an application whose own schema is its version 1, as carb's is.
  const fs::path v1 = dir_ / "v1.db";
  ASSERT_EQ(sqlite3_open(v1.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE notes(body); INSERT INTO notes VALUES ('keep'); PRAGMA user_version=1",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  std::ifstream in1(v1, std::ios::binary);
  const std::string v1_before((std::istreambuf_iterator<char>(in1)), {});
  in1.close();
  EXPECT_THROW(Store(v1, StoreAccess::sole_writer), MeasureError);
  EXPECT_THROW(Store(v1, StoreAccess::read_only), MeasureError);
  std::ifstream in2(v1, std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in2)), {}), v1_before);
}

// Twelfth hostile pass: a user's file at <db>-wal (or -shm, -journal) was deleted by SQLite when the
// store opened. What SQLite leaves there is recognised; anything else is refused, untouched.
TEST_F(StoreTest, AUsersFileWhereSqliteKeepsItsOwnIsRefusedNotDeleted) {
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    const fs::path side = db().string() + suffix;
    std::ofstream(side) << "my notes\n";
    EXPECT_THROW(Store(db(), StoreAccess::sole_writer), MeasureError) << suffix;
    EXPECT_THROW(Store(db(), StoreAccess::read_only), MeasureError) << suffix;
    std::ifstream in(side);
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "my notes\n") << suffix;
    fs::remove(side);
  }
  // What a writer killed while SQLite set up or grew the shared-memory index leaves: its 3-byte lock
  // stub, or 4 KiB pages short of 32 KiB (a flaky kill -9 property test found the resume refused).
  { Store init(db()); }
  for (const std::string& left : {std::string(3, '\0'), std::string(3 * 4096, '\0'), std::string("\x18\xe2\x2d", 3)}) {
    { std::ofstream(db().string() + "-shm", std::ios::binary) << left; }
    EXPECT_NO_THROW(Store(db(), StoreAccess::sole_writer)) << left.size() << " bytes";
    fs::remove(db().string() + "-shm");
  }
  // Forty-fifth hostile pass: any file of 4096·k bytes, or one starting with 8 zero bytes, passed
  // as SQLite's index, and SQLite reset a user's text there (export) or deleted it (profile).
  std::string text;
  while (text.size() < 8192) text += "my notes, kept beside the store by name\n";
  text.resize(8192);
  // Forty-sixth: nor one whose first page only is zeros, nor a -journal that only begins with them
  // (beside a new store SQLite deletes any journal it takes for its own).
  for (const auto& [suffix, mine] : std::vector<std::pair<std::string, std::string>>{
           {"-shm", text}, {"-shm", std::string(8, '\0') + "my notes\n"}, {"-shm", std::string(4096, '\0') + text},
           {"-journal", std::string(8, '\0') + "my notes\n"}}) {
    const fs::path side = db().string() + suffix;
    { std::ofstream(side, std::ios::binary) << mine; }
    EXPECT_THROW(Store(db(), StoreAccess::sole_writer), MeasureError) << suffix << ", " << mine.size() << " bytes";
    EXPECT_THROW(Store(db(), StoreAccess::read_only), MeasureError) << suffix << ", " << mine.size() << " bytes";
    std::ifstream in(side, std::ios::binary);
    EXPECT_TRUE(std::string((std::istreambuf_iterator<char>(in)), {}) == mine) << suffix << ", " << mine.size() << " bytes";
    fs::remove(side);
  }
  {  // what SQLite itself leaves beside a store in use is fine
    Store writer(db());
    writer.put_protocol("p1", {{"warmup", 1}});
    EXPECT_TRUE(fs::exists(db().string() + "-wal"));
    EXPECT_NO_THROW(Store(db(), StoreAccess::read_only).protocols());
  }
}

// Seventeenth hostile pass: after a kill -9 of profile every committed row sat in m.db-wal; the
// store moved away without it (mv m.db round1.db) had none, and a new store at m.db made SQLite
// discard the WAL. Each commit is now folded into the database file, and a WAL whose database file
// is not beside it is refused, not discarded.
TEST_F(StoreTest, CommittedRowsLiveInTheDatabaseFileAndAnOrphanedWalIsRefused) {
  Store writer(db());
  writer.put(sample(1));
  writer.put(sample(2));
  ASSERT_TRUE(fs::exists(db().string() + "-wal"));
  fs::copy_file(db(), dir_ / "moved.db");  // the file alone, as a mv that forgets the -wal takes it
  EXPECT_EQ(Store(dir_ / "moved.db", StoreAccess::read_only).count(), 2u);
  const fs::path orphan = dir_ / "new.db-wal";
  fs::copy_file(db().string() + "-wal", orphan);
  const auto size = fs::file_size(orphan);
  ASSERT_GT(size, 32u);
  EXPECT_THROW(Store(dir_ / "new.db", StoreAccess::sole_writer), MeasureError);
  EXPECT_THROW(Store(dir_ / "new.db", StoreAccess::read_only), MeasureError);
  EXPECT_EQ(fs::file_size(orphan), size);
  EXPECT_FALSE(fs::exists(dir_ / "new.db"));
}

// A writer killed by SIGKILL: no destructor runs, so the lock file, the -wal and the -shm stay.
void killed_writer(const fs::path& db, int rows) {
  const pid_t child = ::fork();
  if (child == 0) {
    auto* s = new Store(db, StoreAccess::sole_writer);  // never destroyed, as under kill -9
    for (int b = 1; b <= rows; ++b) s->put(sample(b));
    ::_exit(0);
  }
  ::waitpid(child, nullptr, 0);
}

// Eighteenth hostile pass: after a kill -9 of profile, another store moved to the same name (the
// next round) had the killed writer's WAL applied to it: its own rows vanished and the killed
// store's appeared, with exit 0. The lock file the killed writer left names its database file.
TEST_F(StoreTest, AKilledWritersWalIsNeverAppliedToAnotherStoreAtItsName) {
  killed_writer(db(), 2);
  ASSERT_TRUE(fs::exists(db().string() + "-wal"));
  { Store resumed(db(), StoreAccess::sole_writer); EXPECT_EQ(resumed.count(), 2u); }  // the same file: resumes
  killed_writer(db(), 3);
  fs::rename(db(), dir_ / "round1.db");
  {
    Store other(dir_ / "round2.db");
    other.put(sample(64));
  }
  fs::rename(dir_ / "round2.db", db());
  EXPECT_THROW(Store(db(), StoreAccess::sole_writer), MeasureError);
  EXPECT_THROW(Store(db(), StoreAccess::read_only), MeasureError);
  fs::remove(db().string() + "-wal");
  fs::remove(db().string() + "-shm");
  EXPECT_EQ(Store(db(), StoreAccess::read_only).count(), 1u);  // round 2 intact
}

// Nineteenth hostile pass: three ways around the above. A store given through a symbolic link had
// its side files checked beside the link, not beside the file SQLite opens; a backup copied over a
// deleted store got the same inode on ext4; and a lock file removed by hand took the record with it.
TEST_F(StoreTest, AForeignWalIsRefusedThroughALinkAReusedInodeOrAMissingLockFile) {
  const auto make_other = [&] {
    Store other(dir_ / "other.db");
    other.put(sample(64));
  };
  make_other();
  // Through a link: a user's file where SQLite keeps the target's WAL.
  std::ofstream(db().string() + "-wal") << "my notes\n";
  fs::create_symlink(db(), dir_ / "link.db");
  EXPECT_THROW(Store(dir_ / "link.db", StoreAccess::sole_writer), MeasureError);
  EXPECT_TRUE(fs::exists(db().string() + "-wal"));
  fs::remove(db().string() + "-wal");
  // A killed writer; the file at its name is replaced by a copy of another store.
  killed_writer(db(), 3);
  fs::remove(db());
  fs::copy_file(dir_ / "other.db", db());
  EXPECT_THROW(Store(dir_ / "link.db", StoreAccess::read_only), MeasureError);
  EXPECT_THROW(Store(db(), StoreAccess::read_only), MeasureError);
  EXPECT_THROW(Store(db(), StoreAccess::sole_writer), MeasureError);
  // The lock file removed by hand: no record of whose the frames are.
  fs::remove(db().string() + ".lock");
  EXPECT_THROW(Store(db(), StoreAccess::read_only), MeasureError);
  EXPECT_THROW(Store(db(), StoreAccess::sole_writer), MeasureError);
  fs::remove(db().string() + "-wal");
  fs::remove(db().string() + "-shm");
  EXPECT_EQ(Store(db(), StoreAccess::read_only).count(), 1u);  // the copy, intact
}

// Twentieth hostile pass: a backup restored in place (cp backup.db a.db keeps the inode and the
// birth time) after a kill got the killed writer's frames applied: a row it never held, then an
// index that no longer matched its table. The writer records the file's modification time after
// every commit, so content written into the same inode since is told apart.
TEST_F(StoreTest, ABackupRestoredInPlaceAfterAKillIsNotGivenTheKilledWritersWal) {
  { Store first(db(), StoreAccess::sole_writer); first.put(sample(1)); }
  fs::copy_file(db(), dir_ / "backup.db");
  killed_writer(db(), 4);
  {
    std::ifstream in(dir_ / "backup.db", std::ios::binary);
    std::ofstream out(db(), std::ios::binary | std::ios::trunc);  // same inode, new content
    out << in.rdbuf();
  }
  EXPECT_THROW(Store(db(), StoreAccess::read_only), MeasureError);
  EXPECT_THROW(Store(db(), StoreAccess::sole_writer), MeasureError);
}

// What a writer killed inside its second commit leaves, after that commit's checkpoint wrote the
// file and before the record after it: the record taken before the commit (the one after the first,
// marked pending), the file as the commit left it and the commit's frames in the WAL.
// `file_after_first`: where to keep a copy of the file as the first commit left it.
void killed_inside_second_commit(const fs::path& db, const fs::path& file_after_first = {}) {
  const fs::path saved = db.string() + ".lock-after-1";
  const pid_t child = ::fork();
  if (child == 0) {
    auto* s = new Store(db, StoreAccess::sole_writer);  // never destroyed, as under kill -9
    s->put(sample(1));
    fs::copy_file(db.string() + ".lock", saved, fs::copy_options::overwrite_existing);
    if (!file_after_first.empty()) fs::copy_file(db, file_after_first, fs::copy_options::overwrite_existing);
    s->put(sample(2));
    ::_exit(0);
  }
  ::waitpid(child, nullptr, 0);
  std::ifstream in(saved);
  std::string first, rest;
  std::getline(in, first);
  std::getline(in, rest, '\0');
  unsigned long long pid = 0, dev = 0, ino = 0, birth = 0, mtime = 0, pending = 0, size = 0;
  ASSERT_EQ(std::sscanf(first.c_str(), "%llu %llu %llu %llu %llu %llu %llu", &pid, &dev, &ino, &birth, &mtime, &pending,
                        &size),
            7);
  ASSERT_FALSE(rest.empty()) << "no page hashes in the record";
  std::ofstream(db.string() + ".lock", std::ios::trunc)
      << pid << ' ' << dev << ' ' << ino << ' ' << birth << ' ' << mtime << " 1 " << size << '\n'
      << rest;
  fs::remove(saved);
}

// Copies `from` into the file at `to`, keeping its inode (and birth time): cp over an existing file.
void restore_in_place(const fs::path& from, const fs::path& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
}

// A writer killed inside a commit (after the checkpoint wrote the file, before the record caught up)
// left a record older than the file; the resume was refused (Resume.KilledRun... found it). A record
// taken just before a commit says so, and the file's pages are then the recorded ones or the WAL's.
TEST_F(StoreTest, AWriterKilledInsideACommitResumes) {
  killed_inside_second_commit(db());
  EXPECT_EQ(Store(db(), StoreAccess::read_only).count(), 2u);
  EXPECT_EQ(Store(db(), StoreAccess::sole_writer).count(), 2u);
}

// Killed before the checkpoint wrote anything: the file is as recorded, the WAL holds the commit.
// A backup of exactly that file restored in place is the same content, and the commit applies to it.
TEST_F(StoreTest, AFileAsRecordedBeforeTheCommitTakesTheCommit) {
  killed_inside_second_commit(db(), dir_ / "before.db");
  const auto slurp = [](const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  ASSERT_NE(slurp(db()), slurp(dir_ / "before.db")) << "the second commit's checkpoint did not write the file";
  restore_in_place(dir_ / "before.db", db());
  EXPECT_EQ(Store(db(), StoreAccess::sole_writer).count(), 2u);
}

// Twenty-second hostile pass: a backup restored in place within moments of a kill inside a commit,
// as large as the store, was taken for the commit's own write (the record allowed a later write
// within 2 s and not smaller), and the killed writer's WAL was applied to it. Its pages are neither
// the recorded ones nor the WAL's.
TEST_F(StoreTest, ABackupRestoredInPlaceRightAfterAKillInsideACommitIsRefused) {
  { Store other(dir_ / "backup.db", StoreAccess::sole_writer); other.put(sample(7)); }
  killed_inside_second_commit(db());
  ASSERT_GE(fs::file_size(dir_ / "backup.db"), fs::file_size(db()));
  restore_in_place(dir_ / "backup.db", db());  // at once: well within 2 s of the commit
  EXPECT_THROW(Store(db(), StoreAccess::read_only), MeasureError);
  EXPECT_THROW(Store(db(), StoreAccess::sole_writer), MeasureError);
  fs::remove(db().string() + "-wal");
  fs::remove(db().string() + "-shm");
  const Store restored(db(), StoreAccess::read_only);  // the backup, intact
  EXPECT_EQ(restored.count(), 1u);
  EXPECT_TRUE(restored.has("cpu2t", sample(7).record.config, "p1"));
}

// The record of an older carb (no page hashes) taken before a commit: only the file exactly as
// recorded is that store.
TEST_F(StoreTest, APendingRecordWithoutPageHashesAcceptsOnlyTheFileAsRecorded) {
  killed_writer(db(), 2);
  std::string line;
  { std::ifstream in(db().string() + ".lock"); std::getline(in, line); }
  unsigned long long pid = 0, dev = 0, ino = 0, birth = 0, mtime = 0, pending = 0, size = 0;
  ASSERT_EQ(std::sscanf(line.c_str(), "%llu %llu %llu %llu %llu %llu %llu", &pid, &dev, &ino, &birth, &mtime, &pending,
                        &size),
            7);
  const auto rewrite = [&](int pend, unsigned long long before_ns) {
    std::ofstream(db().string() + ".lock") << pid << ' ' << dev << ' ' << ino << ' ' << birth << ' ' << (mtime - before_ns)
                                           << ' ' << pend << ' ' << size << '\n';
  };
  rewrite(0, 1000000);  // an older record, not inside a commit: another content
  EXPECT_THROW(Store(db(), StoreAccess::read_only), MeasureError);
  rewrite(1, 1000000);  // inside a commit, but nothing says the file's newer content is the commit's
  EXPECT_THROW(Store(db(), StoreAccess::read_only), MeasureError);
  rewrite(1, 0);
  EXPECT_EQ(Store(db(), StoreAccess::sole_writer).count(), 2u);
}

// Twenty-third hostile pass: a profile stopped cleanly (SIGTERM, a full disk) while SQLite could not
// fold the WAL into the file (a reader held a snapshot) left its committed rows only in the -wal and
// removed its lock record; the next open refused the store, and moving the -wal away as offered
// lost the rows. The record is kept for such a WAL.
TEST_F(StoreTest, AStoreClosedWithRowsStillInItsWalKeepsTheRecordThatAppliesThem) {
  ASSERT_NO_FATAL_FAILURE(close_with_rows_in_wal());
  ASSERT_TRUE(fs::exists(db().string() + "-wal"));
  ASSERT_GT(fs::file_size(db().string() + "-wal"), 32u);
  EXPECT_TRUE(fs::exists(db().string() + ".lock"));
  EXPECT_EQ(Store(db(), StoreAccess::read_only).count(), 6u);
  { EXPECT_EQ(Store(db(), StoreAccess::sole_writer).count(), 6u); }
  EXPECT_FALSE(fs::exists(db().string() + "-wal"));  // folded in on this close
  EXPECT_FALSE(fs::exists(db().string() + ".lock"));
}

// Thirty-first hostile pass: rows still in a.db-wal (a reader's snapshot kept the writer's close from
// folding them in), the lock file removed, and the store exported through a second name b.db: 1 of 6
// rows, exit 0. The -wal beside a name of this very file is found without the lock file.
TEST_F(StoreTest, ASecondNameIsRefusedWhileTheFirstNamesWalHoldsRows) {
  ASSERT_NO_FATAL_FAILURE(close_with_rows_in_wal());
  ASSERT_GT(fs::file_size(db().string() + "-wal"), 32u);
  fs::remove(db().string() + ".lock");
  const fs::path second = dir_ / "b.db";
  fs::create_hard_link(db(), second);
  try {
    Store s(second, StoreAccess::read_only);
    ADD_FAILURE() << "read " << s.count() << " rows through the second name";
  } catch (const MeasureError& e) {
    EXPECT_NE(std::string(e.what()).find("Use it as " + db().string()), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(second.string() + "-wal"));
  // Under its own name, without the record, the store says how to apply the rows (as before).
  fs::remove(second);
  try {
    Store s(db(), StoreAccess::read_only);
    ADD_FAILURE() << "read without the record";
  } catch (const MeasureError& e) {
    EXPECT_NE(std::string(e.what()).find("wal_checkpoint"), std::string::npos) << e.what();
  }
}

// A writer killed while SQLite opened the store (after taking the lock, before its own record) left
// only its pid in the lock file: the previous writer's record, which the -wal still needs, was gone.
TEST_F(StoreTest, TakingTheLockKeepsTheLastRecordUntilTheWriterRecordsItsOwn) {
  killed_writer(db(), 3);
  std::string before;
  { std::ifstream in(db().string() + ".lock"); std::getline(in, before, '\0'); }
  {
    StoreLock lock(db());
    std::string now;
    std::ifstream in(db().string() + ".lock");
    std::getline(in, now, '\0');
    EXPECT_EQ(now.substr(now.find(' ')), before.substr(before.find(' ')));
    EXPECT_EQ(std::stol(now), ::getpid());
  }
}

// Another process's connection opened and closed while a writer runs; true if it found itself the
// last connection (it then checkpoints and deletes the -wal the writer is still using). A separate
// program, not a fork: SQLite's in-process lock bookkeeping does not survive fork().
bool other_process_closes_as_last(const fs::path& db) {
  const std::string cmd = "/usr/bin/python3 -c \"import os, sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                          "c.execute('SELECT count(*) FROM measurements').fetchall(); c.close(); "
                          "sys.exit(0 if os.path.exists(sys.argv[1] + '-wal') else 1)\" '" + db.string() + "'";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) && WEXITSTATUS(status) == 1;
}

// The page hashes after each commit were read with a stream that opened and closed the database file:
// closing any descriptor of a file drops every POSIX lock the process holds on it, the writer's own
// SQLite connection's shared lock included, and another process's connection then closed as the last
// one and deleted the -wal under the running writer. carb reads through a descriptor it never closes.
TEST_F(StoreTest, RecordingAfterACommitKeepsTheWritersLocks) {
  Store s(db(), StoreAccess::sole_writer);
  s.put(sample(1));
  s.put(sample(2));
  EXPECT_FALSE(other_process_closes_as_last(db()));
  s.put(sample(3));
  EXPECT_EQ(s.count(), 3u);
  // What an open and close of the file did (the check is sensitive to it).
  { std::ifstream(db(), std::ios::binary).get(); }
  EXPECT_TRUE(other_process_closes_as_last(db()));
}

// Twenty-fourth hostile pass: a store whose rows were still in its -wal, moved with all its files to
// another file system (a new inode), was refused as another file, and the advice (move the -wal away)
// lost the rows. Whose the -wal is, is read from the content.
TEST_F(StoreTest, AStoreMovedWithItsWalToANewInodeIsStillItself) {
  { Store s(db(), StoreAccess::sole_writer); s.put(sample(1)); }
  sqlite3* reader = nullptr;
  ASSERT_EQ(sqlite3_open_v2(db().c_str(), &reader, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM measurements;", nullptr, nullptr, nullptr), SQLITE_OK);
  { Store s(db(), StoreAccess::sole_writer); for (int b = 2; b <= 5; ++b) s.put(sample(b)); }
  sqlite3_exec(reader, "COMMIT", nullptr, nullptr, nullptr);
  sqlite3_close(reader);
  ASSERT_GT(fs::file_size(db().string() + "-wal"), 32u);
  fs::create_directories(dir_ / "big");
  for (const char* suffix : {"", "-wal", "-shm", ".lock"})  // copies: new inodes, as across file systems
    fs::copy_file(db().string() + suffix, (dir_ / "big" / "m.db").string() + suffix);
  EXPECT_EQ(Store(dir_ / "big" / "m.db", StoreAccess::read_only).count(), 5u);
  EXPECT_EQ(Store(dir_ / "big" / "m.db", StoreAccess::sole_writer).count(), 5u);
}

// Twenty-fourth hostile pass: the directory renamed during a run left a record of the file as it
// was before (written by path, which no longer existed), and every later open refused the store.
TEST_F(StoreTest, ADirectoryRenamedDuringARunKeepsItsRecord) {
  fs::create_directories(dir_ / "camp");
  const fs::path before = dir_ / "camp" / "b.db", after = dir_ / "camp-old" / "b.db";
  const pid_t child = ::fork();
  if (child == 0) {
    auto* s = new Store(before, StoreAccess::sole_writer);  // killed: never destroyed
    s->put(sample(1));
    fs::rename(dir_ / "camp", dir_ / "camp-old");
    for (int b = 2; b <= 4; ++b) s->put(sample(b));
    ::_exit(0);
  }
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(Store(after, StoreAccess::read_only).count(), 4u);
  EXPECT_EQ(Store(after, StoreAccess::sole_writer).count(), 4u);
}

// Twenty-fourth hostile pass (from the code): a writer that took the lock and failed before its own
// record (SQLite could not open the store) removed the lock file, and with it the last writer's
// record, which that writer's -wal needs.
TEST_F(StoreTest, AWriterThatNeverRecordedLeavesTheLastRecord) {
  killed_writer(db(), 3);
  { StoreLock taken(db()); }  // taken and released without a record of its own
  ASSERT_TRUE(fs::exists(db().string() + ".lock"));
  EXPECT_EQ(Store(db(), StoreAccess::sole_writer).count(), 3u);
  EXPECT_FALSE(fs::exists(db().string() + ".lock"));  // this writer recorded, then closed cleanly
}

// Twenty-fifth hostile pass: a store renamed while a profile wrote to it (mv s.db r.db) and profiled
// under its new name got a second lock file and a second -wal on the same file; the two writers lost
// each other's rows. The writer also locks the file itself (an OFD lock, across processes; and a
// second writer in one process is refused by the same record).
TEST_F(StoreTest, AStoreRenamedWhileAWriterHasItIsRefusedToASecondWriter) {
  Store first(db(), StoreAccess::sole_writer);
  first.put(sample(1));
  EXPECT_FALSE(first.moved());
  fs::rename(db(), dir_ / "r.db");
  EXPECT_TRUE(first.moved());  // profile then warns that its rows are under another name
  try {
    Store second(dir_ / "r.db", StoreAccess::sole_writer);
    FAIL() << "a second writer opened the renamed store";
  } catch (const MeasureError& e) {
    // Refused as in use (the file's own lock), or, since the writer's -wal sits under the old name,
    // as the store a writer has open there (twenty-ninth hostile pass): either way, not opened.
    const std::string what = e.what();
    EXPECT_TRUE(what.find("in use by another") != std::string::npos ||
                what.find("is the store a writer had open as") != std::string::npos) << what;
  }
  first.put(sample(2));
  EXPECT_EQ(first.count(), 2u);
  // A reader under the new name would not see what is in the -wal under the old one: refused too.
  EXPECT_THROW(Store(dir_ / "r.db", StoreAccess::read_only), MeasureError);
  // Across processes: another process's OFD lock on the byte conflicts.
  const pid_t child = ::fork();
  if (child == 0) {
    const int fd = ::open((dir_ / "r.db").c_str(), O_RDWR | O_CLOEXEC);
    struct flock l {};
    l.l_type = F_WRLCK;
    l.l_whence = SEEK_SET;
    l.l_start = 0x3fffff00;
    l.l_len = 1;
    ::_exit(::fcntl(fd, F_OFD_SETLK, &l) == 0 ? 1 : 0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "another process could take the writer's lock";
}

// Twenty-sixth hostile pass: a store moved to another file system during a run (copied, then the
// original deleted) went on taking rows into the deleted file: 42 of 72 lost, exit 0, and a warning
// that the rows were "under another name". The next commit finds the file without a name, saves
// everything it holds beside the old name and stops.
TEST_F(StoreTest, AStoreThatLostItsNameMidRunIsSavedAndTheRunStops) {
  Store s(db(), StoreAccess::sole_writer);
  s.put(sample(1));
  fs::copy_file(db(), dir_ / "moved.db");  // mv across file systems: a copy ...
  fs::remove(db());                        // ... and the original deleted
  try {
    s.put(sample(2));  // taken into the deleted file, then found without a name
    FAIL() << "a commit into a file without a name went on";
  } catch (const MeasureError& e) {
    EXPECT_NE(std::string(e.what()).find("saved in " + db().string() + ".rescued.db"), std::string::npos) << e.what();
  }
  (void)s;
  const fs::path rescued = db().string() + ".rescued.db";
  ASSERT_TRUE(fs::exists(rescued));
  EXPECT_EQ(Store(rescued, StoreAccess::read_only).count(), 2u);  // every row, the last one included
  EXPECT_EQ(Store(dir_ / "moved.db", StoreAccess::read_only).count(), 1u);
}

// Forty-eighth hostile pass: with a 240-byte store name, <name>.rescued.db-journal is past NAME_MAX,
// every candidate counted as taken, and the rescue searched forever, deaf to SIGTERM, until a
// kill -9 lost the rows. A name the file system cannot hold is skipped for a short one.
TEST_F(StoreTest, AStoreWithALongNameThatLostItIsRescuedUnderAShortOne) {
  const fs::path longdb = dir_ / (std::string(237, 's') + ".db");
  Store s(longdb, StoreAccess::sole_writer);
  s.put(sample(1));
  fs::copy_file(longdb, dir_ / "moved.db");
  fs::remove(longdb);
  const fs::path rescued = dir_ / ("carb-rescued-" + std::to_string(::getpid()) + ".db");
  try {
    s.put(sample(2));
    FAIL() << "a commit into a file without a name went on";
  } catch (const MeasureError& e) {
    EXPECT_NE(std::string(e.what()).find("saved in " + rescued.string()), std::string::npos) << e.what();
  }
  ASSERT_TRUE(fs::exists(rescued));
  EXPECT_EQ(Store(rescued, StoreAccess::read_only).count(), 2u);
}

// Twenty-eighth hostile pass: a store moved away to free a full disk failed its next commit, and the
// rescue ran only after commits that succeeded: the rows since the copy went with the deleted file.
// Here the failing commit is one the file-size limit stops (the -wal may not grow past its size).
TEST_F(StoreTest, ACommitThatFailsAfterTheStoreLostItsNameStillRescuesIt) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    Store s(db(), StoreAccess::sole_writer);
    sqlite3* reader = nullptr;  // a snapshot that keeps the -wal growing (no checkpoint completes)
    s.put(sample(1));
    sqlite3_open_v2(db().c_str(), &reader, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM measurements;", nullptr, nullptr, nullptr);
    for (int b = 2; b <= 12; ++b) s.put(sample(b));
    fs::copy_file(db(), dir_ / "moved.db");
    fs::remove(db());
    const rlimit lim{fs::file_size(db().string() + "-wal"), RLIM_INFINITY};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    try {
      s.put(sample(13));
      ::_exit(2);  // the commit went through: the check below would not be the one under test
    } catch (const MeasureError& e) {
      ::_exit(std::string(e.what()).find("rescued.db") != std::string::npos ? 0 : 3);
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_NE(WEXITSTATUS(status), 2) << "the limited commit did not fail";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the failed commit was not followed by a rescue";
  const fs::path rescued = db().string() + ".rescued.db";
  ASSERT_TRUE(fs::exists(rescued));
  EXPECT_EQ(Store(rescued, StoreAccess::read_only).count(), 12u);
}

// Twenty-eighth hostile pass: SQLite deletes a -journal or -wal it finds beside a new database, and
// the rescue took the first name whose database file was free: a user's files at
// <db>.rescued.db-journal and -wal were deleted. A rescue takes a name with none of them.
TEST_F(StoreTest, ARescueNeverTakesANameWithSideFilesBesideIt) {
  std::ofstream(db().string() + ".rescued.db-journal") << "USER JOURNAL\n";
  std::ofstream(db().string() + ".rescued.db-wal") << "USER WAL\n";
  {
    Store s(db(), StoreAccess::sole_writer);
    s.put(sample(1));
    fs::remove(db());
    EXPECT_THROW(s.put(sample(2)), MeasureError);
  }
  std::string line;
  std::getline(std::ifstream(db().string() + ".rescued.db-journal"), line);
  EXPECT_EQ(line, "USER JOURNAL");
  std::getline(std::ifstream(db().string() + ".rescued.db-wal"), line);
  EXPECT_EQ(line, "USER WAL");
  EXPECT_EQ(Store(db().string() + ".rescued-1.db", StoreAccess::read_only).count(), 2u);
}

// Twenty-seventh hostile pass: the run's whole directory moved to another file system (copied, then
// removed): the rescue beside the old name had no directory to go to, and the rows committed since
// were lost. It falls back to the working directory (then the temporary directory).
TEST_F(StoreTest, ARescueWhoseDirectoryIsGoneGoesToTheWorkingDirectory) {
  fs::create_directories(dir_ / "run");
  fs::create_directories(dir_ / "cwd");
  const fs::path before = fs::current_path();
  fs::current_path(dir_ / "cwd");
  {
    Store s(dir_ / "run" / "s.db", StoreAccess::sole_writer);
    s.put(sample(1));
    fs::copy(dir_ / "run", dir_ / "moved", fs::copy_options::recursive);
    fs::remove_all(dir_ / "run");
    EXPECT_THROW(s.put(sample(2)), MeasureError);
  }
  fs::current_path(before);
  const fs::path rescued = dir_ / "cwd" / "s.db.rescued.db";
  ASSERT_TRUE(fs::exists(rescued));
  EXPECT_EQ(Store(rescued, StoreAccess::read_only).count(), 2u);
}

// Twenty-ninth hostile pass: a killed writer's rows still only in its -wal (a reader's snapshot had
// kept them from the file) were dropped, with exit 0, by an export through a hard link or of the file
// renamed without its side files: SQLite looks for the -wal beside the name it is given.
TEST_F(StoreTest, AStoreWhoseRowsAreInAWalUnderAnotherNameIsRefusedUnderThisOne) {
  const pid_t child = ::fork();
  if (child == 0) {
    auto* s = new Store(db(), StoreAccess::sole_writer);  // killed: never destroyed
    s->put(sample(1));
    sqlite3* reader = nullptr;
    sqlite3_open_v2(db().c_str(), &reader, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM measurements;", nullptr, nullptr, nullptr);
    for (int b = 2; b <= 6; ++b) s->put(sample(b));
    ::_exit(0);
  }
  ::waitpid(child, nullptr, 0);
  fs::create_hard_link(db(), dir_ / "better.db");
  try {
    Store linked(dir_ / "better.db", StoreAccess::read_only);
    FAIL() << "read through another name, without the rows in " << db() << "-wal";
  } catch (const MeasureError& e) {
    EXPECT_NE(std::string(e.what()).find("Use it as " + db().string()), std::string::npos) << e.what();
  }
  EXPECT_THROW(Store(dir_ / "better.db", StoreAccess::sole_writer), MeasureError);
  fs::remove(dir_ / "better.db");
  fs::rename(db(), dir_ / "renamed.db");  // the file alone, its side files left behind
  EXPECT_THROW(Store(dir_ / "renamed.db", StoreAccess::read_only), MeasureError);
  EXPECT_THROW(Store(dir_ / "renamed.db", StoreAccess::sole_writer), MeasureError);
  fs::rename(dir_ / "renamed.db", db());  // back: every row
  EXPECT_EQ(Store(db(), StoreAccess::read_only).count(), 6u);
}

// Twenty-first hostile pass: two profilers on one store through two hard-linked names lost each
// other's rows (each name had its own lock and WAL) and left the store corrupt.
TEST_F(StoreTest, AStoreWithTwoNamesIsRefusedToWriters) {
  { Store s(db(), StoreAccess::sole_writer); s.put(sample(1)); }
  fs::create_hard_link(db(), dir_ / "other-name.db");
  EXPECT_THROW(Store(dir_ / "other-name.db", StoreAccess::sole_writer), MeasureError);
  EXPECT_THROW(Store(db(), StoreAccess::sole_writer), MeasureError);
  EXPECT_EQ(Store(db(), StoreAccess::read_only).count(), 1u);  // reading is harmless
}

// Fifty-first hostile pass: a 245-character store name was refused as if a user's file sat at its
// -journal's name, which no file can have.
TEST_F(StoreTest, AStoreNameTooLongForItsSideFilesSaysSo) {
  const fs::path db = dir_ / (std::string(245, 'x') + ".db");
  try {
    Store s(db, StoreAccess::sole_writer);
    ADD_FAILURE() << "a store whose -journal cannot be named opened";
  } catch (const MeasureError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("is too long: SQLite keeps its -journal file beside it"), std::string::npos) << what;
    EXPECT_EQ(what.find("is not SQLite's own file"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(db));
}

// Thirty-fifth hostile pass: a directory as --db was refused for having "2 names (hard links)".
TEST_F(StoreTest, ADirectoryIsRefusedAsOne) {
  fs::create_directory(dir_ / "runs");
  for (const StoreAccess a : {StoreAccess::sole_writer, StoreAccess::read_only}) {
    try {
      Store s(dir_ / "runs", a);
      ADD_FAILURE() << "a directory opened as a store";
    } catch (const MeasureError& e) {
      EXPECT_NE(std::string(e.what()).find("runs is a directory; give the store's file"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("hard link"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(fs::is_empty(dir_ / "runs"));
  // Fiftieth hostile pass: "new/", not there yet, was made a directory and refused for its links.
  for (const StoreAccess a : {StoreAccess::sole_writer, StoreAccess::shared}) {
    try {
      Store s(dir_ / "new" / "", a);
      ADD_FAILURE() << "a name ending in '/' opened as a store";
    } catch (const MeasureError& e) {
      EXPECT_NE(std::string(e.what()).find("new/ ends in '/', which names a directory"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir_ / "new"));
  }
}

// A status carb never writes (a store edited by another tool) is refused when read, naming the row,
// instead of travelling on into an exported dataset that every reader would refuse.
TEST_F(StoreTest, AStatusCarbNeverWritesIsRefusedOnRead) {
  {
    Store s(db());
    s.put(sample(1));
    s.put(sample(2, Status::oom));
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "UPDATE measurements SET status = 'crashed' WHERE batch = 2", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  const Store s(db());
  try {
    (void)s.to_dataset();
    FAIL() << "a row with status 'crashed' was read";
  } catch (const MeasureError& e) {
    EXPECT_NE(std::string(e.what()).find("status 'crashed' is not ok, oom or error"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(": row 2"), std::string::npos) << e.what();
  }
}

// Fourth hostile pass: SQLite coerced edited values on the way out (batch 4294967312 read as 16,
// depth 'ten' as 0, width '0.5abc' as 0.5, latency 'fast' as 0), and a row whose columns were
// edited to another configuration exported one configuration's measurement under another's name.
// Every such row is refused, naming it.
TEST_F(StoreTest, EditedValuesAreRefusedNotCoerced) {
  const char* edits[] = {
      "UPDATE measurements SET batch = 4294967312",  "UPDATE measurements SET depth = 'ten'",
      "UPDATE measurements SET width = '0.5abc'",    "UPDATE measurements SET depth = 10.7",
      "UPDATE measurements SET latency_ms = 'fast'", "UPDATE measurements SET depth = 34",
      "UPDATE measurements SET platform = 'cpu' || char(10) || '2t'", "UPDATE measurements SET batch = -3",
  };
  for (const char* sql : edits) {
    fs::remove(db());
    { Store(db()).put(sample(2)); }
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sql;
    sqlite3_close(raw);
    const Store s(db());
    try {
      (void)s.to_dataset();
      ADD_FAILURE() << "read after: " << sql;
    } catch (const MeasureError& e) {
      EXPECT_NE(std::string(e.what()).find(": row 1"), std::string::npos) << sql << ": " << e.what();
    }
  }
}

// Found by fuzz_store (this session's long run): protocol settings holding a number too large for a
// double ('9e999') escaped as a JSON out_of_range instead of a one-line error.
TEST_F(StoreTest, ProtocolSettingsWithAnOverflowingNumberAreAnError) {
  { Store(db()).put(sample(1)); }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "INSERT INTO protocols (id, settings) VALUES ('big', '{\"warmup\": 9e999}')", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  EXPECT_THROW((void)Store(db()).protocols(), MeasureError);
}

TEST_F(StoreTest, CreatesParentDirectoryAndUsesWal) {
  const fs::path nested = dir_ / "a" / "b" / "m.db";
  Store s(nested);
  s.put(sample(1));
  EXPECT_TRUE(fs::exists(nested));
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(nested.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))), "wal");
  sqlite3_finalize(st);
  sqlite3_close(raw);
}

}  // namespace
}  // namespace carb
