// Tests of the timing summary and the adaptive stopping rule.
#include "profile/timing.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace carb {
namespace {

double sd(const std::vector<double>& x) {
  double m = 0, ss = 0;
  for (double v : x) m += v;
  m /= x.size();
  for (double v : x) ss += (v - m) * (v - m);
  return std::sqrt(ss / (x.size() - 1));
}

// Twentieth hostile pass: the interval used z = 1.96 whatever the number of passes, about 13% too
// narrow at 10 passes. It is Student's t with passes - 1 degrees of freedom.
TEST(Timing, TheIntervalIsStudentsTForTheNumberOfPasses) {
  const std::vector<double> ten = {10, 11, 9, 10.5, 9.5, 10.2, 9.8, 10.1, 9.9, 10};
  const auto t = summarize(ten);
  EXPECT_NEAR(t.rel_ci95, 2.26216 * sd(ten) / std::sqrt(10.0) / t.mean_ms, 1e-12);
  const std::vector<double> two = {10, 12};
  EXPECT_NEAR(summarize(two).rel_ci95, 12.7062 * sd(two) / std::sqrt(2.0) / 11.0, 1e-12);
  // Beyond the table: t with 99 degrees of freedom is 1.9842 (R's qt(0.975, 99)), 40: 2.0211.
  for (const auto& [n, q] : {std::pair{100, 1.98422}, std::pair{41, 2.02108}}) {
    std::vector<double> x;
    for (int k = 0; k < n; ++k) x.push_back(10 + (k % 3));
    EXPECT_NEAR(summarize(x).rel_ci95 / (sd(x) / std::sqrt(double(n)) / summarize(x).mean_ms), q, 2e-4) << n;
  }
}

// The stopping rule stops on that interval, at the first number of passes whose t interval is within
// the target (under z = 1.96 it stopped at 5 passes here, where t needs 8).
TEST(Timing, TargetCiStopsOnlyOnceTheTIntervalIsWithinIt) {
  Protocol p;
  p.min_passes = 2;
  p.max_passes = 1000;
  p.target_rel_ci = 0.1;
  int k = 0;
  const auto t = timed_passes(p, [&] { return (k++ % 2) ? 11.0 : 9.0; });
  EXPECT_EQ(t.passes, 8);
  EXPECT_LE(t.rel_ci95, 0.1);
  // One pass fewer was not enough under t.
  std::vector<double> fewer;
  for (int i = 0; i < t.passes - 1; ++i) fewer.push_back(i % 2 ? 11.0 : 9.0);
  EXPECT_GT(summarize(fewer).rel_ci95, 0.1);
}

// Twenty-third hostile pass: a one-pass row recorded latency_std_ms, latency_cv and latency_rel_ci95
// as 0, an exact measurement. One pass has no spread: the cells stay empty.
TEST(Timing, OnePassRecordsNoSpread) {
  std::map<std::string, std::string> extra;
  record_timing(summarize({7.5}), extra);
  EXPECT_EQ(extra.at("passes"), "1");
  EXPECT_EQ(extra.at("latency_median_ms"), "7.5");
  for (const char* col : {"latency_std_ms", "latency_cv", "latency_rel_ci95"}) EXPECT_EQ(extra.count(col), 0u) << col;
  record_timing(summarize({7.5, 8.5}), extra);
  for (const char* col : {"latency_std_ms", "latency_cv", "latency_rel_ci95"}) EXPECT_EQ(extra.count(col), 1u) << col;
}

}  // namespace
}  // namespace carb
