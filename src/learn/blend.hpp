// Blend weights on the simplex, chosen by grid search on out-of-fold predictions.
#pragma once
#include <vector>

namespace carb {

/// Weights (one per learner, summing to 1, multiples of `step`) minimising the squared error
/// of the weighted sum of `preds[l][i]` against `y[i]`. Ties keep the earliest grid point.
std::vector<double> choose_blend_weights(const std::vector<std::vector<float>>& preds, const std::vector<float>& y,
                                         double step);

/// Weighted sum of the learners' predictions.
std::vector<float> blend(const std::vector<std::vector<float>>& preds, const std::vector<double>& w);

}  // namespace carb
