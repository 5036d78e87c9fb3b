// Timing statistics and the adaptive stopping rule.
#include "timing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>

#include "carb/metrics.hpp"

namespace carb {

TimingStats summarize(const std::vector<double>& ms) {
  TimingStats t;
  t.passes = static_cast<int>(ms.size());
  if (ms.empty()) return t;
  t.timed_s = std::accumulate(ms.begin(), ms.end(), 0.0) / 1e3;
  t.mean_ms = t.timed_s * 1e3 / ms.size();
  t.median_ms = median(ms);
  if (ms.size() > 1) {
    double ss = 0;
    for (double x : ms) ss += (x - t.mean_ms) * (x - t.mean_ms);
    t.std_ms = std::sqrt(ss / (ms.size() - 1));
    t.rel_ci95 = 1.96 * t.std_ms / std::sqrt(static_cast<double>(ms.size())) / t.mean_ms;
  }
  return t;
}

TimingStats timed_passes(const Protocol& p, const std::function<double()>& pass) {
  std::vector<double> ms;
  double elapsed_s = 0;
  const int max_passes = std::max(p.max_passes, p.min_passes);
  while (static_cast<int>(ms.size()) < max_passes) {
    ms.push_back(pass());
    elapsed_s += ms.back() / 1e3;
    if (static_cast<int>(ms.size()) < std::max(p.min_passes, 2)) continue;
    if (p.max_timed_s > 0 && elapsed_s >= p.max_timed_s) break;
    if (p.target_rel_ci > 0 && summarize(ms).rel_ci95 <= p.target_rel_ci) break;
  }
  return summarize(ms);
}

void record_timing(const TimingStats& t, std::map<std::string, std::string>& extra) {
  const auto num = extra_number;
  extra["latency_median_ms"] = num(t.median_ms);
  extra["latency_std_ms"] = num(t.std_ms);
  extra["latency_cv"] = num(t.mean_ms > 0 ? t.std_ms / t.mean_ms : 0);
  extra["latency_rel_ci95"] = num(t.rel_ci95);
  extra["passes"] = std::to_string(t.passes);
  extra["timed_s"] = num(t.timed_s);
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double v = -1;
  in >> v;
  return v;
}

}  // namespace carb
