// Tests of carb's own gradient-boosted trees (gbdt_depthwise, gbdt_leafwise): the same method as
// XGBoost's hist (an exact stump agrees with XGBoost's), accuracy, determinism, the growth
// policies' limits, importance and the model file.
#include "learn/gbdt.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "carb/error.hpp"
#include "learn/learn_test_util.hpp"
#include "learn/xgb_learner.hpp"

namespace carb {
namespace {

using Growth = Gbdt::Growth;
using learn_test::make_synthetic_regression;

LearnerParams small() {
  LearnerParams p;
  p.n_trees = 100;
  p.learning_rate = 0.15;
  p.threads = 1;
  return p;
}

XgbLearner::Growth xgb_growth(Growth g) {
  return g == Growth::depthwise ? XgbLearner::Growth::depthwise : XgbLearner::Growth::lossguide;
}

class LearnGbdt : public ::testing::TestWithParam<Growth> {};

TEST_P(LearnGbdt, RecoversSyntheticFunctionAsWellAsXgboost) {
  const auto [train, test] = learn_test::split_halves(make_synthetic_regression(1600, 6, 3));
  Gbdt gbdt(GetParam(), small());
  gbdt.fit(train.X, train.y);
  XgbLearner xgb(xgb_growth(GetParam()), small());
  xgb.fit(train.X, train.y);
  const double ours = learn_test::r_squared(test.y, gbdt.predict(test.X));
  const double theirs = learn_test::r_squared(test.y, xgb.predict(test.X));
  EXPECT_GT(ours, 0.85);
  EXPECT_NEAR(ours, theirs, 0.01) << "XGBoost's hist method on the same data and parameters: " << theirs;
}

// With fewer distinct values than bins, both find the exact best split of the root: one round of
// one split must predict what XGBoost predicts (base 0.5, leaf weights -G / (H + 1)).
TEST_P(LearnGbdt, AStumpIsXgboostsStump) {
  auto d = make_synthetic_regression(300, 4, 5);
  for (float& v : d.X.data) v = std::round(v * 10) / 10;  // 41 distinct values per feature
  LearnerParams p = small();
  p.n_trees = 1;
  p.learning_rate = 1.0;
  p.max_depth = 1;
  p.max_leaves = 2;
  Gbdt gbdt(GetParam(), p);
  gbdt.fit(d.X, d.y);
  XgbLearner xgb(xgb_growth(GetParam()), p);
  xgb.fit(d.X, d.y);
  const auto a = gbdt.predict(d.X), b = xgb.predict(d.X);
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4) << i;
  EXPECT_EQ(std::set<float>(a.begin(), a.end()).size(), 2u);
}

TEST_P(LearnGbdt, SameInputGivesIdenticalPredictions) {
  const auto d = make_synthetic_regression(300, 5, 8);
  Gbdt a(GetParam(), small()), b(GetParam(), small());
  a.fit(d.X, d.y);
  b.fit(d.X, d.y);
  EXPECT_EQ(a.predict(d.X), b.predict(d.X));
}

TEST_P(LearnGbdt, ImportanceRanksInformativeFeaturesAboveNoise) {
  const auto d = make_synthetic_regression(800, 6, 12);  // columns 4 and 5 are noise
  Gbdt g(GetParam(), small());
  g.fit(d.X, d.y);
  const auto imp = g.importance();
  ASSERT_EQ(imp.size(), 6u);
  double total = 0;
  for (double v : imp) total += v;
  EXPECT_NEAR(total, 1.0, 1e-9);
  for (int informative : {0, 1, 2, 3})
    for (int noise : {4, 5}) EXPECT_GT(imp[informative], imp[noise]) << informative << " vs " << noise;
}

TEST_P(LearnGbdt, SaveLoadRoundTripGivesIdenticalPredictions) {
  const auto d = make_synthetic_regression(300, 5, 6);
  Gbdt a(GetParam(), small());
  a.fit(d.X, d.y);
  const auto file = learn_test::temp_model_path("gbdt_roundtrip.bin");
  a.save(file);
  Gbdt b(GetParam(), small());
  b.load(file);
  EXPECT_EQ(b.predict(d.X), a.predict(d.X));
  EXPECT_EQ(b.importance(), a.importance());
  Gbdt other(GetParam() == Growth::depthwise ? Growth::leafwise : Growth::depthwise, small());
  EXPECT_THROW(other.load(file), ModelError);  // the other growth policy's file
  for (const auto damage : learn_test::kAllDamage) {
    a.save(file);
    learn_test::damage_file(file, damage);
    Gbdt c(GetParam(), small());
    EXPECT_THROW(c.load(file), ModelError) << static_cast<int>(damage);
  }
  std::filesystem::remove(file);
}

INSTANTIATE_TEST_SUITE_P(Growths, LearnGbdt, ::testing::Values(Growth::depthwise, Growth::leafwise),
                         [](const auto& info) { return info.param == Growth::depthwise ? "depthwise" : "leafwise"; });

// Depth-wise trees stop at the depth, leaf-wise ones at the leaf count.
TEST(LearnGbdtLimits, DepthAndLeavesBoundTheTree) {
  const auto d = make_synthetic_regression(400, 4, 1);
  LearnerParams p = small();
  p.n_trees = 1;
  p.max_depth = 2;
  Gbdt deep(Growth::depthwise, p);
  deep.fit(d.X, d.y);
  auto pred = deep.predict(d.X);
  EXPECT_EQ(std::set<float>(pred.begin(), pred.end()).size(), 4u);  // a full tree of depth 2
  p.max_depth = 0;
  p.max_leaves = 5;
  Gbdt leafy(Growth::leafwise, p);
  leafy.fit(d.X, d.y);
  pred = leafy.predict(d.X);
  EXPECT_EQ(std::set<float>(pred.begin(), pred.end()).size(), 5u);
}

TEST(LearnGbdtLimits, NonFiniteFeaturesAreRefused) {
  auto d = make_synthetic_regression(50, 3, 2);
  d.X(3, 1) = std::nanf("");
  Gbdt g(Growth::depthwise, small());
  EXPECT_THROW(g.fit(d.X, d.y), InputError);
}

}  // namespace
}  // namespace carb

