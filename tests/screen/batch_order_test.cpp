// Tests of batch_inversions, the check recommend and screen share: a smaller batch of a network
// predicted to cost more per batch than a larger one, worst pair per network and target.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "carb/error.hpp"
#include "carb/screen.hpp"

namespace carb {
namespace {

Config net(int depth, int batch, Precision p = Precision::fp32, int resolution = 64) {
  return {Family::basic, depth, 1.0, resolution, batch, p};
}

TEST(BatchOrder, TheWorstPairOfEachNetworkAndTargetIsFound) {
  // Network 18: batch 1 costs 3, batch 2 costs 2, batch 4 costs 4 (batch 1 over batch 2: 1.5x, the
  // worst). Network 34 grows with the batch. The fp16 network 18 is another network.
  const std::vector<Config> c = {net(18, 1), net(18, 2), net(18, 4), net(34, 1), net(34, 2), net(18, 1, Precision::fp16),
                                 net(18, 2, Precision::fp16)};
  const std::map<std::string, std::vector<double>> cols = {{"latency_ms", {3, 2, 4, 1, 2, 2.2, 2}},
                                                           {"peak_memory_mb", {9, 1, 1, 9, 1, 9, 1}}};
  std::size_t networks = 0;
  const auto w = batch_inversions(c, cols, std::vector<bool>(c.size(), true), &networks);
  EXPECT_EQ(networks, 3u);
  ASSERT_EQ(w.size(), 2u);  // memory is no cost that a batch must raise here: not checked
  EXPECT_EQ(w[0].target, "latency_ms");
  EXPECT_EQ(w[0].smaller, 0u);
  EXPECT_EQ(w[0].larger, 1u);
  EXPECT_DOUBLE_EQ(w[0].ratio, 1.5);
  EXPECT_EQ(w[1].smaller, 5u);  // fp16: 2.2 over 2, 1.1x
  EXPECT_EQ(w[1].larger, 6u);
  EXPECT_NEAR(w[1].ratio, 1.1, 1e-12);
}

TEST(BatchOrder, WithinTheToleranceOrOutsideTheRangesNothingIsSaid) {
  const std::vector<Config> c = {net(18, 1), net(18, 2), net(50, 1), net(50, 2)};
  // 1.04x is within kPredictedBatchInversion; network 50's 2x inversion lies outside the ranges.
  const std::map<std::string, std::vector<double>> cols = {{"energy_j", {1.04, 1.0, 2, 1}}};
  std::size_t networks = 0;
  EXPECT_TRUE(batch_inversions(c, cols, {true, true, false, true}, &networks).empty());
  EXPECT_EQ(networks, 1u);  // network 50 has one batch inside
  ASSERT_EQ(batch_inversions(c, cols, {true, true, true, true}).size(), 1u);
}

TEST(BatchOrder, CostsNoConfigurationHasJudgeNothing) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Config> c = {net(18, 1), net(18, 2), net(18, 4)};
  // A larger batch at zero, below zero or NaN is no cost to be dearer than; a NaN smaller is none.
  for (const std::vector<double>& v : {std::vector<double>{5, 0, -1}, std::vector<double>{nan, 1, 1},
                                       std::vector<double>{5, nan, nan}})
    EXPECT_TRUE(batch_inversions(c, {{"energy_j", v}}, {true, true, true}).empty());
}

TEST(BatchOrder, OrderedByTargetThenRatio) {
  const std::vector<Config> c = {net(18, 1), net(18, 2), net(34, 1), net(34, 2)};
  const std::map<std::string, std::vector<double>> cols = {{"latency_ms", {2, 1, 3, 1}}, {"energy_j", {1.2, 1, 1.1, 1}}};
  const auto w = batch_inversions(c, cols, {true, true, true, true});
  ASSERT_EQ(w.size(), 4u);
  EXPECT_EQ(w[0].target, "energy_j");
  EXPECT_EQ(w[0].smaller, 0u);  // 1.2x before 1.1x
  EXPECT_EQ(w[1].smaller, 2u);
  EXPECT_EQ(w[2].target, "latency_ms");
  EXPECT_EQ(w[2].smaller, 2u);  // 3x before 2x
  EXPECT_EQ(w[3].smaller, 0u);
}

TEST(BatchOrder, ColumnsOfAnotherLengthAreRefused) {
  const std::vector<Config> c = {net(18, 1), net(18, 2)};
  EXPECT_THROW(batch_inversions(c, {{"energy_j", {1.0}}}, {true, true}), InputError);
  EXPECT_THROW(batch_inversions(c, {{"energy_j", {2.0, 1.0}}}, {true}), InputError);
  EXPECT_EQ(batch_inversions(c, {{"energy_j", {2.0, 1.0}}}, {true, true}).size(), 1u);
}

}  // namespace
}  // namespace carb
