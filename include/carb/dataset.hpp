// The measured dataset: one Record per (platform, configuration), the CSV
// contract of docs/architecture.md, and reading/writing/validating it.
#pragma once
#include <array>
#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "carb/config.hpp"

namespace carb {

/// The three cost targets carb predicts, in cascade order.
inline constexpr std::array<const char*, 3> kTargets = {"peak_memory_mb", "energy_j", "latency_ms"};

/// Columns every dataset CSV has, in this order (more columns may follow).
inline constexpr std::array<const char*, 13> kDatasetColumns = {
    "platform", "family",     "depth",    "width",          "resolution",  "batch",       "precision",
    "status",   "latency_ms", "energy_j", "peak_memory_mb", "avg_sm_util", "avg_mem_util"};

struct Record {
  std::string platform;
  Config config;
  std::string status = "ok";  // ok | oom | error
  std::optional<double> latency_ms, energy_j, peak_memory_mb, avg_sm_util, avg_mem_util;
  /// Any further columns, by name, as text (e.g. latency_std_ms, passes, load_avg).
  std::map<std::string, std::string> extra;

  /// Value of a numeric core column by name ("latency_ms", ...); nullopt when empty.
  std::optional<double> value(std::string_view column) const;
  void set_value(std::string_view column, std::optional<double> v);
};

struct Dataset {
  std::vector<Record> rows;
  /// Names of the extra columns, in first-seen order (kept on write).
  std::vector<std::string> extra_columns;

  /// Rows with status ok only.
  Dataset ok_only() const;
  /// True when every ok row has a value for the column.
  bool has_column(std::string_view column) const;
  /// Appends the names not yet among extra_columns, keeping first-seen order.
  void add_extra_columns(const std::vector<std::string>& names);
};

/// Reads a dataset CSV. Throws DataError naming file, line and column on any malformed row,
/// a missing required column, an unknown family/precision or text where a number belongs.
Dataset read_dataset_csv(const std::filesystem::path& file);
/// Reads like read_dataset_csv but, instead of stopping at the first problem, appends every
/// problem ("file:line: ...") to `problems` and leaves the bad rows out; a file that cannot be
/// read or tokenized, or lacks required columns, gives problems and no rows. Never throws
/// DataError for the file's contents (used by `carb data validate`). When `lines` is given it
/// receives the CSV line of each returned row (same order as rows).
Dataset read_dataset_csv(const std::filesystem::path& file, std::vector<std::string>& problems,
                         std::vector<std::size_t>* lines = nullptr);
/// Writes atomically (temp file + rename), so a crash never leaves a half-written file.
void write_dataset_csv(const Dataset& d, const std::filesystem::path& file);
/// Writes the CSV text (header + rows) to a stream; numbers round-trip exactly, nullopt is empty.
void write_dataset_csv(const Dataset& d, std::ostream& out);

/// Reads a CSV of configurations (the six configuration columns; other columns ignored).
std::vector<Config> read_configs_csv(const std::filesystem::path& file);
void write_configs_csv(const std::vector<Config>& cs, std::ostream& out);

}  // namespace carb
