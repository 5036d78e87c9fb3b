// Tests of the named configuration spaces (sizes, ranges, caps, validity) and of
// deterministic sharding.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "carb/config.hpp"
#include "carb/error.hpp"
#include "carb/network_spec.hpp"
#include "carb/space.hpp"

namespace carb {
namespace {

void expect_valid_and_unique(const std::vector<Config>& cs, const std::string& what) {
  std::set<std::string> keys;
  for (const auto& c : cs) {
    EXPECT_NO_THROW(validate(c)) << what << ": " << config_key(c);
    EXPECT_TRUE(keys.insert(config_key(c)).second) << what << ": duplicate " << config_key(c);
  }
}

TEST(Presets, ListsTheDocumentedPresetsInOrder) {
  std::vector<std::string> names;
  for (const auto& p : presets()) {
    names.push_back(p.name);
    EXPECT_FALSE(p.description.empty()) << p.name;
    EXPECT_EQ(&find_preset(p.name), &p);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"paper", "screen", "cpu", "deploy", "tiny"}));
}

TEST(Presets, ScreenHasExactly3072ValidUniqueConfigurations) {
  const auto cs = enumerate_preset("screen");
  EXPECT_EQ(cs.size(), 3072u);
  expect_valid_and_unique(cs, "screen");
}

TEST(Presets, TinyHasEightConfigurations) {
  const auto cs = enumerate_preset("tiny");
  EXPECT_EQ(cs.size(), 8u);
  expect_valid_and_unique(cs, "tiny");
}

// The order is a contract: shards (`--shard k/N`) and stores' planned lists depend on it. Grids in
// turn, then depth, width, resolution, batch and precision nested in that order, the last fastest.
// (This test once compared enumerate(p) with itself, which could not fail: a test audit.)
TEST(Presets, EnumerationFollowsTheGridsInTheirNestedOrder) {
  const Preset p{"t", "", {{Family::basic, {10, 18}, {0.5}, {32, 64}, {1, 4}, {Precision::fp32, Precision::bf16}},
                          {Family::bottleneck, {50}, {0.25}, {32}, {2}, {Precision::fp32}}}};
  const auto b = Family::basic;
  const auto f32 = Precision::fp32, b16 = Precision::bf16;
  const std::vector<Config> want = {
      {b, 10, 0.5, 32, 1, f32}, {b, 10, 0.5, 32, 1, b16}, {b, 10, 0.5, 32, 4, f32}, {b, 10, 0.5, 32, 4, b16},
      {b, 10, 0.5, 64, 1, f32}, {b, 10, 0.5, 64, 1, b16}, {b, 10, 0.5, 64, 4, f32}, {b, 10, 0.5, 64, 4, b16},
      {b, 18, 0.5, 32, 1, f32}, {b, 18, 0.5, 32, 1, b16}, {b, 18, 0.5, 32, 4, f32}, {b, 18, 0.5, 32, 4, b16},
      {b, 18, 0.5, 64, 1, f32}, {b, 18, 0.5, 64, 1, b16}, {b, 18, 0.5, 64, 4, f32}, {b, 18, 0.5, 64, 4, b16},
      {Family::bottleneck, 50, 0.25, 32, 2, f32}};
  EXPECT_EQ(enumerate(p), want);
  // The tiny preset as its description states it, in that order.
  EXPECT_EQ(enumerate_preset("tiny"),
            (std::vector<Config>{{b, 10, 0.25, 32, 1, f32}, {b, 10, 0.25, 32, 1, b16}, {b, 10, 0.25, 32, 2, f32},
                                 {b, 10, 0.25, 32, 2, b16}, {b, 10, 0.25, 32, 4, f32}, {b, 10, 0.25, 32, 4, b16},
                                 {b, 10, 0.25, 32, 8, f32}, {b, 10, 0.25, 32, 8, b16}}));
}

TEST(Presets, CpuHasOnlyCpuPrecisionsAndRespectsItsCap) {
  const Preset& p = find_preset("cpu");
  ASSERT_GT(p.max_gmacs, 0);
  const auto cs = enumerate(p);
  ASSERT_FALSE(cs.empty());
  expect_valid_and_unique(cs, "cpu");
  std::set<Precision> precisions;
  for (const auto& c : cs) {
    precisions.insert(c.precision);
    EXPECT_LE(static_cast<double>(build_network_spec(c).macs), p.max_gmacs * 1e9) << config_key(c);
  }
  EXPECT_EQ(precisions, (std::set<Precision>{Precision::fp32, Precision::bf16}));
  // The cap must bite: the same grids without it are larger.
  Preset uncapped = p;
  uncapped.max_gmacs = 0;
  const auto all = enumerate(uncapped);
  EXPECT_LT(cs.size(), all.size());
  for (const auto& c : all) {
    if (std::find(cs.begin(), cs.end(), c) != cs.end()) continue;
    EXPECT_GT(static_cast<double>(build_network_spec(c).macs), p.max_gmacs * 1e9) << config_key(c);
  }
}

