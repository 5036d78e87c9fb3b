// Tests of one writer per store: a second sole writer is refused at once, naming the holder,
// without touching the store; readers are never refused; the lock ends with the Store and with
// the holder's process, even when that process is killed with SIGKILL.
#include "profile/store_lock.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "carb/error.hpp"
#include "carb/store.hpp"
#include "temp_dir_test.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

class StoreLockTest : public TempDirTest {
 protected:
  StoreLockTest() : TempDirTest("carb_store_lock_") {}
  fs::path db() const { return dir_ / "m.db"; }
};

StoredMeasurement sample(int batch) {
  StoredMeasurement m;
  m.record.platform = "cpu-1t";
  m.record.config = {Family::basic, 10, 0.25, 32, batch, Precision::fp32};
  m.record.latency_ms = 1.5 * batch;
  m.protocol_id = "p1";
  return m;
}

// The message of the MeasureError that opening a second sole writer throws; "" when none is thrown.
std::string refusal(const fs::path& db) {
  try {
    Store second(db, StoreAccess::sole_writer);
  } catch (const MeasureError& e) {
    return e.what();
  }
  return "";
}

TEST_F(StoreLockTest, SecondSoleWriterIsRefusedNamingTheHolder) {
  Store first(db(), StoreAccess::sole_writer);
  first.put(sample(1));
  const std::string msg = refusal(db());
  // The holder is this process (another thread, as two Python threads profiling one store): said
  // so, not as "another carb profile (pid <our own>)" (eighty-ninth hostile pass). Another process
  // is named by its pid (LockEndsWhenTheHolderIsKilled).
  EXPECT_NE(msg.find("store " + db().string() + " is in use by another carb profile in this process (another thread)"),
            std::string::npos)
      << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
  EXPECT_EQ(first.count(), 1u);
  first.put(sample(2));  // the holder goes on writing
  EXPECT_EQ(first.count(), 2u);
}

// Third hostile pass: `--db link.db`, a symlink to a store in use, took a lock of its own and two
// profilers measured one store at once. The lock sits beside the store's real file.
TEST_F(StoreLockTest, ASymlinkToAStoreInUseIsRefused) {
  Store writer(db(), StoreAccess::sole_writer);
  const fs::path link = db().parent_path() / "link.db";
  fs::create_symlink(db(), link);
  EXPECT_EQ(StoreLock::lock_path(link), StoreLock::lock_path(db()));
  EXPECT_NE(refusal(link).find("is in use by another carb profile"), std::string::npos);
}

TEST_F(StoreLockTest, ReadersAndSharedUseAreNeverRefused) {
  { Store(db()).put(sample(1)); }
  Store writer(db(), StoreAccess::sole_writer);
  writer.put(sample(2));
  Store reader(db());  // what `carb data export` opens
  EXPECT_EQ(reader.count(), 2u);
  EXPECT_EQ(reader.to_dataset().rows.size(), 2u);
}

TEST_F(StoreLockTest, RefusedWriterCreatesNothing) {
  StoreLock held(db());  // a writer that has locked the store but not created it yet
  EXPECT_NE(refusal(db()).find("is in use by another carb profile"), std::string::npos);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    EXPECT_FALSE(fs::exists(db().string() + suffix)) << suffix;
}

TEST_F(StoreLockTest, LockEndsWithTheStoreAndLeavesNoFile) {
  { Store first(db(), StoreAccess::sole_writer); }
  EXPECT_FALSE(fs::exists(StoreLock::lock_path(db())));
  EXPECT_EQ(refusal(db()), "");
}

// The kernel drops a flock with its holder: a killed profiler never leaves a stale lock,
// even though its lock file stays behind.
TEST_F(StoreLockTest, LockEndsWhenTheHolderIsKilled) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    try {
      Store holder(db(), StoreAccess::sole_writer);
      holder.put(sample(1));
      const char ok = 1;
      if (::write(ready[1], &ok, 1) != 1) ::_exit(2);
      ::pause();
    } catch (const std::exception&) {  // a child of a test must never return into GoogleTest
    }
    ::_exit(1);
  }
  ::close(ready[1]);
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1) << "the child could not take the lock";
  ::close(ready[0]);
  EXPECT_NE(refusal(db()).find("(pid " + std::to_string(child) + ")"), std::string::npos);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(fs::exists(StoreLock::lock_path(db()))) << "the killed holder could not remove its file";
  Store next(db(), StoreAccess::sole_writer);
  EXPECT_EQ(next.count(), 1u);  // the killed holder's committed row is there
}

// A file named <db>.lock that the user made was overwritten and then removed (second hostile pass).
TEST_F(StoreLockTest, AUsersFileWhereTheLockGoesIsRefusedAndKept) {
  std::ofstream(StoreLock::lock_path(db())) << "my notes\n";
  EXPECT_NE(refusal(db()).find("is not carb's lock file"), std::string::npos);
  std::ifstream in(StoreLock::lock_path(db()));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "my notes\n");
  EXPECT_FALSE(fs::exists(db())) << "refused before the store is created";
}

// Seventeenth hostile pass: a link at the lock's name to a user's file holding only digits
// ("2024") had that file overwritten with the pid, and the link removed on release.
TEST_F(StoreLockTest, ALinkWhereTheLockGoesIsRefusedAndItsTargetKept) {
  const fs::path year = dir_ / "year.txt";
  std::ofstream(year) << "2024";
  fs::create_symlink(year, StoreLock::lock_path(db()));
  EXPECT_NE(refusal(db()).find("symbolic link"), std::string::npos);
  std::ifstream in(year);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "2024");
  EXPECT_TRUE(fs::is_symlink(StoreLock::lock_path(db())));
}

// Eighteenth hostile pass: the hard-link variant of the above.
TEST_F(StoreLockTest, AHardLinkWhereTheLockGoesIsRefusedAndItsOtherNameKept) {
  const fs::path counter = dir_ / "counter.txt";
  std::ofstream(counter) << "42\n";
  fs::create_hard_link(counter, StoreLock::lock_path(db()));
  EXPECT_NE(refusal(db()).find("hard link"), std::string::npos);
  std::ifstream in(counter);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "42\n");
}

}  // namespace
}  // namespace carb
