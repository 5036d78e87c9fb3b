// The SQLite measurement store: schema, versioning and prepared statements. Every write
// is its own transaction in WAL mode, so a killed profiler loses at most the row in flight.
// A sole writer also holds the store's lock (store_lock.hpp).
#include "carb/store.hpp"
#include "util/special_file.hpp"

#include <sqlite3.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <optional>
#include <utility>
#include <vector>

#include "carb/error.hpp"
#include "device_identity.hpp"
#include "held_file.hpp"
#include "store_lock.hpp"
#include "store_side_files.hpp"
#include "util/json_error.hpp"
#include "util/temp_owner.hpp"

namespace carb {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE measurements (
  id INTEGER PRIMARY KEY,
  platform TEXT NOT NULL,
  config_key TEXT NOT NULL,
  protocol_id TEXT NOT NULL,
  family TEXT NOT NULL,
  depth INTEGER NOT NULL,
  width REAL NOT NULL,
  resolution INTEGER NOT NULL,
  batch INTEGER NOT NULL,
  precision TEXT NOT NULL,
  status TEXT NOT NULL,
  latency_ms REAL,
  energy_j REAL,
  peak_memory_mb REAL,
  avg_sm_util REAL,
  avg_mem_util REAL,
  extra_json TEXT,
  error_text TEXT,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (platform, config_key, protocol_id)
);
CREATE TABLE protocols (id TEXT PRIMARY KEY, settings TEXT NOT NULL);
CREATE TABLE planned (platform TEXT NOT NULL, protocol_id TEXT NOT NULL, config_key TEXT NOT NULL,
                      PRIMARY KEY (platform, protocol_id, config_key)) WITHOUT ROWID;
CREATE TABLE plan_runs (platform TEXT NOT NULL, protocol_id TEXT NOT NULL, command TEXT NOT NULL);
)sql";

// What runs were given to measure (Store::put_planned). Made with the schema since 2026-12-06, and
// on demand in a store made before: the same schema version, since a carb that does not know the
// table reads the store as before.
constexpr const char* kPlannedTable =
    "CREATE TABLE IF NOT EXISTS planned (platform TEXT NOT NULL, protocol_id TEXT NOT NULL, "
    "config_key TEXT NOT NULL, PRIMARY KEY (platform, protocol_id, config_key)) WITHOUT ROWID";
// The commands of the runs that planned, in order (Store::plan_commands): what `data info` names.
constexpr const char* kPlanRunsTable =
    "CREATE TABLE IF NOT EXISTS plan_runs (platform TEXT NOT NULL, protocol_id TEXT NOT NULL, command TEXT NOT NULL)";

[[noreturn]] void fail(sqlite3* db, const std::filesystem::path& file, const std::string& what) {
  throw MeasureError(file.string() + ": " + what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

// A prepared statement that finalizes itself; binds are 1-based, columns 0-based, as in SQLite.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::filesystem::path& file, const char* sql) : db_(db), file_(file) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK)
      fail(db_, file_, "cannot prepare statement");
  }
  ~Stmt() { sqlite3_finalize(s_); }
  /// Ready to bind and run again.
  void reset() { sqlite3_reset(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, const std::string& v) {
    return check(sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  Stmt& bind(int i, int v) { return check(sqlite3_bind_int(s_, i, v)); }
  Stmt& bind(int i, double v) { return check(sqlite3_bind_double(s_, i, v)); }
  Stmt& bind(int i, std::optional<double> v) { return v ? bind(i, *v) : check(sqlite3_bind_null(s_, i)); }
  Stmt& bind_text_or_null(int i, const std::string& v) {
    return v.empty() ? check(sqlite3_bind_null(s_, i)) : bind(i, v);
  }

  /// True while there is a row to read; false when done.
  bool step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail(db_, file_, "query failed");
  }
  void run() {
    while (step()) {
    }
  }

  std::string text(int c) const {
    const auto* p = sqlite3_column_text(s_, c);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<std::size_t>(sqlite3_column_bytes(s_, c)))
             : std::string();
  }
  int integer(int c) const { return sqlite3_column_int(s_, c); }
  double real(int c) const { return sqlite3_column_double(s_, c); }
  std::optional<double> opt_real(int c) const {
    if (sqlite3_column_type(s_, c) == SQLITE_NULL) return std::nullopt;
    return real(c);
  }
  // Values as stored, no coercion: SQLite turns 'ten' into 0 and 4294967312 into 16 for a C int,
  // and an edited store must be refused, not exported as another configuration.
  int exact_int(int c, const char* name, const std::string& where) const {
    const sqlite3_int64 v = sqlite3_column_int64(s_, c);
    if (sqlite3_column_type(s_, c) != SQLITE_INTEGER || v < 0 || v > std::numeric_limits<int>::max())
      throw MeasureError(where + ": " + name + " is not a whole number carb could have stored ('" + text(c) + "')");
    return static_cast<int>(v);
  }
  std::optional<double> exact_real(int c, const char* name, const std::string& where) const {
    const int type = sqlite3_column_type(s_, c);
    if (type == SQLITE_NULL) return std::nullopt;
    if (type != SQLITE_INTEGER && type != SQLITE_FLOAT)
      throw MeasureError(where + ": " + name + " is not a number ('" + text(c) + "')");
    return real(c);
  }

 private:
  Stmt& check(int rc) {
    if (rc != SQLITE_OK) fail(db_, file_, "cannot bind parameter");
    return *this;
  }

  sqlite3* db_;
  const std::filesystem::path& file_;
  sqlite3_stmt* s_ = nullptr;
};

void exec(sqlite3* db, const std::filesystem::path& file, const char* sql) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(db, file, "cannot run SQL");
}

