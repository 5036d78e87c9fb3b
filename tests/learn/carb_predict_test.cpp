// Tests of CarbModel::predict_chunked: a long list answered a chunk at a time, each chunk handed to
// the caller, with the answers predict gives in one call; stopping, and what it refuses.
#include <gtest/gtest.h>

#include <cmath>

#include "carb/error.hpp"
#include "carb/model.hpp"
#include "screen/screen_test_util.hpp"

namespace carb {
namespace {

bool same(const Prediction& a, const Prediction& b) {
  if (config_key(a.config) != config_key(b.config) || a.value != b.value || a.outside.size() != b.outside.size() ||
      a.trained_architecture != b.trained_architecture || a.interval.size() != b.interval.size())
    return false;
  for (const auto& [t, iv] : a.interval)
    if (b.interval.at(t) != iv) return false;
  return true;
}

TEST(PredictChunked, ChunksAnswerAsOneCallInOrder) {
  const CarbModel& m = testing::synthetic_model_a();
  const auto cs = testing::synthetic_screen_configs();  // 240
  const auto whole = m.predict(cs, {}, 0.9);
  std::vector<Prediction> got;
  std::vector<std::size_t> firsts, sizes;
  const std::size_t n = m.predict_chunked(cs, {}, 0.9, [&](std::vector<Prediction>&& p, std::size_t first) {
    firsts.push_back(first);
    sizes.push_back(p.size());
    got.insert(got.end(), p.begin(), p.end());
    return true;
  }, 7);  // splits networks: a network's batches are held monotone across chunks as in one call
  EXPECT_EQ(n, cs.size());
  ASSERT_EQ(firsts.size(), 35u);  // 34 of 7 and one of 2
  for (std::size_t i = 0; i < firsts.size(); ++i) EXPECT_EQ(firsts[i], 7 * i);
  EXPECT_EQ(sizes.back(), 2u);
  ASSERT_EQ(got.size(), whole.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(same(got[i], whole[i])) << config_key(cs[i]);
}

TEST(PredictChunked, StopsAfterTheChunkThatSaysSo) {
  const CarbModel& m = testing::synthetic_model_a();
  const auto cs = testing::synthetic_screen_configs();
  int calls = 0;
  EXPECT_EQ(m.predict_chunked(cs, {}, std::nullopt, [&](std::vector<Prediction>&&, std::size_t) { return ++calls < 2; }, 70),
            140u);
  EXPECT_EQ(calls, 2);
  // Nothing to answer: no call.
  EXPECT_EQ(m.predict_chunked({}, {}, std::nullopt, [&](std::vector<Prediction>&&, std::size_t) { return ++calls > 0; },
                              kPredictChunk),
            0u);
  EXPECT_EQ(calls, 2);
}

TEST(PredictChunked, RefusesBeforeTheFirstChunk) {
  const CarbModel& m = testing::synthetic_model_a();
  const auto cs = testing::synthetic_screen_configs();
  int calls = 0;
  const auto each = [&](std::vector<Prediction>&&, std::size_t) { return ++calls > 0; };
  EXPECT_THROW(m.predict_chunked(cs, {}, std::nullopt, each, 0), InputError);
  EXPECT_THROW(m.predict_chunked(cs, {}, 0.5, each, 100), InputError);  // a level no bundle calibrates
  EXPECT_THROW(m.predict_chunked(cs, std::vector<Telemetry>(3), std::nullopt, each, 100), InputError);
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace carb
