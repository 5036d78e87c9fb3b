// Predicting one target of a CARB model from an explicit feature matrix, with chosen parts
// of its blend. Permutation importance needs to perturb one column of exactly the matrix a
// target's learners see, and the component study needs each learner alone, the blend and
// the blend + corrector on the same inputs. Both go through CarbModel::predict_target, the
// model's own prediction path, so evaluation cannot drift from what predict answers.
#include <cmath>

#include "../learn/model_internal.hpp"
#include "carb/error.hpp"
#include "evaluate_internal.hpp"

namespace carb::eval {

Matrix target_features(const CarbModel& m, const TargetModel& tm, const Matrix& base,
                       const std::map<std::string, std::vector<double>>& preds) {
  // Upstream columns live in the training (log) space, as the cascade fed them.
  std::map<std::string, std::vector<float>> z;
  for (const auto& u : tm.upstream) {
    const auto it = preds.find(u);
    if (it == preds.end()) throw InputError("internal: no upstream prediction of " + u);
    auto& col = z[u];
    col.reserve(it->second.size());
    for (double v : it->second) col.push_back(static_cast<float>(m.options().log_target ? std::log(v) : v));
  }
  return with_upstream(base, tm.upstream, z);
}

std::vector<double> predict_target(const CarbModel& m, const TargetModel& tm, const Matrix& X,
                                   const std::vector<Config>& configs, Parts parts) {
  return m.predict_target(tm, X, configs, parts);
}

}  // namespace carb::eval
