#include "learn/outside_as_asked.hpp"

namespace carb {

std::vector<Excursion> outside_as_asked(const CarbModel& m, const Config& asked) {
  return m.envelope().outside(m.as_trained(asked), asked.width);
}

}  // namespace carb
