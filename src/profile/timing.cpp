// Timing statistics and the adaptive stopping rule.
#include "timing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>

#include "carb/metrics.hpp"

namespace carb {

namespace {
// The 97.5% quantile of Student's t with `df` degrees of freedom: the half-width of a 95% interval
// of a mean of df + 1 passes, in standard errors. z = 1.96 made it about 13% too narrow at 10 passes
// (twentieth hostile pass), and --target-ci stopped on it. Tabled to 6 digits up to 30; beyond, the
// Cornish-Fisher expansion in 1/df (within 1e-4 there).
double t975(int df) {
  static constexpr double kTable[] = {12.7062, 4.30265, 3.18245, 2.77645, 2.57058, 2.44691, 2.36462, 2.30600,
                                      2.26216, 2.22814, 2.20099, 2.17881, 2.16037, 2.14479, 2.13145, 2.11991,
                                      2.10982, 2.10092, 2.09302, 2.08596, 2.07961, 2.07387, 2.06866, 2.06390,
                                      2.05954, 2.05553, 2.05183, 2.04841, 2.04523, 2.04227};
  if (df >= 1 && df <= 30) return kTable[df - 1];
  const double z = 1.959963984540054, v = df, z2 = z * z;
  return z + (z2 + 1) * z / (4 * v) + ((5 * z2 + 16) * z2 + 3) * z / (96 * v * v) +
         (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / (384 * v * v * v);
}
}  // namespace

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
    t.rel_ci95 = t975(static_cast<int>(ms.size()) - 1) * t.std_ms / std::sqrt(static_cast<double>(ms.size())) / t.mean_ms;
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
  // One pass has no spread: the cells stay empty, not 0, which read as an exact measurement
  // (twenty-third hostile pass: --max-passes 1 rows had latency_rel_ci95 0).
  if (t.passes >= 2) {
    extra["latency_std_ms"] = num(t.std_ms);
    extra["latency_cv"] = num(t.mean_ms > 0 ? t.std_ms / t.mean_ms : 0);
    extra["latency_rel_ci95"] = num(t.rel_ci95);
  }
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
