// The measurement store: one SQLite file (WAL) that the profiler appends to row by row,
// so an interrupted run resumes where it stopped and `carb data export` turns it into a CSV.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "carb/config.hpp"
#include "carb/dataset.hpp"

struct sqlite3;

namespace carb {

class StoreLock;

/// How a Store is opened. `shared`: any number of readers (`carb data export`) and short
/// writers may use the file together (SQLite serializes their writes). `sole_writer`: the one
/// process that appends to the store for a long time (`carb profile`); a second sole writer of the
/// same store is refused at once, so two profilers never measure the same configurations twice.
/// Readers are never refused, whoever writes.
/// shared: a writer beside others (SQLite serializes); sole_writer: the one profiler of the store;
/// read_only: a reader (export) that never creates, converts or changes the file: a file that is
/// not a carb store (another application's SQLite database, an empty file) is refused untouched.
enum class StoreAccess { shared, sole_writer, read_only };

/// One stored row: the measurement plus the protocol it was taken under and, for
/// status "error", what went wrong.
struct StoredMeasurement {
  Record record;
  std::string protocol_id;
  std::string error_text;
};

/// Not thread-safe: use one Store per thread (several processes may share one file;
/// SQLite's locking plus a busy timeout serialize their writes; see StoreAccess).
class Store {
 public:
  /// Schema version written to PRAGMA user_version; another version is refused.
  static constexpr int kSchemaVersion = 1;

  /// Opens or creates the database and its schema. Throws MeasureError naming the file and
  /// SQLite's message when it cannot be opened, is not a SQLite file, is not a carb store
  /// or has another schema version. With StoreAccess::sole_writer the store's lock
  /// ("<db>.lock") is taken first: when another process holds it, this throws MeasureError
  /// "store <db> is in use by another carb profile (pid N)" before the database is opened.
  /// The lock lasts as long as the Store, and the kernel drops it if the process dies.
  explicit Store(const std::filesystem::path& db, StoreAccess access = StoreAccess::shared);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  /// True when a row exists for (platform, config_key(config), protocol_id), whatever its status.
  bool has(const std::string& platform, const Config& c, const std::string& protocol_id) const;
  /// Config keys already stored for (platform, protocol_id), any status (`with_errors`) or any but
  /// error: what resume skips.
  std::unordered_set<std::string> done_keys(const std::string& platform, const std::string& protocol_id,
                                            bool with_errors = true) const;
  /// Inserts one measurement in its own transaction, replacing any row with the same
  /// (platform, config key, protocol id); durable against a process kill once it returns.
  void put(const StoredMeasurement& m);
  /// Stores the settings of a protocol id once: the first settings stored for an id are kept,
  /// later calls with the same id leave them as they are but for one thing: the keys of
  /// `platform_info` the stored record lacks (a store begun by an older carb) are added.
  void put_protocol(const std::string& protocol_id, const nlohmann::json& settings);
  /// Records the configurations a run was given to measure for (platform, protocol_id), each once
  /// however often runs give it, in one transaction: what `carb data export` compares the stored
  /// rows with, so that an export of an unfinished campaign says so.
  /// With `replace`, these configurations become the pair's whole plan: what earlier runs were given
  /// and this one is not is forgotten (their rows stay). `command`, when given, is recorded as the
  /// run's (plan_commands), in the same transaction.
  void put_planned(const std::string& platform, const std::string& protocol_id, const std::vector<Config>& configs,
                   bool replace = false, const std::string& command = "");
  /// The commands of the runs that recorded the pair's plan, oldest first (since the last replace);
  /// empty for a store made before carb recorded them, or runs that gave none.
  std::vector<std::string> plan_commands(const std::string& platform, const std::string& protocol_id) const;
  /// The configuration keys runs recorded as planned for (platform, protocol_id), sorted; nullopt
  /// for a store made before carb kept that record (nothing is known of what was planned).
  std::optional<std::vector<std::string>> planned_keys(const std::string& platform,
                                                       const std::string& protocol_id) const;
  /// The (platform, protocol id) pairs runs recorded a plan for, sorted; empty for a store made
  /// before carb kept that record.
  std::vector<std::pair<std::string, std::string>> planned_pairs() const;
  /// Every stored protocol, {id: settings}.
  nlohmann::json protocols() const;
  /// Every row in insertion order (a replaced row counts as inserted when replaced).
  /// Record::extra holds the stored extra fields plus "protocol_id" and, when not empty,
  /// "error_text"; Dataset::extra_columns lists them in first-seen order.
  Dataset to_dataset() const;
  /// Number of stored measurements.
  std::size_t count() const;
  /// The database file this store was opened on.
  const std::filesystem::path& path() const { return path_; }
  /// True when path() no longer names the file this store has open: it was renamed, moved or
  /// replaced while open (the rows went to the file wherever it is now).
  bool moved() const;
  /// When the file this store has open has no name left (moved to another file system, deleted, or
  /// replaced by a rename while open), copies everything it holds to "<db>.rescued.db" (or
  /// ".rescued-N.db") beside the old name and returns that path; nullopt while it has a name.
  /// put() does this after every commit and then throws MeasureError saying where the rows are.
  std::optional<std::filesystem::path> rescue_if_unnamed() const;
  /// The error put() throws after a rescue.
  std::string unnamed_message(const std::filesystem::path& rescued) const;

 private:
  void init_schema();
  void open_read_only();
  /// After a read-only close: the empty -wal and the -shm its open made are removed by one more
  /// (read-write) connection's close, SQLite's own last-connection rule: nothing is removed while
  /// any other connection has the store open, or once a writer has written to the -wal.
  void remove_side_files_made() const noexcept;
  /// Runs one commit, then rescues the store's rows if its file has no name left (also when the
  /// commit failed), throwing MeasureError saying where they are.
  void commit_or_rescue(const std::function<void()>& commit);

  std::filesystem::path path_;
  std::filesystem::path file_;       // path_ as SQLite opens it: links resolved (StoreLock::store_file)
  std::unique_ptr<StoreLock> lock_;  // sole_writer only; released after ~Store closes the database
  sqlite3* db_ = nullptr;
  int file_fd_ = -1;                 // the store file's held descriptor (never closed: held_file.hpp)
  bool pinned_ = false;              // file_fd_ is pinned for this store's life
  /// read_only: this open made the -wal and -shm beside the file (neither was there), which a
  /// read-only connection cannot remove when it closes; ~Store has SQLite remove them.
  bool made_side_files_ = false;
};

}  // namespace carb
