// Out-of-fold machinery shared by cascade training: fold assignment and K-fold
// predictions, so no row is ever predicted by a model that saw it.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "carb/learner.hpp"

namespace carb {

/// Fold id (0..k-1) per row, balanced and shuffled under the seed.
std::vector<int> assign_folds(std::size_t n, int k, unsigned seed);

/// Out-of-fold predictions: for each fold, a fresh learner from `make` fits the other folds
/// and predicts this one. Rows outside `rows` (when given) are neither fitted nor predicted.
std::vector<float> oof_predict(const std::function<std::unique_ptr<Learner>()>& make, const Matrix& X,
                               const std::vector<float>& y, const std::vector<int>& folds, int k);

}  // namespace carb