namespace carb {
namespace {

// Boosting starts from LearnerParams::base_score. From XGBoost's 0.5, 20 trees at learning rate
// 0.05 fitted to targets of 0 still answered about 0.18: a residual corrector (whose targets are
// centred on 0) then moved every low-batch answer by +19% (thirteenth hostile pass).
TEST(GbdtBaseScore, BoostingStartsWhereItIsTold) {
  Matrix X(40, 2);
  for (std::size_t r = 0; r < X.rows; ++r) X(r, 0) = static_cast<float>(r), X(r, 1) = static_cast<float>(r % 3);
  const std::vector<float> zeros(X.rows, 0.0f);
  LearnerParams p;
  p.n_trees = 20, p.learning_rate = 0.05, p.threads = 1, p.max_leaves = 15;
  Gbdt from_default(Gbdt::Growth::leafwise, p);
  from_default.fit(X, zeros);
  EXPECT_GT(from_default.predict(X).front(), 0.1f);  // what the corrector did before
  p.base_score = 0;
  for (auto growth : {Gbdt::Growth::leafwise, Gbdt::Growth::depthwise}) {
    Gbdt g(growth, p);
    g.fit(X, zeros);
    for (float v : g.predict(X)) EXPECT_NEAR(v, 0.0f, 1e-6f);
  }
  XgbLearner xgb(XgbLearner::Growth::lossguide, p);
  xgb.fit(X, zeros);
  for (float v : xgb.predict(X)) EXPECT_NEAR(v, 0.0f, 1e-6f);
}

}  // namespace
}  // namespace carb
