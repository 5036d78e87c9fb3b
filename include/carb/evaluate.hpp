// Evaluation of a trained CARB model on measured data: the paper's evaluation tables.
// Held-out accuracy on the training split's test rows, baselines (FLOPs-only linear,
// latency-as-energy proxy), leave-one-batch-tier-out, the telemetry ablation, gain and
// permutation importance, the residual study and the blend's components.
//
// The result is one JSON document (the `carb evaluate --format json` contract). Sections
// that cannot be computed on the data (no telemetry, --quick, too few rows) carry
// {"available": false, "reason": "..."} instead of numbers — never estimates.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <vector>

#include "carb/dataset.hpp"
#include "carb/model.hpp"

namespace carb {

struct EvaluateOptions {
  /// Split seed and test fraction; unset = the bundle's recorded split, else 42 / 0.2.
  std::optional<unsigned> seed;
  std::optional<double> test_fraction;
  /// Skip the sections that retrain models (leave-one-batch-tier-out, ablation, no-cascade).
  bool quick = false;
  /// The residual study's high-utilization regime: avg_sm_util above this (percent).
  double high_util_threshold = 65.0;
  /// The leave-one-batch-tier-out boundary: train on batch > this, test on batch <= this.
  int lobto_max_batch = 8;
  /// Shuffles averaged per feature for permutation importance.
  int permutation_repeats = 3;
  /// Progress lines on stderr (retraining takes minutes with the paper's tree counts).
  bool verbose = false;
  /// Score every ok row of the data as held out: an external file, not the training data split
  /// again. The sections that need a training split (baselines, leave-one-batch-tier-out,
  /// ablation, no-cascade) say they are unavailable; rows whose configuration the model trained
  /// on are counted and warned about (from the bundle's record of its training configurations).
  bool external = false;
};

/// Evaluates `model` on the ok rows of `data` (the same rows, in the same order, that
/// `carb train` saw). Throws InputError when the data lacks a target the model predicts,
/// has too few rows for a held-out split, or the options are out of range.
nlohmann::json evaluate_model(const CarbModel& model, const Dataset& data, const EvaluateOptions& o = {});

/// The `carb evaluate` job: loads the bundle (ModelError when missing or corrupted), reads
/// the dataset CSVs (DataError when malformed), evaluates, and records the paths.
nlohmann::json run_evaluate(const std::filesystem::path& model_dir,
                            const std::vector<std::filesystem::path>& data, const EvaluateOptions& o = {});

/// Compact text tables of an evaluate document, one section after another.
void render_evaluation_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace carb
