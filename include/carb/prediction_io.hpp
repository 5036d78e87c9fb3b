// Rendering predictions: CSV (the six configuration columns + one per target, and
// <target>_lower/_upper with intervals) and JSON.
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "carb/model.hpp"

namespace carb {

void write_predictions_csv(const std::vector<Prediction>& p, const std::vector<std::string>& targets,
                           std::ostream& out);
nlohmann::json predictions_to_json(const std::vector<Prediction>& p, const CarbModel& m);

}  // namespace carb
