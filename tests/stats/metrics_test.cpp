// The regression and rank statistics: defined values, and kUndefined (never a 0 that reads as a
// result) where the data cannot define them.
#include "carb/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "carb/text_table.hpp"

namespace carb {
namespace {

TEST(FitMetrics, AGoodFitHasItsUsualValues) {
  const FitMetrics f = fit_metrics({1, 2, 3, 4}, {1, 2, 3, 5});
  EXPECT_NEAR(f.r2, 1 - 1.0 / 5.0, 1e-12);  // ss_res 1, ss_tot 5
  EXPECT_DOUBLE_EQ(f.mae, 0.25);
  EXPECT_DOUBLE_EQ(f.rmse, 0.5);
  EXPECT_DOUBLE_EQ(f.mape, 100.0 * 0.25 / 4);
  EXPECT_EQ(f.n, 4u);
}

TEST(FitMetrics, AConstantTruthOrOneRowHasNoRSquared) {
  const FitMetrics constant = fit_metrics({3, 3, 3}, {3, 4, 2});
  EXPECT_TRUE(std::isnan(constant.r2)) << constant.r2;
  EXPECT_NEAR(constant.mae, 2.0 / 3.0, 1e-12);  // the errors are still defined
  const FitMetrics one = fit_metrics({5}, {5});
  EXPECT_TRUE(std::isnan(one.r2)) << one.r2;
  EXPECT_DOUBLE_EQ(one.mae, 0);
}

TEST(FitMetrics, NoNonZeroTruthHasNoMape) {
  const FitMetrics f = fit_metrics({0, 0}, {1, -1});
  EXPECT_TRUE(std::isnan(f.mape));
  EXPECT_DOUBLE_EQ(f.mae, 1);
}

TEST(FitMetrics, NoRowsDefineNothing) {
  const FitMetrics f = fit_metrics({}, {});
  EXPECT_EQ(f.n, 0u);
  EXPECT_TRUE(std::isnan(f.r2) && std::isnan(f.mae) && std::isnan(f.rmse) && std::isnan(f.mape));
}

TEST(FitMetrics, UndefinedValuesRoundTripThroughJsonAsNull) {
  const FitMetrics f = fit_metrics({3, 3}, {3, 3});
  const nlohmann::json j = nlohmann::json::parse(f.to_json().dump());
  EXPECT_TRUE(j.at("r2").is_null()) << j.dump();
  EXPECT_TRUE(std::isnan(FitMetrics::from_json(j).r2));
}

TEST(Spearman, ARankCorrelationOfAConstantSideIsUndefined) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3}, {10, 20, 30}), 1);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3}, {30, 20, 10}), -1);
  EXPECT_TRUE(std::isnan(spearman({1, 2, 3}, {7, 7, 7})));
  EXPECT_TRUE(std::isnan(spearman({1}, {2})));
}

TEST(FitLine, AConstantYHasNoRSquaredButALine) {
  const LineFit f = fit_line({1, 2, 3}, {4, 4, 4});
  EXPECT_DOUBLE_EQ(f.slope, 0);
  EXPECT_DOUBLE_EQ(f.intercept, 4);
  EXPECT_TRUE(std::isnan(f.r2));
}

TEST(FmtNum, AnUndefinedStatisticPrintsAsUndefined) {
  EXPECT_EQ(fmt_num(kUndefined), "undefined");
  EXPECT_EQ(fmt_num(0.0), "0");
  EXPECT_EQ(fmt_num(0.98765, 3), "0.988");
}

}  // namespace
}  // namespace carb
