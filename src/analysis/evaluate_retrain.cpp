// The evaluation sections that train fresh models with the bundle's options:
// leave-one-batch-tier-out (train on batch > 8, test on batch <= 8), the telemetry ablation
// (all features vs architecture-only on the same split) and the no-cascade variant.
// All are skipped with --quick, since each retrain costs as much as `carb train`.
#include <algorithm>
#include <iostream>

#include "carb/error.hpp"
#include "evaluate_internal.hpp"

namespace carb::eval {
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

nlohmann::json per_target(const nlohmann::json& scores, const nlohmann::json& meta) {
  nlohmann::json out = meta;
  for (const auto& [t, s] : scores.items()) out[t] = s;
  return out;
}

}  // namespace

CarbModel retrain(const Context& c, const Dataset& train, TrainOptions o) {
  o.verbose = c.opts.verbose;
  if (c.opts.verbose)
    std::cerr << "evaluate: retraining on " << train.rows.size() << " rows"
              << (o.cascade ? "" : " (no cascade)") << (o.use_telemetry ? " (telemetry)" : "") << "\n";
  return CarbModel::train(train, o);
}

nlohmann::json no_cascade_scores(const Context& c) {
  TrainOptions o = c.model.options();
  o.cascade = false;
  return score_model(retrain(c, c.train, o), c.test);
}

nlohmann::json lobto_section(const Context& c) {
  if (c.opts.quick) return unavailable(kQuick);
  const int b = c.opts.lobto_max_batch;
  std::vector<std::size_t> hi, lo;
  for (std::size_t i = 0; i < c.all.rows.size(); ++i) (c.all.rows[i].config.batch > b ? hi : lo).push_back(i);
  const std::string tiers =
      "train on batch > " + std::to_string(b) + ", test on batch <= " + std::to_string(b);
  if (lo.empty()) return unavailable("no ok rows with batch <= " + std::to_string(b) + " to test on");
  if (hi.size() < min_train_rows(c.model))
    return unavailable("only " + std::to_string(hi.size()) + " ok rows with batch > " + std::to_string(b) +
                       " to train on");
  const Dataset train = subset(c.all, hi), test = subset(c.all, lo);
  const CarbModel m = retrain(c, train, c.model.options());
  return per_target(
      score_model(m, test),
      {{"available", true}, {"split", tiers}, {"train_rows", hi.size()}, {"test_rows", lo.size()}});
}

nlohmann::json ablation_section(const Context& c) {
  if (c.opts.quick) return unavailable(kQuick);
  // Both variants train and test on the rows that have telemetry, so they differ only in features.
  const Dataset train = telemetry_rows(c.train), test = telemetry_rows(c.test);
  if (train.rows.empty() && test.rows.empty())
    return unavailable(
        "the data has no avg_sm_util/avg_mem_util telemetry (e.g. a CPU platform): "
        "there is nothing to ablate, every model is architecture-only");
  if (train.rows.size() < min_train_rows(c.model))
    return unavailable("only " + std::to_string(train.rows.size()) + " training rows with telemetry");
  if (test.rows.empty()) return unavailable("no held-out row has telemetry");
  const bool whole = train.rows.size() == c.train.rows.size() && test.rows.size() == c.test.rows.size();
  nlohmann::json out = {{"available", true},
                        {"reused_bundle", nullptr},
                        {"train_rows", train.rows.size()},
                        {"test_rows", test.rows.size()},
                        {"rows_without_telemetry",
                         {{"train", c.train.rows.size() - train.rows.size()},
                          {"test", c.test.rows.size() - test.rows.size()}}}};
  for (const bool telemetry : {true, false}) {
    const char* name = telemetry ? "all_features" : "architecture_only";
    // The bundle already is one of the two variants when it was trained on this very split.
    if (whole && c.split_matches_training && c.model.options().use_telemetry == telemetry) {
      out[name] = score_model(c.model, test);
      out["reused_bundle"] = name;
      continue;
    }
    TrainOptions o = c.model.options();
    o.use_telemetry = telemetry;
    out[name] = score_model(retrain(c, train, o), test);
  }
  for (const auto& t : c.model.targets())
    out["delta_r2"][t] =
        out["architecture_only"][t]["r2"].get<double>() - out["all_features"][t]["r2"].get<double>();
  return out;
}

}  // namespace carb::eval
