// The evaluation sections that train fresh models with the bundle's options:
// leave-one-batch-tier-out (train on batch > 8, test on batch <= 8), the telemetry ablation
// (all features vs architecture-only on the same split) and the no-cascade variant.
// All are skipped with --quick, since each retrain costs as much as `carb train`.
#include <algorithm>
#include <cmath>
#include <iostream>

#include "carb/envelope.hpp"
#include "carb/error.hpp"
#include "evaluate_internal.hpp"

namespace carb {
namespace eval {
namespace {

constexpr const char* kQuick = "skipped (--quick): needs retraining";

// Below this many rows the K-fold out-of-fold machinery has folds too small to mean anything.
std::size_t min_train_rows(const CarbModel& m) { return std::max<std::size_t>(10, 2 * m.options().folds); }

// The rows with both utilizations: a GPU row whose training window failed (BatchNorm refuses
// one value per channel at batch 1) has none, and the telemetry variant cannot use it.
Dataset telemetry_rows(const Dataset& d) {
  std::vector<std::size_t> keep;
  for (std::size_t i = 0; i < d.rows.size(); ++i)
    if (d.rows[i].avg_sm_util && d.rows[i].avg_mem_util) keep.push_back(i);
  return subset(d, keep);
}

template <class R>
R not_available(const std::string& reason) {
  R r;
  r.reason = reason;
  return r;
}

}  // namespace

CarbModel retrain(const Context& c, const Dataset& train, TrainOptions o) {
  o.verbose = c.opts.verbose;
  if (c.opts.verbose)
    std::cerr << "evaluate: retraining on " << train.rows.size() << " rows"
              << (o.cascade ? "" : " (no cascade)") << (o.use_telemetry ? " (telemetry)" : "") << "\n";
  return CarbModel::train(train, o);
}

std::map<std::string, FitMetrics> no_cascade_scores(const Context& c, std::vector<std::string>* notes) {
  TrainOptions o = c.model.options();
  o.cascade = false;
  // Thirty-seventh hostile pass: the retrained variants' costs at or below zero were scored silently.
  return score_targets(retrain(c, c.train, o), c.test, notes, "the no-cascade variant (components): ");
}

LobtoResult lobto_section(const Context& c) {
  if (c.opts.quick) return not_available<LobtoResult>(kQuick);
  const int b = c.opts.lobto_max_batch;
  std::vector<std::size_t> hi, lo;
  for (std::size_t i = 0; i < c.all.rows.size(); ++i) (c.all.rows[i].config.batch > b ? hi : lo).push_back(i);
  if (lo.empty()) return not_available<LobtoResult>("no ok rows with batch <= " + std::to_string(b) + " to test on");
  if (hi.size() < min_train_rows(c.model))
    return not_available<LobtoResult>("only " + std::to_string(hi.size()) + " ok rows with batch > " +
                                      std::to_string(b) + " to train on");
  LobtoResult r;
  r.available = true;
  r.split = "train on batch > " + std::to_string(b) + ", test on batch <= " + std::to_string(b);
  r.train_rows = hi.size(), r.test_rows = lo.size();
  const CarbModel m = retrain(c, subset(c.all, hi), c.model.options());
  const Dataset test = subset(c.all, lo);
  // Thirty-sixth hostile pass: the retrained model's guesses at a precision the high tier never had
  // were scored without the warning evaluate gives the bundle's own. Every test row lies past the
  // tier's batches (that is the section's question); a family, precision or pairing never trained
  // there is another matter, and said.
  std::size_t never = 0;
  for (const Config& cfg : configs_of(test))
    never += !std::isfinite(extrapolation_widening(m.envelope().outside(m.as_trained(cfg))));
  if (never)
    r.warnings.push_back(std::to_string(never) + " of " + std::to_string(test.rows.size()) +
                         " test configurations are at a family, precision or pairing of the two that the batch > " +
                         std::to_string(b) + " rows never had: the retrained model's answers there are guesses, "
                         "and these scores include them");
  r.targets = score_targets(m, test, &r.warnings);  // with its predictions at or below zero, said
  return r;
}

AblationResult ablation_section(const Context& c) {
  if (c.opts.quick) return not_available<AblationResult>(kQuick);
  // Both variants train and test on the rows that have telemetry, so they differ only in features.
  const Dataset train = telemetry_rows(c.train), test = telemetry_rows(c.test);
  if (train.rows.empty() && test.rows.empty())
    return not_available<AblationResult>(
        "the data has no avg_sm_util/avg_mem_util telemetry (e.g. a CPU platform): "
        "there is nothing to ablate, every model is architecture-only");
  if (train.rows.size() < min_train_rows(c.model))
    return not_available<AblationResult>("only " + std::to_string(train.rows.size()) + " training rows with telemetry");
  if (test.rows.empty()) return not_available<AblationResult>("no held-out row has telemetry");
  const bool whole = train.rows.size() == c.train.rows.size() && test.rows.size() == c.test.rows.size();
  AblationResult r;
  r.available = true;
  r.train_rows = train.rows.size(), r.test_rows = test.rows.size();
  r.train_without_telemetry = c.train.rows.size() - train.rows.size();
  r.test_without_telemetry = c.test.rows.size() - test.rows.size();
  for (const bool telemetry : {true, false}) {
    auto& scores = telemetry ? r.all_features : r.architecture_only;
    // The bundle already is one of the two variants when it was trained on this very split.
    if (whole && c.split_matches_training && c.model.options().use_telemetry == telemetry) {
      scores = score_targets(c.model, test, &r.warnings,
                             telemetry ? "all features variant: " : "architecture-only variant: ");
      r.reused_bundle = telemetry ? "all_features" : "architecture_only";
      continue;
    }
    TrainOptions o = c.model.options();
    o.use_telemetry = telemetry;
    scores = score_targets(retrain(c, train, o), test, &r.warnings,
                           telemetry ? "all features variant: " : "architecture-only variant: ");
  }
  for (const auto& t : c.model.targets()) r.delta_r2[t] = r.architecture_only.at(t).r2 - r.all_features.at(t).r2;
  return r;
}

}  // namespace eval

nlohmann::json LobtoResult::to_json() const {
  if (!available) return eval::unavailable(reason);
  nlohmann::json out = eval::metrics_json(targets);
  out.update({{"available", true}, {"split", split}, {"train_rows", train_rows}, {"test_rows", test_rows},
              {"warnings", warnings}});
  return out;
}

nlohmann::json AblationResult::to_json() const {
  if (!available) return eval::unavailable(reason);
  return {{"available", true},
          {"reused_bundle", reused_bundle ? nlohmann::json(*reused_bundle) : nlohmann::json()},
          {"train_rows", train_rows},
          {"test_rows", test_rows},
          {"rows_without_telemetry", {{"train", train_without_telemetry}, {"test", test_without_telemetry}}},
          {"all_features", eval::metrics_json(all_features)},
          {"architecture_only", eval::metrics_json(architecture_only)},
          {"delta_r2", delta_r2},
          {"warnings", warnings}};
}

}  // namespace carb
