// One writer per measurement store: an exclusive flock(2) on a lock file beside the store.
//
// Why a separate file rather than flock on the SQLite file itself:
//  - SQLite locks the database with fcntl (POSIX) locks, and a process loses every POSIX lock
//    it holds on a file as soon as it closes *any* descriptor of that file. Keeping a second
//    descriptor of the database open for our lock invites exactly that (SQLite's "how to
//    corrupt a database" list, section 2.2). A lock file has no descriptors in common with SQLite.
//  - On NFS, Linux emulates flock with whole-file fcntl locks, which would then collide with
//    SQLite's own locks on the database; on a lock file they collide with nothing.
//  - The lock file can carry the holder's pid, so the refusal says who holds the store.
// The kernel drops a flock when the last descriptor closes, so a killed writer (kill -9)
// never leaves a stale lock: the file may remain, but unlocked, and the next writer takes it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "store_pages.hpp"

namespace carb {

/// Which database file a writer had open: device and inode, and its birth time where the file
/// system records one (ext4 reuses a deleted file's inode for the next file: eighteenth/nineteenth
/// hostile passes, a backup copied over a killed store got the same inode).
struct StoreFileId {
  std::uint64_t dev = 0, ino = 0;
  std::optional<std::uint64_t> birth_ns;
  /// When the file was last written: the writer records it after every commit, so content copied
  /// into the same inode (a backup restored with cp over it: twentieth hostile pass) is told apart.
  std::optional<std::uint64_t> mtime_ns;
  /// Recorded just before a commit: the commit may have written the file since (a writer killed
  /// inside it), so a later modification is its own if it came from the commit's WAL.
  bool pending = false;
  /// The file's size when recorded.
  std::optional<std::uint64_t> size;
  /// A hash of each of the file's pages when recorded (store_pages.hpp): what tells a killed
  /// commit's own write from other content written into the same file since.
  std::optional<detail::PageHashes> pages;
  /// The id of the file at `db` now (following links), if it exists.
  static std::optional<StoreFileId> of(const std::filesystem::path& db);
  /// The id of the file open as `fd` (wherever it has been moved since).
  static std::optional<StoreFileId> of(int fd);
  /// Whether the file at `db`, whose id is `now`, holds what the writer that took this id last left
  /// there: each page the recorded one or one of the -wal's frames, wherever the file has moved;
  /// without page hashes (an older carb's record), the same device, inode, birth time and
  /// modification time.
  bool same_file(const StoreFileId& now, const std::filesystem::path& db) const;
};

class StoreLock {
 public:
  /// The lock file of a store: "<db>.lock", beside store_file(db).
  static std::filesystem::path lock_path(const std::filesystem::path& db);
  /// The store's file as SQLite opens it: symbolic links resolved, a dangling one too (SQLite
  /// creates the file where it points and keeps its -wal and -shm there).
  static std::filesystem::path store_file(const std::filesystem::path& db);

  /// Takes the lock at once or throws MeasureError "store <db> is in use by another carb
  /// profile (pid N)". Creates the lock file if missing; never waits and never touches the store.
  /// `what` and `holder` name another file kept by one writer the same way and the command that
  /// writes it ("window study x.csv", "carb meter --study"); `flag` the option that names the
  /// file, in refusals ("choose another --out").
  explicit StoreLock(const std::filesystem::path& db, const std::string& what = {},
                     const std::string& holder = "carb profile", const std::string& flag = "--db");
  /// Removes the lock file (while still holding the lock, so no other writer can be holding it)
  /// and releases the lock.
  ~StoreLock();
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

  /// Writes beside the pid which database file this writer has open (device and inode, once the
  /// store exists, and its page hashes). A writer killed by SIGKILL leaves its lock file, and with it
  /// this record: the next open can tell whether a leftover -wal belongs to the file now at <db>.
  /// `pending`: just before a commit, so the page hashes are those of the record after the last one.
  /// `db_fd`: the store file's held descriptor (held_file.hpp), which follows the file when its
  /// directory is renamed during a run (twenty-fourth hostile pass: a record by path failed silently).
  /// Throws MeasureError when the record cannot be written: a writer that cannot say what its -wal
  /// belongs to must stop (and close, folding the -wal in) rather than go on.
  void record_store(int db_fd, bool pending = false);
  /// On release, keeps the lock file and its record, marked as taken before a commit: for a store
  /// closed with committed rows still only in its -wal (SQLite could not fold them into the file:
  /// a full disk, a reader holding a snapshot), which the next open may then apply.
  void keep_record(int db_fd);
  /// The file a lock file at <db>.lock records, if it records one.
  static std::optional<StoreFileId> recorded_store(const std::filesystem::path& db);
  /// The same, read from the lock file at `lock` itself.
  static std::optional<StoreFileId> recorded_at(const std::filesystem::path& lock);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::optional<detail::PageHashes> pages_;  // of the file as the last commit left it
  bool keep_ = false;                        // keep_record was called: the file outlives the lock
  /// The lock file held the last writer's record when taken, and this writer has not replaced it
  /// yet: removing the file would take that record with it.
  bool inherited_ = false;
  bool recorded_ = false;
};

}  // namespace carb
