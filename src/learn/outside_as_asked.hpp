// Where a configuration lies outside what a model trained on, said with the width it was asked
// at. A model judges a width as the one its channels build (CarbModel::as_trained): 0.1 builds as
// 0.0977, and a note said "width 0.0977 < 0.25 trained" of a row that showed width 0.1 (ninety-
// third hostile pass).
#pragma once
#include <vector>

#include "carb/envelope.hpp"
#include "carb/model.hpp"

namespace carb {

/// m.envelope().outside(m.as_trained(asked), asked.width): each width's text names the asked width
/// first, "width 0.1 (0.0977 as built) < 0.25 trained". Nothing else changes.
std::vector<Excursion> outside_as_asked(const CarbModel& m, const Config& asked);

}  // namespace carb
