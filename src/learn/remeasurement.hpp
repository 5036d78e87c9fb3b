// How far a new measurement of a configuration lands from the training campaign's: calibrated from
// an independent re-measurement of some of the data's configurations (`carb train --remeasured`),
// and added to each interval, so that it holds what a user measures again, not only a held-out row
// of the campaign. On the shipped CPU data the 90% latency intervals held 44% of an independent run
// of 490 configurations; the campaign's own held-out rows, 98%.
#pragma once
#include <map>
#include <string>
#include <utility>

#include "carb/dataset.hpp"

namespace carb {

struct TargetModel;

/// The fewest configurations measured in both runs that calibrate the spread.
inline constexpr std::size_t kMinRemeasuredPairs = 20;

/// One target's spread: per coverage level ("0.8" ... "0.99"), the finite-sample quantile of
/// |log(again / campaign)| over the configurations measured ok with a positive value in both;
/// infinite at a level too high for the pairs. InputError with fewer than kMinRemeasuredPairs.
struct RemeasuredSpread {
  std::size_t pairs = 0;
  std::map<std::string, double> spread;
};
RemeasuredSpread remeasured_spread(const Dataset& campaign, const Dataset& again, const std::string& target);

/// The largest |median log ratio| of a target that passes without a word (a run 5% slower).
inline constexpr double kRemeasuredShift = 0.05;

/// Warns (carb/warning.hpp) of what a re-measurement that check_remeasurement accepts deserves a
/// word about: another protocol, and a target shifted as a whole (|median log ratio| >
/// kRemeasuredShift), which the spread reads as noise on both sides.
void warn_remeasurement(const Dataset& campaign, const Dataset& again);

/// The interval [lo, hi] around v > 0 with the re-measurement spread q added in log space on each
/// side (sqrt(w^2 + q^2), the two errors independent); unbounded where q is infinite. A lower edge
/// of 0 stays 0.
std::pair<double, double> with_remeasured_spread(double v, std::pair<double, double> iv, double q);

}  // namespace carb
