// Tests of the monotone rule: which knobs a target's measurements never fell along, and the
// configurations below one along them.
#include "learn/monotone.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace carb {
namespace {

/// Rows of memory that grows with batch and resolution by `grow` per step, over 4 depths x 2
/// precisions x resolutions {32, 64, 96} x batches {1, 2, 4, 8}: 48 batch steps and 32 resolution steps.
Dataset rising(double grow = 1.5) {
  Dataset d;
  for (int depth : {10, 18, 26, 34})
    for (Precision p : {Precision::fp32, Precision::bf16})
      for (int r : {32, 64, 96})
        for (int b : {1, 2, 4, 8}) {
          Record row;
          row.platform = "test";
          row.config = {Family::basic, depth, 0.5, r, b, p};
          row.peak_memory_mb = 10.0 * std::pow(grow, r / 32 + b);
          d.rows.push_back(row);
        }
  return d;
}

Record* find(Dataset& d, int depth, int r, int b) {
  for (auto& row : d.rows)
    if (row.config.depth == depth && row.config.resolution == r && row.config.batch == b &&
        row.config.precision == Precision::fp32)
      return &row;
  return nullptr;
}

TEST(MonotoneKnobs, AKnobIsHeldOnlyWhereNoMeasuredStepFellBeyondTheMetersGrain) {
  const std::vector<std::string> both = {"batch", "resolution"};
  EXPECT_EQ(monotone_knobs(rising(), "peak_memory_mb"), both);
  // One step along resolution falls by 2%: resolution is no longer held, batch still is.
  Dataset fell = rising();
  find(fell, 18, 64, 4)->peak_memory_mb = *find(fell, 18, 32, 4)->peak_memory_mb * 0.98;
  EXPECT_EQ(monotone_knobs(fell, "peak_memory_mb"), std::vector<std::string>{"batch"});
  // A fall within the grain (0.5%) is no fall.
  Dataset grain = rising();
  find(grain, 18, 64, 4)->peak_memory_mb = *find(grain, 18, 32, 4)->peak_memory_mb * 0.995;
  EXPECT_EQ(monotone_knobs(grain, "peak_memory_mb"), both);
  // A target no row has, and too few steps to show anything (one network: 9 batch steps, 8 resolution).
  EXPECT_TRUE(monotone_knobs(rising(), "energy_j").empty());
  Dataset few;
  for (const auto& row : rising().rows)
    if (row.config.depth == 10 && row.config.precision == Precision::fp32) few.rows.push_back(row);
  EXPECT_TRUE(monotone_knobs(few, "peak_memory_mb").empty());
  // Repeats count by their median: one low repeat among three high ones is no fall.
  Dataset repeats = rising();
  Record low = *find(repeats, 18, 64, 4);
  repeats.rows.push_back(low);
  repeats.rows.push_back(low);
  low.peak_memory_mb = 1.0;
  repeats.rows.push_back(low);
  EXPECT_EQ(monotone_knobs(repeats, "peak_memory_mb"), both);
  // Rows that failed (no value) are no steps.
  Dataset failed = rising();
  for (auto& row : failed.rows)
    if (row.config.batch == 8) row.status = Status::oom, row.peak_memory_mb.reset();
  EXPECT_EQ(monotone_knobs(failed, "peak_memory_mb"), both);  // 32 batch steps and 24 resolution steps left
}

TEST(MonotoneKnobs, TheConfigurationsBelowAreTheTrainedLevelsUnderEachHeldKnob) {
  const std::set<int> resolutions = {32, 64, 128}, batches = {1, 2, 4, 8};
  const Config c{Family::basic, 18, 0.5, 96, 4, Precision::fp16};
  const auto keys = [](const std::vector<Config>& cs) {
    std::vector<std::string> k;
    for (const auto& x : cs) k.push_back(config_key(x));
    std::sort(k.begin(), k.end());
    return k;
  };
  const auto both = configs_below(c, {"batch", "resolution"}, resolutions, batches);
  EXPECT_EQ(both.size(), 8u);  // resolutions {96, 32, 64} x batches {4, 1, 2}, c itself excepted
  for (const Config& k : both) {
    EXPECT_LE(k.resolution, c.resolution);
    EXPECT_LE(k.batch, c.batch);
    EXPECT_EQ(architecture_key(k), architecture_key(c));
    EXPECT_NE(config_key(k), config_key(c));
  }
  Config b1 = c, b2 = c;
  b1.batch = 1, b2.batch = 2;
  EXPECT_EQ(keys(configs_below(c, {"batch"}, resolutions, batches)), keys({b1, b2}));
  EXPECT_TRUE(configs_below(c, {}, resolutions, batches).empty());
  // At the smallest levels nothing lies below.
  const Config least{Family::basic, 18, 0.5, 32, 1, Precision::fp16};
  EXPECT_TRUE(configs_below(least, {"batch", "resolution"}, resolutions, batches).empty());
}

TEST(MonotoneKnobs, OnlyWhatTrainingWritesIsValid) {
  EXPECT_TRUE(valid_monotone_knobs({"batch", "resolution"}));
  EXPECT_TRUE(valid_monotone_knobs({"resolution"}));
  EXPECT_FALSE(valid_monotone_knobs({"resolution", "batch"}));
  EXPECT_FALSE(valid_monotone_knobs({"batch", "batch"}));
  EXPECT_FALSE(valid_monotone_knobs({"depth"}));
}

}  // namespace
}  // namespace carb
