// What training records about a model, typed: how each target's form was chosen, the out-of-fold
// accuracy of its parts, how `carb train` split the data and what it measured on the held-out
// rows. A bundle keeps these records in its (checksummed) manifest; each struct's to_json /
// from_json pair is the one place that writes or reads its document, so the manifest, `carb train
// --format json` and `carb evaluate`'s components section all show the same thing.
#pragma once
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "carb/analytic_estimate.hpp"
#include "carb/metrics.hpp"

namespace carb {

/// What a target's learners fit: log y (plain) or log(y / analytic estimate) (ratio).
enum class TargetForm { plain, ratio };
const char* to_string(TargetForm f);

/// How a target's form was chosen (TrainOptions::normalize).
struct FormChoice {
  TargetForm chosen = TargetForm::plain;
  std::string why;                           // set when the form was forced ("normalize off", "raw target")
  std::optional<AnalyticEstimate> estimate;  // the fitted estimate, also when plain won the comparison
  /// normalize auto: out-of-fold squared error of log y of a quick forest in each form.
  std::optional<double> oof_mse_log_plain, oof_mse_log_ratio;
  nlohmann::json to_json() const;
  static FormChoice from_json(const nlohmann::json& j);
};

/// Out-of-fold accuracy of a target's parts on the training rows, in the target's units.
struct OofComponents {
  std::map<std::string, FitMetrics> learners;  // each learner alone, by kind
  FitMetrics blend;
  std::optional<FitMetrics> blend_corrected;   // when the target has a low-batch corrector
  FormChoice form;
  nlohmann::json to_json() const;
  /// Throws nlohmann::json::exception on a document training does not write (the bundle loader
  /// reports it as a corrupted manifest).
  static OofComponents from_json(const nlohmann::json& j);
};

/// How `carb train` split the data; `carb evaluate` reads it back to score the same held-out rows.
struct TrainingSplit {
  unsigned seed = 42;
  double test_fraction = 0.2;
  std::size_t train_rows = 0, test_rows = 0;
};

/// The run that made a bundle (the manifest's "extra" section). Models trained by the library
/// without `carb train` have an empty record.
struct TrainingRecord {
  std::optional<TrainingSplit> split;
  std::map<std::string, FitMetrics> test_metrics;  // held-out accuracy per target
  std::optional<double> train_seconds;
  std::vector<std::string> data_files;
  /// The re-measurement that calibrated the intervals' spread (`carb train --remeasured`), absolute.
  std::vector<std::string> remeasured_files;
  nlohmann::json to_json() const;
  /// A field the document lacks stays unset (bundles of older runs recorded less).
  static TrainingRecord from_json(const nlohmann::json& j);
};

}  // namespace carb
