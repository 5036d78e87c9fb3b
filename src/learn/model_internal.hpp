// Internals shared by CARB model training, prediction and the bundle format.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "carb/model.hpp"
#include "target_model.hpp"

namespace carb {

/// Column name of an upstream target's prediction used as a downstream feature.
inline std::string upstream_feature(const std::string& target) { return "pred_" + target; }

/// The base features with the upstream predictions appended as columns.
Matrix with_upstream(const Matrix& base, const std::vector<std::string>& upstream,
                     const std::map<std::string, std::vector<float>>& preds);

/// Costs in their units as the cascade feeds them downstream: log y (or y for a raw-target model).
std::vector<float> to_training_space(const std::vector<double>& raw, bool log_target);

/// One target's predictions in its units (CarbModel::predict_target, for a target in hand).
std::vector<double> predict_target_model(const TargetModel& tm, const TrainOptions& o, const Matrix& X,
                                         const std::vector<Config>& configs, PredictParts parts = {});

/// Trains one target (learners, blend, corrector, conformal); returns its corrected
/// out-of-fold predictions in the transformed (log) space.
std::vector<float> train_target(TargetModel& tm, const Matrix& X, const Dataset& d, const TrainOptions& o,
                                const std::vector<int>& folds);

/// The low-batch residual corrector: a small leaf-wise booster.
std::unique_ptr<Learner> make_corrector(const TrainOptions& o);

/// Refuses (ModelError) a loaded bundle holding values no training writes: options, the training
/// record, the trained configurations, and predictions for trained configurations that are no cost.
/// Whether a manifest's "manifest_fnv1a64" is the checksum of the rest of it, as save() seals it
/// (false when the key is missing or not a string).
bool manifest_checksum_verifies(nlohmann::json manifest);
void check_loaded_model(const CarbModel& m, const nlohmann::json& manifest, const std::filesystem::path& dir);
/// Refuses (ModelError) a bundle's options that training refuses (check_train_options), before its
/// learners are built from them (threads -5 built none and said InputError).
void check_bundle_options(const TrainOptions& o, const std::filesystem::path& dir);

/// "0.9" style key of a coverage level.
std::string conformal_key(double level);

}  // namespace carb
