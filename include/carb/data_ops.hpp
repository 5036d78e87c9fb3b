// The dataset operations behind `carb data`: merge datasets without duplicates, summarize and
// validate a dataset. (Export from a measurement store is the profile module's:
// carb/store_export.hpp.)
#pragma once
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace carb {

struct MergeSummary {
  std::size_t rows_in = 0, rows_out = 0;
  std::size_t dropped = 0;  // rows whose platform + configuration an earlier row already had
  /// Protocol disagreements: one protocol id with different settings in two inputs, or one
  /// platform measured under several protocols. The merge still happens; these are warnings.
  std::vector<std::string> conflicts;
  std::filesystem::path csv, provenance;

  nlohmann::json to_json() const;
};

/// Concatenates datasets in order; for a platform + configuration seen twice the first row is
/// kept. Writes `out` and a sidecar joining the inputs' sidecars. Throws DataError for a
/// malformed input or a result that is not one valid dataset (two platforms or protocols),
/// InputError when there are no inputs or `out` may not be replaced (check_dataset_output).
MergeSummary merge_datasets(const std::vector<std::filesystem::path>& inputs,
                            const std::filesystem::path& out, const std::string& command_line,
                            bool force = false);

/// A JSON summary of a dataset CSV: rows per platform, status, family and precision, the ranges
/// of depth/width/resolution/batch, and per target how many ok rows have a value.
nlohmann::json dataset_info(const std::filesystem::path& csv);

/// The summary of dataset_info as aligned text tables for people.
std::string format_dataset_info(const nlohmann::json& info);

/// Every problem of the dataset CSV at `path` ("file:line: ..."), in file order: malformed
/// fields, duplicates (same platform + configuration), values that contradict the status,
/// targets measured on only some ok rows of a platform. Empty when the file is valid; never
/// throws for the file's contents.
std::vector<std::string> validate_dataset_csv(const std::filesystem::path& path);

}  // namespace carb
