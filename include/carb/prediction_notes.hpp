// What a set of predictions deserves a word about: costs no configuration has, intervals with no
// upper bound (and why), networks the model never measured. `carb predict` prints these as notes
// and Python's Model.predict warns with the same words, from one count (they were counted twice,
// in C++ and in Python, and had drifted: Python left the unbounded intervals outside the trained
// ranges unsaid).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "carb/model.hpp"

namespace carb {

struct PredictionNotes {
  std::size_t total = 0;
  /// Some target at or below zero, or not a number: no cost a configuration has (read as unknown).
  std::size_t nonpositive = 0;
  /// Of the rest, with an interval that has no upper bound: outside the trained ranges; inside them
  /// for lack of training rows per batch regime; inside them, of a network never trained, for lack
  /// of calibrating networks (when the model calibrates new networks at all).
  std::size_t unbounded_outside = 0, unbounded_inside = 0, unbounded_new = 0;
  /// Inside the trained ranges, not nonpositive, of a network (family, depth, width, precision) the
  /// model never trained on.
  std::size_t new_networks = 0;
  /// Of those with positive costs, the ones whose peak memory is predicted above the device's memory
  /// (DeviceLimits::memory_mb): they would not run there.
  std::size_t over_memory = 0;
  /// Of the rest, under a confidence: those whose peak memory interval reaches above the device's
  /// memory (as recommend and screen judge a budget on the upper bound): they may not fit.
  std::size_t may_exceed_memory = 0;
  /// Of those with positive costs, the ones whose energy per batch over latency per batch is above
  /// kPredictedPowerOverLimit times the device's power limit (DeviceLimits::power_limit_w), and the
  /// most power any implies.
  std::size_t over_power = 0;
  double most_power_w = 0;
  /// Where the model knows no power limit: those implying more than kMaxAveragePowerW, the most any
  /// measured row may (no single device draws it), and the most power any implies (most_power_w).
  std::size_t over_any_device_power = 0;
};

/// Counts what `p`, predicted by `m`, deserves a word about.
PredictionNotes count_prediction_notes(const std::vector<Prediction>& p, const CarbModel& m);

struct PredictionNote {
  std::string text;  // one line, without a "note: " prefix
  /// True where an answer deserves doubt (an unknown cost, an unbounded or possibly too narrow
  /// interval); false for what is only worth knowing (new networks' intervals, calibrated for them).
  bool caution = true;
};

/// The notes' lines. `level`: the confidence the intervals were asked at (nullopt: none, and only
/// the nonpositive note can apply). `confidence_name`: how the caller's user sets the level
/// ("--confidence" for the CLI, "confidence" for Python).
std::vector<PredictionNote> prediction_note_lines(const PredictionNotes& n, const CarbModel& m,
                                                  std::optional<double> level, const std::string& confidence_name);

}  // namespace carb