int query_int(sqlite3* db, const std::filesystem::path& file, const char* sql) {
  Stmt s(db, file, sql);
  return s.step() ? s.integer(0) : 0;
}

// The first read of the file: a file that is not SQLite fails here, so say what was expected.
int read_user_version(sqlite3* db, const std::filesystem::path& file) {
  sqlite3_stmt* s = nullptr;
  int rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, nullptr);
  const int version = rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
  if (rc != SQLITE_OK && rc != SQLITE_ROW && rc != SQLITE_DONE) {
    const std::string msg = sqlite3_errmsg(db);
    sqlite3_finalize(s);
    // Sixty-sixth hostile pass: on a full disk SQLite cannot make the -shm it reads a WAL store
    // through, and the message read as a damaged store, which it was not.
    if ((rc & 0xff) == SQLITE_IOERR || (rc & 0xff) == SQLITE_FULL) {
      std::error_code ec;
      const auto space = std::filesystem::space(detail::parent_of(file), ec);
      if (!ec && space.available < (std::uintmax_t{1} << 20))
        throw MeasureError(file.string() + ": cannot open the store: the disk holding it is full (" +
                           std::to_string(space.available) + " bytes free); nothing in it was changed: free some "
                           "space and run again");
    }
    throw MeasureError(file.string() + ": cannot read as a carb measurement store (SQLite): " + msg);
  }
  sqlite3_finalize(s);
  return version;
}

// Twenty-ninth hostile pass: a store copied with `cp` while a profiler wrote to it can be torn
// (2 of 850 such copies failed SQLite's integrity check), and was resumed and exported without a
// word. An existing store is checked once when it is opened; a damaged one is refused.
void check_integrity(sqlite3* db, const std::filesystem::path& file) {
  Stmt s(db, file, "PRAGMA integrity_check(3)");
  std::string problems;
  while (s.step()) {
    const std::string line = s.text(0);
    if (line == "ok") return;
    problems += (problems.empty() ? "" : "; ") + line;
  }
  throw MeasureError(file.string() + ": the store is damaged (SQLite's integrity check: " + problems +
                     "), so its rows cannot be trusted; go back to a backup, or salvage what is readable with "
                     "`sqlite3 " + file.string() + " .recover | sqlite3 salvaged.db` and check that copy");
}

// Adds name to the list the first time it is seen (keeps extra_columns in first-seen order).
void note_column(std::vector<std::string>& cols, std::unordered_set<std::string>& seen,
                 const std::string& name) {
  if (seen.insert(name).second) cols.push_back(name);
}

// Extra fields are stored as one JSON object of strings; anything else is kept as its JSON text.
// A record's further columns as the store keeps them: one JSON object, name -> text.
nlohmann::json extra_json(const ExtraColumns& extra) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : extra) j[k] = v;
  return j;
}

