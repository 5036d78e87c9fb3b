// Whole-file checks of a dataset CSV for `carb data validate`: every problem, each with
// its file and line, instead of the first one only (which is what read_dataset_csv gives).
#pragma once
#include <filesystem>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "carb/data_ops.hpp"  // declares validate_dataset_csv
#include "carb/dataset.hpp"

namespace carb {

/// Problems of rows that did parse but break the dataset contract: the same platform and
/// configuration twice, more than one platform or protocol, an ok row without latency, latency or
/// energy on a failed row, a value outside kPlausibleBounds, a target measured on only some ok
/// rows of a platform, a larger batch of a network costing under kMinCostOverSmallerBatch of a
/// smaller one's latency or energy. `where` names each row ("file:line", same order as d.rows) for messages.
/// What a dataset's provenance says of the device each protocol ran on, by protocol id (its
/// `protocols` object): the power limit (platform_info.power_limit_w), the device's memory, whether the backend is the
/// CPU, the threads it ran with, and its timing loop's limits. Rows of a protocol not named here are checked by their own
/// columns alone.
struct ProtocolFacts {
  std::optional<double> power_limit_w;
  /// The memory of the device its rows ran on (platform_info.device_memory_mb, in MB; the cpu
  /// backend records the machine's since 2026-12-07).
  std::optional<double> memory_mb;
  /// Device facts recorded but unusable (not a positive number, platform_info not an object), each
  /// as "platform_info.power_limit_w is \"700\"": left out, and said by what reads them (train).
  std::vector<std::string> unusable;
  bool cpu = false;
  std::optional<double> threads;
  /// The timing loop's limits (max_timed_s, min_passes, max_passes): a row's passes and timed
  /// window must be what that loop can have produced.
  std::optional<double> max_timed_s, min_passes, max_passes;
};
using ProtocolFactsById = std::map<std::string, ProtocolFacts>;
ProtocolFactsById protocol_facts_of(const nlohmann::json& protocols);
/// The facts a dataset CSV's sidecar records; none when it has no sidecar. Throws DataError for a
/// sidecar that is not a regular file of JSON.
ProtocolFactsById recorded_protocol_facts(const std::filesystem::path& csv);
std::vector<std::string> check_dataset(const Dataset& d, const std::vector<std::string>& where,
                                       const ProtocolFactsById& facts = {});
/// What validate_dataset_csv lists for the file at `path`, read already as `d` (its rows at
/// `lines`, the problems of reading them in `problems`), with its protocols' `facts`.
std::vector<std::string> file_problems(const std::filesystem::path& path, const Dataset& d,
                                       const std::vector<std::size_t>& lines, const ProtocolFactsById& facts,
                                       std::vector<std::string> problems = {});

/// Throws DataError with the first problem and how many more there are, with the command that
/// lists them (`carb data validate FILE`) when `file` names one file that exists; pass "" for an
/// output not yet written or for problems across several files, which no one command lists.
/// Nothing when `problems` is empty. The one way readers refuse a dataset.
void throw_dataset_problems(const std::vector<std::string>& problems, const std::string& file);

}  // namespace carb
