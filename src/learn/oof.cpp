// Fold assignment, out-of-fold prediction and the basic fit metrics.
#include "oof.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "carb/error.hpp"

namespace carb {

std::vector<int> assign_folds(std::size_t n, int k, unsigned seed) {
  if (k < 2) throw InputError("folds must be at least 2");
  if (n < static_cast<std::size_t>(k)) throw InputError("need at least " + std::to_string(k) + " rows for " +
                                                        std::to_string(k) + "-fold training, got " + std::to_string(n));
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(idx.begin(), idx.end(), rng);
  std::vector<int> folds(n);
  for (std::size_t i = 0; i < n; ++i) folds[idx[i]] = static_cast<int>(i % k);
  return folds;
}

std::vector<float> oof_predict(const std::function<std::unique_ptr<Learner>()>& make, const Matrix& X,
                               const std::vector<float>& y, const std::vector<int>& folds, int k) {
  std::vector<float> out(X.rows, 0.0f);
  for (int f = 0; f < k; ++f) {
    std::vector<std::size_t> fit_rows, pred_rows;
    for (std::size_t i = 0; i < X.rows; ++i) (folds[i] == f ? pred_rows : fit_rows).push_back(i);
    if (pred_rows.empty() || fit_rows.empty()) continue;
    std::vector<float> yf;
    yf.reserve(fit_rows.size());
    for (auto i : fit_rows) yf.push_back(y[i]);
    auto learner = make();
    learner->fit(X.take_rows(fit_rows), yf);
    auto p = learner->predict(X.take_rows(pred_rows));
    for (std::size_t j = 0; j < pred_rows.size(); ++j) out[pred_rows[j]] = p[j];
  }
  return out;
}

}  // namespace carb
