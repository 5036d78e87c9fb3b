// Tests of a store's page hashes: their text form, and the check that a killed commit's WAL
// explains a file's content (the store-level cases are in store_test.cpp).
#include "profile/store_pages.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "temp_dir_test.hpp"

namespace carb::detail {
namespace {

namespace fs = std::filesystem;

class StorePagesTest : public TempDirTest {
 protected:
  StorePagesTest() : TempDirTest("carb_store_pages_") {}
  // A WAL-mode database whose last commit stays in its -wal (no checkpoint): the connection is
  // left open while the test looks at the files.
  sqlite3* open_wal_db(const fs::path& f) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(f.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; CREATE TABLE t(x TEXT);",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr), SQLITE_OK);
    return db;
  }
};

TEST_F(StorePagesTest, TextRoundTripsAndRefusesWhatIsNotIt) {
  PageHashes p{4096, {0x0123456789abcdefULL, 0, ~0ULL}};
  const auto back = page_hashes_from_text(to_text(p));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->page_size, 4096u);
  EXPECT_EQ(back->hashes, p.hashes);
  // Trailing text (an older, longer record's tail after a kill) is ignored: the count says where it ends.
  EXPECT_TRUE(page_hashes_from_text(to_text(p) + " 00000000000000ff"));
  EXPECT_FALSE(page_hashes_from_text("4096 3 0123456789abcdef 0000000000000000"));  // one short
  EXPECT_FALSE(page_hashes_from_text("4096 1 0123456789ABCDEF"));                   // not carb's hex
  EXPECT_FALSE(page_hashes_from_text("4096 1 123"));
  EXPECT_FALSE(page_hashes_from_text("0 0"));
  EXPECT_FALSE(page_hashes_from_text(""));
}

TEST_F(StorePagesTest, OnlyADatabasesWholePagesAreHashed) {
  std::ofstream(dir_ / "notes.txt") << "not a database\n";
  EXPECT_FALSE(hash_pages(dir_ / "notes.txt"));
  EXPECT_FALSE(hash_pages(dir_ / "missing.db"));
  sqlite3* db = open_wal_db(dir_ / "a.db");
  const auto p = hash_pages(dir_ / "a.db");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->hashes.size() * p->page_size, fs::file_size(dir_ / "a.db"));
  sqlite3_close(db);
  fs::resize_file(dir_ / "a.db", fs::file_size(dir_ / "a.db") + 100);  // a torn last page
  EXPECT_FALSE(hash_pages(dir_ / "a.db"));
}

TEST_F(StorePagesTest, TheWalsPagesCheckpointedIntoTheFileAreItsOwnOtherContentIsNot) {
  const fs::path f = dir_ / "a.db";
  sqlite3* db = open_wal_db(f);
  const auto before = hash_pages(f);
  ASSERT_TRUE(before);
  ASSERT_EQ(sqlite3_exec(db, "INSERT INTO t VALUES (hex(randomblob(3000))), (hex(randomblob(3000)))", nullptr, nullptr,
                         nullptr),
            SQLITE_OK);
  EXPECT_TRUE(written_only_from_wal(f, *before));  // nothing checkpointed yet: the file as recorded
  // Checkpoint without resetting the log: the file now holds the WAL's pages, and grew.
  ASSERT_EQ(sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr), SQLITE_OK);
  ASSERT_GT(fs::file_size(f), before->hashes.size() * before->page_size);
  EXPECT_TRUE(written_only_from_wal(f, *before));
  // One byte of one page changed by anyone else: not the commit's.
  {
    std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(static_cast<std::streamoff>(before->page_size) + 200);
    io.put('\x5a');
  }
  EXPECT_FALSE(written_only_from_wal(f, *before));
  // Without the WAL, the grown file is not the recorded one.
  sqlite3_close(db);
  EXPECT_FALSE(written_only_from_wal(f, *before));
}

}  // namespace
}  // namespace carb::detail
