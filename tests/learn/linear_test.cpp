// Tests of the "linear" learner: exact recovery of linear data, importance, and
// the JSON model file (round trip and corruption).
#include "learn/linear.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "carb/error.hpp"
#include "learn/learn_test_util.hpp"

namespace carb {
namespace {

using learn_test::make_synthetic_linear;

struct LinearCase {
  std::vector<double> coef;
  double intercept;
};

class LearnLinearRecovery : public ::testing::TestWithParam<LinearCase> {};

TEST_P(LearnLinearRecovery, RecoversExactCoefficients) {
  const auto& c = GetParam();
  const auto d = make_synthetic_linear(200, c.coef, c.intercept, 7);
  LinearLearner lin;
  lin.fit(d.X, d.y);
  ASSERT_EQ(lin.coefficients().size(), c.coef.size());
  for (std::size_t j = 0; j < c.coef.size(); ++j) EXPECT_NEAR(lin.coefficients()[j], c.coef[j], 1e-4) << j;
  EXPECT_NEAR(lin.intercept(), c.intercept, 1e-4);
  const auto pred = lin.predict(d.X);
  for (std::size_t r = 0; r < pred.size(); ++r) EXPECT_NEAR(pred[r], d.y[r], 1e-3 * (1 + std::abs(d.y[r])));
}

INSTANTIATE_TEST_SUITE_P(Cases, LearnLinearRecovery,
                         ::testing::Values(LinearCase{{2.0}, 1.0}, LinearCase{{3.0, -1.5, 0.25}, -4.0},
                                           LinearCase{{0.0, 10.0, -7.0, 1e-3, 0.5}, 100.0},
                                           LinearCase{{1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, 0.0}));

TEST(LearnLinear, ConstantColumnGetsZeroCoefficient) {
  auto d = make_synthetic_linear(100, {2.0, 0.0}, 1.0, 3);
  for (std::size_t r = 0; r < d.X.rows; ++r) d.X(r, 1) = 5.0f;
  LinearLearner lin;
  lin.fit(d.X, d.y);
  EXPECT_NEAR(lin.coefficients()[0], 2.0, 1e-4);
  EXPECT_EQ(lin.coefficients()[1], 0.0);
  EXPECT_NEAR(lin.intercept(), 1.0, 1e-4);
}

TEST(LearnLinear, DuplicatedColumnsStillPredictExactly) {
  auto d = make_synthetic_linear(100, {2.0, 0.0}, 1.0, 3);
  for (std::size_t r = 0; r < d.X.rows; ++r) d.X(r, 1) = d.X(r, 0);
  LinearLearner lin;
  lin.fit(d.X, d.y);
  EXPECT_NEAR(lin.coefficients()[0] + lin.coefficients()[1], 2.0, 1e-4);
  const auto pred = lin.predict(d.X);
  for (std::size_t r = 0; r < pred.size(); ++r) EXPECT_NEAR(pred[r], d.y[r], 1e-3);
}

TEST(LearnLinear, ImportanceIsAbsCoefTimesStdNormalized) {
  // x ~ U(-5, 5) for every column, so importance is proportional to |coef|.
  const auto d = make_synthetic_linear(4000, {3.0, -1.0, 0.0}, 0.0, 11);
  LinearLearner lin;
  lin.fit(d.X, d.y);
  const auto imp = lin.importance();
  EXPECT_NEAR(imp[0], 0.75, 0.02);
  EXPECT_NEAR(imp[1], 0.25, 0.02);
  EXPECT_NEAR(imp[2], 0.0, 1e-6);
  EXPECT_NEAR(imp[0] + imp[1] + imp[2], 1.0, 1e-12);
}

TEST(LearnLinear, NonFiniteFeatureIsInputError) {
  auto d = make_synthetic_linear(10, {1.0}, 0.0, 1);
  d.X(3, 0) = std::numeric_limits<float>::quiet_NaN();
  LinearLearner lin;
  EXPECT_THROW(lin.fit(d.X, d.y), InputError);
}

TEST(LearnLinear, SaveLoadRoundTripGivesIdenticalPredictions) {
  const auto d = make_synthetic_linear(50, {0.1, 0.7, -3.3}, 0.123456789, 5);
  LinearLearner a;
  a.fit(d.X, d.y);
  const auto file = learn_test::temp_model_path("linear_roundtrip.json");
  a.save(file);
  LinearLearner b;
  b.load(file);
  EXPECT_EQ(b.predict(d.X), a.predict(d.X));
  EXPECT_EQ(b.importance(), a.importance());
  std::filesystem::remove(file);
}

class LearnLinearCorrupt : public ::testing::TestWithParam<std::string> {};

TEST_P(LearnLinearCorrupt, LoadThrowsModelError) {
  const auto file = learn_test::temp_model_path("linear_corrupt.json");
  std::ofstream(file) << GetParam();
  LinearLearner lin;
  EXPECT_THROW(lin.load(file), ModelError);
  std::filesystem::remove(file);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LearnLinearCorrupt,
    ::testing::Values("", "not json", R"({"format":"carb-linear","version":1,"intercept":1,"coef":[1,2])",
                      R"({"format":"other","version":1,"intercept":1,"coef":[1],"std":[1]})",
                      R"({"format":"carb-linear","version":99,"intercept":1,"coef":[1],"std":[1]})",
                      R"({"format":"carb-linear","version":1,"intercept":1,"coef":[1,2],"std":[1]})",
                      R"({"format":"carb-linear","version":1,"intercept":"x","coef":[1],"std":[1]})",
                      R"({"format":"carb-linear","version":1,"coef":[1],"std":[1]})"));

TEST(LearnLinear, TruncatedSavedFileIsModelError) {
  const auto d = make_synthetic_linear(20, {1.0, 2.0}, 0.0, 2);
  LinearLearner a;
  a.fit(d.X, d.y);
  const auto file = learn_test::temp_model_path("linear_truncated.json");
  a.save(file);
  learn_test::damage_file(file, learn_test::Damage::truncate_half);
  LinearLearner b;
  EXPECT_THROW(b.load(file), ModelError);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace carb
