// Internals shared by the sections of `carb evaluate`: the held-out split, per-target
// feature matrices (base features + the model's own upstream predictions) and predicting
// one target from such a matrix with chosen parts of the blend.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "carb/evaluate.hpp"
#include "carb/matrix.hpp"
#include "carb/model.hpp"

namespace carb::eval {

/// What every section works on: the model, the split of the ok rows, and the model's
/// cascade predictions on the test rows (raw units, per target).
struct Context {
  const CarbModel& model;
  Dataset all, train, test;
  EvaluateOptions opts;
  bool split_matches_training = false;  // the train split is exactly the bundle's training data
  std::map<std::string, std::vector<double>> test_pred;
};

/// {"available": false, "reason": reason}
nlohmann::json unavailable(const std::string& reason);

/// Measured values of a target over a dataset's rows (InputError naming the first row without one).
std::vector<double> target_column(const Dataset& d, const std::string& target);

/// Held-out metrics of a model per target, typed and as {target: {r2, mae, rmse, mape, n}}.
std::map<std::string, FitMetrics> score_targets(const CarbModel& m, const Dataset& test);
nlohmann::json score_model(const CarbModel& m, const Dataset& test);
/// {target: {r2, mae, rmse, mape, n}}: the one JSON form of per-target metrics.
nlohmann::json metrics_json(const std::map<std::string, FitMetrics>& m);

/// The matrix one target's learners see on `configs`: base features + its upstream
/// predictions (taken from `preds`, raw units, transformed like training did).
Matrix target_features(const CarbModel& m, const TargetModel& tm, const Matrix& base,
                       const std::map<std::string, std::vector<double>>& preds);

/// Which parts of a target's model to predict with.
using Parts = PredictParts;
/// Raw-unit predictions of one target from its feature matrix (same arithmetic as
/// CarbModel::predict_columns, which the tests check).
std::vector<double> predict_target(const CarbModel& m, const TargetModel& tm, const Matrix& X,
                                   const std::vector<Config>& configs, Parts parts = {});

/// A fresh model trained on `train` with the bundle's options changed by `o` (verbose per
/// the evaluate options); the retraining sections share it.
CarbModel retrain(const Context& c, const Dataset& train, TrainOptions o);
/// Held-out metrics of the model retrained without the cascade (every target from x alone).
nlohmann::json no_cascade_scores(const Context& c);

/// The sections, one per file.
Baselines baselines_section(const Context& c);
std::map<std::string, std::vector<FeatureImportance>> importance_section(const Context& c);
nlohmann::json components_section(const Context& c);
ResidualStudy residuals_section(const Context& c);
LobtoResult lobto_section(const Context& c);
AblationResult ablation_section(const Context& c);

}  // namespace carb::eval
