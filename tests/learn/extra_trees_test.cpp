// Tests of carb's ExtraTrees regressor: accuracy on a synthetic function,
// determinism (seed, thread count), tree-shape parameters, importance, and the
// checksummed model file.
#include "learn/extra_trees.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "carb/error.hpp"
#include "learn/checksum_file.hpp"
#include "learn/learn_test_util.hpp"

namespace carb {
namespace {

using learn_test::make_synthetic_regression;

LearnerParams small(int trees = 30, unsigned seed = 1, int threads = 1) {
  LearnerParams p;
  p.n_trees = trees;
  p.seed = seed;
  p.threads = threads;
  return p;
}

struct AccuracyCase {
  int min_samples_leaf;
  double max_features;
  int threads;
};

class LearnExtraTreesAccuracy : public ::testing::TestWithParam<AccuracyCase> {};

TEST_P(LearnExtraTreesAccuracy, RecoversSyntheticFunctionOnHeldOutHalf) {
  const auto [train, test] = learn_test::split_halves(make_synthetic_regression(3000, 6, 3));
  LearnerParams p = small(40, 5, GetParam().threads);
  p.min_samples_leaf = GetParam().min_samples_leaf;
  p.max_features = GetParam().max_features;
  ExtraTrees et(p);
  et.fit(train.X, train.y);
  EXPECT_GT(learn_test::r_squared(test.y, et.predict(test.X)), 0.9);
}

INSTANTIATE_TEST_SUITE_P(Cases, LearnExtraTreesAccuracy,
                         ::testing::Values(AccuracyCase{1, 1.0, 1}, AccuracyCase{1, 1.0, 2},
                                           AccuracyCase{3, 1.0, 2}, AccuracyCase{1, 0.7, 2}));

TEST(LearnExtraTrees, SameSeedGivesIdenticalPredictionsOtherSeedDiffers) {
  // Judged on unseen rows: fully grown trees reproduce training targets under any seed.
  const auto d = make_synthetic_regression(300, 5, 8), unseen = make_synthetic_regression(100, 5, 99);
  ExtraTrees a(small(10, 42)), b(small(10, 42)), c(small(10, 43));
  a.fit(d.X, d.y);
  b.fit(d.X, d.y);
  c.fit(d.X, d.y);
  EXPECT_EQ(a.predict(unseen.X), b.predict(unseen.X));
  EXPECT_NE(a.predict(unseen.X), c.predict(unseen.X));
}

TEST(LearnExtraTrees, OneAndThreeThreadsGiveTheSameForest) {
  const auto d = make_synthetic_regression(300, 5, 9), unseen = make_synthetic_regression(100, 5, 98);
  ExtraTrees one(small(12, 7, 1)), three(small(12, 7, 3));
  one.fit(d.X, d.y);
  three.fit(d.X, d.y);
  EXPECT_EQ(one.predict(unseen.X), three.predict(unseen.X));
  EXPECT_EQ(one.importance(), three.importance());
}

TEST(LearnExtraTrees, FullyGrownTreesInterpolateTrainingData) {
  // No depth limit and leaves of one row: each tree reproduces the (distinct) training targets.
  const auto d = make_synthetic_regression(200, 4, 2);
  ExtraTrees et(small(5));
  et.fit(d.X, d.y);
  const auto pred = et.predict(d.X);
  for (std::size_t r = 0; r < pred.size(); ++r) EXPECT_NEAR(pred[r], d.y[r], 1e-4);
}

TEST(LearnExtraTrees, MaxDepthOneGivesStumps) {
  const auto d = make_synthetic_regression(200, 4, 2);
  LearnerParams p = small(8);
  p.max_depth = 1;
  ExtraTrees et(p);
  et.fit(d.X, d.y);
  ASSERT_EQ(et.tree_count(), 8u);
  for (std::size_t t = 0; t < et.tree_count(); ++t) EXPECT_EQ(et.tree(t).size(), 3u);
}

TEST(LearnExtraTrees, MinSamplesLeafAboveHalfForbidsAnySplit) {
  const auto d = make_synthetic_regression(100, 3, 4);
  LearnerParams p = small(4);
  p.min_samples_leaf = 51;
  ExtraTrees et(p);
  et.fit(d.X, d.y);
  for (std::size_t t = 0; t < et.tree_count(); ++t) EXPECT_EQ(et.tree(t).size(), 1u);
  double mean = 0;
  for (float v : d.y) mean += v;
  mean /= static_cast<double>(d.y.size());
  EXPECT_NEAR(et.predict(d.X)[0], mean, 1e-5);
}

TEST(LearnExtraTrees, ConstantTargetGivesSingleLeafTrees) {
  auto d = make_synthetic_regression(50, 3, 4);
  std::fill(d.y.begin(), d.y.end(), 2.5f);
  ExtraTrees et(small(3));
  et.fit(d.X, d.y);
  EXPECT_EQ(et.tree(0).size(), 1u);
  for (float v : et.predict(d.X)) EXPECT_EQ(v, 2.5f);
  for (double v : et.importance()) EXPECT_EQ(v, 0.0);
}

TEST(LearnExtraTrees, ImportanceRanksInformativeFeaturesAboveNoise) {
  const auto d = make_synthetic_regression(800, 6, 12);  // columns 4 and 5 are noise
  ExtraTrees et(small(20));
  et.fit(d.X, d.y);
  const auto imp = et.importance();
  double total = 0;
  for (double v : imp) total += v;
  EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_GT(imp[0], imp[1]);  // 3*x0 carries the most variance
  for (int informative : {0, 1, 2, 3})
    for (int noise : {4, 5}) EXPECT_GT(imp[informative], imp[noise]) << informative << " vs " << noise;
}

TEST(LearnExtraTrees, NonFiniteFeatureIsInputError) {
  auto d = make_synthetic_regression(20, 3, 1);
  d.X(5, 1) = std::numeric_limits<float>::infinity();
  ExtraTrees et(small(2));
  EXPECT_THROW(et.fit(d.X, d.y), InputError);
}

TEST(LearnExtraTrees, SaveLoadRoundTripGivesIdenticalPredictions) {
  const auto d = make_synthetic_regression(300, 5, 6);
  ExtraTrees a(small(10));
  a.fit(d.X, d.y);
  const auto file = learn_test::temp_model_path("et_roundtrip.bin");
  a.save(file);
  ExtraTrees b;
  b.load(file);
  const auto unseen = make_synthetic_regression(100, 5, 97);
  EXPECT_EQ(b.predict(unseen.X), a.predict(unseen.X));
  EXPECT_EQ(b.importance(), a.importance());
  std::filesystem::remove(file);
}

class LearnExtraTreesCorrupt : public ::testing::TestWithParam<learn_test::Damage> {};

TEST_P(LearnExtraTreesCorrupt, DamagedFileIsModelError) {
  const auto d = make_synthetic_regression(100, 3, 6);
  ExtraTrees a(small(3));
  a.fit(d.X, d.y);
  const auto file = learn_test::temp_model_path("et_corrupt.bin");
  a.save(file);
  learn_test::damage_file(file, GetParam());
  ExtraTrees b;
  EXPECT_THROW(b.load(file), ModelError);
  std::filesystem::remove(file);
}

INSTANTIATE_TEST_SUITE_P(Cases, LearnExtraTreesCorrupt, ::testing::ValuesIn(learn_test::kAllDamage));

// A file resealed with a valid checksum but a huge feature count once made load allocate 8 GB
// (fuzz/regressions/fuzz_bundle/extra_trees_n_features_alloc): counts are checked against the bytes.
TEST(LearnExtraTrees, ResealedFileWithAHugeFeatureCountIsModelError) {
  const auto d = make_synthetic_regression(100, 3, 6);
  ExtraTrees a(small(3));
  a.fit(d.X, d.y);
  const auto file = learn_test::temp_model_path("et_huge.bin");
  a.save(file);
  auto bytes = detail::read_checksummed(file);
  const std::uint64_t huge = std::uint64_t{1} << 29;
  std::memcpy(bytes.data() + 8 + sizeof(std::uint32_t), &huge, sizeof huge);  // after magic and version
  detail::write_checksummed(file, bytes);
  ExtraTrees b;
  EXPECT_THROW(b.load(file), ModelError);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace carb
