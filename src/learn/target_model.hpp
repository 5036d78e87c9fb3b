// One target's fitted pieces inside a CarbModel: the blended learners, the low-batch corrector,
// the conformal widths and what training recorded of them. Private to the library: callers see a
// TargetSummary (carb/model.hpp).
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "carb/analytic_estimate.hpp"
#include "carb/learner.hpp"
#include "carb/model.hpp"
#include "carb/training_record.hpp"

namespace carb {

/// The batch regimes of the conformal widths: the low-batch regime (batch <= the corrector's
/// limit), the rest, and all rows.
enum class BatchRegime { low_batch, high_batch, all };
const char* to_string(BatchRegime r);
/// InputError for a name that is not one of to_string's.
BatchRegime batch_regime_from(const std::string& name);

/// Split-conformal half-widths of the (log) residual, per batch regime and coverage level ("0.8",
/// "0.9", "0.95", "0.99"); infinity where too few rows bound a level.
using ConformalWidths = std::map<BatchRegime, std::map<std::string, double>>;

/// One bin of the predicted value inside a batch regime: the half-widths per coverage level of the
/// rows whose prediction (log y for a log target, y for a raw one) lies below `upto` and at or
/// above the bin before's (the last bin's `upto` is infinite).
struct SizeBin {
  double upto = 0;
  std::map<std::string, double> half;
};
/// TrainOptions::size_bins > 1: the bins of each regime of `conformal`, ascending.
using SizeBinnedWidths = std::map<BatchRegime, std::vector<SizeBin>>;

struct TargetModel {
  std::string target;
  std::vector<std::string> upstream;               // cascade inputs, e.g. {"peak_memory_mb"}
  std::vector<std::unique_ptr<Learner>> learners;  // the specialists
  std::vector<double> weights;                     // blend weights (sum 1)
  std::unique_ptr<Learner> corrector;              // may be null
  /// Split-conformal half-widths of the log-ratio residual, per regime and coverage level
  /// ("0.8", "0.9", "0.95", "0.99").
  ConformalWidths conformal;
  /// The same widths per bin of the predicted value (TrainOptions::size_bins); empty with one bin,
  /// and in bundles before it. A trained architecture's interval takes its bin's width.
  SizeBinnedWidths conformal_by_size;
  /// The same widths for a configuration whose architecture (family, depth, width, precision) the
  /// model never trained on, calibrated on folds that hold whole architectures out (conformal.hpp);
  /// each at least the width above. Empty when the data had too few architectures to calibrate it
  /// (or the bundle predates it): such configurations then get the widths above.
  ConformalWidths conformal_unseen;
  int unseen_networks = 0;  // the networks that calibrated conformal_unseen (conformal.hpp)
  /// Per coverage level, the log error per unit of distance past the trained ranges beyond the
  /// widths above (extrapolation_rate.hpp); empty in bundles before it: 1 at every level.
  std::map<std::string, double> extrapolation_rate;
  /// Per coverage level, the spread of a new measurement around the campaign's, in log space
  /// (remeasurement.hpp), added to every interval; empty unless trained with a re-measurement.
  std::map<std::string, double> remeasured_spread;
  std::size_t remeasured_pairs = 0;  // the configurations measured in both runs that calibrated it
  /// The knobs ("batch", "resolution") along which the training rows of this target never fell
  /// (monotone.hpp): an answer is held at least at its network's answers below it along them.
  /// Empty in bundles before it, and where the measurements fell.
  std::vector<std::string> monotone_in;
  /// peak_memory_mb only: set when every training row peaked at or above its weights, input and
  /// layer outputs alive at once (learn/memory_floor.hpp), so answers and interval edges are held
  /// there, not at the looser floor (the H200 model answered 149,551 MB, fitting the device, for a
  /// network whose outputs alive at once take 158,820). False in bundles before it.
  bool floor_outputs_alive = false;
  OofComponents oof;  // out-of-fold accuracy of each part and the form choice
  /// Set when the learners fit log(y / estimate): the prediction is estimate × learned ratio.
  std::optional<AnalyticEstimate> estimate;

  TargetSummary summary() const;
};

}  // namespace carb
