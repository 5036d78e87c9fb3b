// The blend's components per target: the out-of-fold metrics training stored (each learner
// alone, the blend, the blend + low-batch corrector) next to the same variants on the
// held-out rows. The held-out variants reuse the bundle's fitted learners on the same
// cascade inputs, so they cost predictions only, no retraining; only "cascade vs no
// cascade" retrains (skipped with --quick).
#include <string>

#include "carb/features.hpp"
#include "carb/metrics.hpp"
#include "evaluate_internal.hpp"

namespace carb::eval {
namespace {

nlohmann::json test_components(const Context& c, const TargetModel& tm, const Matrix& base) {
  const auto configs = configs_of(c.test);
  const Matrix X = target_features(c.model, tm, base, c.test_pred);
  const auto truth = target_column(c.test, tm.target);
  nlohmann::json out = nlohmann::json::object();
  for (std::size_t l = 0; l < tm.learners.size(); ++l) {
    std::string key = tm.learners[l]->kind();
    if (out.contains(key)) key += "#" + std::to_string(l);
    out[key] =
        fit_metrics(truth, predict_target(c.model, tm, X, configs, {static_cast<int>(l), false})).to_json();
  }
  out["blend"] = fit_metrics(truth, predict_target(c.model, tm, X, configs, {-1, false})).to_json();
  if (tm.corrector)
    out["blend_corrected"] = fit_metrics(truth, predict_target(c.model, tm, X, configs)).to_json();
  return out;
}

nlohmann::json blend_weights(const TargetModel& tm) {
  nlohmann::json w = nlohmann::json::object();
  for (std::size_t l = 0; l < tm.learners.size(); ++l) {
    std::string key = tm.learners[l]->kind();
    if (w.contains(key)) key += "#" + std::to_string(l);
    w[key] = tm.weights[l];
  }
  return w;
}

}  // namespace

nlohmann::json components_section(const Context& c) {
  const Matrix base = build_features(c.model.schema(), configs_of(c.test), telemetry_of(c.test));
  nlohmann::json no_cascade;
  if (c.opts.quick)
    no_cascade = unavailable("skipped (--quick): needs retraining");
  else if (c.opts.external)
    no_cascade = unavailable("--external: no training split to retrain on");
  else if (!c.model.options().cascade)
    no_cascade = unavailable("the model was trained without the cascade");
  else
    no_cascade = no_cascade_scores(c);
  nlohmann::json out = nlohmann::json::object();
  for (const auto& tm : c.model.target_models()) {
    nlohmann::json t = {{"weights", blend_weights(tm)},
                        {"upstream", tm.upstream},
                        {"corrector", tm.corrector != nullptr},
                        {"oof", tm.components},
                        {"test", test_components(c, tm, base)}};
    t["no_cascade"] = no_cascade.contains(tm.target) ? no_cascade[tm.target] : no_cascade;
    out[tm.target] = t;
  }
  return out;
}

}  // namespace carb::eval
