// The learner interface and its name-keyed registry. Kinds: "gbdt_depthwise" and "gbdt_leafwise"
// (carb's own histogram gradient boosting, XGBoost's hist method grown depth-wise or best leaf
// first: the LightGBM-role booster), "xgb_depthwise" and "xgb_lossguide" (XGBoost itself, the same
// two policies), "extra_trees" (carb's own), "linear" (least squares).
#pragma once
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "carb/matrix.hpp"

namespace carb {

/// Parameters shared by all learners; each learner reads the ones it uses.
struct LearnerParams {
  int n_trees = 0;        // 0 = the learner's default (800 boosters, 400 extra trees)
  int max_depth = 0;      // 0 = default (9 depth-wise; unlimited extra trees)
  int max_leaves = 0;     // 0 = default (127 for lossguide)
  double learning_rate = 0.05;
  int min_samples_leaf = 1;
  int threads = 2;
  unsigned seed = 42;
  double max_features = 1.0;  // extra trees: fraction of features tried per split (1.0 = all, sklearn's default)
  /// Boosters: the prediction before the first tree. 0.5 is XGBoost 1.7's default, kept for the
  /// main learners (their boosting path was tuned from it); a residual corrector starts at 0, where
  /// its residuals are centred (from 0.5, 20 trees left a +19% bias on every low-batch answer).
  double base_score = 0.5;
};

class Learner {
 public:
  virtual ~Learner() = default;
  virtual std::string kind() const = 0;
  /// Fits on X (rows x features) and y (rows). Throws InputError on empty data, size mismatch or NaN y.
  virtual void fit(const Matrix& X, const std::vector<float>& y) = 0;
  virtual std::vector<float> predict(const Matrix& X) const = 0;
  /// Gain importance per feature column (sums to 1 when any gain exists).
  virtual std::vector<double> importance() const = 0;
  /// Threads for later fits and predictions (training fits many single-threaded learners side by
  /// side, then hands the kept ones the thread count asked for); fewer than 1 is taken as 1.
  virtual void set_threads(int threads) = 0;
  /// Saves to / loads from a file. load throws ModelError on a missing or corrupted file.
  virtual void save(const std::filesystem::path& file) const = 0;
  virtual void load(const std::filesystem::path& file) = 0;
};

/// Creates a learner by kind; throws InputError naming the known kinds for an unknown one.
std::unique_ptr<Learner> make_learner(const std::string& kind, const LearnerParams& p = {});
/// Known learner kinds, sorted.
std::vector<std::string> learner_kinds();

/// Throws InputError for out-of-range parameters (negative counts, threads < 1, rate outside (0, 1], ...).
void check_learner_params(const LearnerParams& p);
/// Throws InputError, prefixed by `who`, unless X and y are non-empty, agree in size and y is finite.
void check_fit_input(const Matrix& X, const std::vector<float>& y, const std::string& who);
/// Throws InputError, prefixed by `who`, unless X has `features` columns and holds rows*cols values
/// (a Matrix's fields are public: one put together by hand was read past its end).
void check_predict_input(const Matrix& X, std::size_t features, const std::string& who);

}  // namespace carb
