// The dataset operations behind `carb data`: merge datasets without duplicates, summarize and
// validate a dataset. (Export from a measurement store is the profile module's:
// carb/store_export.hpp.)
#pragma once
#include <cstddef>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace carb {

struct MergeSummary {
  std::size_t rows_in = 0, rows_out = 0;
  std::size_t dropped = 0;  // rows whose platform + network another row also had (one of each is kept)
  /// Of those, ok rows whose measured values differ from the kept ok row's: which value survives
  /// depends on the inputs' order (thirty-fourth hostile pass: "3 duplicates dropped" of 2.4 ms
  /// against 99.5 ms said nothing of it). The first is an example.
  std::size_t disagreeing = 0;
  std::string first_disagreeing;
  /// Protocol disagreements: one protocol id with different settings in two inputs, or one
  /// platform measured under several protocols. The merge still happens; these are warnings.
  std::vector<std::string> conflicts;
  /// How many protocols the inputs were measured under (their rows' protocol_id and their
  /// sidecars): rounds to combine (`carb data combine`) are of one.
  std::size_t input_protocols = 0;
  /// The rows of an earlier output at `out`, made from these same inputs, whose values or status
  /// this merge changes (the inputs' order, or an input put first): "N rows (first: ...)"; empty
  /// when none (forty-fourth hostile pass: inputs given in the other order replaced every value
  /// of the earlier output, said only as disagreeing duplicates).
  std::string replaced;
  std::filesystem::path csv, provenance;

  /// What a merge warns of, one line each, as `carb data merge` and Python's carb.merge say it: the
  /// disagreeing duplicates, the protocol conflicts, the earlier output's values replaced.
  std::vector<std::string> warnings() const;

  nlohmann::json to_json() const;
};

/// Concatenates datasets in order; for a platform + network seen twice the first ok row is kept
/// (a failed row only when no input measured it ok). Writes `out` and a sidecar joining the inputs' sidecars. Throws DataError for a
/// malformed input or a result that is not one valid dataset (two platforms or protocols),
/// InputError when there are no inputs or `out` may not be replaced (check_dataset_output).
MergeSummary merge_datasets(const std::vector<std::filesystem::path>& inputs,
                            const std::filesystem::path& out, const std::string& command_line,
                            bool force = false);

/// One platform's rows in a dataset: per status, and per target how many ok rows have a value.
struct PlatformRows {
  std::size_t rows = 0, ok_rows = 0;
  std::map<std::string, std::size_t> status;              // ok | oom | error -> rows
  std::map<std::string, std::size_t> ok_rows_with_value;  // per target
};

/// The smallest and largest value of a configuration knob over a dataset's rows.
template <class T>
struct KnobRange {
  T min{}, max{};
};

/// What `carb data export` recorded in a sidecar of the campaign it exported: the configurations its
/// runs were given, and those with no row (any status) when exported.
struct CampaignProgress {
  std::size_t planned = 0, unmeasured = 0;
};

/// The device a dataset's sidecar records rows of one protocol as measured on (`carb data info`).
struct MeasuringDevice {
  std::string protocol_id;
  std::string device;               // e.g. "cuda NVIDIA H200"; empty where the record names none
  std::optional<double> memory_mb;  // its platform_info.device_memory_mb; empty where none is recorded as a size
  bool recorded = true;             // false: rows name the protocol, the sidecar has no record of it
  std::string memory_unusable;      // what is wrong with a memory recorded as no size (as train says it)
};

/// What is in a dataset CSV (`carb data info`).
struct DatasetInfo {
  std::filesystem::path file;
  std::size_t rows = 0;
  std::map<std::string, std::size_t> status, family, precision;  // rows per value
  std::vector<std::string> extra_columns;
  std::map<std::string, PlatformRows> platforms;
  std::size_t duplicates = 0;  // rows that repeat an earlier row's platform and network (readers refuse them)
  std::size_t problems = 0;    // every problem `data validate` lists, the duplicates included
  std::optional<KnobRange<int>> depth, resolution, batch;  // empty for a file without rows
  std::optional<KnobRange<double>> width;
  std::optional<CampaignProgress> campaign;  // from the sidecar; empty when it records none
  std::vector<MeasuringDevice> devices;      // from the sidecar, per protocol the rows name, in id order
  nlohmann::json to_json() const;
};

/// Summarizes a dataset CSV: also one that readers refuse (two platforms, duplicates), as long
/// as every row is well formed (DataError otherwise).
DatasetInfo dataset_info(const std::filesystem::path& csv);

/// The summary as aligned text tables for people.
std::string format_dataset_info(const DatasetInfo& info);

/// Every problem of the dataset CSV at `path` ("file:line: ..."), in file order: malformed
/// fields, duplicates (same platform + configuration), values that contradict the status,
/// targets measured on only some ok rows of a platform. Empty when the file is valid; never
/// throws for the file's contents.
std::vector<std::string> validate_dataset_csv(const std::filesystem::path& path);

}  // namespace carb
