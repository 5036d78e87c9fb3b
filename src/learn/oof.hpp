// Out-of-fold machinery shared by cascade training: fold assignment, and batches of learner fits
// (K-fold out-of-fold predictions and fits on all rows) run side by side, so no row is ever
// predicted by a model that saw it and the two cores are busy with whole fits.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "carb/learner.hpp"

namespace carb {

/// Fold id (0..k-1) per row, balanced and shuffled under the seed.
std::vector<int> assign_folds(std::size_t n, int k, unsigned seed);

/// Independent learner fits, run together by run(threads): each fit gets a fresh learner from its
/// `make`, so the results do not depend on the thread count or the order. The matrices and
/// targets given must outlive run(). Learners should be single-threaded (threads = 1): the
/// parallelism is across fits.
class FitBatch {
 public:
  using Make = std::function<std::unique_ptr<Learner>()>;
  /// K fold fits: each fits the other folds and predicts its own. Returns a handle for oof().
  std::size_t add_oof(Make make, const Matrix& X, const std::vector<float>& y, const std::vector<int>& folds, int k);
  /// The same with a target per fold: fold f's fit learns y_by_fold[f] on the other folds' rows
  /// (a target that is itself fitted, such as a ratio to a fitted estimate, fitted without fold f).
  std::size_t add_oof(Make make, const Matrix& X, const std::vector<std::vector<float>>& y_by_fold,
                      const std::vector<int>& folds, int k);
  /// One fit on every row. Returns a handle for take_fitted().
  std::size_t add_full(Make make, const Matrix& X, const std::vector<float>& y);
  void run(int threads);
  /// The out-of-fold predictions of an add_oof group (rows in no fold's training get 0).
  std::vector<float> oof(std::size_t handle) const;
  std::unique_ptr<Learner> take_fitted(std::size_t handle);

 private:
  std::size_t add_oof(Make make, const Matrix& X, const std::vector<std::vector<float>>& y_by_fold,
                      const std::vector<int>& folds, int k, const std::vector<float>* y);
  struct Fit {
    Make make;
    const Matrix* X = nullptr;
    const std::vector<float>* y = nullptr;
    std::vector<std::size_t> fit_rows, pred_rows;  // fit_rows empty: every row
    std::unique_ptr<Learner> learner;
    std::vector<float> pred;
  };
  struct Group {
    std::vector<std::size_t> fits;
    std::size_t rows = 0;
  };
  std::vector<Fit> fits_;
  std::vector<Group> groups_;
};

/// Out-of-fold predictions of one learner kind, its K fits run on `threads` threads.
std::vector<float> oof_predict(const FitBatch::Make& make, const Matrix& X, const std::vector<float>& y,
                               const std::vector<int>& folds, int k, int threads = 1);

}  // namespace carb
