#include "learn/outside_as_asked.hpp"

namespace carb {

std::vector<Excursion> outside_as_asked(const CarbModel& m, const Config& asked) {
  const Precision answered = m.answered_precision(asked.precision);
  if (answered == asked.precision) return m.envelope().outside(m.as_trained(asked), asked.width);
  // A precision never trained is answered as the other two-byte one: the ranges its answer rests on
  // are that one's (a review: bf16 on the H200, answered as fp16, lost fp16's "depth (basic fp16) 18 <
  // 50 trained"), and its own precision is said never trained, with what answered it.
  Config as = asked;
  as.precision = answered;
  std::vector<Excursion> out;
  for (Excursion& e : m.envelope().outside(m.as_trained(asked), asked.width))
    if (e.dimension == "precision") {
      e.text += " (answered as " + to_string(answered) + ", also two bytes an element)";
      out.push_back(std::move(e));
    }
  for (Excursion& e : m.envelope().outside(m.as_trained(as), asked.width)) out.push_back(std::move(e));
  return out;
}

}  // namespace carb
