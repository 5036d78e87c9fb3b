// Tests of the trained envelope: the ranges of a training set, the excursions of a configuration
// past them (named, with their distance in log space), and the JSON round trip of the bundle.
#include "carb/envelope.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "carb/error.hpp"

namespace carb {
namespace {

std::vector<Config> trained() {
  std::vector<Config> cs;
  for (int res : {32, 64, 96, 128})
    for (int batch : {1, 8, 64}) cs.push_back({Family::basic, 18, 0.5, res, batch, Precision::fp32});
  return cs;
}

TEST(Envelope, InsideTheTrainedRangesThereIsNoExcursion) {
  const TrainedEnvelope e = TrainedEnvelope::of(trained());
  EXPECT_TRUE(e.outside({Family::basic, 18, 0.5, 96, 8, Precision::fp32}).empty());
  EXPECT_DOUBLE_EQ(e.ranges.at("resolution").lo, 32);
  EXPECT_DOUBLE_EQ(e.ranges.at("resolution").hi, 128);
}

TEST(Envelope, NamesEachDimensionPastTheDataWithItsDistance) {
  const TrainedEnvelope e = TrainedEnvelope::of(trained());
  const auto x = e.outside({Family::basic, 18, 0.5, 224, 8, Precision::fp32});
  ASSERT_FALSE(x.empty());
  EXPECT_EQ(x.front().dimension, "resolution");
  EXPECT_EQ(x.front().text, "resolution 224 > 128 trained");
  EXPECT_NEAR(x.front().log_ratio, std::log(224.0 / 128.0), 1e-12);
  // At batch 8 a 224-pixel input moves fewer FLOPs and bytes than batch 64 at 128 pixels did, so
  // only the resolution is named.
  for (const auto& ex : x) EXPECT_NE(ex.dimension, "gflops") << ex.text;
  const auto big = e.outside({Family::basic, 18, 0.5, 224, 64, Precision::fp32});
  bool flops = false;
  for (const auto& ex : big) flops = flops || ex.dimension == "gflops";
  EXPECT_TRUE(flops);
  EXPECT_NEAR(extrapolation_widening(big), std::log(224.0 * 224.0 / (128.0 * 128.0)), 1e-6);
}

TEST(Envelope, AnUntrainedPrecisionOrFamilyIsUnbounded) {
  const TrainedEnvelope e = TrainedEnvelope::of(trained());
  const auto x = e.outside({Family::basic, 18, 0.5, 64, 8, Precision::bf16});
  ASSERT_FALSE(x.empty());
  EXPECT_EQ(x[0].dimension, "precision");  // first; half-size bytes may fall below the ranges too
  EXPECT_TRUE(std::isinf(extrapolation_widening(x)));
  const auto f = e.outside({Family::bottleneck, 50, 0.5, 64, 8, Precision::fp32});
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].dimension, "family");
}

TEST(Envelope, JsonRoundTripsAndRejectsNonsense) {
  const TrainedEnvelope e = TrainedEnvelope::of(trained());
  const TrainedEnvelope back = TrainedEnvelope::from_json(e.to_json());
  EXPECT_EQ(back.to_json(), e.to_json());
  auto j = e.to_json();
  j["ranges"]["resolution"] = {128, 32};
  EXPECT_THROW(TrainedEnvelope::from_json(j), ModelError);
  EXPECT_TRUE(TrainedEnvelope{}.outside(trained()[0]).empty()) << "an unknown envelope claims nothing";
}

}  // namespace
}  // namespace carb
