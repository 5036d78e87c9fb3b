#include "learn/outside_as_asked.hpp"

#include <sstream>
#include <string>

namespace carb {

std::vector<Excursion> outside_as_asked(const CarbModel& m, const Config& asked) {
  const Config built = m.as_trained(asked);
  std::vector<Excursion> out = m.envelope().outside(built);
  if (built.width == asked.width) return out;
  for (Excursion& x : out) {
    // "width 0.0977 < 0.25 trained", "width (basic bf16) 0.0977 > ...": the dimension, then the value.
    const std::string head = x.dimension + " ";
    if (x.dimension.rfind("width", 0) != 0 || x.text.rfind(head, 0) != 0) continue;
    const auto end = x.text.find(' ', head.size());
    if (end == std::string::npos) continue;
    std::ostringstream value;
    value << asked.width;  // as the envelope writes numbers
    x.text = head + value.str() + " (" + x.text.substr(head.size(), end - head.size()) + " as built)" + x.text.substr(end);
  }
  return out;
}

}  // namespace carb
