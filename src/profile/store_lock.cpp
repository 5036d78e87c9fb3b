// The one-writer lock of a measurement store; see store_lock.hpp for why a lock file and flock.
#include "store_lock.hpp"

#include <fstream>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "carb/error.hpp"
#include "util/special_file.hpp"

namespace carb {
namespace {

// "pid N" from the lock file; the holder writes it right after locking, so it may be empty for a moment.
std::string holder_of(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  const long pid = n > 0 ? std::strtol(buf, nullptr, 10) : 0;
  return pid > 0 ? "pid " + std::to_string(pid) : "pid unknown";
}

// The holder's own command ("carb profile", "carb meter"), read from /proc: a study refused by a
// profile writing to the same file was told "another carb meter --study" (thirty-eighth hostile
// pass). Empty when it cannot be read or is not carb.
std::string command_of(const std::string& holder) {
  if (holder.rfind("pid ", 0) != 0 || holder == "pid unknown") return "";
  std::ifstream in("/proc/" + holder.substr(4) + "/cmdline", std::ios::binary);
  std::string argv0, sub;
  if (!std::getline(in, argv0, '\0') || !std::getline(in, sub, '\0')) return "";
  const std::string base = argv0.substr(argv0.find_last_of('/') + 1);
  if (base != "carb" || sub.empty() || sub[0] == '-') return "";
  return "carb " + sub;
}

// The whole lock file, up to a bound no record of a real store reaches; nullopt when unreadable or larger.
constexpr std::size_t kMaxRecord = 64u << 20;
std::optional<std::string> read_record(int fd) {
  std::string text;
  char buf[65536];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0) return std::nullopt;
    if (n == 0) return text;
    text.append(buf, static_cast<std::size_t>(n));
    at += n;
    if (text.size() > kMaxRecord) return std::nullopt;
  }
}

// True when the file is empty or holds what a carb writer writes there: its pid, maybe the store
// it has open ("123 2049 5678 ..."), then that store's page hashes in hex.
bool holds_only_a_pid(int fd) {
  const auto text = read_record(fd);
  if (!text) return false;
  const auto eol = text->find('\n');
  const std::string first = text->substr(0, eol);
  if (first.size() > 200 || first.find_first_not_of("0123456789 ") != std::string::npos) return false;
  return eol == std::string::npos || text->find_first_not_of("0123456789abcdef \n", eol) == std::string::npos;
}

// True when fd is still the file named path: the previous holder removes the file while
// releasing, so a lock taken on a file opened just before that removal locks nothing.
bool still_named(int fd, const std::filesystem::path& path) {
  struct stat held {
  }, named{};
  return ::fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
         held.st_ino == named.st_ino;
}

}  // namespace

// Beside the store's real file: a symlink to the store (or a path through one) once took a lock
// of its own, and two profilers measured the same store at once.
std::filesystem::path StoreLock::lock_path(const std::filesystem::path& db) { return store_file(db).string() + ".lock"; }

std::filesystem::path StoreLock::store_file(const std::filesystem::path& db) {
  // Nineteenth hostile pass: a dangling link kept its own lock and side-file checks beside itself.
  const auto chain = detail::link_chain(db);
  const std::filesystem::path at = chain.empty() ? db : chain.back();
  std::error_code ec;
  const auto real = std::filesystem::weakly_canonical(at, ec);
  return ec ? at : real;
}

