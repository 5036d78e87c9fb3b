// Fold assignment, out-of-fold prediction and the basic fit metrics.
#include "oof.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "carb/error.hpp"
#include "util/parallel.hpp"
#include "util/stop_signal.hpp"

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

std::size_t FitBatch::add_oof(Make make, const Matrix& X, const std::vector<float>& y, const std::vector<int>& folds,
                              int k) {
  return add_oof(std::move(make), X, std::vector<std::vector<float>>{}, folds, k, &y);
}

std::size_t FitBatch::add_oof(Make make, const Matrix& X, const std::vector<std::vector<float>>& y_by_fold,
                              const std::vector<int>& folds, int k) {
  if (y_by_fold.size() != static_cast<std::size_t>(k)) throw InputError("one target per fold is needed");
  return add_oof(std::move(make), X, y_by_fold, folds, k, nullptr);
}

std::size_t FitBatch::add_oof(Make make, const Matrix& X, const std::vector<std::vector<float>>& y_by_fold,
                              const std::vector<int>& folds, int k, const std::vector<float>* y) {
  Group g;
  g.rows = X.rows;
  for (int f = 0; f < k; ++f) {
    Fit fit;
    for (std::size_t i = 0; i < X.rows; ++i) (folds[i] == f ? fit.pred_rows : fit.fit_rows).push_back(i);
    if (fit.pred_rows.empty() || fit.fit_rows.empty()) continue;
    fit.make = make, fit.X = &X, fit.y = y ? y : &y_by_fold[static_cast<std::size_t>(f)];
    g.fits.push_back(fits_.size());
    fits_.push_back(std::move(fit));
  }
  groups_.push_back(std::move(g));
  return groups_.size() - 1;
}

std::size_t FitBatch::add_full(Make make, const Matrix& X, const std::vector<float>& y) {
  Fit fit;
  fit.make = std::move(make), fit.X = &X, fit.y = &y;
  fits_.push_back(std::move(fit));
  groups_.push_back({{fits_.size() - 1}, X.rows});
  return groups_.size() - 1;
}

void FitBatch::run(int threads) {
  parallel_tasks(fits_.size(), threads, [this](std::size_t j) {
    Fit& f = fits_[j];
    if (f.learner || detail::stop_signal()) return;  // run() again after adding more fits; asked to stop
    auto learner = f.make();
    if (f.fit_rows.empty()) {
      learner->fit(*f.X, *f.y);
    } else {
      std::vector<float> yf;
      yf.reserve(f.fit_rows.size());
      for (auto i : f.fit_rows) yf.push_back((*f.y)[i]);
      learner->fit(f.X->take_rows(f.fit_rows), yf);
      f.pred = learner->predict(f.X->take_rows(f.pred_rows));
    }
    f.learner = std::move(learner);
  });
  // A fit skipped for a signal leaves nothing to use: stop here, before anything half-made is kept.
  // (Python's Model.train writes no bundle: "no model bundle was written" misled a tester there.)
  detail::throw_if_stopped("training", "no model was made, and nothing was written");
}

std::vector<float> FitBatch::oof(std::size_t handle) const {
  const Group& g = groups_.at(handle);
  std::vector<float> out(g.rows, 0.0f);
  for (auto j : g.fits) {
    const Fit& f = fits_[j];
    for (std::size_t r = 0; r < f.pred_rows.size(); ++r) out[f.pred_rows[r]] = f.pred[r];
  }
  return out;
}

std::unique_ptr<Learner> FitBatch::take_fitted(std::size_t handle) {
  return std::move(fits_.at(groups_.at(handle).fits.at(0)).learner);
}

std::vector<float> oof_predict(const FitBatch::Make& make, const Matrix& X, const std::vector<float>& y,
                               const std::vector<int>& folds, int k, int threads) {
  FitBatch b;
  const auto h = b.add_oof(make, X, y, folds, k);
  b.run(threads);
  return b.oof(h);
}

}  // namespace carb
