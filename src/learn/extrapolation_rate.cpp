// The rate at which a target's error grows past the trained ranges (extrapolation_rate.hpp).
#include "extrapolation_rate.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "carb/envelope.hpp"
#include "conformal.hpp"
#include "memory_floor.hpp"
#include "model_internal.hpp"
#include "target_data.hpp"

namespace carb {
namespace {

// Each configuration at the smallest width that builds its network.
std::vector<Config> one_width_per_network(std::vector<Config> cs) {
  std::map<std::string, double> width_of;  // channels: the smallest width spelling them
  for (const Config& c : cs) {
    const auto [it, fresh] = width_of.emplace(width_channels(c.width), c.width);
    it->second = std::min(it->second, c.width);
  }
  for (Config& c : cs) c.width = width_of.at(width_channels(c.width));
  return cs;
}

}  // namespace

ExtrapolationCalibration::ExtrapolationCalibration(const Dataset& d) {
  const std::vector<std::function<double(const Config&)>> dims = {
      [](const Config& c) { return double(c.resolution); }, [](const Config& c) { return double(c.batch); },
      [](const Config& c) { return c.width; }, [](const Config& c) { return double(c.depth); }};
  // One width per network, as predict asks at one (CarbModel::as_trained): a width spelled otherwise
  // (0.251 beside 0.25) was held out as the narrowest "network" at distance 0.004, and counted as
  // one the rest never trained.
  const std::vector<Config> configs = one_width_per_network(configs_of(d));
  const std::size_t n = d.rows.size();
  for (std::size_t k = 0; k < dims.size(); ++k) {
    // Depth per family: one family's deepest are not past another's.
    const bool per_family = k == 3;
    std::map<int, std::pair<double, double>> range;  // per family (or one group): smallest, largest
    for (const Config& c : configs) {
      const int g = per_family ? static_cast<int>(c.family) : 0;
      const double v = dims[k](c);
      const auto [it, fresh] = range.emplace(g, std::pair{v, v});
      it->second.first = std::min(it->second.first, v), it->second.second = std::max(it->second.second, v);
    }
    for (const bool top : {true, false}) {
      HoldOut h(n, 0);
      std::size_t held = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const Config& c = configs[i];
        const auto [lo, hi] = range.at(per_family ? static_cast<int>(c.family) : 0);
        // A group with one value has nothing past it to learn from: not held out.
        if (lo != hi && dims[k](c) == (top ? hi : lo)) h[i] = 1, ++held;
      }
      if (held >= 2 && n - held >= 20) holds_.push_back(std::move(h)), dimension_.push_back(k);
    }
  }
  held_.resize(holds_.size());
  // Each held-out row's distance past the rest, and whether the rest trained its network: the same
  // for every target, so measured once here.
  distance_.assign(holds_.size(), std::vector<double>(n, 0.0));
  seen_.assign(holds_.size(), std::vector<char>(n, 0));
  for (std::size_t s = 0; s < holds_.size(); ++s) {
    std::vector<Config> rest;
    std::set<std::string> rest_architectures;
    for (std::size_t i = 0; i < n; ++i)
      if (!holds_[s][i]) rest.push_back(configs[i]), rest_architectures.insert(architecture_key(configs[i]));
    const TrainedEnvelope env = TrainedEnvelope::of(rest);
    for (std::size_t i = 0; i < n; ++i)
      if (holds_[s][i]) {
        distance_[s][i] = extrapolation_widening(env.outside(configs[i]));
        seen_[s][i] = rest_architectures.count(architecture_key(configs[i])) > 0;
      }
  }
}

