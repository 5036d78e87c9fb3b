// What sits beside a store under the names SQLite keeps its own files at (<db>-wal, <db>-journal,
// <db>-shm), and whose it is. SQLite rewrites and deletes what it finds there: a user's file under
// one of those names is refused before SQLite opens the store, and a killed writer's WAL is applied
// only to the database file it belongs to (the hostile passes these rules come from are named at
// each rule in store_side_files.cpp).
#pragma once
#include <filesystem>
#include <optional>

#include "store_lock.hpp"

namespace carb {

/// Throws MeasureError when a file beside `db` (as SQLite will open it, links resolved) under a
/// side-file name is not SQLite's own, or is a WAL with frames whose database file is not `db`.
/// `recorded`: the file the last writer's lock file names (StoreLock::recorded_store), checked when
/// `check_owner`; `live`: a connection has the -wal open (wal_in_use), so whose its frames are is
/// not checked (SQLite coordinates them).
void check_sqlite_side_files(const std::filesystem::path& db, std::optional<StoreFileId> recorded = std::nullopt,
                             bool check_owner = false, bool live = false);

/// Throws MeasureError when `db` is a file a killed writer had open under another name whose -wal
/// still holds its last rows (SQLite reads a -wal only beside the name it was written under).
void check_no_wal_under_another_name(const std::filesystem::path& db);

/// True when a live SQLite connection has the store open (a read lock on the shared-memory index's
/// DMS byte): frames in a -wal that nobody has open are a dead writer's.
bool wal_in_use(const std::filesystem::path& db);

}  // namespace carb