void read_extra(const std::string& text, ExtraColumns& extra) {
  if (text.empty()) return;
  const nlohmann::json j = nlohmann::json::parse(text);
  for (auto it = j.begin(); it != j.end(); ++it)
    extra[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
}

// One writer per store file, whatever it is called: an open-file-description lock on a byte SQLite
// never locks (its locks are at 0x40000000 and the 511 bytes after), through the held descriptor.
// The lock file goes by name: a store renamed during a run (mv s.db r.db) and profiled under its new
// name got a second lock file and a second -wal on the same file, and the two writers lost each
// other's rows (twenty-fifth hostile pass). An OFD lock is released with its open file description,
// so a killed writer never leaves it behind.
constexpr off_t kWriterByte = 0x3fffff00;

// The held descriptors this process has locked: one descriptor per file (held_file.hpp), and an OFD
// lock never conflicts with itself, so a second writer in this process is refused here.
std::mutex g_locked_guard;
std::set<int> g_locked;

// The writer byte's lock (F_WRLCK) or its release (F_UNLCK), as an OFD lock request.
struct flock writer_byte(short type) {
  struct flock l {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = kWriterByte;
  l.l_len = 1;
  return l;
}

void lock_writer(int fd, const std::filesystem::path& db) {
  {
    const std::lock_guard<std::mutex> guard(g_locked_guard);
    if (fd >= 0 && !g_locked.insert(fd).second)
      throw MeasureError("store " + db.string() + " is in use by another writer in this process under another name "
                         "(the file was renamed, moved or linked while it was open)");
  }
  const auto release = [&] {
    const std::lock_guard<std::mutex> guard(g_locked_guard);
    g_locked.erase(fd);
  };
  struct flock l = writer_byte(F_WRLCK);
  if (fd < 0) throw MeasureError(db.string() + ": cannot open the store file to lock it: " + std::strerror(errno));
  if (::fcntl(fd, F_OFD_SETLK, &l) == 0) return;
  const int err = errno;
  release();
  errno = err;
  if (errno == EAGAIN || errno == EACCES)
    throw MeasureError("store " + db.string() + " is in use by another carb profile under another name (the file was "
                       "renamed, moved or linked while it ran); wait for it to finish or stop it");
  if (errno == EBADF) throw MeasureError(db.string() + ": the store file is not writable");
  throw MeasureError(db.string() + ": cannot lock the store file: " + std::strerror(errno));
}

void unlock_writer(int fd) {
  struct flock l = writer_byte(F_UNLCK);
  ::fcntl(fd, F_OFD_SETLK, &l);  // without close: closing would drop SQLite's own locks (held_file.hpp)
  const std::lock_guard<std::mutex> guard(g_locked_guard);
  g_locked.erase(fd);
}

// Whether the store has table `name`: the tables added to schema 1 later (planned, plan_runs) are
// missing from stores made before them, which read as "nothing recorded".
bool has_table(sqlite3* db, const std::filesystem::path& file, const std::string& name) {
  Stmt s(db, file, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  s.bind(1, name);
  return s.step();
}

bool has_carb_tables(sqlite3* db, const std::filesystem::path& file) {
  return query_int(db, file,
                   "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('measurements', 'protocols')") == 2;
}

// "file:PATH?immutable=1" with the path percent-encoded where a URI needs it.
std::string immutable_uri(const std::filesystem::path& p) {
  std::string uri = "file:";
  for (const unsigned char c : std::filesystem::absolute(p).string()) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      uri += hex;
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

Store::Store(const std::filesystem::path& db, StoreAccess access) : path_(db), file_(StoreLock::store_file(db)) {
  if (db.empty()) throw MeasureError("the store's file name is empty; give one (for example cpu.db)");
  // Fiftieth hostile pass: "new/" made a directory `new`, then refused it for its hard links.
  if (!db.has_filename())
    throw MeasureError(db.string() + " ends in '/', which names a directory; give the store's file (for example " +
                       (db / "cpu.db").string() + ")");
  // Thirty-fifth hostile pass: a directory was refused for its "2 names (hard links)".
  if (std::error_code ec; std::filesystem::is_directory(file_, ec))
    throw MeasureError(db.string() + " is a directory; give the store's file (for example " +
                       (db / "cpu.db").string() + ")");
  // A device, FIFO or socket: `data export --db /dev/null` quoted a raw "cannot get file size", and a
  // writer's open a "disk I/O error" (hostile tester); a FIFO could block the open.
  if (std::error_code ec; std::filesystem::exists(std::filesystem::symlink_status(file_, ec)) &&
                          !std::filesystem::is_regular_file(file_, ec))
    throw MeasureError(db.string() + " is not a regular file (a device, FIFO or socket); give the store's file");
  if (access == StoreAccess::read_only) {
    open_read_only();
    return;
  }
  // A new store is named as every output is: printably (a hostile tester's --db $'n\nl.db' was made).
  if (std::error_code ec; !std::filesystem::exists(std::filesystem::symlink_status(db, ec)))
    detail::refuse_unprintable_name(db);
  // A store at a dataset's provenance name (X.json beside X.csv) made the dataset unreadable: every
  // reader took the store for its sidecar (a hostile tester's finding).
  if (std::error_code ec; db.extension() == ".json" && std::filesystem::exists(std::filesystem::path(db).replace_extension(".csv"), ec))
    throw MeasureError(db.string() + " is the provenance file name of " +
                       std::filesystem::path(db).replace_extension(".csv").string() +
                       "; give the store another name (for example " +
                       std::filesystem::path(db).replace_extension(".db").string() + ")");
  if (db.has_parent_path()) {
    std::error_code ec;  // open() below reports a directory that could not be made
    std::filesystem::create_directories(db.parent_path(), ec);
  }
  // What a killed writer's lock file says its WAL belongs to: read before this writer's lock
  // replaces the record.
  const auto recorded = StoreLock::recorded_store(file_);
  const bool live = wal_in_use(file_);
  const bool check_owner = access == StoreAccess::sole_writer && !live;
  // Twenty-first hostile pass: a store reached by two names (a hard link) took a lock and a WAL per
  // name; two profilers lost each other's rows and left an index out of step with its table.
  if (struct stat st {}; access != StoreAccess::shared && ::stat(file_.c_str(), &st) == 0 && st.st_nlink > 1)
    throw MeasureError(db.string() + " has " + std::to_string(st.st_nlink) + " names (hard links); SQLite would keep a "
                       "separate WAL and carb a separate lock for each. Use one name: remove the other links, keeping the one "
                       "its -wal and -shm sit beside, if any");
  // Before the lock too: a writer refused here must leave that record for the next reader.
  check_sqlite_side_files(file_, recorded, check_owner, live);
  check_no_wal_under_another_name(file_);
  // Before SQLite opens the file: a refused writer must not create or change anything.
  if (access == StoreAccess::sole_writer) lock_ = std::make_unique<StoreLock>(db);
  check_sqlite_side_files(file_, recorded, check_owner, live);
  // Sixty-seventh hostile pass: side files another user's read made, which this user cannot write,
  // failed the run with SQLite's "attempt to write a readonly database".
  for (const char* suffix : {"-wal", "-shm"}) {
    const std::filesystem::path f = file_.string() + suffix;
    std::error_code ec;
    if (!std::filesystem::exists(f, ec) || ::access(f.c_str(), W_OK) == 0) continue;
    const std::filesystem::path wal = file_.string() + "-wal";
    const bool rows = std::filesystem::exists(wal, ec) && std::filesystem::file_size(wal, ec) > 0;
    throw MeasureError(f.string() + " is not writable by this user (another user's read of the store can leave it), " +
                       "so SQLite cannot write the store " + path_.string() + "; " +
                       (rows ? "its -wal holds rows not yet in the store: let the user who owns it open the store first"
                             : "it holds no rows: with no run using the store, remove " + file_.string() + "-wal and " +
                                   file_.string() + "-shm (as their owner or root) and run again"));
  }
  // An existing store is locked before SQLite opens it; a new one as soon as SQLite has made it.
  bool locked = false;
  if (lock_ && std::filesystem::exists(file_)) {
    file_fd_ = detail::held_descriptor(file_);
    lock_writer(file_fd_, db);
    locked = true;
  }
  const int rc = sqlite3_open_v2(db.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  try {
    if (rc != SQLITE_OK) fail(db_, path_, "cannot open measurement store");
    file_fd_ = detail::held_descriptor(file_, true);
    pinned_ = file_fd_ >= 0;
    if (lock_ && !locked) lock_writer(file_fd_, db), locked = true;
    // Another process (a second profiler, an export) may hold the lock for a moment.
    sqlite3_busy_timeout(db_, 10000);
    init_schema();
    if (lock_) lock_->record_store(file_fd_);  // the file this writer's WAL belongs to
  } catch (const MeasureError&) {
    sqlite3_close(db_);  // the destructor does not run when a constructor throws
    if (locked) unlock_writer(file_fd_);
    if (pinned_) detail::unpin_descriptor(file_fd_);
    throw;
  }
}

void Store::open_read_only() {
  // Frames a live writer has open are its own; those nobody has open must be the file's.
  const bool live = wal_in_use(file_);
  check_sqlite_side_files(file_, StoreLock::recorded_store(file_), !live, live);
  check_no_wal_under_another_name(file_);
  if (std::filesystem::file_size(path_) == 0)  // SQLite would take it as a new, empty database
    throw MeasureError(path_.string() + ": empty file, not a carb measurement store");
  // Twenty-ninth hostile pass: exporting through a second name (a hard link) made a -wal and -shm
  // beside that name, which no writer uses. With no side files here, the frames of any writer sit
  // beside the other name, where SQLite would not look through this one either: read the file as
  // it is, creating nothing.
  const bool side_files_here = std::filesystem::exists(path_.string() + "-wal") ||
                               std::filesystem::exists(path_.string() + "-shm");
  const bool side_files_at_file = std::filesystem::exists(file_.string() + "-wal") ||
                                  std::filesystem::exists(file_.string() + "-shm");
  struct stat st {};
  const bool another_name = ::stat(file_.c_str(), &st) == 0 && st.st_nlink > 1 && !side_files_here;
  // Sixty-seventh hostile pass: a reader who cannot write the store (another user's, in a shared
  // sticky directory) made a -wal and -shm of its own there, which it cannot remove, nor can the
  // store's owner, whose next profile then failed ("attempt to write a readonly database"). With
  // neither side file there no writer has the store open (a writer keeps both): read it as it is.
  const bool cannot_write = !side_files_here && !side_files_at_file && ::access(file_.c_str(), W_OK) != 0;
  bool immutable = another_name || cannot_write;  // opened as a file that cannot change: no side files
  int rc = immutable ? sqlite3_open_v2(immutable_uri(path_).c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
                                          nullptr)
                        : sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr);
  try {
    if (rc != SQLITE_OK) fail(db_, path_, "cannot open measurement store");
    sqlite3_busy_timeout(db_, 10000);
    // A WAL store copied or archived without its -wal and -shm files, in a directory this user
    // cannot write: SQLite cannot make the -shm it reads through. With neither file there, no
    // writer has the store open (a writer keeps both), so it is read as the immutable file it is.
    if (const int probe = sqlite3_exec(db_, "PRAGMA user_version", nullptr, nullptr, nullptr);
        ((probe & 0xff) == SQLITE_READONLY || (probe & 0xff) == SQLITE_CANTOPEN) &&
        !std::filesystem::exists(path_.string() + "-wal") && !std::filesystem::exists(path_.string() + "-shm")) {
      sqlite3_close(db_);
      db_ = nullptr;
      immutable = true;
      rc = sqlite3_open_v2(immutable_uri(path_).c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
      if (rc != SQLITE_OK) fail(db_, path_, "cannot open measurement store");
    }
    const int version = read_user_version(db_, path_);
    if (version == 0 || (version == kSchemaVersion && !has_carb_tables(db_, path_))) {
      // Another application's tables say what the file is; only an empty one may be a store that
      // lost its -wal (hostile tester: the -wal hint was given for any SQLite file).
      const bool other_tables =
          query_int(db_, path_, "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'") > 0;
      throw MeasureError(path_.string() + ": SQLite file is not a carb measurement store" +
                         (other_tables ? std::string(" (it has other tables)")
                          : std::filesystem::exists(path_.string() + "-wal")
                              ? std::string(" (it has no tables)")
                              : " (it has no tables; a store copied or moved without its -wal file leaves rows "
                                "behind in it)"));
    }
    if (version != kSchemaVersion)
      throw MeasureError(path_.string() + ": measurement store has schema version " + std::to_string(version) +
                         ", this carb reads version " + std::to_string(kSchemaVersion));
    check_integrity(db_, path_);
    // Read through the file's own name (not immutable): whatever -wal and -shm are beside it now,
    // where neither was before, this open made.
    made_side_files_ = !immutable && !side_files_here && !side_files_at_file &&
                       std::filesystem::exists(file_.string() + "-shm");
  } catch (const MeasureError&) {
    sqlite3_close(db_);
    db_ = nullptr;
    // Hundred-and-third hostile pass: a truncated store was refused, and the -wal and -shm this
    // open made stayed beside it.
    if (!immutable && !side_files_here && !side_files_at_file && std::filesystem::exists(file_.string() + "-shm"))
      remove_side_files_made();
    throw;
  }
}

void Store::remove_side_files_made() const noexcept {
  // Sixty-sixth pass, a small mess: `data export` left an empty -wal and a -shm beside every store
  // it read (a read-only connection cannot remove them). Only an empty -wal: one with frames holds
  // a writer's rows. SQLite removes both at the close of the last connection that can write, and
  // keeps them while any other connection (reader or writer, in any process) has the store open.
  std::error_code ec;
  const std::filesystem::path wal = file_.string() + "-wal";
  if (!std::filesystem::is_regular_file(wal, ec) || std::filesystem::file_size(wal, ec) != 0 || ec) return;
  if (::access(file_.c_str(), W_OK) != 0 || ::access(detail::parent_of(file_).c_str(), W_OK) != 0) return;
  sqlite3* rw = nullptr;
  if (sqlite3_open_v2(file_.c_str(), &rw, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(rw, 100);
    sqlite3_exec(rw, "PRAGMA user_version", nullptr, nullptr, nullptr);  // opens the WAL
  }
  sqlite3_close(rw);
}

Store::~Store() {
  sqlite3_close(db_);
  if (made_side_files_) remove_side_files_made();
  // The last close folds the WAL into the file and removes it. Where it could not (a full disk, a
  // reader holding a snapshot), committed rows are still only in the -wal, and the lock's record is
  // what lets the next open apply them: it was removed, and the next open refused the store
  // (twenty-third hostile pass; moving the -wal away, as the refusal offered, lost the rows).
  std::error_code ec;
  const auto wal = std::filesystem::path(file_.string() + "-wal");
  if (lock_ && std::filesystem::is_regular_file(wal, ec) && std::filesystem::file_size(wal, ec) > 32 && !ec)
    lock_->keep_record(file_fd_);
  if (lock_) unlock_writer(file_fd_);
  if (pinned_) detail::unpin_descriptor(file_fd_);
}

void Store::init_schema() {
  // Reading user_version is the first access to the file: a non-SQLite file fails here.
  const int version = read_user_version(db_, path_);
  if (version != 0 && version != kSchemaVersion)
    throw MeasureError(path_.string() + ": measurement store has schema version " + std::to_string(version) +
                       ", this carb reads version " + std::to_string(kSchemaVersion));
  // Before anything changes the file: another application's database was switched to WAL and only
  // then refused (tenth hostile pass). (Checked again below under the write lock, for a race.)
  if (version == 0 && query_int(db_, path_, "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'") > 0)
    throw MeasureError(path_.string() + ": SQLite file is not a carb measurement store (it has other tables)");
  // Another application's schema may be its version 1 too (eleventh hostile pass): carb's own
  // tables must be there before WAL is switched on.
  if (version == kSchemaVersion && !has_carb_tables(db_, path_))
    throw MeasureError(path_.string() + ": SQLite file is not a carb measurement store (it lacks carb's tables)");
  if (version == kSchemaVersion) check_integrity(db_, path_);
  exec(db_, path_, "PRAGMA journal_mode=WAL");
  // With WAL, NORMAL survives a process kill (not a power cut) and keeps each put cheap.
  exec(db_, path_, "PRAGMA synchronous=NORMAL");
  // Rows are few and slow to measure: fold the WAL into the database file after every commit, so a
  // store killed and then moved or copied without its -wal keeps its rows (seventeenth hostile pass).
  exec(db_, path_, "PRAGMA wal_autocheckpoint=1");
  if (version == kSchemaVersion) return;
  // IMMEDIATE takes the write lock first, so two processes creating one store cannot race.
  exec(db_, path_, "BEGIN IMMEDIATE");
  try {
    if (query_int(db_, path_, "PRAGMA user_version") == 0) {
      if (query_int(db_, path_, "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'") > 0)
        throw MeasureError(path_.string() +
                           ": SQLite file is not a carb measurement store (it has other tables)");
      exec(db_, path_, kSchema);
      exec(db_, path_, ("PRAGMA user_version=" + std::to_string(kSchemaVersion)).c_str());
    }
    exec(db_, path_, "COMMIT");
  } catch (const MeasureError&) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

bool Store::has(const std::string& platform, const Config& c, const std::string& protocol_id) const {
  Stmt s(db_, path_,
         "SELECT 1 FROM measurements WHERE platform = ?1 AND config_key = ?2 AND protocol_id = ?3 LIMIT 1");
  s.bind(1, platform).bind(2, config_key(c)).bind(3, protocol_id);
  return s.step();
}

std::unordered_set<std::string> Store::done_keys(const std::string& platform, const std::string& protocol_id,
                                                 bool with_errors) const {
  Stmt s(db_, path_,
         with_errors ? "SELECT config_key FROM measurements WHERE platform = ?1 AND protocol_id = ?2"
                     : "SELECT config_key FROM measurements WHERE platform = ?1 AND protocol_id = ?2 AND status != 'error'");
  s.bind(1, platform).bind(2, protocol_id);
  std::unordered_set<std::string> keys;
  while (s.step()) keys.insert(s.text(0));
  return keys;
}

namespace {
// Runs one autocommit statement with the lock's record bracketing it: a writer killed inside the
// commit leaves "pending", under which a later write of the same file is the commit's own
// (Resume.KilledRunResumesWithoutLossOrDuplicates found that window).
void commit_recorded(Stmt& s, StoreLock* lock, int file_fd) {
  if (lock) lock->record_store(file_fd, true);
  s.run();
  if (lock) lock->record_store(file_fd);  // the file as this commit left it
}
}  // namespace

void Store::put(const StoredMeasurement& m) {
  const Record& r = m.record;
  const Config& c = r.config;
  Stmt s(db_, path_,
         "INSERT OR REPLACE INTO measurements (platform, config_key, protocol_id, family, depth, width, "
         "resolution, batch, precision, status, latency_ms, energy_j, peak_memory_mb, avg_sm_util, "
         "avg_mem_util, "
         "extra_json, error_text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
         "?16, ?17)");
  s.bind(1, r.platform).bind(2, config_key(c)).bind(3, m.protocol_id);
  s.bind(4, to_string(c.family)).bind(5, c.depth).bind(6, c.width).bind(7, c.resolution).bind(8, c.batch);
  s.bind(9, to_string(c.precision)).bind(10, to_string(r.status));
  s.bind(11, r.latency_ms).bind(12, r.energy_j).bind(13, r.peak_memory_mb);
  s.bind(14, r.avg_sm_util).bind(15, r.avg_mem_util);
  s.bind_text_or_null(16, r.extra.empty() ? std::string() : extra_json(r.extra).dump());
  s.bind_text_or_null(17, m.error_text);
  commit_or_rescue([&] { commit_recorded(s, lock_.get(), file_fd_); });  // autocommit: one transaction, checkpointed into the file
}

void Store::put_protocol(const std::string& protocol_id, const nlohmann::json& settings) {
  // A store begun by an older carb keeps a record without the lasting device facts a newer one
  // reads (its memory, since 2026-12-07): those it lacks are added where the record names the same
  // device as this run, and none it holds is changed. Not where it names none (a review: a record
  // made without NVML would have gained another GPU's name and memory), nor a reading of the moment
  // (a clock or temperature is the first run's).
  const nlohmann::json stored = protocols();
  if (const auto it = stored.find(protocol_id); it != stored.end()) {
    nlohmann::json merged = *it;
    if (!detail::add_lasting_device_facts(merged, settings)) return;
    Stmt s(db_, path_, "UPDATE protocols SET settings = ?2 WHERE id = ?1");
    s.bind(1, protocol_id).bind(2, merged.dump());
    commit_or_rescue([&] { commit_recorded(s, lock_.get(), file_fd_); });
    return;
  }
  Stmt s(db_, path_, "INSERT OR IGNORE INTO protocols (id, settings) VALUES (?1, ?2)");
  s.bind(1, protocol_id).bind(2, settings.dump());
  commit_or_rescue([&] { commit_recorded(s, lock_.get(), file_fd_); });
}

void Store::put_planned(const std::string& platform, const std::string& protocol_id,
                        const std::vector<Config>& configs, bool replace, const std::string& command) {
  // Every key made before the transaction opens: a throw inside it left the connection in it, and
  // every later put() went into a transaction rolled back at close (a review).
  std::vector<std::string> keys;
  keys.reserve(configs.size());
  for (const Config& c : configs) keys.push_back(config_key(c));
  commit_or_rescue([&] {
    if (lock_) lock_->record_store(file_fd_, true);
    exec(db_, path_, "BEGIN IMMEDIATE");
    try {
      exec(db_, path_, kPlannedTable);
      exec(db_, path_, kPlanRunsTable);
      if (replace)
        for (const char* sql : {"DELETE FROM planned WHERE platform = ?1 AND protocol_id = ?2",
                                "DELETE FROM plan_runs WHERE platform = ?1 AND protocol_id = ?2"}) {
          Stmt forget(db_, path_, sql);
          forget.bind(1, platform).bind(2, protocol_id);
          forget.run();
        }
      if (!command.empty()) {
        Stmt run(db_, path_, "INSERT INTO plan_runs (platform, protocol_id, command) VALUES (?1, ?2, ?3)");
        run.bind(1, platform).bind(2, protocol_id).bind(3, command);
        run.run();
      }
      Stmt s(db_, path_, "INSERT OR IGNORE INTO planned (platform, protocol_id, config_key) VALUES (?1, ?2, ?3)");
      for (const std::string& k : keys) {
        s.bind(1, platform).bind(2, protocol_id).bind(3, k);
        s.run();
        s.reset();
      }
      exec(db_, path_, "COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
    if (lock_) lock_->record_store(file_fd_);  // the file as this commit left it
  });
}

std::optional<std::vector<std::string>> Store::planned_keys(const std::string& platform,
                                                            const std::string& protocol_id) const {
  if (!has_table(db_, path_, "planned")) return std::nullopt;
  Stmt s(db_, path_, "SELECT config_key FROM planned WHERE platform = ?1 AND protocol_id = ?2 ORDER BY config_key");
  s.bind(1, platform).bind(2, protocol_id);
  std::vector<std::string> keys;
  while (s.step()) keys.push_back(s.text(0));
  return keys;
}

std::vector<std::string> Store::plan_commands(const std::string& platform, const std::string& protocol_id) const {
  std::vector<std::string> out;
  if (!has_table(db_, path_, "plan_runs")) return out;
  Stmt s(db_, path_, "SELECT command FROM plan_runs WHERE platform = ?1 AND protocol_id = ?2 ORDER BY rowid");
  s.bind(1, platform).bind(2, protocol_id);
  while (s.step()) out.push_back(s.text(0));
  return out;
}

std::vector<std::pair<std::string, std::string>> Store::planned_pairs() const {
  std::vector<std::pair<std::string, std::string>> out;
  if (!has_table(db_, path_, "planned")) return out;
  Stmt s(db_, path_, "SELECT DISTINCT platform, protocol_id FROM planned ORDER BY platform, protocol_id");
  while (s.step()) out.emplace_back(s.text(0), s.text(1));
  return out;
}

nlohmann::json Store::protocols() const {
  Stmt s(db_, path_, "SELECT id, settings FROM protocols ORDER BY id");
  nlohmann::json out = nlohmann::json::object();
  while (s.step()) {
    const std::string id = s.text(0);
    try {
      out[id] = nlohmann::json::parse(s.text(1));
    } catch (const nlohmann::json::exception& e) {
      throw MeasureError(path_.string() + ": protocol '" + id + "' has unreadable settings: " + detail::json_error_text(e.what()));
    }
    // A hostile tester: settings '[]' let a resumed run measure into a store export then refused,
    // saying the store held no settings for the protocol.
    if (!out[id].is_object())
      throw MeasureError(path_.string() + ": protocol '" + id + "' has unreadable settings: " + out[id].type_name() +
                         ", not a JSON object");
  }
  return out;
}

Dataset Store::to_dataset() const {
  Stmt s(db_, path_,
         "SELECT id, platform, protocol_id, family, depth, width, resolution, batch, precision, status, "
         "latency_ms, energy_j, peak_memory_mb, avg_sm_util, avg_mem_util, extra_json, error_text, config_key "
         "FROM measurements ORDER BY id");
  Dataset d;
  std::unordered_set<std::string> seen;
  while (s.step()) {
    const std::string where = path_.string() + ": row " + std::to_string(s.integer(0));
    Record r;
    r.platform = s.text(1);
    if (r.platform.empty() || std::any_of(r.platform.begin(), r.platform.end(), [](char ch) {
          return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f;
        }))
      throw MeasureError(where + ": its platform is empty or holds a control character");
    try {
      const auto width = s.exact_real(5, "width", where);
      if (!width) throw MeasureError(where + ": width is empty");
      r.config = {parse_family(s.text(3)), s.exact_int(4, "depth", where),      *width,
                  s.exact_int(6, "resolution", where), s.exact_int(7, "batch", where), parse_precision(s.text(8))};
      read_extra(s.text(15), r.extra);
    } catch (const InputError& e) {
      throw MeasureError(where + ": " + e.what());
    } catch (const nlohmann::json::exception& e) {
      throw MeasureError(where + ": unreadable extra_json: " + detail::json_error_text(e.what()));
    }
    const auto status = parse_status(s.text(9));
    if (!status) throw MeasureError(where + ": status '" + s.text(9) + "' is not ok, oom or error");
    r.status = *status;
    for (int i = 0; i < 5; ++i) r.set_value(kDatasetColumns[8 + i], s.exact_real(10 + i, kDatasetColumns[8 + i], where));
    // The key is what resume and export go by: a row whose columns were edited to another
    // configuration would carry one configuration's measurement under another's name.
    if (s.text(17) != config_key(r.config))
      throw MeasureError(where + ": its key " + s.text(17) + " does not match its columns (" + config_key(r.config) + ")");
    r.extra["protocol_id"] = s.text(2);
    if (!s.text(16).empty()) r.extra["error_text"] = s.text(16);
    note_column(d.extra_columns, seen, "protocol_id");
    for (const auto& [k, v] : r.extra) note_column(d.extra_columns, seen, k);
    d.rows.push_back(std::move(r));
  }
  return d;
}

namespace {
// Copies everything `db` (an open connection) sees into a new file at `to`; "" on success, else why.
std::string back_up(sqlite3* db, const std::filesystem::path& to) {
  sqlite3* dest = nullptr;
  int rc = sqlite3_open_v2(to.c_str(), &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc == SQLITE_OK) {
    sqlite3_backup* b = sqlite3_backup_init(dest, "main", db, "main");
    rc = b ? sqlite3_backup_step(b, -1) : sqlite3_errcode(dest);
    if (b) sqlite3_backup_finish(b);
  }
  const std::string why = rc == SQLITE_DONE ? "" : dest ? sqlite3_errmsg(dest) : "out of memory";
  sqlite3_close(dest);
  if (!why.empty()) {
    std::error_code ec;
    std::filesystem::remove(to, ec);  // a partial copy is nobody's
  }
  return why;
}
}  // namespace

std::optional<std::filesystem::path> Store::rescue_if_unnamed() const {
  namespace fs = std::filesystem;
  struct stat st {};
  if (file_fd_ < 0 || ::fstat(file_fd_, &st) != 0 || st.st_nlink > 0) return std::nullopt;
  // Twenty-sixth hostile pass: a store moved to another file system during a run (a copy, then the
  // original deleted) went on taking rows into the deleted file; 42 of 72 were lost, with exit 0.
  // Everything this connection sees, the deleted file and its -wal, is copied beside the old name,
  // or, where that directory is gone too (the whole run directory moved: twenty-seventh hostile
  // pass), into the working directory or the temporary directory.
  std::vector<fs::path> dirs = {path_.has_parent_path() ? path_.parent_path() : fs::path(".")};
  std::error_code ec;
  if (const auto cwd = fs::current_path(ec); !ec) dirs.push_back(cwd);
  if (const auto tmp = fs::temp_directory_path(ec); !ec) dirs.push_back(tmp);
  std::string why;
  // SQLite deletes a -journal or -wal it finds beside a new database: a user's files of those names
  // were lost (twenty-eighth hostile pass). Only a name with none of them is taken. A name the file
  // system cannot hold (too long with its suffixes, a directory it may not read) is no name at all:
  // forty-eighth hostile pass, a 240-byte store name made every candidate "taken" and the search
  // never ended, deaf to SIGTERM, until a kill -9 lost the rows it was to save. So the search is
  // bounded, and a short name (carb-rescued-<pid>) is tried where the long one cannot be.
  enum class Name { free, taken, unusable };
  const auto name_state = [](const fs::path& p) {
    std::error_code e;
    const auto type = fs::symlink_status(p, e).type();
    return type == fs::file_type::not_found ? Name::free : type == fs::file_type::none ? Name::unusable : Name::taken;
  };
  const std::string stems[] = {path_.filename().string() + ".rescued", "carb-rescued-" + std::to_string(::getpid())};
  for (const auto& dir : dirs) {
    std::optional<fs::path> to;
    for (const std::string& stem : stems) {
      for (int k = 0; k < 1000 && !to; ++k) {
        const fs::path candidate = dir / (stem + (k ? "-" + std::to_string(k) : std::string()) + ".db");
        Name worst = Name::free;
        for (const char* suffix : {"", "-journal", "-wal", "-shm"})
          worst = std::max(worst, name_state(candidate.string() + suffix));
        if (worst == Name::unusable) break;  // no numbering makes this stem fit here
        if (worst == Name::free) to = candidate;
      }
      if (to) break;
    }
    if (!to) {
      why += (why.empty() ? "" : "; ") + dir.string() + ": no free name for a rescued store";
      continue;
    }
    const std::string failed = back_up(db_, *to);
    if (failed.empty()) return *to;
    why += (why.empty() ? "" : "; ") + to->string() + ": " + failed;
  }
  throw MeasureError(path_.string() + " lost its name while carb wrote to it (moved to another file system, "
                     "deleted, or replaced by a rename), and its rows could not be saved anywhere (" + why +
                     "); the rows committed since it lost its name are lost with it");
}

// A commit, then the check that the file still has a name (rescuing its rows if not). Also when the
// commit fails: a store moved away to free a full disk failed its next commit, and the rows since
// the copy went with the deleted file, unrescued (twenty-eighth hostile pass).
void Store::commit_or_rescue(const std::function<void()>& commit) {
  try {
    commit();
  } catch (const MeasureError& e) {
    std::optional<std::filesystem::path> rescued;
    try {
      rescued = rescue_if_unnamed();
    } catch (const MeasureError& r) {
      throw MeasureError(std::string(e.what()) + "; and " + r.what());
    }
    if (rescued) throw MeasureError(std::string(e.what()) + "; and " + unnamed_message(*rescued));
    throw;
  }
  if (const auto rescued = rescue_if_unnamed()) throw MeasureError(unnamed_message(*rescued));
}

std::string Store::unnamed_message(const std::filesystem::path& rescued) const {
  return path_.string() + " lost its name while carb wrote to it (moved to another file system, deleted, or "
         "replaced by a rename): every row it held, this run's included, is saved in " + rescued.string() +
         "; stopping. A copy made of it before (the moved file) lacks the rows measured since";
}

bool Store::moved() const {
  const auto open_file = StoreFileId::of(file_fd_), named = StoreFileId::of(file_);
  return open_file && (!named || named->dev != open_file->dev || named->ino != open_file->ino);
}

std::size_t Store::count() const {
  return static_cast<std::size_t>(query_int(db_, path_, "SELECT count(*) FROM measurements"));
}

}  // namespace carb
