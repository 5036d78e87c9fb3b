// `carb data info STORE.db`: what a measurement store holds, without exporting it. Per platform and
// protocol, the rows by status and, where runs recorded what they were given, how many of those
// configurations have no row yet: how far a campaign has come, and the runs that planned it.
#pragma once
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace carb {

/// One platform and protocol of a store: what its runs measured and what they were given.
struct StoreCampaign {
  std::string platform, protocol_id;
  std::size_t ok = 0, oom = 0, error = 0;
  /// The configurations runs were given and those with no row (by network, as resume counts);
  /// empty for a store made before carb recorded them.
  std::optional<std::size_t> planned, unmeasured;
  /// The commands of the runs that planned it, oldest first (since the last --replan); run again,
  /// each measures what it was given and lacks. For a store made before carb recorded them, the
  /// first run's command under this protocol (from its settings), if any.
  std::vector<std::string> commands;
};

struct StoreInfo {
  std::filesystem::path db;
  std::size_t rows = 0;
  std::vector<StoreCampaign> campaigns;  // sorted by platform, then protocol id
  nlohmann::json to_json() const;
};

/// True when `file` is a regular file that starts as an SQLite database does (what `data info` takes
/// for a store).
bool is_sqlite_file(const std::filesystem::path& file);

/// Reads the store without changing it (StoreAccess::read_only). Throws InputError for a missing
/// file and MeasureError for one that is not a carb store, as export does.
StoreInfo store_info(const std::filesystem::path& db);

/// The summary as aligned text for people.
std::string format_store_info(const StoreInfo& info);

}  // namespace carb
