// The learner registry (kind name -> factory) and the parameter and input checks
// every learner shares, so all kinds reject bad input with the same messages.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>

#include "carb/error.hpp"
#include "carb/learner.hpp"
#include "learn/extra_trees.hpp"
#include "learn/gbdt.hpp"
#include "learn/linear.hpp"
#include "learn/xgb_learner.hpp"
#include "util/join.hpp"

namespace carb {
namespace {

using Factory = std::function<std::unique_ptr<Learner>(const LearnerParams&)>;

// std::map keeps the kinds sorted, which learner_kinds() promises.
const std::map<std::string, Factory>& registry() {
  static const std::map<std::string, Factory> kinds = {
      {"extra_trees", [](const LearnerParams& p) { return std::make_unique<ExtraTrees>(p); }},
      {"gbdt_depthwise", [](const LearnerParams& p) { return std::make_unique<Gbdt>(Gbdt::Growth::depthwise, p); }},
      {"gbdt_leafwise", [](const LearnerParams& p) { return std::make_unique<Gbdt>(Gbdt::Growth::leafwise, p); }},
      {"linear", [](const LearnerParams& p) { return std::make_unique<LinearLearner>(p); }},
      {"xgb_depthwise",
       [](const LearnerParams& p) { return std::make_unique<XgbLearner>(XgbLearner::Growth::depthwise, p); }},
      {"xgb_lossguide",
       [](const LearnerParams& p) { return std::make_unique<XgbLearner>(XgbLearner::Growth::lossguide, p); }},
  };
  return kinds;
}

}  // namespace

std::unique_ptr<Learner> make_learner(const std::string& kind, const LearnerParams& p) {
  const auto& kinds = registry();
  const auto it = kinds.find(kind);
  if (it == kinds.end()) {
    throw InputError("unknown learner kind '" + kind + "' (known: " +
                     join(kinds, [](const auto& k) { return k.first; }) + ")");
  }
  return it->second(p);
}

std::vector<std::string> learner_kinds() {
  std::vector<std::string> out;
  for (const auto& [name, f] : registry()) out.push_back(name);
  return out;
}

void check_learner_params(const LearnerParams& p) {
  auto fail = [](const std::string& what) { throw InputError("invalid learner parameter: " + what); };
  if (p.n_trees < 0) fail("n_trees must be >= 0 (0 = default), got " + std::to_string(p.n_trees));
  if (p.max_depth < 0) fail("max_depth must be >= 0 (0 = default), got " + std::to_string(p.max_depth));
  if (p.max_leaves < 0) fail("max_leaves must be >= 0 (0 = default), got " + std::to_string(p.max_leaves));
  if (!(p.learning_rate > 0 && p.learning_rate <= 1))
    fail("learning_rate must be in (0, 1], got " + std::to_string(p.learning_rate));
  if (p.min_samples_leaf < 1)
    fail("min_samples_leaf must be >= 1, got " + std::to_string(p.min_samples_leaf));
  if (p.threads < 1) fail("threads must be >= 1, got " + std::to_string(p.threads));
  if (!(p.max_features > 0 && p.max_features <= 1))
    fail("max_features must be in (0, 1], got " + std::to_string(p.max_features));
  // A hostile tester: NaN was taken, and training failed on "feature matrix contains NaN" instead.
  if (!std::isfinite(p.base_score)) fail("base_score must be a finite number, got " + std::to_string(p.base_score));
}

void check_fit_input(const Matrix& X, const std::vector<float>& y, const std::string& who) {
  if (X.rows == 0 || X.cols == 0)
    throw InputError(who + ": empty training data (" + std::to_string(X.rows) + " rows x " +
                     std::to_string(X.cols) + " columns)");
  if (X.data.size() != X.rows * X.cols)
    throw InputError(who + ": matrix holds " + std::to_string(X.data.size()) +
                     " values, expected rows*cols = " + std::to_string(X.rows * X.cols));
  if (y.size() != X.rows)
    throw InputError(who + ": " + std::to_string(y.size()) + " targets for " + std::to_string(X.rows) +
                     " rows");
  const auto bad = std::find_if(y.begin(), y.end(), [](float v) { return !std::isfinite(v); });
  if (bad != y.end())
    throw InputError(who + ": target is NaN or infinite at row " + std::to_string(bad - y.begin()));
}

void check_predict_input(const Matrix& X, std::size_t features, const std::string& who) {
  if (X.cols != features)
    throw InputError(who + ": predict got " + std::to_string(X.cols) + " feature columns, model has " +
                     std::to_string(features));
  if (X.data.size() != X.rows * X.cols)
    throw InputError(who + ": matrix holds " + std::to_string(X.data.size()) + " values, expected rows*cols = " +
                     std::to_string(X.rows * X.cols));
}

}  // namespace carb
