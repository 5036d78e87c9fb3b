// Keeping what --force replaces: a copy of the file (and its provenance) under a free
// "<stem>.earlier[-N]<ext>" name beside it, written in full before the replacing write. --force
// replaces, never destroys (fifty-fifth hostile pass onward).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>

namespace carb::detail {

/// The n-th candidate pair of names (n = 0, 1, ...) for a kept file and its kept provenance.
using EarlierNames = std::function<std::pair<std::filesystem::path, std::filesystem::path>(int)>;

/// "<dir>/<stem>.earlier<ext>", then ".earlier-1", ...: the n-th name to keep `file` under.
std::filesystem::path earlier_name(const std::filesystem::path& file, const std::string& ext, int n);

/// Copies `file` and `side` (an empty path: nothing to keep) to the first pair of names that are
/// both free, never over another file, each copy with its original's mode; returns the names used.
/// Throws InputError when it cannot read or write them, or when no name was free.
std::pair<std::filesystem::path, std::filesystem::path> keep_earlier_copies(const std::filesystem::path& file,
                                                                           const std::filesystem::path& side,
                                                                           const EarlierNames& names);

/// For outputs without a dataset's provenance (a report, a window study): `out` holds a file that
/// only --force lets carb replace (`why`, the refusal without it); a copy is kept first as
/// "<stem>.earlier[-N]<ext>", with `side` (if given and a regular file) beside it under the name
/// `side_name` makes of the kept file's, and a warning says where.
void keep_file_force_replaces(const std::filesystem::path& out, const std::string& why,
                              const std::filesystem::path& side = {},
                              const std::function<std::filesystem::path(const std::filesystem::path&)>& side_name = {});

}  // namespace carb::detail
