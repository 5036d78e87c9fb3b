// Tests of the analytic estimate: the NNLS solver, a fit that recovers a cost that is exactly a
// function of the analytic counts, and the bundle form. Costs here are formulas (test data only).
#include "carb/analytic_estimate.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "carb/error.hpp"
#include "carb/network_spec.hpp"

namespace carb {
namespace {

TEST(Nnls, RecoversNonNegativeCoefficientsAndClampsNegativeOnes) {
  std::vector<std::vector<double>> rows;
  std::vector<double> b;
  for (int i = 1; i <= 20; ++i) {
    const double x = i, z = std::sin(i);
    rows.push_back({x, z, 1.0});
    b.push_back(2.0 * x + 0.5);  // z has no part in it
  }
  const auto x = nnls(rows, b);
  EXPECT_NEAR(x[0], 2.0, 1e-6);
  EXPECT_NEAR(x[1], 0.0, 1e-6);
  EXPECT_NEAR(x[2], 0.5, 1e-5);
  // The unconstrained optimum of b = -x has a negative slope: NNLS holds it at 0.
  std::vector<double> neg;
  for (int i = 1; i <= 20; ++i) neg.push_back(-static_cast<double>(i) + 30);
  const auto y = nnls(rows, neg);
  EXPECT_GE(y[0], 0.0);
  EXPECT_GE(y[1], 0.0);
}

std::vector<Config> grid() {
  std::vector<Config> cs;
  for (int d : {10, 18, 34})
    for (double w : {0.25, 0.5, 1.0})
      for (int r : {32, 64, 128})
        for (int b : {1, 4, 32}) cs.push_back({Family::basic, d, w, r, b, Precision::fp32});
  return cs;
}

TEST(AnalyticEstimate, RecoversACostThatIsAFunctionOfTheCounts) {
  const auto cs = grid();
  std::vector<double> y;
  for (const Config& c : cs) {
    const NetworkSpec s = network_totals(c);
    y.push_back(0.3 + 0.02 * s.flops() / 1e9 + 0.001 * s.activation_bytes_total() / 1e6);
  }
  const AnalyticEstimate e = AnalyticEstimate::fit("latency_ms", cs, y);
  for (std::size_t i = 0; i < cs.size(); ++i) EXPECT_NEAR(e(cs[i]) / y[i], 1.0, 1e-3) << config_key(cs[i]);
  // Past the grid it follows the formula, which is what trees cannot do.
  const Config far{Family::basic, 34, 2.0, 256, 64, Precision::fp32};
  const NetworkSpec s = network_totals(far);
  EXPECT_NEAR(e(far) / (0.3 + 0.02 * s.flops() / 1e9 + 0.001 * s.activation_bytes_total() / 1e6), 1.0, 1e-3);
}

TEST(AnalyticEstimate, BundleFormRoundTripsAndRefusesOtherTerms) {
  const auto cs = grid();
  std::vector<double> y;
  for (const Config& c : cs) y.push_back(1.0 + network_totals(c).param_bytes() / 1e6);
  const AnalyticEstimate e = AnalyticEstimate::fit("peak_memory_mb", cs, y);
  const AnalyticEstimate back = AnalyticEstimate::from_json(e.to_json());
  EXPECT_EQ(back(cs[5]), e(cs[5]));
  auto j = e.to_json();
  j["terms"][0] = "something_else";
  EXPECT_THROW(AnalyticEstimate::from_json(j), ModelError);
  j = e.to_json();
  j["coefficients"][0] = -1.0;
  EXPECT_THROW(AnalyticEstimate::from_json(j), ModelError);
  EXPECT_THROW(AnalyticEstimate::fit("peak_memory_mb", cs, std::vector<double>(cs.size(), -1.0)), InputError);
}

}  // namespace
}  // namespace carb
