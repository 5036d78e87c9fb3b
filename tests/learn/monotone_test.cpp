// Tests of the monotone rule: which knobs a target's measurements never fell along, and the
// configurations below one along them.
#include "learn/monotone.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "carb/error.hpp"

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

// The hold itself: asked configurations raised to their network's smaller ones' answers, those
// asked by their own answers, the others by one call to the answerer.
TEST(MonotoneKnobs, TheHoldTakesTheLargestAnswerBelowAndAsksOnlyForTheUnasked) {
  const std::set<int> resolutions = {32, 64}, batches = {1, 2};
  const auto at = [](int r, int b) { return Config{Family::basic, 18, 0.5, r, b, Precision::fp32}; };
  // Memory falling along resolution at batch 2: (32, 2) answers 9, (64, 2) answers 5.
  std::vector<Config> asked = {at(32, 1), at(32, 2), at(64, 1), at(64, 2)};
  std::map<std::string, std::vector<double>> values = {{"peak_memory_mb", {4, 9, 3, 5}}, {"latency_ms", {1, 1, 1, 1}}};
  int calls = 0;
  const Answerer none = [&](const std::vector<Config>&, const std::vector<Telemetry>&) {
    ++calls;
    return std::map<std::string, std::vector<double>>{};
  };
  hold_monotone(asked, {}, false, {{"peak_memory_mb", {"batch", "resolution"}}}, resolutions, batches, values, none);
  EXPECT_EQ(values.at("peak_memory_mb"), (std::vector<double>{4, 9, 4, 9}));
  EXPECT_EQ(values.at("latency_ms"), (std::vector<double>{1, 1, 1, 1}));  // not held
  EXPECT_EQ(calls, 0);  // every smaller one was asked
  // Asked alone, (64, 2)'s smaller ones are answered in one call, and it is held at the largest.
  std::vector<Config> seen;
  const Answerer answer = [&](const std::vector<Config>& cs, const std::vector<Telemetry>&) {
    seen = cs;
    std::vector<double> v;
    for (const Config& c : cs) v.push_back(c.resolution == 32 && c.batch == 2 ? 9.0 : 1.0);
    return std::map<std::string, std::vector<double>>{{"peak_memory_mb", v}};
  };
  std::map<std::string, std::vector<double>> alone = {{"peak_memory_mb", {5}}};
  hold_monotone({at(64, 2)}, {}, false, {{"peak_memory_mb", {"batch", "resolution"}}}, resolutions, batches, alone, answer);
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(alone.at("peak_memory_mb"), std::vector<double>{9});
  // An answerer that leaves a held target out is an internal error, never a read past the end.
  std::map<std::string, std::vector<double>> again = {{"peak_memory_mb", {5}}};
  EXPECT_THROW(hold_monotone({at(64, 2)}, {}, false, {{"peak_memory_mb", {"batch"}}}, resolutions, batches, again, none),
               ModelError);
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