StoreLock::StoreLock(const std::filesystem::path& db, const std::string& what, const std::string& holder,
                     const std::string& flag)
    : path_(lock_path(db)) {
  // Each retry means another writer released the store between our open and our flock; a
  // bounded loop keeps a pathological race from spinning for ever.
  for (int attempt = 0; attempt < 100; ++attempt) {
    // CLOEXEC: a child process must not inherit (and so prolong) the lock.
    // NOFOLLOW: a link there would have its target (a user's empty or digits-only file) overwritten
    // with our pid, and the link removed on release (seventeenth hostile pass).
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0 && errno == ELOOP)
      throw MeasureError(path_.string() + " is a symbolic link, not carb's lock file; move it or choose another " + flag);
    if (fd < 0)
      throw MeasureError(path_.string() + ": cannot open the store's lock file: " + std::strerror(errno));
    // Nor a hard link: its other name is a file of the user's that the pid would overwrite
    // (eighteenth hostile pass: counter.txt linked at t.db.lock held a pid afterwards).
    if (struct stat st {}; ::fstat(fd, &st) == 0 && st.st_nlink > 1) {
      ::close(fd);
      throw MeasureError(path_.string() + " has another name (a hard link), so it is not carb's lock file; move it or "
                         "choose another " + flag);
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string pid = holder_of(fd);
      ::close(fd);
      // Another thread of this process (two Python threads profiling one store) is no other process
      // (a hostile tester was pointed at "another carb profile" by its own pid).
      if (err == EWOULDBLOCK && pid == "pid " + std::to_string(::getpid()))
        throw MeasureError((what.empty() ? "store " + db.string() : what) + " is in use by another " + holder +
                           " in this process (another thread); wait for it to finish");
      if (err == EWOULDBLOCK)
        throw MeasureError((what.empty() ? "store " + db.string() : what) + " is in use by another " +
                           (command_of(pid).empty() ? holder : command_of(pid)) + " (" + pid +
                           "); wait for it to finish or stop it");
      throw MeasureError(path_.string() + ": cannot lock the store's lock file: " + std::strerror(err));
    }
    if (!still_named(fd, path_)) {
      ::close(fd);
      continue;
    }
    // A file of that name that carb did not write (carb writes a pid, or nothing yet) is the
    // user's: refuse rather than overwrite it now and remove it on release.
    if (!holds_only_a_pid(fd)) {
      ::close(fd);
      throw MeasureError(path_.string() + " exists and is not carb's lock file; move it or choose another " + flag);
    }
    fd_ = fd;
    // Our pid in place of the last holder's, the rest of its record kept until record_store replaces
    // it: a kill before that (while SQLite opens the store) would otherwise leave no record of the
    // file a killed writer's -wal belongs to, and the next open refuse it (twenty-third hostile pass).
    const std::string old = read_record(fd_).value_or("");
    const auto rest = old.find_first_of(" \n");
    inherited_ = rest != std::string::npos && old.find_first_not_of(" \n", rest) != std::string::npos;
    const std::string text = std::to_string(::getpid()) + (rest == std::string::npos ? "\n" : old.substr(rest));
    // Only informative (names the holder in another writer's refusal), so a failed write is no error.
    const bool noted = ::pwrite(fd_, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()) &&
                       ::ftruncate(fd_, static_cast<off_t>(text.size())) == 0;
    (void)noted;
    return;
  }
  throw MeasureError(path_.string() + ": could not take the store's lock (it kept changing hands)");
}

namespace {
std::optional<StoreFileId> id_of(int dirfd, const char* path, int flags) {
  struct statx stx {};
  if (::statx(dirfd, path, flags, STATX_INO | STATX_BTIME | STATX_MTIME | STATX_SIZE, &stx) != 0) return std::nullopt;
  StoreFileId id;
  id.dev = (static_cast<std::uint64_t>(stx.stx_dev_major) << 32) | stx.stx_dev_minor;
  id.ino = stx.stx_ino;
  if (stx.stx_mask & STATX_BTIME)
    id.birth_ns = static_cast<std::uint64_t>(stx.stx_btime.tv_sec) * 1000000000ull + stx.stx_btime.tv_nsec;
  if (stx.stx_mask & STATX_MTIME)
    id.mtime_ns = static_cast<std::uint64_t>(stx.stx_mtime.tv_sec) * 1000000000ull + stx.stx_mtime.tv_nsec;
  if (stx.stx_mask & STATX_SIZE) id.size = stx.stx_size;
  return id;
}
}  // namespace

std::optional<StoreFileId> StoreFileId::of(const std::filesystem::path& db) { return id_of(AT_FDCWD, db.c_str(), 0); }

std::optional<StoreFileId> StoreFileId::of(int fd) {
  if (fd < 0) return std::nullopt;
  return id_of(fd, "", AT_EMPTY_PATH);
}

