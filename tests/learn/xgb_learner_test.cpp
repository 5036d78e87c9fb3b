// Tests of the XGBoost-backed learners (depth-wise and lossguide): accuracy on a
// synthetic function, determinism, importance, and the model file.
#include "learn/xgb_learner.hpp"

#include <gtest/gtest.h>

#include <set>

#include "carb/error.hpp"
#include "learn/learn_test_util.hpp"

namespace carb {
namespace {

using Growth = XgbLearner::Growth;
using learn_test::make_synthetic_regression;

LearnerParams small(unsigned seed = 1) {
  LearnerParams p;
  p.n_trees = 100;
  p.learning_rate = 0.15;
  p.threads = 1;  // OpenMP spin-waiting makes 2 threads slow on a busy 2-core machine
  p.seed = seed;
  return p;
}

class LearnXgb : public ::testing::TestWithParam<Growth> {};

TEST_P(LearnXgb, RecoversSyntheticFunctionOnHeldOutHalf) {
  const auto [train, test] = learn_test::split_halves(make_synthetic_regression(1600, 6, 3));
  XgbLearner xgb(GetParam(), small());
  xgb.fit(train.X, train.y);
  EXPECT_GT(learn_test::r_squared(test.y, xgb.predict(test.X)), 0.9);
}

TEST_P(LearnXgb, SameSeedGivesIdenticalPredictions) {
  const auto d = make_synthetic_regression(300, 5, 8);
  LearnerParams p = small(42);
  p.n_trees = 20;
  XgbLearner a(GetParam(), p), b(GetParam(), p);
  a.fit(d.X, d.y);
  b.fit(d.X, d.y);
  EXPECT_EQ(a.predict(d.X), b.predict(d.X));
}

TEST_P(LearnXgb, ImportanceRanksInformativeFeaturesAboveNoise) {
  const auto d = make_synthetic_regression(800, 6, 12);  // columns 4 and 5 are noise
  XgbLearner xgb(GetParam(), small());
  xgb.fit(d.X, d.y);
  const auto imp = xgb.importance();
  ASSERT_EQ(imp.size(), 6u);
  double total = 0;
  for (double v : imp) total += v;
  EXPECT_NEAR(total, 1.0, 1e-9);
  for (int informative : {0, 1, 2, 3})
    for (int noise : {4, 5}) EXPECT_GT(imp[informative], imp[noise]) << informative << " vs " << noise;
}

TEST_P(LearnXgb, SaveLoadRoundTripGivesIdenticalPredictions) {
  const auto d = make_synthetic_regression(300, 5, 6);
  XgbLearner a(GetParam(), small());
  a.fit(d.X, d.y);
  const auto file = learn_test::temp_model_path("xgb_roundtrip.bin");
  a.save(file);
  XgbLearner b(GetParam(), small());
  b.load(file);
  EXPECT_EQ(b.predict(d.X), a.predict(d.X));
  EXPECT_EQ(b.importance(), a.importance());
  std::filesystem::remove(file);
}

TEST_P(LearnXgb, DamagedFileIsModelError) {
  const auto d = make_synthetic_regression(100, 3, 6);
  LearnerParams p = small();
  p.n_trees = 5;
  XgbLearner a(GetParam(), p);
  a.fit(d.X, d.y);
  const auto file = learn_test::temp_model_path("xgb_corrupt.bin");
  for (const auto damage : learn_test::kAllDamage) {
    a.save(file);
    learn_test::damage_file(file, damage);
    XgbLearner b(GetParam(), p);
    EXPECT_THROW(b.load(file), ModelError) << static_cast<int>(damage);
  }
  std::filesystem::remove(file);
}

INSTANTIATE_TEST_SUITE_P(Growths, LearnXgb, ::testing::Values(Growth::depthwise, Growth::lossguide),
                         [](const auto& info) {
                           return info.param == Growth::depthwise ? "depthwise" : "lossguide";
                         });

TEST(LearnXgbKinds, DefaultsFollowTheKind) {
  EXPECT_EQ(XgbLearner(Growth::depthwise, {}).kind(), "xgb_depthwise");
  EXPECT_EQ(XgbLearner(Growth::lossguide, {}).kind(), "xgb_lossguide");
  EXPECT_EQ(XgbLearner(Growth::depthwise, {}).rounds(), 800);
}

TEST(LearnXgbKinds, LoadingTheOtherGrowthsFileIsModelError) {
  const auto d = make_synthetic_regression(100, 3, 6);
  LearnerParams p = small();
  p.n_trees = 3;
  XgbLearner a(Growth::lossguide, p);
  a.fit(d.X, d.y);
  const auto file = learn_test::temp_model_path("xgb_other_kind.bin");
  a.save(file);
  XgbLearner b(Growth::depthwise, p);
  EXPECT_THROW(b.load(file), ModelError);
  std::filesystem::remove(file);
}

TEST(LearnXgbKinds, LossguideRespectsMaxLeaves) {
  // One round with at most 2 leaves can only predict two distinct values.
  const auto d = make_synthetic_regression(200, 4, 1);
  LearnerParams p = small();
  p.n_trees = 1;
  p.max_leaves = 2;
  XgbLearner stump(Growth::lossguide, p);
  stump.fit(d.X, d.y);
  const auto pred = stump.predict(d.X);
  EXPECT_EQ(std::set<float>(pred.begin(), pred.end()).size(), 2u);
}

}  // namespace
}  // namespace carb
