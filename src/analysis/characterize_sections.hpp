// Internal pieces of characterize(): each function builds one section of the Characterization
// from the ok rows. Shared helpers for "which targets are present" and "unavailable" entries.
#pragma once
#include <string>
#include <vector>

#include "carb/characterization.hpp"
#include "carb/characterize.hpp"
#include "carb/dataset.hpp"

namespace carb::detail {

using Rows = std::vector<const Record*>;

/// Targets (kTargets order) with a value in at least one of the rows.
std::vector<std::string> present_targets(const Rows& rows);
/// A section or entry of type T marked unavailable for `reason`.
template <class T>
T unavailable(const std::string& reason) {
  T out{};
  out.available = false;
  out.reason = reason;
  return out;
}

ScalingSection scaling_section(const Rows& rows, const std::vector<std::string>& targets);
FamilySection family_section(const Rows& rows, const std::vector<std::string>& targets);
PrecisionSection precision_section(const Rows& rows, const std::vector<std::string>& targets);
EfficiencySection efficiency_section(const Rows& rows, const std::vector<std::string>& targets);
DivergenceSection divergence_section(const Rows& rows, const CharacterizeOptions& o);

}  // namespace carb::detail
