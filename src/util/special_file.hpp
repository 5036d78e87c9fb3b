// Outputs are regular files (or bundle directories) that carb replaces by renaming a new one over
// them. A device, FIFO or socket at an output path, or a link to one, is never replaced, even with
// --force: as root, `--out /dev/null --force` turned the machine's /dev/null into an HTML report
// (seventeenth hostile pass).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace carb::detail {

/// InputError when `out` is, or is a symbolic link to, something other than a regular file or a
/// directory (a character or block device, a FIFO, a socket), or lies in /proc, /sys or directly in
/// /dev (by its path, its directory or a link's target; /dev/shm is an ordinary tmpfs). Nothing
/// there, a regular file, a directory or a dangling link elsewhere pass (other checks decide).
/// Also refuses an SQLite database (a measurement store, which may be the only copy of its rows) and
/// its -wal, -shm, -journal or .lock file beside it.
void refuse_special_file(const std::filesystem::path& out);

/// InputError when the last component of `out` holds a control character (a newline, a tab, DEL):
/// a name every line that quotes it would break. Part of refuse_special_file; a new store's name too.
void refuse_unprintable_name(const std::filesystem::path& out);

/// True when `f` (through links) is a regular file that starts with SQLite's 16-byte header: a
/// measurement store, or another application's database.
bool is_sqlite_file(const std::filesystem::path& f);

/// True when `p` (through links) is a mount point: carb's atomic replace renames over an output,
/// which the kernel refuses there (EBUSY). By the mount table in `mountinfo` (the text of
/// /proc/self/mountinfo, read when empty) and, where that is unreadable, by `p` lying on another
/// device than its directory.
bool is_mount_point(const std::filesystem::path& p, const std::string& mountinfo = "");

/// Where a chain of symbolic links starting at `p` leads, hop by hop (each target made absolute
/// against its link's directory and normalised; a dangling end included; at most 16 hops). Empty
/// when `p` is not a link.
std::vector<std::filesystem::path> link_chain(const std::filesystem::path& p);

}  // namespace carb::detail
