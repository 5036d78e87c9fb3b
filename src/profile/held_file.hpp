// Descriptors of a store's files that carb reads beside SQLite (the database file to hash its pages,
// the shared-memory index to see who has it open), held until the process exits.
//
// Closing any descriptor of a file releases every POSIX lock the process holds on it, SQLite's own
// included (SQLite's "How to corrupt an SQLite database file", section 2.2): a page hash read with an
// ifstream after each commit dropped the writer's shared lock on its own database, after which
// another process closing its connection could take itself for the last one and remove the -wal.
// So carb opens each such file once per process and never closes it, as SQLite does with the
// descriptors it cannot close. A held file that has been deleted (no name left) is let go once no
// open Store uses it.
#pragma once
#include <filesystem>

namespace carb::detail {

/// A descriptor of the file at `path` (links followed; read-write where the user may write, else
/// read-only), the same one for every call on the same file (device and inode); -1 when it cannot be
/// opened. Never close it.
/// `pin`: a Store keeps using it; until unpin_descriptor, it stays open even once the file has no
/// name left (the Store's rows are still in it: Store rescues them).
int held_descriptor(const std::filesystem::path& path, bool pin = false);
void unpin_descriptor(int fd);

}  // namespace carb::detail
