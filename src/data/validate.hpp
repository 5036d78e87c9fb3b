// Whole-file checks of a dataset CSV for `carb data validate`: every problem, each with
// its file and line, instead of the first one only (which is what read_dataset_csv gives).
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "carb/data_ops.hpp"  // declares validate_dataset_csv
#include "carb/dataset.hpp"

namespace carb {

/// Problems of rows that did parse but break the dataset contract: the same platform and
/// configuration twice, an ok row without latency, latency or energy on a failed row,
/// utilization above 100 percent, a target measured on only some ok rows of a platform. `lines` gives each
/// row's CSV line (same order as d.rows) for messages.
std::vector<std::string> check_dataset(const Dataset& d, const std::string& file,
                                       const std::vector<std::size_t>& lines);

}  // namespace carb
