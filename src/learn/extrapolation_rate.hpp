// How fast a target's error grows past the trained ranges, calibrated on the training data.
//
// Past the trained ranges an interval is widened by the distance past the data (the largest
// |log(value / nearest trained bound)|, carb/envelope.hpp). The rule was one unit of log error per
// unit of distance for every target: right for trees that answer a constant past their data, but
// the ratio form carries the trend in its analytic estimate, and 430 CPU rows measured at the
// `deploy` preset's resolutions 160-256 (data/cpu-2t-deploy.csv) had memory within 5.3% at p90
// inside 90% intervals ×2.0 wide. Here each target's rate is measured instead: the rows at the
// largest trained value of a dimension (resolution, batch, width, each family's depth), then those
// at the smallest, are held out in turn; a quick forest in the target's form (its estimate refitted
// without them) predicts them from the rest; each held-out row's excess error over the in-grid
// width, per unit of its distance past the rest, is one draw; the rate at a level is the
// finite-sample quantile of the draws.
#pragma once
#include <map>
#include <string>

#include "carb/dataset.hpp"
#include "carb/matrix.hpp"
#include "carb/model.hpp"
#include "target_model.hpp"

namespace carb {

/// The fewest draws a level's rate needs beyond the finite-sample rule; with fewer the rate stays
/// the earlier rule's 1.
inline constexpr int kMinExtrapolationDraws = 20;

/// Rate per coverage level ("0.8" ... "0.99") for tm (trained, its form chosen, its in-grid widths
/// set): log error per unit of distance past the trained ranges, beyond the in-grid width. X: the
/// features the target's learners see (base and upstream predictions), one row per row of d. A
/// level whose quantile cannot be bounded (too few draws) gets 1. Empty when no hold-out is
/// possible (every dimension has one value).
std::map<std::string, double> calibrate_extrapolation_rate(const TargetModel& tm, const Matrix& X, const Dataset& d,
                                                           const TrainOptions& o);

}  // namespace carb
