// The rate at which a target's error grows past the trained ranges (extrapolation_rate.hpp).
#include "extrapolation_rate.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "carb/envelope.hpp"
#include "conformal.hpp"
#include "model_internal.hpp"
#include "target_data.hpp"

namespace carb {
namespace {

// A hold-out: which rows it leaves out of training (1) and predicts.
using HoldOut = std::vector<char>;

// The rows at the largest and at the smallest value of each dimension; depth per family (one
// family's deepest are not past another's), all families' together as one hold-out.
std::vector<HoldOut> hold_outs(const Dataset& d) {
  const std::vector<std::function<double(const Config&)>> dims = {
      [](const Config& c) { return double(c.resolution); }, [](const Config& c) { return double(c.batch); },
      [](const Config& c) { return c.width; }, [](const Config& c) { return double(c.depth); }};
  const std::size_t n = d.rows.size();
  std::vector<HoldOut> out;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const bool per_family = k == 3;
    std::map<int, std::pair<double, double>> range;  // per family (or one group): smallest, largest
    for (const Record& r : d.rows) {
      const int g = per_family ? static_cast<int>(r.config.family) : 0;
      const double v = dims[k](r.config);
      const auto [it, fresh] = range.emplace(g, std::pair{v, v});
      it->second.first = std::min(it->second.first, v), it->second.second = std::max(it->second.second, v);
    }
    for (const bool top : {true, false}) {
      HoldOut h(n, 0);
      std::size_t held = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const Config& c = d.rows[i].config;
        const auto [lo, hi] = range.at(per_family ? static_cast<int>(c.family) : 0);
        // A group with one value has nothing past it to learn from: not held out.
        if (lo != hi && dims[k](c) == (top ? hi : lo)) h[i] = 1, ++held;
      }
      if (held >= 2 && n - held >= 20) out.push_back(std::move(h));
    }
  }
  return out;
}

}  // namespace

std::map<std::string, double> calibrate_extrapolation_rate(const TargetModel& tm, const Matrix& X, const Dataset& d,
                                                           const TrainOptions& o) {
  const std::vector<HoldOut> holds = hold_outs(d);
  if (holds.empty()) return {};
  TargetData base = target_data(d, tm.target, o.log_target);
  LearnerParams quick = o.params;
  quick.n_trees = kCalibrationTrees;
  quick.threads = 1;  // the hold-outs run side by side
  FitBatch b;
  std::vector<std::vector<int>> folds;
  std::vector<TargetData> tds;
  std::vector<std::size_t> handles;
  folds.reserve(holds.size()), tds.reserve(holds.size());
  for (const HoldOut& h : holds) {
    // Fold 0 is the hold-out, predicted by a forest fitted on fold 1 (the rest); fold 1's own
    // prediction, from the hold-out alone, is not used.
    folds.emplace_back(h.begin(), h.end());
    for (int& f : folds.back()) f = f ? 0 : 1;
    tds.push_back(tm.estimate ? ratio_data(base, *tm.estimate, tm.target, d, folds.back(), 2) : base);
    handles.push_back(add_target_oof(b, [&] { return make_learner("extra_trees", quick); }, X, tds.back(), folds.back(), 2));
  }
  b.run(o.params.threads);

  // Draws per level: (excess error over the in-grid width) / distance past the rest's envelope.
  std::map<std::string, std::vector<double>> draws;
  const std::vector<Config> configs = configs_of(d);
  for (std::size_t s = 0; s < holds.size(); ++s) {
    const std::vector<float> pred = oof_in_target_space(b, handles[s], tds[s]);
    std::vector<Config> rest;
    for (std::size_t i = 0; i < configs.size(); ++i)
      if (!holds[s][i]) rest.push_back(configs[i]);
    const TrainedEnvelope env = TrainedEnvelope::of(rest);
    for (std::size_t i = 0; i < configs.size(); ++i) {
      if (!holds[s][i]) continue;
      const double dist = extrapolation_widening(env.outside(configs[i]));
      if (!(dist > 0) || !std::isfinite(dist)) continue;
      const double error = std::abs(double(tds[s].y[i]) - pred[i]);
      const auto regime = configs[i].batch <= o.corrector_max_batch ? BatchRegime::low_batch : BatchRegime::high_batch;
      const auto& widths = tm.conformal.count(regime) ? tm.conformal.at(regime) : tm.conformal.at(BatchRegime::all);
      for (double level : kConfidenceLevels) {
        const double h = widths.at(conformal_key(level));
        if (std::isfinite(h)) draws[conformal_key(level)].push_back(std::max(0.0, error - h) / dist);
      }
    }
  }
  std::map<std::string, double> rate;
  for (double level : kConfidenceLevels) {
    auto& e = draws[conformal_key(level)];
    std::sort(e.begin(), e.end());
    // The finite-sample quantile, as the conformal widths take it; too few draws: the earlier rule.
    const auto k = static_cast<std::size_t>(std::ceil((e.size() + 1) * level));
    rate[conformal_key(level)] =
        e.size() >= static_cast<std::size_t>(kMinExtrapolationDraws) && k <= e.size() ? e[k - 1] : 1.0;
  }
  return rate;
}

}  // namespace carb
