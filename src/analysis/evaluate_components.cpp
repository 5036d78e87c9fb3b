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

void score_parts(const Context& c, const TargetSummary& tm, const Matrix& base, TargetComponents& out) {
  const auto configs = configs_of(c.test);
  const Matrix X = c.model.target_features(tm.target, base, c.test_cascade);
  const auto truth = target_column(c.test, tm.target);
  auto score = [&](PredictParts parts) { return fit_metrics(truth, c.model.predict_target(tm.target, X, configs, parts)); };
  for (std::size_t l = 0; l < tm.learners.size(); ++l)
    out.learners_test[tm.learners[l]] = score({static_cast<int>(l), false});
  out.blend_test = score({-1, false});
  if (tm.corrector) out.blend_corrected_test = score({});
  if (!tm.monotone_in.empty()) out.held_monotone_test = fit_metrics(truth, c.test_pred.at(tm.target));
}

}  // namespace

std::map<std::string, TargetComponents> components_section(const Context& c, std::vector<std::string>* warnings) {
  const Matrix base = build_features(c.model.schema(), configs_of(c.test), telemetry_of(c.test));
  std::string reason;
  std::map<std::string, FitMetrics> no_cascade;
  if (c.opts.quick)
    reason = "skipped (--quick): needs retraining";
  else if (c.opts.external)
    reason = "--external: no training split to retrain on";
  else if (!c.model.options().cascade)
    reason = "the model was trained without the cascade";
  else
    no_cascade = no_cascade_scores(c, warnings);
  std::map<std::string, TargetComponents> out;
  for (const auto& tm : c.model.target_summaries()) {
    TargetComponents& t = out[tm.target];
    for (std::size_t l = 0; l < tm.learners.size(); ++l) t.weights[tm.learners[l]] = tm.weights[l];
    t.upstream = tm.upstream;
    t.corrector = tm.corrector;
    t.oof = tm.oof;
    score_parts(c, tm, base, t);
    if (const auto it = no_cascade.find(tm.target); it != no_cascade.end())
      t.no_cascade = it->second;
    else
      t.no_cascade_reason = reason.empty() ? "the model retrained without the cascade has no " + tm.target : reason;
  }
  return out;
}

}  // namespace carb::eval

namespace carb {

nlohmann::json TargetComponents::to_json() const {
  nlohmann::json test = nlohmann::json::object();
  for (const auto& [kind, m] : learners_test) test[kind] = m.to_json();
  test["blend"] = blend_test.to_json();
  if (blend_corrected_test) test["blend_corrected"] = blend_corrected_test->to_json();
  if (held_monotone_test) test["held_monotone"] = held_monotone_test->to_json();
  return {{"weights", weights},
          {"upstream", upstream},
          {"corrector", corrector},
          {"oof", oof.to_json()},
          {"test", test},
          {"no_cascade", no_cascade ? no_cascade->to_json() : eval::unavailable(no_cascade_reason)}};
}

}  // namespace carb
