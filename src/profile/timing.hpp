// Timing statistics shared by the profiler backends: adaptive stopping on the
// confidence interval of the mean, and the summary stored with each row.
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "carb/profiler.hpp"

namespace carb {

struct TimingStats {
  double mean_ms = 0, median_ms = 0, std_ms = 0, rel_ci95 = 0, timed_s = 0;
  int passes = 0;
};

/// Summary of per-pass times in milliseconds.
TimingStats summarize(const std::vector<double>& ms);

/// Runs `pass` (which returns its own duration in ms) under the protocol's stopping rule:
/// at least min_passes, at most max_passes, stopping early once the 95% CI is within
/// target_rel_ci of the mean or max_timed_s has elapsed.
TimingStats timed_passes(const Protocol& p, const std::function<double()>& pass);


/// Adds the timing fields to a measurement's extra columns.
void record_timing(const TimingStats& t, std::map<std::string, std::string>& extra);

/// The 1-minute load average, or -1 when unreadable.
double load_average();

}  // namespace carb
