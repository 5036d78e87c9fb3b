// How fast a target's error grows past the trained ranges, calibrated on the training data.
//
// Past the trained ranges an interval is widened by the distance past the data (the largest
// |log(value / nearest trained bound)|, carb/envelope.hpp). The rule was one unit of log error per
// unit of distance for every target: right for trees that answer a constant past their data, but
// the ratio form carries the trend in its analytic estimate, and 430 CPU rows measured at the
// `deploy` preset's resolutions 160-256 (data/cpu-2t-deploy.csv) had memory within 5.3% at p90
// inside 90% intervals x2.0 wide. Here each target's rate is measured instead: the rows at the
// largest trained value of a dimension (resolution, batch, width, each family's depth), then those
// at the smallest, are held out in turn; a quick forest in the target's form (its estimate refitted
// without them) predicts them from the rest, with the cascade's upstream targets predicted the same
// way (as a new configuration's are, by models that never saw it); each held-out row's widening
// needed beyond its in-grid interval, per unit of its distance past the rest, is one draw; the
// rate at a level is the largest of the dimensions' finite-sample quantiles of their draws, and no
// level's rate is below a lower level's.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "carb/dataset.hpp"
#include "carb/matrix.hpp"
#include "carb/model.hpp"
#include "target_model.hpp"

namespace carb {

/// The fewest draws a level's rate needs beyond the finite-sample rule; with fewer the rate stays
/// the earlier rule's 1.
inline constexpr int kMinExtrapolationDraws = 20;

/// The calibration across a cascade: targets in cascade order, each calibrated once.
class ExtrapolationCalibration {
 public:
  /// The hold-outs of d: per dimension, the rows at its largest and at its smallest value (depth per
  /// family), where at least 2 are held and 20 remain.
  explicit ExtrapolationCalibration(const Dataset& d);

  /// Sets tm.extrapolation_rate (tm trained, its form chosen, its in-grid and unseen-architecture
  /// widths set): log error per unit of distance past the trained ranges, beyond the in-grid
  /// interval, per level ("0.8" ... "0.99"); 1 at a level with too few draws; empty when no
  /// hold-out is possible. base: the base features of d's rows; oof: the out-of-fold predictions of
  /// the targets upstream of tm (what its training rows saw). Remembers tm's held-out predictions,
  /// which the targets downstream see in place of oof's.
  void calibrate(TargetModel& tm, const Matrix& base, const std::map<std::string, std::vector<float>>& oof,
                 const Dataset& d, const TrainOptions& o);

  /// How many hold-outs there are.
  std::size_t hold_outs() const { return holds_.size(); }

 private:
  using HoldOut = std::vector<char>;  // 1: the row is held out and predicted
  std::vector<HoldOut> holds_;
  std::vector<std::size_t> dimension_;  // per hold-out: 0 resolution, 1 batch, 2 width, 3 depth
  // Per hold-out and held-out row: its distance past the rest's envelope, and whether the rest
  // trained its architecture (0 for rows not held out).
  std::vector<std::vector<double>> distance_;
  std::vector<std::vector<char>> seen_;
  // Per hold-out, per calibrated target: its held-out rows' predictions (log y or y), else 0.
  std::vector<std::map<std::string, std::vector<float>>> held_;
};

}  // namespace carb
