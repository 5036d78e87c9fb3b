// Predicting one target of a CARB model from an explicit feature matrix, with chosen parts
// of its blend. Permutation importance needs to perturb one column of exactly the matrix a
// target's learners see, and the component study needs each learner alone, the blend and
// the blend + corrector on the same inputs; CarbModel::predict_columns only offers the whole
// cascade. The arithmetic reuses the model's own blend and upstream helpers so the two paths
// cannot drift apart (a test checks they agree).
#include <cmath>

#include "../learn/blend.hpp"
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
  if (X.rows != configs.size()) throw InputError("internal: feature rows and configurations differ");
  std::vector<float> p;
  if (parts.only_learner >= 0) {
    p = tm.learners.at(static_cast<std::size_t>(parts.only_learner))->predict(X);
  } else {
    std::vector<std::vector<float>> each;
    for (const auto& l : tm.learners) each.push_back(l->predict(X));
    p = blend(each, tm.weights);
  }
  const TrainOptions& o = m.options();
  if (parts.corrector && tm.corrector) {
    std::vector<std::size_t> low;
    for (std::size_t i = 0; i < configs.size(); ++i)
      if (configs[i].batch <= o.corrector_max_batch) low.push_back(i);
    if (!low.empty()) {
      const auto r = tm.corrector->predict(X.take_rows(low));
      for (std::size_t j = 0; j < low.size(); ++j) p[low[j]] += static_cast<float>(o.lambda * r[j]);
    }
  }
  std::vector<double> raw(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) raw[i] = o.log_target ? std::exp(double(p[i])) : double(p[i]);
  return raw;
}

}  // namespace carb::eval
