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
#include <string>

#include "carb/error.hpp"
#include "carb/store.hpp"
#include "temp_dir_test.hpp"

namespace carb {
namespace {
namespace fs = std::filesystem;

// A VFS over SQLite's default one whose files die (as under SIGKILL: no cleanup) when SQLite
// writes a journal's 12-byte magic and record count, which it does only after syncing the rest.
// (SQLite gives a database file and a journal different methods: wrap each kind once.)
sqlite3_vfs* base_vfs = nullptr;
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
  if (amount == 12 && offset == 0) ::_exit(9);
  return base_of(f)->xWrite(f, data, amount, offset);
}

int killing_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out) {
  const int rc = base_vfs->xOpen(base_vfs, name, f, flags, out);
  if (rc != SQLITE_OK || !f->pMethods) return rc;
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

// In a child process: create `db` and switch it to WAL, dying at the journal's magic.
void killed_switching_to_wal(const fs::path& db) {
  const pid_t child = ::fork();
  if (child == 0) {
    base_vfs = sqlite3_vfs_find(nullptr);
    static sqlite3_vfs shim = *base_vfs;
    shim.zName = "carb-killing";
    shim.xOpen = killing_open;
    sqlite3_vfs_register(&shim, 0);
    sqlite3* raw = nullptr;
    if (sqlite3_open_v2(db.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "carb-killing") != SQLITE_OK)
      ::_exit(2);
    sqlite3_exec(raw, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    ::_exit(0);  // not reached when SQLite journals the switch as it does
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 9) << "the child did not die at the journal's magic";
}

std::string contents(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// The header SQLite writes before the sync: magic and record count zeroed, a nonce, the initial
// size in pages, the sector and page sizes (big-endian), zeros to the end of the sector.
std::string unsynced_header(std::uint32_t sector, std::uint32_t page) {
  std::string h(sector, '\0');
  const auto put = [&](std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) h[at + i] = static_cast<char>(v >> (24 - 8 * i) & 0xff);
  };
  put(12, 0xb1516796u);
  put(20, sector);
  put(24, page);
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
  for (const std::string& mine : {padded, odd_sector, torn, half_magic}) {
    { std::ofstream(journal(), std::ios::binary) << mine; }
    EXPECT_THROW(Store(db(), StoreAccess::sole_writer), MeasureError) << mine.size() << " bytes";
    EXPECT_THROW(Store(db(), StoreAccess::read_only), MeasureError) << mine.size() << " bytes";
    EXPECT_TRUE(contents(journal()) == mine) << mine.size() << " bytes";
    fs::remove(journal());
  }
  // The exact shape passes beside an existing store too (SQLite deletes it there as well).
  { std::ofstream(journal(), std::ios::binary) << unsynced_header(512, 4096); }
  EXPECT_NO_THROW(Store(db(), StoreAccess::sole_writer));
}

}  // namespace
}  // namespace carb
