// Split-conformal widths, and their calibration for architectures never trained (conformal.hpp).
#include "conformal.hpp"

#include "carb/prediction_io.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>

#include "model_internal.hpp"
#include "target_data.hpp"

namespace carb {

std::optional<double> finite_sample_quantile(const std::vector<double>& sorted, double level) {
  const auto k = static_cast<std::size_t>(std::ceil((sorted.size() + 1) * level));
  if (k > sorted.size()) return std::nullopt;
  return sorted[k - 1];
}

ConformalWidths conformal_widths(const std::vector<double>& residuals, const Dataset& d, int low_batch_max) {
  std::map<BatchRegime, std::vector<double>> res;
  for (std::size_t i = 0; i < residuals.size(); ++i) {
    res[batch_regime_of(d.rows[i].config, low_batch_max)].push_back(residuals[i]);
    res[BatchRegime::all].push_back(residuals[i]);
  }
  ConformalWidths w;
  for (auto& [regime, e] : res) {
    std::sort(e.begin(), e.end());
    for (double level : kConfidenceLevels) {
      // Finite-sample split-conformal quantile: the ceil((n+1)*level)-th smallest residual. With
      // fewer residuals than that there is none: the interval is unbounded (sixteenth hostile pass:
      // the largest residual stood in, and 8 rows gave "90%" intervals that held 13% of memory).
      w[regime][conformal_key(level)] = finite_sample_quantile(e, level).value_or(std::numeric_limits<double>::infinity());
    }
  }
  return w;
}

SizeBinnedWidths size_binned_widths(const std::vector<double>& residuals, const std::vector<double>& predicted,
                                    const Dataset& d, int low_batch_max, int bins, const ConformalWidths& pooled) {
  SizeBinnedWidths out;
  if (bins < 2) return out;
  if (predicted.size() != residuals.size() || residuals.size() != d.rows.size())
    throw std::invalid_argument("size_binned_widths: one prediction and one residual per row");
  std::map<BatchRegime, std::vector<std::pair<double, double>>> rows;  // (predicted, residual)
  for (std::size_t i = 0; i < residuals.size(); ++i) {
    if (!std::isfinite(predicted[i])) continue;  // no bin to sort it into (and no order for std::sort)
    const std::pair<double, double> r{predicted[i], residuals[i]};
    rows[batch_regime_of(d.rows[i].config, low_batch_max)].push_back(r);
    rows[BatchRegime::all].push_back(r);
  }
  for (auto& [regime, r] : rows) {
    const auto p = pooled.find(regime);
    if (p == pooled.end()) continue;
    std::sort(r.begin(), r.end());
    // Cuts at the regime's quantiles of the prediction; a value shared across a cut stays in one bin.
    std::vector<double> cuts;
    for (int b = 1; b < bins; ++b) {
      const double cut = r[r.size() * static_cast<std::size_t>(b) / static_cast<std::size_t>(bins)].first;
      if (cut > r.front().first && (cuts.empty() || cut > cuts.back())) cuts.push_back(cut);
    }
    cuts.push_back(std::numeric_limits<double>::infinity());
    std::size_t i = 0;
    for (const double upto : cuts) {
      std::vector<double> e;
      for (; i < r.size() && r[i].first < upto; ++i) e.push_back(r[i].second);
      std::sort(e.begin(), e.end());
      SizeBin bin{upto, {}};
      double below = 0;
      for (double level : kConfidenceLevels) {
        const std::string key = conformal_key(level);
        below = std::max(below, finite_sample_quantile(e, level).value_or(p->second.at(key)));
        bin.half[key] = below;
      }
      out[regime].push_back(std::move(bin));
    }
  }
  return out;
}

std::string calibration_network_key(const Config& c) {
  return std::string(to_string(c.family)) + "-" + std::to_string(c.depth) + "-c" + width_channels(c.width);
}

int min_networks_for(double level) { return draws_needed(level); }

ArchitectureFolds architecture_folds(const Dataset& d, unsigned seed) {
  // By the network's channels (0.25 and 0.251 build one network: split across folds, each spelling
  // was predicted by a forest that trained on the other) and across precisions (a network's other
  // precision in training made the held-out one a known network: the widths then measured "a new
  // precision", and were applied to networks never measured at all).
  std::map<std::string, std::vector<std::size_t>> rows_of;
  std::vector<std::string> order;  // first-seen, so the shuffle does not depend on map order
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const std::string key = calibration_network_key(d.rows[i].config);
    auto& g = rows_of[key];
    if (g.empty()) order.push_back(key);
    g.push_back(i);
  }
  ArchitectureFolds af;
  if (order.size() < static_cast<std::size_t>(kMinCalibrationNetworks)) return af;
  af.networks = static_cast<int>(order.size());
  af.k = std::min<int>(kMaxCalibrationFolds, af.networks);
  std::mt19937 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::size_t> size(static_cast<std::size_t>(af.k), 0);
  af.folds.assign(d.rows.size(), 0);
  for (const auto& a : order) {
    const auto f = static_cast<std::size_t>(std::min_element(size.begin(), size.end()) - size.begin());
    for (auto i : rows_of[a]) af.folds[i] = static_cast<int>(f);
    size[f] += rows_of[a].size();
  }
  return af;
}

