// `carb data export`: a measurement store (profile module) written as a dataset CSV with its
// provenance sidecar. Here and not in data, because the store is the profiler's: data comes
// before profile in the pipeline and never includes it (docs/ARCHITECTURE.md).
#pragma once
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace carb {

struct ExportOptions {
  std::filesystem::path db;             // the measurement store (must exist)
  std::filesystem::path out;            // the CSV; the sidecar goes beside it (provenance_path)
  std::optional<std::string> platform;  // only this platform's rows
  std::string command_line;             // recorded in the sidecar
  std::optional<std::string> protocol{};  // only rows measured under this protocol id
  bool force = false;                   // replace `out` even if it is not a carb dataset
};

struct ExportSummary {
  std::size_t rows = 0;
  std::vector<std::string> platforms;  // exported, sorted
  std::filesystem::path csv, provenance;
  /// The configurations the store's runs were given for the exported platforms and protocols, and
  /// those of them with no row: a campaign stopped early (also warned of). Empty (JSON null) where
  /// that is not known: a store made before carb recorded what runs were given.
  std::optional<std::size_t> planned, unmeasured;

  nlohmann::json to_json() const;
};

/// Writes the store's rows (optionally of one platform) as a dataset CSV, plus a sidecar with
/// the protocols those rows were measured under, the exporting machine and the command.
/// Throws InputError when the store is missing, nothing matches the filters, `out` may not be
/// replaced (check_dataset_output), or the rows would not make one valid dataset (two protocols
/// of one platform: export one with `protocol`). Warns (warning.hpp) when configurations the
/// store's runs were given for those rows' platform and protocol have no row; the sidecar records
/// the counts as "campaign": {"planned", "unmeasured"}.
ExportSummary export_store(const ExportOptions& o);

}  // namespace carb
