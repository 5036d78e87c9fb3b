// Internal pieces of characterize(): each function builds one section of the document from
// the ok rows. Shared helpers for "which targets are present" and "unavailable" sections.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "carb/characterize.hpp"
#include "carb/dataset.hpp"

namespace carb::detail {

using Rows = std::vector<const Record*>;

/// Targets (kTargets order) with a value in at least one of the rows.
std::vector<std::string> present_targets(const Rows& rows);
/// {"available": false, "reason": reason}
nlohmann::json unavailable(const std::string& reason);

nlohmann::json scaling_section(const Rows& rows, const std::vector<std::string>& targets);
nlohmann::json family_section(const Rows& rows, const std::vector<std::string>& targets);
nlohmann::json precision_section(const Rows& rows, const std::vector<std::string>& targets);
nlohmann::json efficiency_section(const Rows& rows, const std::vector<std::string>& targets);
nlohmann::json divergence_section(const Rows& rows, const CharacterizeOptions& o);

}  // namespace carb::detail
