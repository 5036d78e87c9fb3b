// Tests of blend-weight selection on the simplex.
#include "learn/blend.hpp"

#include <gtest/gtest.h>

#include "carb/error.hpp"

namespace carb {
namespace {

TEST(Blend, PicksThePerfectLearner) {
  const std::vector<float> y = {1, 2, 3, 4};
  const std::vector<std::vector<float>> preds = {{0, 0, 0, 0}, {1, 2, 3, 4}, {4, 3, 2, 1}};
  EXPECT_EQ(choose_blend_weights(preds, y, 0.1), (std::vector<double>{0, 1, 0}));
}

TEST(Blend, MixesLearnersWithOppositeErrors) {
  const std::vector<float> y = {1, 2, 3};
  const std::vector<std::vector<float>> preds = {{2, 3, 4}, {0, 1, 2}};  // +1 and -1 biased
  auto w = choose_blend_weights(preds, y, 0.1);
  EXPECT_NEAR(w[0], 0.5, 1e-9);
  EXPECT_NEAR(w[1], 0.5, 1e-9);
  EXPECT_EQ(blend(preds, w), (std::vector<float>{1, 2, 3}));
}

TEST(Blend, RejectsBadInput) {
  EXPECT_THROW(choose_blend_weights({}, {1}, 0.1), InputError);
  EXPECT_THROW(choose_blend_weights({{1}}, {1}, 0.0), InputError);
}

}  // namespace
}  // namespace carb
