// What a store's file held, page by page, and whether a commit killed half-way explains what it
// holds now.
//
// A writer killed inside a commit may have checkpointed part of its WAL into the database file:
// pages the WAL holds were copied over the file's own. Anything else written there since (a backup
// restored in place, cp over the same inode, within moments and as large: twenty-second hostile
// pass) is another content, and SQLite must not apply the killed writer's WAL to it. The writer
// records a hash of every page after each commit; the file now is the commit's own write exactly
// when each of its pages is either the recorded one or a frame of the WAL for that page.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace carb::detail {

struct PageHashes {
  std::uint32_t page_size = 0;
  std::vector<std::uint64_t> hashes;  ///< one per page, page 1 first
};

/// The pages of the SQLite database file open as `fd` (read with pread, never closed: held_file.hpp);
/// nullopt when it cannot be read or is not one.
std::optional<PageHashes> hash_pages(int fd);
/// The same for the file at `db`, through its held descriptor.
std::optional<PageHashes> hash_pages(const std::filesystem::path& db);

/// Whether the file at `db` can be `recorded` with some frames of `db`-wal copied over its pages
/// (and pages appended from the WAL): every page equals the recorded one or one of the WAL's frames
/// for that page number, under the WAL's current salts.
bool written_only_from_wal(const std::filesystem::path& db, const PageHashes& recorded);

/// "<page size> <count> <hash>..." on one line, hashes as 16 hex digits; and back (nullopt when the
/// text is not that, count included).
std::string to_text(const PageHashes& p);
std::optional<PageHashes> page_hashes_from_text(const std::string& line);

}  // namespace carb::detail
