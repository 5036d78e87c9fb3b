// Split-conformal interval widths: from a target's out-of-fold residuals, and for configurations
// of an architecture the model never trained on, from folds that hold whole architectures out.
//
// Out-of-fold residuals of randomly assigned folds describe a configuration whose network trained
// the model at other resolutions and batches. Screening asks mostly about networks nobody
// measured, and there those residuals are too small: left out one network at a time, the 90%
// intervals held 68.5% of cpu-2t's latencies and 76.2% of its memory (README, "Predicting past the
// measured grid"). The unseen-architecture widths are calibrated where that question is asked.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "carb/dataset.hpp"
#include "carb/matrix.hpp"
#include "carb/model.hpp"
#include "target_model.hpp"

namespace carb {

/// The batch regime of configuration c: low_batch when its batch is at most low_batch_max.
inline BatchRegime batch_regime_of(const Config& c, int low_batch_max) {
  return c.batch <= low_batch_max ? BatchRegime::low_batch : BatchRegime::high_batch;
}

/// The finite-sample split-conformal quantile of `sorted` (ascending) at `level`: its
/// ceil((n + 1) * level)-th smallest value; none with fewer values than that.
std::optional<double> finite_sample_quantile(const std::vector<double>& sorted, double level);

/// Half-widths from absolute residuals (one per row of d, in the learners' space) per batch regime
/// (batch <= low_batch_max, the rest, all) at every kConfidenceLevels level: the finite-sample
/// quantile, the ceil((n + 1) * level)-th smallest residual, infinite with fewer residuals than that.
ConformalWidths conformal_widths(const std::vector<double>& residuals, const Dataset& d, int low_batch_max);

/// The widths of `pooled` (conformal_widths of the same residuals) per bin of the predicted value
/// inside each of its regimes: `bins` bins of about equal rows, cut at the regime's quantiles of
/// `predicted` (one per row of d: log y for a log target, y for a raw one). A bin's width at a level
/// is its finite-sample quantile, or the regime's where the bin has too few rows to bound the level,
/// and never narrower than at the level below. Empty with bins < 2. One regime-wide width is pooled
/// over small and large configurations whose errors differ: on the H200's energy it held 84.6% of
/// the smallest quarter and every row of the largest (README, "Do intervals hold ...").
SizeBinnedWidths size_binned_widths(const std::vector<double>& residuals, const std::vector<double>& predicted,
                                    const Dataset& d, int low_batch_max, int bins, const ConformalWidths& pooled);

/// The fewest networks (family, depth, channels; every precision of one together) that calibrate
/// the unseen-architecture widths: with fewer, every fold but one holds the same one or two networks
/// and the residuals say little of a new one.
inline constexpr int kMinCalibrationNetworks = 3;

/// What the calibration holds out together: the network (family, depth, the channels its width
/// builds), every precision of it, e.g. "basic-18-c64/64/128/256/512".
std::string calibration_network_key(const Config& c);

/// The networks a coverage level needs before a new network's interval can be bounded at it, by
/// the finite-sample rule with networks as the draws: ceil(level / (1 - level)) (0.8: 4, 0.9: 9,
/// 0.95: 19, 0.99: 99). Below that the unseen-architecture width is unbounded.
int min_networks_for(double level);

/// The most folds of the calibration. Up to that many networks, each is held out alone, as a
/// user's new network is against all the trained ones; five folds of the H200's 8 architectures
/// sometimes held out both bottleneck networks together, and the widths came out 1.4-1.9x the
/// residuals of leaving one out (0.53 against 0.28 in log energy), where one per fold gave 0.28.
inline constexpr int kMaxCalibrationFolds = 10;

/// Fold per row holding whole networks out, every precision of one in the same fold:
/// min(kMaxCalibrationFolds, networks) folds, networks shuffled under the seed and each given to
/// the fold with the fewest rows so far. Empty (k = 0) with fewer than kMinCalibrationNetworks.
struct ArchitectureFolds {
  std::vector<int> folds;
  int k = 0;
  int networks = 0;
};
ArchitectureFolds architecture_folds(const Dataset& d, unsigned seed);

/// Trees of the calibration's forest. On the H200's 8 architectures 25, 50 and 100 trees gave 90%
/// widths within 0.02 of each other in log latency and energy; 100 cost `carb train --fast` on
/// cpu-2t 0.7 s more than 50.
inline constexpr int kCalibrationTrees = 50;

/// Calibrates tm.conformal_unseen (tm trained, its form chosen) on the architecture folds: a quick
/// ExtraTrees (kCalibrationTrees) in tm's form, out of fold, each width the larger of its quantile and
/// tm.conformal's. X: the base features with the upstream targets' predictions made the same way
/// (the returned values, log y or y: what the cascade feeds downstream).
std::vector<float> calibrate_unseen_architectures(TargetModel& tm, const Matrix& X, const Dataset& d,
                                                  const TrainOptions& o, const ArchitectureFolds& af);

/// The half-width tm's interval has at `level` for configuration c (its batch regime: batch <=
/// low_batch_max or above); for an architecture never trained, the unseen-architecture width when
/// tm has one. With size bins (tm.conformal_by_size) and a finite `predicted` (log y for a log
/// target, y for a raw one), a trained architecture's width is its bin's, an unseen one's the larger
/// of its width and the bin's, widened near a cut as far as the neighbouring bins' edges reach, so
/// that neither edge (predicted +- h) falls as `predicted` grows. Infinite where the level could not
/// be bounded.
double interval_half_width(const TargetModel& tm, const Config& c, int low_batch_max, double level,
                           bool trained_architecture, double predicted);

/// The interval around a prediction v with half-width h, widened by `wide` (log units) past the
/// trained ranges: [v e^-(h+w), v e^(h+w)] for a log target, [(v - h) e^-w, (v + h) e^w] for a raw
/// one (h in the target's units). Not yet clamped to the target's floor.
std::pair<double, double> widened_interval(double v, double h, double wide, bool log_target);

/// The least distance past the trained ranges (log units; log 1.1) a calibrated extrapolation rate
/// multiplies. Just past the data the error is the in-grid noise of a forest that lost its nearest
/// rows, not growth with distance: held-out resolutions 128 against a largest trained 129 gave draws
/// of noise / log(129/128), rates near 10, and the largest over dimensions spread them to all.
inline constexpr double kMinExtrapolationDistance = 0.09531017980432486;

/// The distance a calibrated rate multiplies: 0 inside the trained ranges, at least
/// kMinExtrapolationDistance past them, infinite where a family or precision was never trained.
double extrapolation_distance(double distance);

/// The least widening (>= 0, log units) that makes widened_interval(v, h, w, log_target) hold the
/// measured value y: what an extrapolation-rate draw measures. 0 for a raw point at or below zero
/// (predict bounds it by nothing above); infinite when no widening would hold y.
double widening_to_cover(double y, double v, double h, bool log_target);

}  // namespace carb