void ExtrapolationCalibration::calibrate(TargetModel& tm, const Matrix& base,
                                         const std::map<std::string, std::vector<float>>& oof,
                                         const Dataset& d, const TrainOptions& o) {
  tm.extrapolation_rate.clear();
  if (holds_.empty()) return;
  const TargetData plain = target_data(d, tm.target, o.log_target);
  LearnerParams quick = o.params;
  quick.n_trees = kCalibrationTrees;
  quick.threads = 1;  // the hold-outs run side by side
  FitBatch b;
  std::vector<std::vector<int>> folds;
  std::vector<TargetData> tds;
  std::vector<Matrix> xs;
  std::vector<std::size_t> handles;
  folds.reserve(holds_.size()), tds.reserve(holds_.size()), xs.reserve(holds_.size());
  for (std::size_t s = 0; s < holds_.size(); ++s) {
    const HoldOut& h = holds_[s];
    // The upstream targets of a held-out row as a new configuration gets them: predicted by
    // models that never saw it (a random fold's out-of-fold prediction had seen its neighbours
    // past the rest's ranges, and made the rate optimistic for the targets downstream).
    std::map<std::string, std::vector<float>> upstream;
    for (const auto& u : tm.upstream) {
      std::vector<float> p = oof.at(u);
      const std::vector<float>& away = held_[s].at(u);
      for (std::size_t i = 0; i < p.size(); ++i)
        if (h[i]) p[i] = away[i];
      upstream.emplace(u, std::move(p));
    }
    xs.push_back(with_upstream(base, tm.upstream, upstream));
    // Fold 0 is the hold-out, predicted by a forest fitted on fold 1 (the rest); fold 1's own
    // prediction, from the hold-out alone, is not used.
    folds.emplace_back(h.begin(), h.end());
    for (int& f : folds.back()) f = f ? 0 : 1;
    tds.push_back(tm.estimate ? ratio_data(plain, *tm.estimate, tm.target, d, folds.back(), 2) : plain);
    handles.push_back(add_target_oof(
        b, [&] { return make_learner("extra_trees", quick); }, xs.back(), tds.back(), folds.back(), 2));
  }
  b.run(o.params.threads);

  // Draws per dimension and level: the widening a held-out row's interval needs / its distance past
  // the rest (floored, as predict floors it). A dimension has a level's list once one of its rows
  // could draw there.
  std::map<std::size_t, std::map<std::string, std::vector<double>>> draws;
  const std::vector<Config> configs = configs_of(d);
  const double inf = std::numeric_limits<double>::infinity();
  for (std::size_t s = 0; s < holds_.size(); ++s) {
    std::vector<float> pred = oof_in_target_space(b, handles[s], tds[s]);
    for (std::size_t i = 0; i < pred.size(); ++i) pred[i] = holds_[s][i] ? pred[i] + tds[s].offset[i] : 0.0f;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      if (!holds_[s][i]) continue;
      const double dist = extrapolation_distance(distance_[s][i]);
      if (!(dist > 0) || !std::isfinite(dist)) continue;
      const double v = o.log_target ? std::exp(double(pred[i])) : double(pred[i]);
      const double y = plain.y_raw[i];
      // Predict lifts a memory interval's lower edge to the least peak validation accepts (0.1%
      // under the network's floor): a peak below that is held by no widening. At the floor itself,
      // one accepted row a hair under it made every level's rate infinite.
      const bool under_floor = tm.target == "peak_memory_mb" && v > 0 &&
                               y < kMinMemoryOverNetwork * answer_floor_mb(tm, configs[i]);
      // A held-out depth or width is a network the rest never trained: its interval starts from
      // the unseen-architecture width, as a prediction's does.
      const bool seen = seen_[s][i];
      for (double level : kConfidenceLevels) {
        const double h = interval_half_width(tm, configs[i], o.corrector_max_batch, level, seen, double(pred[i]));
        // Unbounded at this level already (a new network's interval where too few networks trained,
        // or a level too high for the rows per regime): predict widens nothing there, so no draw.
        if (!std::isfinite(h)) continue;
        // A row no widening holds is a draw of infinity, not left out: left out, the rows that
        // need the most widening would make the quantile smaller.
        const double w = under_floor ? inf : widening_to_cover(y, v, h, o.log_target);
        draws[dimension_[s]][conformal_key(level)].push_back(w / dist);
      }
    }
    held_[s][tm.target] = std::move(pred);
  }
  double below = 0.0;  // the rate of the level below: a higher level's is never smaller
  for (double level : kConfidenceLevels) {
    // The finite-sample quantile of each dimension's draws, as the conformal widths take it, and the
    // largest of them: one rate serves every dimension, and pooled draws let the dimensions that
    // extrapolate well hide the ones that do not (the H200's memory past its largest batch: 79% of
    // 90% intervals held with pooled draws). A dimension with too few draws for its quantile gets
    // the earlier rule's 1, not none: skipped, it took the others' rate (0 where they needed no
    // widening). A dimension none of whose rows could draw at the level is left out: predict's
    // intervals are unbounded wherever its rate would apply (the H200's widths and depths above 80%,
    // new networks of 8; counted as 1 they widened its batches' 90% intervals to x4-8). A quantile
    // no widening reaches is infinite: intervals past the grid are unbounded. No dimension at all
    // that could draw: the earlier rule's 1.
    double r = -1.0;
    for (auto& [dim, levels] : draws) {
      const auto it = levels.find(conformal_key(level));
      if (it == levels.end()) continue;
      auto& e = it->second;
      std::sort(e.begin(), e.end());
      const auto q = finite_sample_quantile(e, level);
      r = std::max(r, q && e.size() >= static_cast<std::size_t>(kMinExtrapolationDraws) ? *q : 1.0);
    }
    below = std::max(below, r < 0 ? 1.0 : r);
    tm.extrapolation_rate[conformal_key(level)] = below;
  }
}

}  // namespace carb