TEST(Presets, PaperCoversThePapersRanges) {
  const auto cs = enumerate_preset("paper");
  ASSERT_FALSE(cs.empty());
  expect_valid_and_unique(cs, "paper");
  struct Range {
    int depth_lo = 1 << 30, depth_hi = 0;
  };
  Range basic, bottleneck;
  double wlo = 1e9, whi = 0;
  int rlo = 1 << 30, rhi = 0, blo = 1 << 30, bhi = 0;
  std::set<Precision> precisions;
  for (const auto& c : cs) {
    Range& r = c.family == Family::basic ? basic : bottleneck;
    r.depth_lo = std::min(r.depth_lo, c.depth), r.depth_hi = std::max(r.depth_hi, c.depth);
    wlo = std::min(wlo, c.width), whi = std::max(whi, c.width);
    rlo = std::min(rlo, c.resolution), rhi = std::max(rhi, c.resolution);
    blo = std::min(blo, c.batch), bhi = std::max(bhi, c.batch);
    precisions.insert(c.precision);
  }
  // Paper: basic depths 8-152, bottleneck 50-200, widths 0.1-4.0, resolutions 32-128,
  // batches 1-256, FP32 and FP16.
  EXPECT_EQ(basic.depth_lo, 8);
  EXPECT_EQ(basic.depth_hi, 152);
  EXPECT_EQ(bottleneck.depth_lo, 50);
  EXPECT_EQ(bottleneck.depth_hi, 200);
  EXPECT_DOUBLE_EQ(wlo, 0.1);
  EXPECT_DOUBLE_EQ(whi, 4.0);
  EXPECT_EQ(rlo, 32);
  EXPECT_EQ(rhi, 128);
  EXPECT_EQ(blo, 1);
  EXPECT_EQ(bhi, 256);
  EXPECT_EQ(precisions, (std::set<Precision>{Precision::fp32, Precision::fp16}));
}

// The deployed shapes of issue 14: torchvision depths at 160-256 pixels, every precision.
TEST(Presets, DeployCoversWhatPeopleDeploy) {
  const auto cs = enumerate_preset("deploy");
  EXPECT_EQ(cs.size(), 2700u);
  expect_valid_and_unique(cs, "deploy");
  std::set<int> res, depths_basic, depths_bottleneck;
  std::set<Precision> precisions;
  for (const Config& c : cs) {
    res.insert(c.resolution);
    precisions.insert(c.precision);
    (c.family == Family::basic ? depths_basic : depths_bottleneck).insert(c.depth);
  }
  EXPECT_EQ(res, (std::set<int>{160, 192, 224, 256}));
  EXPECT_EQ(depths_basic, (std::set<int>{18, 34}));
  EXPECT_EQ(depths_bottleneck, (std::set<int>{50, 101, 152}));
  EXPECT_EQ(precisions.size(), 3u);
}

TEST(Presets, UnknownPresetListsKnownOnes) {
  try {
    find_preset("nope");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'nope'"), std::string::npos) << msg;
    for (const char* known : {"paper", "screen", "cpu", "deploy", "tiny"})
      EXPECT_NE(msg.find(known), std::string::npos) << msg;
  }
  EXPECT_THROW(enumerate_preset(""), InputError);
  EXPECT_THROW(enumerate_preset("Screen"), InputError);
}

TEST(Presets, ShardsPartitionExactly) {
  const auto all = enumerate_preset("screen");
  for (int n : {1, 2, 3, 7, 64, 5000}) {
    std::vector<std::string> seen;
    for (int k = 1; k <= n; ++k) {
      const auto part = shard(all, std::to_string(k) + "/" + std::to_string(n));
      EXPECT_EQ(part, shard(all, std::to_string(k) + "/" + std::to_string(n))) << "deterministic";
      const std::size_t expected =
          all.size() / n + (static_cast<std::size_t>(k - 1) < all.size() % n ? 1 : 0);
      EXPECT_EQ(part.size(), expected) << k << "/" << n;
      for (const auto& c : part) seen.push_back(config_key(c));
    }
    std::vector<std::string> want;
    for (const auto& c : all) want.push_back(config_key(c));
    std::sort(seen.begin(), seen.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(seen, want) << "union of " << n << " shards must be the space, each config once";
  }
}

TEST(Presets, BadShardSpecsAreInputErrors) {
  const auto all = enumerate_preset("tiny");
  for (const char* bad :
       {"0/3", "4/3", "a/b", "1/0", "1/2x", "", "1", "1/", "/3", "-1/3", "1/-3", "1/3/5", "2/3.5", "1:3"}) {
    try {
      shard(all, bad);
      ADD_FAILURE() << "'" << bad << "' should be rejected";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + std::string(bad) + "'"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace carb