bool StoreFileId::same_file(const StoreFileId& now, const std::filesystem::path& db) const {
  const auto same = [](const std::optional<std::uint64_t>& a, const std::optional<std::uint64_t>& b) {
    return !a || !b || *a == *b;
  };
  // The content decides, wherever it lives: every page the recorded one or one of the WAL's frames.
  // A backup restored in place within moments of a kill inside a commit, as large, was taken for the
  // commit's write by its times (twenty-second hostile pass); a store moved with its -wal to another
  // file system (a new inode) was refused as another file, with advice that lost its rows (twenty-fourth).
  if (pages) return detail::written_only_from_wal(db, *pages);
  // A record of an older carb, without page hashes: the same file, as that writer left it.
  if (dev != now.dev || ino != now.ino || !same(birth_ns, now.birth_ns)) return false;
  if (!pending) return same(mtime_ns, now.mtime_ns);
  return same(mtime_ns, now.mtime_ns) && same(size, now.size);
}

void StoreLock::record_store(int db_fd, bool pending) {
  const auto id = StoreFileId::of(db_fd);
  if (!id) throw MeasureError(path_.string() + ": cannot read the store file to record it: " + std::strerror(errno));
  // After a commit (or at open) the file is as this writer left it; just before one it still is.
  if (!pending || !pages_) pages_ = detail::hash_pages(db_fd);
  // pid dev ino birth mtime pending size (0: not recorded by this file system), then the pages
  std::string text = std::to_string(::getpid()) + " " + std::to_string(id->dev) + " " + std::to_string(id->ino) +
                     " " + std::to_string(id->birth_ns.value_or(0)) + " " + std::to_string(id->mtime_ns.value_or(0)) +
                     " " + (pending ? "1" : "0") + " " + std::to_string(id->size.value_or(0)) + "\n";
  if (pages_) text += detail::to_text(*pages_) + "\n";
  // Written over the old record, then cut to length: a kill between the two leaves this record
  // followed by the old one's tail, which the page count in it tells the reader to ignore.
  // A record that cannot be written (a full disk, an I/O error) stops the writer: going on, its
  // -wal would be refused after a kill as another file's (twenty-fourth hostile pass).
  if (::pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()) ||
      ::ftruncate(fd_, static_cast<off_t>(text.size())) != 0)
    throw MeasureError(path_.string() + ": cannot record the store's state in its lock file (" + std::strerror(errno) +
                       "); stopping, so that the store closes with every committed row in its file");
  recorded_ = true;
}

std::optional<StoreFileId> StoreLock::recorded_store(const std::filesystem::path& db) {
  return recorded_at(lock_path(db));
}

std::optional<StoreFileId> StoreLock::recorded_at(const std::filesystem::path& lock) {
  const int fd = ::open(lock.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  const auto text = read_record(fd);
  ::close(fd);
  if (!text || text->empty()) return std::nullopt;
  unsigned long long pid = 0, dev = 0, ino = 0, birth = 0, mtime = 0, pending = 0, size = 0;
  const int got = std::sscanf(text->c_str(), "%llu %llu %llu %llu %llu %llu %llu", &pid, &dev, &ino, &birth, &mtime,
                              &pending, &size);
  if (got < 3) return std::nullopt;
  StoreFileId id;
  id.dev = dev, id.ino = ino;
  if (got >= 4 && birth) id.birth_ns = birth;
  if (got >= 5 && mtime) id.mtime_ns = mtime;
  id.pending = got >= 6 && pending != 0;
  if (got >= 7 && size) id.size = size;
  if (const auto eol = text->find('\n'); eol != std::string::npos) {
    const auto end = text->find('\n', eol + 1);
    id.pages = detail::page_hashes_from_text(text->substr(eol + 1, end == std::string::npos ? end : end - eol - 1));
  }
  return id;
}

void StoreLock::keep_record(int db_fd) {
  keep_ = true;  // even if this record fails, the last one is better than none
  try {
    record_store(db_fd, true);
  } catch (const MeasureError&) {
  }
}

StoreLock::~StoreLock() {
  // A record inherited and never replaced is the last writer's, which its -wal may still need (a
  // writer that failed while opening the store removed it: twenty-fourth hostile pass).
  // Only while the name is still this file: a run directory renamed under a writer, with a new writer
  // at the old path, had the new writer's lock file removed (twenty-eighth hostile pass, from the code).
  if (!keep_ && (recorded_ || !inherited_) && still_named(fd_, path_)) ::unlink(path_.c_str());  // before close: whoever opens the old file now finds it unnamed and retries
  ::close(fd_);
}

}  // namespace carb
