// What a plan was planned for (its sidecar's `planned_for`): written by write_plan_csv, compared
// with a run by plan_departures (carb/plan.hpp).
#pragma once
#include <nlohmann/json.hpp>

#include "carb/plan.hpp"

namespace carb::plan_detail {

/// {"platform": the model's or null, "priced": null, or {"backend", each priced protocol setting by
/// its `carb profile` flag without the dashes, "build_s"}}.
nlohmann::json planned_for_json(const Plan& p);

}  // namespace carb::plan_detail
