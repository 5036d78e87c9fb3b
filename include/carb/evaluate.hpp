// Evaluation of a trained CARB model on measured data: the paper's evaluation tables.
// Held-out accuracy on the training split's test rows, baselines (FLOPs-only linear,
// latency-as-energy proxy), leave-one-batch-tier-out, the telemetry ablation, gain and
// permutation importance, the residual study and the blend's components.
//
// The result is an Evaluation, typed section by section; to_json() gives the `carb evaluate --format
// json` document. Sections that cannot be computed on the data (no telemetry, --quick, too few
// rows) say so with a reason (in JSON {"available": false, "reason": "..."}) instead of numbers —
// never estimates.
#pragma once
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <vector>

#include "carb/dataset.hpp"
#include "carb/metrics.hpp"
#include "carb/model.hpp"
#include "carb/training_record.hpp"

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
  /// The CSV files the data was read from (run_evaluate sets them): with `external`, their
  /// provenance sidecars say in which settings the rows' protocols differ from the model's data.
  std::vector<std::filesystem::path> data_files;
};

/// Which rows were scored: the held-out split of the data (as `carb train` made it), or every
/// row of an external file.
struct EvaluationSplit {
  bool external = false;
  unsigned seed = 0;          // split only
  double test_fraction = 0;   // split only
  std::string source;         // split only: "flags" | "bundle" | "default"
  std::size_t train_rows = 0, test_rows = 0;
  bool matches_training = false;  // split only: the train rows are exactly the bundle's training data
  /// How many scored rows are configurations the model trained on (nullopt: the bundle does not
  /// record them, or, split only, the data is another platform's).
  std::optional<std::size_t> rows_in_training;
  /// Of those, the rows measured on the model's own platform: scored in-sample, not held-out.
  std::size_t in_sample_rows = 0;
  nlohmann::json to_json() const;
};

/// Leave-one-batch-tier-out: retrained on the large batches, scored on the small ones.
struct LobtoResult {
  bool available = false;
  std::string reason;  // why not, when unavailable
  std::string split;   // "train on batch > 8, test on batch <= 8"
  std::size_t train_rows = 0, test_rows = 0;
  std::map<std::string, FitMetrics> targets;
  /// Where the retrained model's test rows lie past its own trained ranges, and its predictions
  /// at or below zero (eval::prediction_notes).
  std::vector<std::string> warnings;
  nlohmann::json to_json() const;
};

/// The telemetry ablation: all features against architecture-only, on the rows with telemetry.
struct AblationResult {
  bool available = false;
  std::string reason;
  std::optional<std::string> reused_bundle;  // the variant the bundle itself is, when it was reused
  std::size_t train_rows = 0, test_rows = 0;
  std::size_t train_without_telemetry = 0, test_without_telemetry = 0;  // left out
  std::map<std::string, FitMetrics> all_features, architecture_only;
  std::map<std::string, double> delta_r2;  // architecture_only - all_features
  /// Either variant's predictions at or below zero, scored as they are (nonpositive_note).
  std::vector<std::string> warnings;
  nlohmann::json to_json() const;
};

/// One feature's importance for a target: the blend-weighted gain of training, and the held-out
/// MAE increase when its column is shuffled (absolute and as a share of the MAE).
struct FeatureImportance {
  std::string feature;
  double gain = 0, permutation = 0, permutation_pct = 0;
};

/// A baseline fitted on the train split and scored on the held-out rows, per target, with how
/// much lower CARB's held-out MAE is (the paper's headline comparison).
struct BaselineScore {
  bool available = false;
  std::string reason;
  FitMetrics metrics;
  double carb_mae_reduction_pct = 0;
};
struct Baseline {
  bool available = false;
  std::string reason;
  std::string feature;                          // what it regresses on
  std::map<std::string, BaselineScore> targets;
  std::optional<double> slope, intercept;       // the latency proxy's line
};
/// FLOPs-only linear (raw and log-log) per target, and the latency-as-energy proxy.
struct Baselines {
  Baseline flops_linear, flops_loglinear, latency_proxy;
  nlohmann::json to_json() const;
};

/// The residual study on the held-out rows: the spread per batch regime ("<=8", "9-64", ">64"),
/// and Spearman's rho of residual against SM utilization where utilization is high.
struct RegimeSpread {
  std::size_t n = 0;
  std::optional<double> std, mae, log_ratio_std;  // empty where the regime has too few rows
};
struct HighUtilResidual {
  std::size_t n = 0;
  std::optional<double> rho;  // empty below 3 rows: a rho of +-1 or 0 by construction
};
struct ResidualStudy {
  std::map<std::string, std::map<std::string, RegimeSpread>> batch_regimes;  // target -> regime
  bool high_util_available = false;
  std::string high_util_reason;
  double high_util_threshold = 0;  // percent SM utilization
  std::size_t high_util_rows = 0;
  std::map<std::string, HighUtilResidual> high_util;  // per target
  nlohmann::json to_json() const;
};

