// The members of a target's blend, one by one: each learner's prediction and each tree of a forest,
// in the target's units. Their spread is what carb plan calls the model's uncertainty.
#include <cmath>

#include "carb/error.hpp"
#include "carb/model.hpp"
#include "extra_trees.hpp"
#include "model_internal.hpp"

namespace carb {

MemberPredictions CarbModel::member_predictions(const std::vector<Config>& asked, const std::string& target,
                                                const std::vector<Telemetry>& telemetry) const {
  if (!has_target(target)) throw InputError("the model has no target '" + target + "'");
  const std::vector<Config> configs = answered_as(asked);  // as predict_columns does
  const Matrix base = build_features(schema_, configs, telemetry);
  std::map<std::string, std::vector<float>> z;  // upstream predictions in the training (log) space
  for (const auto& tm : models_) {
    const Matrix X = with_upstream(base, tm.upstream, z);
    if (tm.target != target) {
      z[tm.target] = to_training_space(predict_target_model(tm, opts_, X, configs), opts_.log_target);
      continue;
    }
    std::vector<double> scale(configs.size(), 1.0);
    if (tm.estimate)
      for (std::size_t i = 0; i < configs.size(); ++i) scale[i] = (*tm.estimate)(configs[i]);
    auto units = [&](float v, std::size_t i) { return (opts_.log_target ? std::exp(double(v)) : double(v)) * scale[i]; };
    MemberPredictions out;
    for (const auto& l : tm.learners) {
      const auto p = l->predict(X);
      auto& col = out.learners.emplace_back(p.size());
      for (std::size_t i = 0; i < p.size(); ++i) col[i] = units(p[i], i);
      const auto* forest = dynamic_cast<const ExtraTrees*>(l.get());
      if (!forest) continue;
      for (std::size_t t = 0; t < forest->tree_count(); ++t) {
        auto& tc = out.trees.emplace_back(configs.size());
        for (std::size_t i = 0; i < configs.size(); ++i) tc[i] = units(detail::walk(forest->tree(t), X.row(i)), i);
      }
    }
    return out;
  }
  throw InputError("the model has no target '" + target + "'");  // unreachable: has_target checked it
}

}  // namespace carb
