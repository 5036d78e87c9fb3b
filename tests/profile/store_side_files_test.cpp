// store_side_files: a rollback journal left by a writer killed before SQLite synced it (a CI run
// of the kill property test: SIGKILL while a new store switched to WAL) is SQLite's own;
// near-misses of its shape stay refused as a user's file.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "carb/error.hpp"
#include "carb/store.hpp"
#include "temp_dir_test.hpp"

namespace carb {
namespace {
namespace fs = std::filesystem;

// A VFS over SQLite's default one whose process dies (as under SIGKILL: no cleanup) at the Nth
// write to a rollback journal. SQLite writes the journal's header (its magic zeroed), then each
// page's record in three writes (page number, page, checksum), and the magic only once the rest is
// synced. (SQLite gives a database file and a journal different methods: wrap each kind once.)
sqlite3_vfs* base_vfs = nullptr;
int die_at = 0, journal_writes = 0;
std::set<const sqlite3_file*> journals;
struct Wrapped {
  const sqlite3_io_methods* base = nullptr;
  sqlite3_io_methods killing{};
};
Wrapped wrapped[4];

const sqlite3_io_methods* base_of(const sqlite3_file* f) {
  for (const Wrapped& w : wrapped)
    if (f->pMethods == &w.killing) return w.base;
  return nullptr;
}

int killing_write(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
  if (journals.count(f) && ++journal_writes == die_at) ::_exit(9);
  return base_of(f)->xWrite(f, data, amount, offset);
}

int killing_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out) {
  const int rc = base_vfs->xOpen(base_vfs, name, f, flags, out);
  if (rc != SQLITE_OK || !f->pMethods) return rc;
  if (flags & SQLITE_OPEN_MAIN_JOURNAL) journals.insert(f);
  for (Wrapped& w : wrapped) {
    if (!w.base) {
      w.base = f->pMethods;
      w.killing = *f->pMethods;
      w.killing.xWrite = killing_write;
    }
    if (w.base == f->pMethods) {
      f->pMethods = &w.killing;
      break;
    }
  }
  return rc;
}

// In a child process: open `db` through the killing VFS and run `sql`, dying at the journal's
// `nth` write. True when it died there.
bool killed_at_journal_write(const fs::path& db, const char* sql, int nth) {
  const pid_t child = ::fork();
  if (child == 0) {
    base_vfs = sqlite3_vfs_find(nullptr);
    static sqlite3_vfs shim = *base_vfs;
    shim.zName = "carb-killing";
    shim.xOpen = killing_open;
    sqlite3_vfs_register(&shim, 0);
    die_at = nth;
    sqlite3* raw = nullptr;
    if (sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "carb-killing") != SQLITE_OK)
      ::_exit(2);
    sqlite3_exec(raw, sql, nullptr, nullptr, nullptr);
    ::_exit(0);  // the journal had fewer writes
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 9;
}

// Switching a new store to WAL journals the header change: the header, then the magic (write 2).
void killed_switching_to_wal(const fs::path& db) {
  ASSERT_TRUE(killed_at_journal_write(db, "PRAGMA journal_mode=WAL", 2)) << "the child did not die at the magic";
}

std::string contents(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// The header SQLite writes before the sync: magic and record count zeroed, a nonce, the initial
// size in pages, the sector and page sizes (big-endian), zeros to the end of the sector.
void put32(std::string& s, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>(v >> (24 - 8 * i) & 0xff);
}

std::string unsynced_header(std::uint32_t sector, std::uint32_t page, std::uint32_t pages = 0) {
  std::string h(sector, '\0');
  put32(h, 12, 0xb1516796u);
  put32(h, 16, pages);
  put32(h, 20, sector);
  put32(h, 24, page);
  return h;
}

class StoreKilledJournalTest : public TempDirTest {
 protected:
  StoreKilledJournalTest() : TempDirTest("carb_killed_journal_") {}
  fs::path db() const { return dir_ / "m.db"; }
  fs::path journal() const { return dir_ / "m.db-journal"; }
};

TEST_F(StoreKilledJournalTest, WhatSqliteLeavesWhenKilledBeforeTheSyncIsItsOwn) {
  killed_switching_to_wal(db());
  ASSERT_TRUE(fs::exists(journal()));
  const std::string left = contents(journal());
  ASSERT_GE(left.size(), 28u);
  ASSERT_EQ(left.substr(0, 12), std::string(12, '\0'));  // the shape the store recognises
  {
    Store store(db());
    store.put_protocol("p1", {{"warmup", 1}});
  }
  EXPECT_FALSE(fs::exists(journal()));
  EXPECT_EQ(Store(db(), StoreAccess::read_only).protocols().size(), 1u);
}

TEST_F(StoreKilledJournalTest, NearMissesOfThatShapeAreAUsersFileAndKept) {
  { Store init(db()); }
  std::string padded = unsynced_header(512, 4096);
  padded.replace(100, 9, "my notes\n");
  std::string odd_sector = unsynced_header(512, 4096);
  odd_sector[22] = 3;  // 0x300 = 768 bytes, no disk's sector
  const std::string torn = unsynced_header(512, 4096) + std::string(100, 'x');
  std::string half_magic = unsynced_header(512, 4096);
  half_magic[0] = '\xd9';
  // Ninety-eighth hostile pass: a user's text after such a header passed as page records, and SQLite
  // deleted it beside a new store. A record's page number and checksum must be SQLite's.
  std::string text_records = unsynced_header(512, 512, 8);
  for (int k = 0; k < 3; ++k) {
    std::string r(520, 'n');
    r.replace(0, 9, "my notes\n");
    text_records += r;
  }
  std::string bad_checksum = unsynced_header(512, 512, 8) + std::string(520, '\0');
  put32(bad_checksum, 512, 3);  // page 3 of 8: a page number SQLite could write
  put32(bad_checksum, 512 + 4 + 512, 12345);
  std::string page_past_the_file = bad_checksum;
  put32(page_past_the_file, 512, 9);
  put32(page_past_the_file, 512 + 4 + 512, 0xb1516796u);  // the checksum of a zero page, at page 9 of 8
  for (const std::string& mine : {padded, odd_sector, torn, half_magic, text_records, bad_checksum, page_past_the_file}) {
    { std::ofstream(journal(), std::ios::binary) << mine; }
    EXPECT_THROW(Store(db(), StoreAccess::sole_writer), MeasureError) << mine.size() << " bytes";
    EXPECT_THROW(Store(db(), StoreAccess::read_only), MeasureError) << mine.size() << " bytes";
    EXPECT_TRUE(contents(journal()) == mine) << mine.size() << " bytes";
    fs::remove(journal());
  }
  // The exact shape passes beside an existing store too (SQLite deletes it there as well), with a
  // whole record whose checksum is SQLite's (a zero page's is the nonce) and a record cut short.
  std::string whole = unsynced_header(512, 512, 8) + std::string(520, '\0');
  put32(whole, 512, 3);
  put32(whole, 512 + 4 + 512, 0xb1516796u);
  for (const std::string& sqlites : {unsynced_header(512, 4096), whole, whole.substr(0, 512 + 4)}) {
    { std::ofstream(journal(), std::ios::binary) << sqlites; }
    EXPECT_NO_THROW(Store(db(), StoreAccess::sole_writer)) << sqlites.size() << " bytes";
  }
}

// Ninety-eighth hostile pass: a store switched to rollback mode (by hand, with sqlite3) and killed
// during a transaction left a journal with whole and partial page records before its sync; only a
// journal cut on a record's boundary passed. Killed at every write of SQLite's journal before the
// magic, the store opens (SQLite deletes the journal; the transaction never happened).
TEST_F(StoreKilledJournalTest, ARollbackJournalKilledAtAnyWriteBeforeItsSyncIsSqlitesOwn) {
  {
    Store s(db());
    s.put_protocol("p1", {{"warmup", 1}});
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA journal_mode=DELETE; CREATE TABLE scratch(x); "
                              "INSERT INTO scratch VALUES (randomblob(20000));", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  const fs::path original = dir_ / "original.db";
  fs::copy_file(db(), original);
  int died = 0;
  for (int nth = 1; nth <= 16; ++nth) {
    SCOPED_TRACE("killed at the journal's write " + std::to_string(nth));
    fs::remove(journal());
    fs::copy_file(original, db(), fs::copy_options::overwrite_existing);
    if (!killed_at_journal_write(db(), "BEGIN; UPDATE scratch SET x = randomblob(20000); COMMIT;", nth)) continue;
    ++died;
    ASSERT_TRUE(fs::exists(journal()));
    const std::string left = contents(journal());
    if (left.size() >= 12) {
      ASSERT_EQ(left.substr(0, 12), std::string(12, '\0'));  // before the sync: not hot
    }
    EXPECT_NO_THROW(Store(db(), StoreAccess::sole_writer)) << left.size() << " bytes";
    EXPECT_FALSE(fs::exists(journal()));
    EXPECT_EQ(Store(db(), StoreAccess::read_only).protocols().size(), 1u);
  }
  EXPECT_GE(died, 12) << "the transaction journaled fewer pages than the test means to cut through";
}

}  // namespace
}  // namespace carb
