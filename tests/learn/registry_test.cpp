// Tests of the learner registry and of the checks every learner kind shares:
// unknown kinds, invalid parameters, invalid training input, use before fit,
// wrong prediction width and missing model files.
#include <gtest/gtest.h>

#include <cmath>

#include <functional>
#include <limits>

#include "carb/error.hpp"
#include "carb/learner.hpp"
#include "learn/learn_test_util.hpp"
#include "util/stop_signal.hpp"

#include <csignal>

namespace carb {
namespace {

const std::vector<std::string> kKinds = {"extra_trees", "gbdt_depthwise", "gbdt_leafwise", "linear", "xgb_depthwise",
                                         "xgb_lossguide"};

LearnerParams tiny() {
  LearnerParams p;
  p.n_trees = 3;
  p.threads = 1;
  return p;
}

TEST(LearnRegistry, ListsTheKindsSorted) { EXPECT_EQ(learner_kinds(), kKinds); }

TEST(LearnRegistry, UnknownKindIsInputErrorNamingTheKnownKinds) {
  try {
    make_learner("random_forest");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("random_forest"), std::string::npos) << msg;
    for (const auto& k : kKinds) EXPECT_NE(msg.find(k), std::string::npos) << msg;
  }
  EXPECT_THROW(make_learner(""), InputError);
}

struct ParamCase {
  const char* name;
  std::function<void(LearnerParams&)> spoil;
};

class LearnRegistryParams : public ::testing::TestWithParam<ParamCase> {};

TEST_P(LearnRegistryParams, InvalidParameterIsInputErrorForEveryKind) {
  LearnerParams p;
  GetParam().spoil(p);
  for (const auto& kind : kKinds) EXPECT_THROW(make_learner(kind, p), InputError) << kind;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LearnRegistryParams,
    ::testing::Values(ParamCase{"negative_trees", [](LearnerParams& p) { p.n_trees = -1; }},
                      ParamCase{"negative_depth", [](LearnerParams& p) { p.max_depth = -2; }},
                      ParamCase{"negative_leaves", [](LearnerParams& p) { p.max_leaves = -1; }},
                      ParamCase{"zero_rate", [](LearnerParams& p) { p.learning_rate = 0; }},
                      ParamCase{"rate_above_one", [](LearnerParams& p) { p.learning_rate = 1.5; }},
                      ParamCase{"nan_rate", [](LearnerParams& p) { p.learning_rate = std::nan(""); }},
                      ParamCase{"zero_leaf", [](LearnerParams& p) { p.min_samples_leaf = 0; }},
                      ParamCase{"zero_threads", [](LearnerParams& p) { p.threads = 0; }},
                      ParamCase{"zero_features", [](LearnerParams& p) { p.max_features = 0; }},
                      ParamCase{"features_above_one", [](LearnerParams& p) { p.max_features = 1.01; }},
                      // A hostile tester: taken, then training failed on "feature matrix contains NaN".
                      ParamCase{"nan_base_score", [](LearnerParams& p) { p.base_score = std::nan(""); }},
                      ParamCase{"inf_base_score", [](LearnerParams& p) { p.base_score = HUGE_VAL; }}),
    [](const auto& info) { return info.param.name; });

struct InputCase {
  const char* name;
  std::function<void(Matrix&, std::vector<float>&)> spoil;
};

class LearnRegistryInput : public ::testing::TestWithParam<InputCase> {};

TEST_P(LearnRegistryInput, InvalidTrainingInputIsInputErrorForEveryKind) {
  for (const auto& kind : kKinds) {
    auto d = learn_test::make_synthetic_regression(20, 4, 1);
    GetParam().spoil(d.X, d.y);
    auto learner = make_learner(kind, tiny());
    EXPECT_THROW(learner->fit(d.X, d.y), InputError) << kind;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LearnRegistryInput,
    ::testing::Values(
        InputCase{"no_rows", [](Matrix& X, std::vector<float>& y) { X = Matrix(0, 4), y.clear(); }},
        InputCase{"no_columns", [](Matrix& X, std::vector<float>&) { X = Matrix(20, 0); }},
        InputCase{"fewer_targets", [](Matrix&, std::vector<float>& y) { y.pop_back(); }},
        InputCase{"more_targets", [](Matrix&, std::vector<float>& y) { y.push_back(1); }},
        InputCase{"data_size_mismatch", [](Matrix& X, std::vector<float>&) { X.data.pop_back(); }},
        InputCase{"nan_target",
                  [](Matrix&, std::vector<float>& y) { y[7] = std::numeric_limits<float>::quiet_NaN(); }},
        InputCase{"inf_target",
                  [](Matrix&, std::vector<float>& y) { y[0] = -std::numeric_limits<float>::infinity(); }}),
    [](const auto& info) { return info.param.name; });

class LearnRegistryKind : public ::testing::TestWithParam<std::string> {};

TEST_P(LearnRegistryKind, ReportsItsKind) { EXPECT_EQ(make_learner(GetParam())->kind(), GetParam()); }

TEST_P(LearnRegistryKind, UseBeforeFitIsModelError) {
  auto learner = make_learner(GetParam(), tiny());
  EXPECT_THROW(learner->predict(Matrix(2, 4)), ModelError);
  EXPECT_THROW(learner->importance(), ModelError);
  EXPECT_THROW(learner->save(learn_test::temp_model_path("unfitted")), ModelError);
}

TEST_P(LearnRegistryKind, PredictWithOtherColumnCountIsInputError) {
  const auto d = learn_test::make_synthetic_regression(30, 4, 1);
  auto learner = make_learner(GetParam(), tiny());
  learner->fit(d.X, d.y);
  EXPECT_THROW(learner->predict(Matrix(2, 5)), InputError);
  EXPECT_TRUE(learner->predict(Matrix(0, 4)).empty());
}

// A hostile tester: a Matrix's fields are public, and one saying 1,000 rows over no values was read
// past its end (SIGSEGV); fit refused it, predict did not.
TEST_P(LearnRegistryKind, PredictOnAMatrixHoldingFewerValuesThanItSaysIsInputError) {
  const auto d = learn_test::make_synthetic_regression(30, 4, 1);
  auto learner = make_learner(GetParam(), tiny());
  learner->fit(d.X, d.y);
  Matrix short_of_values;
  short_of_values.rows = 1000, short_of_values.cols = 4;
  EXPECT_THROW(learner->predict(short_of_values), InputError);
  Matrix some(3, 4);
  some.data.resize(10);
  EXPECT_THROW(learner->predict(some), InputError);
  some.data.resize(14);  // more than it says is as wrong
  EXPECT_THROW(learner->predict(some), InputError);
  EXPECT_EQ(learner->predict(Matrix(3, 4)).size(), 3u);
}

TEST_P(LearnRegistryKind, LoadingAMissingFileIsModelError) {
  auto learner = make_learner(GetParam(), tiny());
  EXPECT_THROW(learner->load(learn_test::temp_model_path("does_not_exist")), ModelError);
}

TEST_P(LearnRegistryKind, LoadingAnotherKindsFileIsModelError) {
  const auto d = learn_test::make_synthetic_regression(30, 4, 1);
  const auto file = learn_test::temp_model_path("other_kind");
  for (const auto& other : kKinds) {
    if (other == GetParam() || (other.starts_with("xgb") && GetParam().starts_with("xgb"))) continue;
    auto writer = make_learner(other, tiny());
    writer->fit(d.X, d.y);
    writer->save(file);
    auto reader = make_learner(GetParam(), tiny());
    EXPECT_THROW(reader->load(file), ModelError) << other << " file read as " << GetParam();
  }
  std::filesystem::remove(file);
}

INSTANTIATE_TEST_SUITE_P(Kinds, LearnRegistryKind, ::testing::ValuesIn(kKinds),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace carb

namespace carb {
namespace {

// Hundred-and-ninth hostile pass: one fit on 40,000 rows heard SIGTERM 144 s late. Every tree
// learner checks between trees or rounds, so a recorded signal stops the fit before it builds
// another; the linear fit is one solve and finishes.
TEST(LearnRegistry, ASignalStopsATreeFitBetweenTrees) {
  const auto d = learn_test::make_synthetic_regression(200, 4, 3);
  for (const auto& kind : kKinds) {
    auto learner = make_learner(kind, tiny());
    {
      detail::StopOnSignals signals;
      ASSERT_EQ(std::raise(SIGINT), 0);  // recorded, not delivered
      if (kind == "linear") {
        learner->fit(d.X, d.y);
        continue;
      }
      try {
        learner->fit(d.X, d.y);
        ADD_FAILURE() << kind << " fitted through a signal";
      } catch (const Interrupted& e) {
        EXPECT_EQ(e.signal_number, SIGINT) << kind;
        EXPECT_NE(std::string(e.what()).find("no model was made"), std::string::npos) << e.what();
      }
    }
    learner->fit(d.X, d.y);  // outside the scope nothing is recorded: it fits
    EXPECT_EQ(learner->predict(d.X).size(), d.y.size()) << kind;
  }
}

}  // namespace
}  // namespace carb