/// How often the model's intervals hold the scored rows' measurements, per target and level (the
/// levels a bundle calibrates): the stated coverage checked on the user's own rows, overall and in
/// the smaller and larger half of the predictions (by the point answer), where one width for all
/// sizes held the small configurations less often than stated (README, "Do intervals hold").
struct IntervalLevelCoverage {
  std::size_t n = 0;          // scored rows
  std::size_t held = 0;       // measurement inside [lower, upper] (an unbounded interval holds it)
  std::size_t unbounded = 0;  // rows whose interval has no upper bound at this level
  std::optional<double> share, smaller_half, larger_half;  // held / n; each half's, empty under 2 rows
  /// Held among the rows whose interval is bounded (an unbounded one cannot miss above); empty when
  /// none is bounded.
  std::optional<double> bounded_share;
  /// The median of upper / lower over the scored rows (infinite where an interval is unbounded or
  /// reaches down to zero; the mean of the two middle ones for an even count); empty when infinite.
  std::optional<double> median_width;
};
struct IntervalCoverage {
  std::map<std::string, std::map<std::string, IntervalLevelCoverage>> targets;  // target -> level ("0.9")
  /// Of a held-out split, the test rows whose configuration the model trained on (a split other than
  /// the bundle's): left out, since the intervals were calibrated out of fold and hold nearly every
  /// row they trained on. Kept, and `in_sample` set, when fewer than 2 rows would be left.
  /// --external scores every row: a new measurement of a trained configuration is what an interval
  /// with a re-measured spread is for.
  std::size_t left_out_trained = 0;
  bool in_sample = false;
  /// For a drift-corrected model: latency is scored against drift-corrected latency, as `targets` is.
  std::optional<double> drift_reference_ms;
  nlohmann::json to_json() const;
};

/// One target's blend, part by part: the out-of-fold record of training next to the same parts on
/// the held-out rows, and the model retrained without the cascade.
struct TargetComponents {
  std::map<std::string, double> weights;  // learner kind -> blend weight
  std::vector<std::string> upstream;      // cascade inputs
  bool corrector = false;
  OofComponents oof;                      // training's out-of-fold record (from the bundle)
  std::map<std::string, FitMetrics> learners_test;  // each learner alone on the held-out rows, by kind
  FitMetrics blend_test;
  std::optional<FitMetrics> blend_corrected_test;   // when the target has a corrector
  /// The model's own answers, held where no smaller configuration may answer more (monotone_in):
  /// set when the target holds any knob, the last of its parts.
  std::optional<FitMetrics> held_monotone_test;
  std::optional<FitMetrics> no_cascade;             // retrained with every target from x alone
  std::string no_cascade_reason;                    // why no_cascade is empty
  nlohmann::json to_json() const;
};

/// A drift-corrected model (carb/drift.hpp) scored against the raw, uncorrected latencies: its
/// prediction as is, and rescaled by each row's own reference reading.
struct DriftCorrectionScore {
  double reference_ms = 0;
  std::optional<FitMetrics> raw_prediction, raw_prediction_times_row_reference;  // latency models only
  nlohmann::json to_json() const;
};

struct Evaluation {
  std::string platform;                        // the model's
  std::vector<std::string> targets_predicted;  // in cascade order
  std::size_t rows = 0;                        // ok rows of the data
  EvaluationSplit split;
  bool quick = false;
  std::vector<std::string> warnings;
  std::map<std::string, FitMetrics> targets;   // held-out accuracy per target
  LobtoResult lobto;
  AblationResult ablation;
  /// Per target, every feature by gain (then permutation), most important first.
  std::map<std::string, std::vector<FeatureImportance>> importance;
  ResidualStudy residuals;
  IntervalCoverage intervals;  // on the same rows as `targets`
  Baselines baselines;
  std::map<std::string, TargetComponents> components;  // per target
  std::optional<DriftCorrectionScore> drift_correction;  // a drift-corrected model only
  std::map<std::string, double> seconds;           // per section
  std::string model;                                // run_evaluate: the bundle's path
  std::vector<std::string> data;                    // run_evaluate: the data files
  /// The `carb evaluate --format json` document.
  nlohmann::json to_json() const;
};

/// Evaluates `model` on the ok rows of `data` (the same rows, in the same order, that
/// `carb train` saw). Throws InputError when the data lacks a target the model predicts,
/// has too few rows for a held-out split, or the options are out of range.
Evaluation evaluate_model(const CarbModel& model, const Dataset& data, const EvaluateOptions& o = {});

/// evaluate's warning for scored rows of the model's platform measured under another protocol than
/// its data (their protocol_id against the sidecars of the model's data files), naming the settings
/// that differ where `data_files`' sidecars record them; nullopt where none is, where either side is
/// unknown, or for another platform's rows (said apart). The report gives it too.
std::optional<std::string> other_protocol_warning(const CarbModel& model, const Dataset& rows,
                                                  const std::vector<std::filesystem::path>& data_files = {});
/// evaluate's warning for scores from fewer than 10 rows; nullopt from more. The report gives it too.
std::optional<std::string> few_rows_warning(std::size_t rows);

/// The `carb evaluate` job: loads the bundle (ModelError when missing or corrupted), reads
/// the dataset CSVs (DataError when malformed), evaluates, and records the paths.
Evaluation run_evaluate(const std::filesystem::path& model_dir, const std::vector<std::filesystem::path>& data,
                        const EvaluateOptions& o = {});

/// Compact text tables of an evaluation, one section after another.
void render_evaluation_table(const Evaluation& e, std::ostream& out);

}  // namespace carb
