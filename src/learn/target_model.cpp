// A target's fitted pieces (target_model.hpp): what callers may see of them, the names of the
// conformal regimes, and CarbModel's special members, which need TargetModel complete.
#include "target_model.hpp"

#include "carb/error.hpp"

namespace carb {

const char* to_string(BatchRegime r) {
  switch (r) {
    case BatchRegime::low_batch: return "low_batch";
    case BatchRegime::high_batch: return "high_batch";
    case BatchRegime::all: return "all";
  }
  return "all";
}

BatchRegime batch_regime_from(const std::string& name) {
  for (BatchRegime r : {BatchRegime::low_batch, BatchRegime::high_batch, BatchRegime::all})
    if (name == to_string(r)) return r;
  throw InputError("unknown batch regime '" + name + "' (low_batch, high_batch or all)");
}

TargetSummary TargetModel::summary() const {
  TargetSummary s;
  s.target = target;
  s.upstream = upstream;
  for (const auto& l : learners) s.learners.push_back(l->kind());
  s.weights = weights;
  s.corrector = corrector != nullptr;
  s.estimate = estimate;
  s.oof = oof;
  s.extrapolation_rate = extrapolation_rate;
  s.monotone_in = monotone_in;
  s.remeasured_spread = remeasured_spread;
  s.remeasured_pairs = remeasured_pairs;
  return s;
}

CarbModel::CarbModel() = default;
CarbModel::~CarbModel() = default;
CarbModel::CarbModel(CarbModel&&) noexcept = default;
CarbModel& CarbModel::operator=(CarbModel&&) noexcept = default;

}  // namespace carb
