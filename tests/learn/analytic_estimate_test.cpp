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

// Memory is fitted on what inference holds at its peak: a cost made of the weights and the live
// activations is recovered exactly, in the grid and past it (bottleneck, wider, larger inputs).
TEST(AnalyticEstimate, MemoryFollowsThePeakOfLiveActivations) {
  const auto cs = grid();
  auto cost = [](const Config& c) {
    const NetworkSpec s = network_totals(c);
    return 20.0 + 1.0 * s.param_bytes() / 1e6 + 1.1 * s.activation_bytes_peak() / 1e6;
  };
  std::vector<double> y;
  for (const Config& c : cs) y.push_back(cost(c));
  const AnalyticEstimate e = AnalyticEstimate::fit("peak_memory_mb", cs, y);
  const auto& t = e.terms();
  EXPECT_NE(std::find(t.begin(), t.end(), "peak_activation_mb"), t.end());
  for (const Config& far : {Config{Family::bottleneck, 101, 2.0, 224, 128, Precision::fp32},
                            Config{Family::basic, 34, 2.0, 256, 64, Precision::fp32}})
    EXPECT_NEAR(e(far) / cost(far), 1.0, 1e-3) << config_key(far);
}

// A bundle trained before the peak term (largest and total activations) still loads and predicts
// with its own terms; a term no carb ever computed, or a precision that does not exist, is refused.
TEST(AnalyticEstimate, ABundleWithTheEarlierMemoryTermsStillPredicts) {
  const std::vector<std::string> earlier = {
      "params_mb", "params_mb*fp32", "params_mb*fp16", "params_mb*bf16", "input_mb", "input_mb*fp32", "input_mb*fp16",
      "input_mb*bf16", "max_activation_mb", "max_activation_mb*fp32", "max_activation_mb*fp16",
      "max_activation_mb*bf16", "activation_mb", "activation_mb*fp32", "activation_mb*fp16", "activation_mb*bf16",
      "constant"};
  std::vector<double> coef(earlier.size(), 0.0);
  coef[0] = 1.0, coef[9] = 2.0, coef[16] = 5.0;  // weights + 2 x largest output (fp32 only) + 5 MB
  nlohmann::json j = {{"target", "peak_memory_mb"}, {"terms", earlier}, {"coefficients", coef}, {"floor", 1e-3}};
  const AnalyticEstimate e = AnalyticEstimate::from_json(j);
  const Config c32{Family::bottleneck, 50, 1.0, 128, 8, Precision::fp32}, c16{Family::bottleneck, 50, 1.0, 128, 8, Precision::fp16};
  const NetworkSpec s32 = network_totals(c32), s16 = network_totals(c16);
  EXPECT_DOUBLE_EQ(e(c32), s32.param_bytes() / 1e6 + 2.0 * s32.activation_bytes_max() / 1e6 + 5.0);
  EXPECT_DOUBLE_EQ(e(c16), s16.param_bytes() / 1e6 + 5.0);
  EXPECT_EQ(AnalyticEstimate::from_json(e.to_json())(c32), e(c32));
  const nlohmann::json good = j;
  j["terms"][9] = "max_activation_mb*fp8";
  EXPECT_THROW(AnalyticEstimate::from_json(j), ModelError);
  j["terms"][9] = "gflops";  // a latency term in a memory estimate
  EXPECT_THROW(AnalyticEstimate::from_json(j), ModelError);
  // A list is one that training wrote, whole: a term repeated, a subset, or the two lists mixed
  // would load and answer what no training wrote.
  auto with = [&](std::vector<std::string> terms) {
    nlohmann::json k = good;
    k["terms"] = terms;
    k["coefficients"] = std::vector<double>(terms.size(), 1.0);
    return k;
  };
  std::vector<std::string> doubled = earlier;
  doubled.insert(doubled.end(), earlier.begin(), earlier.end());
  EXPECT_THROW(AnalyticEstimate::from_json(with(doubled)), ModelError);
  EXPECT_THROW(AnalyticEstimate::from_json(with({"constant"})), ModelError);
  std::vector<std::string> mixed = AnalyticEstimate::term_names("peak_memory_mb");
  mixed.insert(mixed.end() - 1, "max_activation_mb");
  EXPECT_THROW(AnalyticEstimate::from_json(with(mixed)), ModelError);
  EXPECT_THROW(AnalyticEstimate::from_json(with({})), ModelError);
  EXPECT_NO_THROW(AnalyticEstimate::from_json(with(AnalyticEstimate::term_names("peak_memory_mb"))));
}

}  // namespace
}  // namespace carb
