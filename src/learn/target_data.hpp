// One target as the learners see it during training: log y (or y for a raw-target model), or in
// the ratio form log(y / analytic estimate) with the estimate refitted without each fold, and the
// out-of-fold machinery that keeps a row's prediction free of that row in either form. Shared by
// cascade training (carb_train.cpp) and the unseen-architecture calibration.
#pragma once
#include <string>
#include <vector>

#include "carb/analytic_estimate.hpp"
#include "carb/dataset.hpp"
#include "carb/matrix.hpp"
#include "oof.hpp"

namespace carb {

struct TargetData {
  std::vector<float> y;        // transformed target: log y, or log(y / estimate) in the ratio form
  std::vector<double> y_raw;   // measured values
  std::vector<float> offset;   // log estimate per row in the ratio form (else 0): y + offset = log y
  // Ratio form, out of fold: fold f's learners fit y_by_fold[f], the ratio to an estimate fitted
  // without fold f, and their prediction of a row plus oof_shift is in the space of y above.
  std::vector<std::vector<float>> y_by_fold;
  std::vector<float> oof_shift;  // log e_fold(i)(c_i) - offset_i
};

/// The target's values in every row of d (InputError for a missing or, in log space, non-positive one).
TargetData target_data(const Dataset& d, const std::string& target, bool log_target);

/// td rewritten to the ratio form of `e` (an estimate fitted on every row of d), with the
/// out-of-fold view of an estimate refitted without each of the k folds.
TargetData ratio_data(const TargetData& td, const AnalyticEstimate& e, const std::string& target, const Dataset& d,
                      const std::vector<int>& folds, int k);

/// The add_oof of a target: per fold in the ratio form, else one target for all folds.
std::size_t add_target_oof(FitBatch& b, const FitBatch::Make& make, const Matrix& X, const TargetData& td,
                           const std::vector<int>& folds, int k);
/// Out-of-fold predictions of one add_oof group, in the space of td.y.
std::vector<float> oof_in_target_space(const FitBatch& b, std::size_t handle, const TargetData& td);

/// Measured units from the transformed space the learners work in.
std::vector<double> to_raw(const std::vector<float>& v, const TargetData& td, bool log_target);

double mean_squared(const std::vector<float>& y, const std::vector<float>& p);

}  // namespace carb
