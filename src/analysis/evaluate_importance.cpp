// Feature importance per target: the blend-weighted gain the learners recorded in training,
// and permutation importance on the held-out rows — how much the test MAE grows when one
// column of the target's feature matrix (upstream predictions included) is shuffled.
// Gain says what the trees split on; permutation says what the predictions rely on, which
// differs when features are correlated (flops, flops_log, batch, ...).
#include <algorithm>
#include <numeric>
#include <random>

#include "carb/features.hpp"
#include "carb/metrics.hpp"
#include "evaluate_internal.hpp"

namespace carb::eval {
namespace {

double mae(const std::vector<double>& truth, const std::vector<double>& pred) {
  return fit_metrics(truth, pred).mae;
}

// Mean MAE increase over `repeats` shuffles of each column, with fixed seeds so runs repeat.
std::vector<double> permutation_importance(const CarbModel& m, const std::string& target, const Matrix& X,
                                           const std::vector<Config>& configs,
                                           const std::vector<double>& truth, int repeats) {
  const double base = mae(truth, m.predict_target(target, X, configs));
  std::vector<double> out(X.cols, 0.0);
  for (int r = 0; r < repeats; ++r) {
    std::vector<std::size_t> perm(X.rows);
    std::iota(perm.begin(), perm.end(), 0);
    std::mt19937 rng(m.options().seed + 1000u * static_cast<unsigned>(r + 1));
    std::shuffle(perm.begin(), perm.end(), rng);
    for (std::size_t j = 0; j < X.cols; ++j) {
      Matrix Xp = X;
      for (std::size_t i = 0; i < X.rows; ++i) Xp(i, j) = X(perm[i], j);
      out[j] += (mae(truth, m.predict_target(target, Xp, configs)) - base) / repeats;
    }
  }
  return out;
}

std::vector<FeatureImportance> target_importance(const Context& c, const std::string& target, const Matrix& base) {
  const auto configs = configs_of(c.test);
  const Matrix X = c.model.target_features(target, base, c.test_cascade);
  const auto truth = target_column(c.test, target);
  const double base_mae = mae(truth, c.model.predict_target(target, X, configs));
  const auto perm = permutation_importance(c.model, target, X, configs, truth, c.opts.permutation_repeats);
  const auto names = c.model.feature_names(target);
  std::map<std::string, double> gain;
  for (const auto& [f, g] : c.model.importance(target)) gain[f] = g;
  std::vector<std::size_t> order(names.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) {
    if (gain[names[a]] != gain[names[b]]) return gain[names[a]] > gain[names[b]];
    return perm[a] > perm[b];
  });
  std::vector<FeatureImportance> out;
  for (auto j : order)
    out.push_back({names[j], gain[names[j]], perm[j], base_mae > 0 ? 100.0 * perm[j] / base_mae : 0.0});
  return out;
}

}  // namespace

std::map<std::string, std::vector<FeatureImportance>> importance_section(const Context& c) {
  const Matrix base = build_features(c.model.schema(), configs_of(c.test), telemetry_of(c.test));
  std::map<std::string, std::vector<FeatureImportance>> out;
  for (const auto& target : c.model.targets()) out[target] = target_importance(c, target, base);
  return out;
}

}  // namespace carb::eval