std::vector<float> calibrate_unseen_architectures(TargetModel& tm, const Matrix& X, const Dataset& d,
                                                  const TrainOptions& o, const ArchitectureFolds& af) {
  TargetData td = target_data(d, tm.target, o.log_target);
  if (tm.estimate) td = ratio_data(td, *tm.estimate, tm.target, d, af.folds, af.k);
  LearnerParams quick = o.params;
  quick.n_trees = kCalibrationTrees;
  quick.threads = 1;  // the folds run side by side
  FitBatch b;
  const auto h = add_target_oof(b, [&] { return make_learner("extra_trees", quick); }, X, td, af.folds, af.k);
  b.run(o.params.threads);
  std::vector<float> pred = oof_in_target_space(b, h, td);
  std::vector<double> residuals(pred.size());
  for (std::size_t i = 0; i < pred.size(); ++i) residuals[i] = std::abs(double(td.y[i]) - pred[i]);
  tm.conformal_unseen = conformal_widths(residuals, d, o.corrector_max_batch);
  tm.unseen_networks = af.networks;
  // A new network is one more draw from the networks trained: the rows of one network rise and fall
  // together, so a level is bounded only with the networks the finite-sample rule asks for (90%: 9).
  for (auto& [regime, levels] : tm.conformal_unseen)
    for (auto& [level, half] : levels)
      if (af.networks < min_networks_for(std::stod(level))) half = std::numeric_limits<double>::infinity();
  // Never narrower than the widths of trained architectures: a quick forest that happens to do
  // better on a held-out network than the full model does on its own rows says nothing of a new one.
  for (auto& [regime, levels] : tm.conformal_unseen)
    for (auto& [level, half] : levels)
      if (tm.conformal.count(regime) && tm.conformal.at(regime).count(level))
        half = std::max(half, tm.conformal.at(regime).at(level));
  for (std::size_t i = 0; i < pred.size(); ++i) pred[i] += td.offset[i];
  return pred;
}

double interval_half_width(const TargetModel& tm, const Config& c, int low_batch_max, double level,
                           bool trained_architecture, double predicted) {
  const bool unseen = !trained_architecture && !tm.conformal_unseen.empty();
  const ConformalWidths& w = unseen ? tm.conformal_unseen : tm.conformal;
  BatchRegime regime = batch_regime_of(c, low_batch_max);
  if (!w.count(regime)) regime = BatchRegime::all;
  const std::string key = conformal_key(level);
  const double h = w.at(regime).at(key);
  const auto bins = tm.conformal_by_size.find(regime);
  if (bins == tm.conformal_by_size.end() || !std::isfinite(predicted)) return h;
  const auto& bs = bins->second;
  const auto bin = std::find_if(bs.begin(), bs.end(), [&](const SizeBin& b) { return predicted < b.upto; });
  if (bin == bs.end()) return h;
  const auto width_of = [&](const SizeBin& b) { return unseen ? std::max(h, b.half.at(key)) : b.half.at(key); };
  // Each bin's own width, widened where a neighbouring bin's interval reaches farther, so that
  // neither edge falls as the answer grows across a cut: an answer just past a cut into a narrower
  // bin had a lower upper edge than a smaller one just below it, and passed a budget the smaller
  // failed. Only ever wider than the bin's own width, so its coverage holds.
  double hb = width_of(*bin);
  for (auto b = bs.begin(); b != bin; ++b) hb = std::max(hb, b->upto + width_of(*b) - predicted);
  for (auto b = bin + 1; b != bs.end(); ++b) hb = std::max(hb, predicted - ((b - 1)->upto - width_of(*b)));
  return hb;
}

std::pair<double, double> widened_interval(double v, double h, double wide, bool log_target) {
  if (log_target) return {v * std::exp(-h - wide), v * std::exp(h + wide)};
  return {(v - h) * std::exp(-wide), (v + h) * std::exp(wide)};
}

double extrapolation_distance(double distance) {
  return distance > 0 ? std::max(distance, kMinExtrapolationDistance) : distance;
}

double widening_to_cover(double y, double v, double h, bool log_target) {
  if (log_target) return std::max(0.0, std::abs(std::log(y) - std::log(v)) - h);
  // Raw units: the edges scale by e^w, so the widening is a log ratio to the nearer edge. A
  // lower edge at or below zero already holds every cost below the point; a point at or below zero
  // gets no upper edge (CarbModel::predict), so it holds every cost.
  if (!(v > 0)) return 0.0;
  if (y > v + h) return v + h > 0 ? std::log(y / (v + h)) : std::numeric_limits<double>::infinity();
  if (y < v - h) return y > 0 ? std::log((v - h) / y) : std::numeric_limits<double>::infinity();
  return 0.0;
}

}  // namespace carb
