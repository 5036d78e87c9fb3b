// Internals shared by the sections of `carb evaluate`: the held-out split and the model's own
// predictions on it (per-target matrices and parts of a blend come from CarbModel itself).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "carb/evaluate.hpp"
#include "carb/matrix.hpp"
#include "carb/model.hpp"

namespace carb::eval {

/// What every section works on: the model, the split of the ok rows, and the model's
/// predictions on the test rows (raw units, per target).
struct Context {
  const CarbModel& model;
  Dataset all, train, test;
  EvaluateOptions opts;
  bool split_matches_training = false;  // the train split is exactly the bundle's training data
  std::map<std::string, std::vector<double>> test_pred;  // the model's answers (predict_columns)
  /// What the cascade feeds each downstream target on the test rows (CarbModel::cascade_inputs):
  /// the parts a target's learners are scored on take these, as predict does.
  std::map<std::string, std::vector<double>> test_cascade;
};

/// Sets c.test_pred and c.test_cascade from c.test.
void predict_test_rows(Context& c);

/// {"available": false, "reason": reason}
nlohmann::json unavailable(const std::string& reason);

/// Measured values of a target over a dataset's rows (InputError naming the first row without one).
std::vector<double> target_column(const Dataset& d, const std::string& target);

/// Held-out metrics of a model per target.
/// `notes`, when given, receives nonpositive_note of the predictions, prefixed by `what`.
std::map<std::string, FitMetrics> score_targets(const CarbModel& m, const Dataset& test,
                                                std::vector<std::string>* notes = nullptr, const std::string& what = "");
/// What a user must know of a model's predictions of `test` before reading its scores: where the
/// configurations lie past its trained ranges (guesses_note), and how many predictions are at or
/// below zero (a raw-target model's), scored as they are. Empty strings are left out.
std::vector<std::string> prediction_notes(const CarbModel& m, const Dataset& test,
                                          const std::map<std::string, std::vector<double>>& pred);
/// Per target, a note when nearly every row of `test` is one constant factor away from `pred`
/// (another unit, or a platform that much faster or slower): for --external, where the data is another file.
std::vector<std::string> constant_factor_notes(const CarbModel& m, const Dataset& test,
                                               const std::map<std::string, std::vector<double>>& pred);
/// {target: {r2, mae, rmse, mape, n}}: the one JSON form of per-target metrics.
nlohmann::json metrics_json(const std::map<std::string, FitMetrics>& m);

/// A fresh model trained on `train` with the bundle's options changed by `o` (verbose per
/// the evaluate options); the retraining sections share it.
CarbModel retrain(const Context& c, const Dataset& train, TrainOptions o);
/// Held-out metrics of the model retrained without the cascade (every target from x alone).
std::map<std::string, FitMetrics> no_cascade_scores(const Context& c, std::vector<std::string>* notes = nullptr);

/// The sections, one per file.
Baselines baselines_section(const Context& c);
std::map<std::string, std::vector<FeatureImportance>> importance_section(const Context& c);
/// `warnings` receives what the no-cascade variant's predictions need said (its costs at or below zero).
std::map<std::string, TargetComponents> components_section(const Context& c, std::vector<std::string>* warnings = nullptr);
ResidualStudy residuals_section(const Context& c);
IntervalCoverage intervals_section(const Context& c);
LobtoResult lobto_section(const Context& c);
AblationResult ablation_section(const Context& c);

}  // namespace carb::eval
