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

// Hundred-and-sixth hostile pass: under a confidence a budget on the upper edge passed batch 16 of a
// network and failed batches 4 and 8, predicted (and measured) to cost less.
TEST(UpperEdgeFlips, APairOnEitherSideOfABudgetTheWrongWayRoundIsFoundPerNetwork) {
  const auto at = [](int depth, int batch, double v, double hi) {
    Prediction x;
    x.config = Config{Family::bottleneck, depth, 1.0, 128, batch, Precision::fp16};
    x.value["latency_ms"] = v;
    x.interval["latency_ms"] = {v / 2, hi};
    return x;
  };
  const std::vector<Prediction> preds{at(101, 4, 5.348, 6.785), at(50, 8, 3.0, 3.5), at(101, 8, 5.476, 6.947),
                                      at(101, 16, 5.709, 6.511), at(50, 16, 3.2, 3.4)};
  const auto f = upper_edge_flip_pairs(preds, {{"latency_ms", 6.6}});
  ASSERT_EQ(f.size(), 1u);  // bottleneck-50's both pass
  EXPECT_EQ(f[0].target, "latency_ms");
  EXPECT_EQ(f[0].smaller, 2u);  // the widest of b4 and b8 against b16
  EXPECT_EQ(f[0].larger, 3u);
  EXPECT_DOUBLE_EQ(f[0].ratio, 6.947 / 6.511);
  EXPECT_EQ(upper_edge_flip_pairs(preds, {{"latency_ms", 3.45}}).size(), 1u);  // now bottleneck-50's
  EXPECT_EQ(upper_edge_flip_pairs(preds, {{"latency_ms", 3.45}})[0].smaller, 1u);
  // A budget on another target is its own; one the predictions lack is nobody's pair.
  EXPECT_TRUE(upper_edge_flip_pairs(preds, {{"energy_j", 1.0}}).empty());
  // An unbounded smaller interval is the unbounded note's, not this one's.
  auto unbounded = preds;
  unbounded[2].interval["latency_ms"].second = std::numeric_limits<double>::infinity();
  EXPECT_EQ(upper_edge_flip_pairs(unbounded, {{"latency_ms", 6.6}})[0].smaller, 0u);  // b4 remains
}

TEST(UpperEdgeFlips, AScreenSaysThemInItsNotesAndItsJson) {
  ScreenResult r;
  r.confidence = 0.8;
  Prediction a, c;
  a.config = Config{Family::bottleneck, 101, 1.0, 128, 8, Precision::fp16};
  c.config = Config{Family::bottleneck, 101, 1.0, 128, 16, Precision::fp16};
  a.value["latency_ms"] = 5.476, a.interval["latency_ms"] = {4.0, 6.947};
  c.value["latency_ms"] = 5.709, c.interval["latency_ms"] = {5.0, 6.511};
  r.upper_edge_falls_with_batch.push_back({"latency_ms", 6.6, 3, a, c});
  const auto j = r.to_json();
  ASSERT_EQ(j["upper_edge_falls_with_batch"].size(), 1u);
  EXPECT_EQ(j["upper_edge_falls_with_batch"][0]["networks"], 3);
  EXPECT_EQ(j["upper_edge_falls_with_batch"][0]["widest"]["smaller"]["batch"], 8);
  EXPECT_DOUBLE_EQ(j["upper_edge_falls_with_batch"][0]["widest"]["larger"]["upper"].get<double>(), 6.511);
  bool said = false;
  for (const auto& n : screen_notes(r))
    said = said || (n.caution && n.text.find("passes a larger batch and not a smaller one predicted to cost no more in 3 "
                                             "networks") != std::string::npos &&
                    n.text.find("bottleneck-101-w1-r128-b16-fp16 (5.709 ms, upper edge 6.511 ms) passes") != std::string::npos);
  EXPECT_TRUE(said);
  // Without a confidence there are no upper edges, and the key is absent.
  r.confidence.reset();
  r.upper_edge_falls_with_batch.clear();
  EXPECT_FALSE(r.to_json().contains("upper_edge_falls_with_batch"));
}

}  // namespace
}  // namespace carb
