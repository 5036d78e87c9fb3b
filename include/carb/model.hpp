// The CARB model: a cascade memory -> energy -> latency; each target a validation-weighted
// blend of three tree learners on the (log) target, with out-of-fold upstream predictions
// as downstream features, plus a low-batch residual corrector, and split-conformal
// prediction intervals. Saved as a bundle directory with a manifest.
#pragma once
#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "carb/analytic_estimate.hpp"
#include "carb/bundle_destination.hpp"
#include "carb/dataset.hpp"
#include "carb/envelope.hpp"
#include "carb/features.hpp"
#include "carb/learner.hpp"
#include "carb/training_record.hpp"

namespace carb {

/// 2: manifest.json carries a checksum of its own content, the trained envelope and, per target,
///    the analytic estimate its learners correct (when the ratio form was chosen).
/// 3: every learner and corrector file's FNV-1a is in the (checksummed) manifest, so a file copied
///    in from another bundle is refused.
/// 4: interval widths per predicted size (`TrainOptions::size_bins` > 1). A bundle of one width per
///    regime is still written as version 3, which it is, byte for byte in meaning; a carb that reads
///    only version 3 then refuses a binned bundle instead of predicting from it with one width per
///    regime without a word (the twenty-third session's note).
inline constexpr int kBundleSchemaVersion = 4;
/// The version a bundle of one interval width per regime is written as, and the oldest this carb reads.
inline constexpr int kBundleSchemaVersionOneWidth = 3;

/// The coverage levels a bundle calibrates its split-conformal intervals at; an interval is asked
/// for at one of them (seventeenth hostile pass: 0.5 answered the 0.8 interval, labelled 50%).
inline constexpr std::array<double, 4> kConfidenceLevels{0.8, 0.9, 0.95, 0.99};
/// InputError naming the levels unless `confidence` is one of kConfidenceLevels.
void check_confidence_level(double confidence);

struct TrainOptions {
  /// carb's own boosters by default: XGBoost's hist method, 4x faster on carb's datasets at equal
  /// held-out accuracy (README, "Training speed"); "xgb_depthwise", "xgb_lossguide" run XGBoost itself.
  std::vector<std::string> learners = {"gbdt_depthwise", "gbdt_leafwise", "extra_trees"};
  LearnerParams params;           // trees/depth/leaves; 0 = each learner's paper default
  int folds = 5;                  // out-of-fold predictions for cascade features, blend weights, correctors
  double blend_step = 0.1;        // simplex grid step for blend weights
  bool correctors = true;
  int corrector_max_batch = 8;    // low-batch regime: batch <= this
  /// Interval widths per bin of the predicted value inside each batch regime (1: one width per
  /// regime, the default until 2026-12-06). Out of fold, one regime-wide 90% width held 84.6% of the H200's
  /// smallest quarter of energies and 100% of its largest at ±20%; two bins held 87.7% and 98.5%,
  /// the largest at ±15% (README, "Do intervals hold ..."). 1 to kMaxSizeBins.
  int size_bins = 2;
  double lambda = 0.9;            // damping of the corrector
  bool cascade = true;            // false: every target from x alone (for the ablation)
  bool use_telemetry = false;     // include telemetry features (needs them at predict time too)
  bool log_target = true;         // learn log(y); predictions are exp'd back
  /// Learn log(y / analytic estimate) instead of log(y) (carb/analytic_estimate.hpp): "on", "off",
  /// or "auto", which lets a quick out-of-fold comparison choose per target (recorded in the bundle).
  std::string normalize = "auto";
  /// The split's and the folds'; the learners' is params.seed (`carb train --seed` and Python's
  /// Model.train(seed=) set both).
  unsigned seed = 42;
  bool verbose = false;           // progress lines on stderr
};

/// The most bins of the predicted value training splits each batch regime's interval widths into.
inline constexpr int kMaxSizeBins = 4;

/// Refuses (InputError) options training does not take, and the bundle loader would refuse: unknown
/// or repeated learners, learner parameters out of range, more than 1024 threads, folds outside 2–50,
/// a blend step outside (0, 1], a low-batch limit outside 1–1000000, a damping outside [0, 1], a
/// normalize other than auto, on or off. CarbModel::train calls it first.
void check_train_options(const TrainOptions& o);

/// The fast setting, for planning rounds and quick looks: 100 trees per learner, 3 folds, no
/// low-batch correctors (README, "Training speed": its accuracy cost on the shipped data).
inline constexpr int kFastTrees = 100, kFastFolds = 3;
inline void make_fast(TrainOptions& o) {
  o.params.n_trees = kFastTrees;
  o.folds = kFastFolds;
  o.correctors = false;
}

/// What one target's model is, for callers: its cascade inputs, blend and what training measured
/// of it. The fitted learners themselves stay inside the library.
struct TargetSummary {
  std::string target;
  std::vector<std::string> upstream;  // cascade inputs, e.g. {"peak_memory_mb"}
  std::vector<std::string> learners;  // the blended learners' kinds, in blend order
  std::vector<double> weights;        // their blend weights (sum 1)
  bool corrector = false;             // a low-batch residual corrector is added
  /// Set when the learners fit log(y / estimate): the prediction is estimate × learned ratio.
  std::optional<AnalyticEstimate> estimate;
  OofComponents oof;                  // out-of-fold accuracy of each part, and the form choice
  /// Per coverage level ("0.8" ... "0.99"), how much wider in log space an interval gets per unit of
  /// distance past the trained ranges, calibrated in training by holding out each dimension's
  /// extreme rows; empty for a bundle from before (then 1 at every level).
  std::map<std::string, double> extrapolation_rate;
  /// The knobs ("batch", "resolution") along which the training measurements never fell, so that
  /// no answer falls either where a configuration grows along them, at and between the trained
  /// levels; empty where they fell (usually latency and energy; an H200's memory between
  /// resolutions), where the bundle predates the rule, or where it lists no trained configurations.
  std::vector<std::string> monotone_in;
  /// Per coverage level, how far (|log ratio|, that level's quantile) an independent re-measurement
  /// of the data's configurations landed from the campaign's measurement; every interval adds it
  /// (CarbModel::calibrate_remeasurement). Empty for a model trained without one: its intervals
  /// hold a held-out row of the training campaign, and a measurement on another day may fall
  /// outside far more often (cpu-2t: 44% of 90% latency intervals held an independent run).
  std::map<std::string, double> remeasured_spread;
  std::size_t remeasured_pairs = 0;  // configurations measured in both runs
};

/// What the model knows of the device its data was measured on, beyond the rows: its memory (a
/// configuration predicted to need more would not run there) and the power limit its rows were
/// measured under (a prediction implying more power than that is off). Either may be unknown.
inline constexpr double kMinDeviceMemoryMb = 1e-3, kMaxDeviceMemoryMb = 1e12;
inline constexpr double kMinDevicePowerW = 1e-3, kMaxDevicePowerW = 1e6;
struct DeviceLimits {
  std::optional<double> memory_mb;      // the device's capacity: `carb train --device-memory-mb`, else its data's provenance
  std::optional<double> power_limit_w;  // from the data's provenance (platform_info.power_limit_w)
  bool empty() const { return !memory_mb && !power_limit_w; }
  /// InputError unless each value present lies in its range (kMinDeviceMemoryMb ... kMaxDevicePowerW).
  void check() const;
};

struct TargetModel;  // the fitted pieces of one target (src/learn/target_model.hpp)

/// How many configurations the CLI's `predict` and Python's `Model.predict` answer at a time
/// (CarbModel::predict_chunked): a million took minutes deaf to Ctrl-C and writing nothing
/// (ninety-first hostile pass); a chunk is what is written, or lost to a signal, at once.
inline constexpr std::size_t kPredictChunk = 20000;

/// Which parts of a target's model a prediction uses (evaluation compares them; predict uses all).
struct PredictParts {
  int only_learner = -1;  // >= 0: that learner alone; -1: the weighted blend
  bool corrector = true;  // add the low-batch corrector (when the model has one)
};

struct Prediction {
  Config config;
  std::map<std::string, double> value;                  // per target
  std::map<std::string, std::pair<double, double>> interval;  // per target, when a confidence is asked
  /// Where the configuration lies outside what the model trained on (empty inside): there the
  /// prediction is a guess, and its interval is widened by the distance times the target's
  /// extrapolation rate (TargetSummary::extrapolation_rate; see carb/envelope.hpp).
  std::vector<Excursion> outside;
  /// Whether the model trained on this configuration's architecture (family, depth, width,
  /// precision) at some resolution and batch (CarbModel::trained_architecture). A network never
  /// measured is a prediction for a new network: inside the ranges, and still less sure.
  bool trained_architecture = true;
};

/// One target's ensemble members, each in the target's units (back-transformed, times the analytic
/// estimate when the target learned a ratio), without the low-batch corrector: how much the model
/// disagrees with itself about a configuration (carb plan's uncertainty).
struct MemberPredictions {
  std::vector<std::vector<double>> learners;  // [learner][configuration]: each blended learner alone
  std::vector<std::vector<double>> trees;     // [tree][configuration]: every tree of the forest learners
};

/// InputError unless `again` can calibrate a re-measurement spread for `campaign`
/// (CarbModel::calibrate_remeasurement): the same one platform, some configuration in common, and
/// not the data's own values (to 0.01%) for most of them (a copy, edited or rounded, is no
/// measurement).
void check_remeasurement(const Dataset& campaign, const Dataset& again);

class CarbModel {
 public:
  CarbModel();
  ~CarbModel();
  CarbModel(CarbModel&&) noexcept;
  CarbModel& operator=(CarbModel&&) noexcept;

  /// Trains on the ok rows of `train`. Throws InputError on empty data, no targets, NaN targets.
  static CarbModel train(const Dataset& train, const TrainOptions& o);
  static CarbModel load(const std::filesystem::path& dir);  // ModelError on any problem
  /// Writes the bundle to `dir`, replacing it atomically; refuses (InputError) to replace anything
  /// but a carb bundle unless `force` (see carb/bundle_destination.hpp).
  void save(const std::filesystem::path& dir, bool force = false) const;
  /// Writes into a destination staged (and checked) before the work, and commits it.
  void save(BundleDestination& dest) const;

  const std::vector<std::string>& targets() const { return targets_; }
  bool has_target(const std::string& t) const;
  const FeatureSchema& schema() const { return schema_; }
  const std::string& platform() const { return platform_; }
  const TrainOptions& options() const { return opts_; }
  /// One summary per target, in cascade order.
  std::vector<TargetSummary> target_summaries() const;
  /// InputError for a target the model does not predict.
  TargetSummary target_summary(const std::string& target) const;
  /// What `carb train` recorded of the run that made this model (saved with the bundle).
  const TrainingRecord& training_record() const { return record_; }
  void set_training_record(TrainingRecord r) { record_ = std::move(r); }
  std::string data_hash() const { return data_hash_; }
  /// Keys (config_key) of the configurations the model trained on, sorted; empty when the bundle
  /// predates this record (see knows_trained_configs).
  const std::vector<std::string>& trained_configs() const { return trained_configs_; }
  bool knows_trained_configs() const { return knows_trained_; }
  /// `c` with its width replaced by the trained width that builds the same channels, if any: one
  /// network, one answer (0.2549 answered 0.2% off 0.25's, and 0.245 was flagged a guess).
  Config as_trained(const Config& c) const;
  std::vector<Config> as_trained(const std::vector<Config>& cs) const;
  /// ModelError, saying what the model is, unless it holds a trained model (one constructed empty or
  /// moved from holds none): every prediction, save, screen and recommend check it first. What it
  /// trained on (trained_on, as_trained, answered_precision, target_summaries) answers as an empty
  /// model: nothing trained. Moving a model into itself leaves it empty, as the standard library's.
  void require_trained() const;
  /// The precision the model answers `p` at: `p`, or where the model never trained on it and did
  /// on the other two-byte precision (fp16 and bf16), that one. An untrained precision's terms of the
  /// analytic estimate were never fitted (0): answered as itself, it came out cheaper than every
  /// trained precision and topped screens (hundred-and-nineteenth hostile pass). Its memory is the
  /// same bytes; its time and energy are the other's, flagged as never trained all the same, and
  /// past the other's ranges where that one's are.
  Precision answered_precision(Precision p) const;
  /// True when the model saw this configuration's network in training (false when it does not
  /// know): a width spelled otherwise that builds the same channels (0.251 for 0.25) counts.
  bool trained_on(const Config& c) const;
  /// True when the model saw this configuration's architecture (family, depth, width by its
  /// channels, precision) at any resolution and batch, or does not know what it trained on. The
  /// intervals of an architecture never trained are calibrated by holding whole architectures out.
  bool trained_architecture(const Config& c) const;
  /// Whether the model has intervals calibrated for architectures it never trained on (training
  /// on 3 or more architectures gives them; a bundle from before gives the trained widths there).
  bool calibrates_unseen_architectures() const;
  /// The networks that calibrated those intervals (0 without them): a level needs
  /// ceil(level / (1 - level)) of them (90%: 9) to bound a new network's interval.
  int unseen_calibration_networks() const;
  /// Set when the model learned drift-corrected latency (see carb/drift.hpp): the typical
  /// reference time R its latency is expressed at. Data it is evaluated on is corrected the same way.
  std::optional<double> drift_reference_ms() const { return drift_reference_ms_; }
  /// Calibrates every target's re-measurement spread (TargetSummary::remeasured_spread) from
  /// `again`, an independent measurement of some of `campaign`'s configurations (the data the model
  /// was trained from, its held-out rows too), same platform (and protocol, or a warning).
  /// InputError when it cannot (another platform, a copy of the data, fewer than 20
  /// configurations measured in both, a drift-corrected model).
  void calibrate_remeasurement(const Dataset& campaign, const Dataset& again);
  /// Whether calibrate_remeasurement gave the intervals a re-measurement's spread.
  bool has_remeasured_spread() const;
  /// Records the host speed latency is predicted at (the reference network's ms; saved with the
  /// bundle). InputError unless a positive, finite time.
  void set_drift_reference_ms(double r);
  /// The device's memory and power limit, where training was told or read them (DeviceLimits).
  const DeviceLimits& device_limits() const { return device_; }
  /// Records them (checked: DeviceLimits::check); saved with the bundle.
  void set_device_limits(const DeviceLimits& d);

  /// Predicts every target for each configuration. `confidence`, one of kConfidenceLevels, adds
  /// intervals (check_confidence_level: any other level is refused, not rounded to a stored one).
  std::vector<Prediction> predict(const std::vector<Config>& configs, const std::vector<Telemetry>& telemetry = {},
                                  std::optional<double> confidence = std::nullopt) const;
  /// predict() `chunk` configurations at a time, handing each chunk's answers to `each` with the
  /// index of its first configuration, so that a caller can stream a long list (write as it goes,
  /// show progress, stop on a signal) without holding every answer until the end. `each` returns
  /// false to stop after that chunk (or throws). The answers equal predict()'s in one call; the level
  /// is checked before the first chunk. Returns how many configurations were answered. InputError
  /// for a chunk of 0 or telemetry that is neither empty nor one per configuration.
  std::size_t predict_chunked(const std::vector<Config>& configs, const std::vector<Telemetry>& telemetry,
                              std::optional<double> confidence,
                              const std::function<bool(std::vector<Prediction>&& answers, std::size_t first)>& each,
                              std::size_t chunk) const;
  /// One target's predictions, in its units, from the feature matrix its learners see: the blend (or
  /// one learner), the corrector, the analytic estimate and the back-transform. The one prediction
  /// path: predict_columns and evaluation both go through it.
  /// InputError for a target the model does not predict.
  std::vector<double> predict_target(const std::string& target, const Matrix& X, const std::vector<Config>& configs,
                                     PredictParts parts = {}) const;
  /// The feature matrix `target`'s learners see: the base features with the upstream targets'
  /// predictions (target -> values, in their units, as cascade_inputs returns) as columns.
  /// InputError for an upstream value the learners cannot take (0 or below in a log-target model:
  /// predict_columns' 0 for an impossible cost is not a cascade input).
  Matrix target_features(const std::string& target, const Matrix& base,
                         const std::map<std::string, std::vector<double>>& predictions) const;
  /// What the cascade feeds each downstream target (target -> values, in their units): each
  /// target's answers before they are held between trained levels or monotone (predict_columns),
  /// as predict passes them on, before a latency or energy no device could measure is said as 0.
  /// With these, target_features and predict_target give predict's answers at trained levels where
  /// no answer was held.
  std::map<std::string, std::vector<double>> cascade_inputs(const std::vector<Config>& configs,
                                                            const std::vector<Telemetry>& telemetry = {}) const;
  /// The members of one target's blend for each configuration (see MemberPredictions); upstream
  /// targets enter the cascade as their full predictions, as in predict. InputError for an unknown target.
  MemberPredictions member_predictions(const std::vector<Config>& configs, const std::string& target,
                                       const std::vector<Telemetry>& telemetry = {}) const;
  /// The ranges the model trained on (empty for a model that does not know them).
  const TrainedEnvelope& envelope() const { return envelope_; }
  /// Same, column-wise: target -> values (fast path for screening). A configuration between the
  /// trained levels of resolution, width or batch (resolution 48 where 32 and 64 were measured) is
  /// held between the answers at the trained levels around it: trees split between levels they
  /// saw, and a ratio learned at one level times the estimate at another overshot both (sixtieth
  /// hostile pass: bottleneck-50 at resolution 48 answered 4.34 ms, measured 2.20 ms at 32 and
  /// 3.21 ms at 64). A target whose training measurements never fell as batch or resolution grew
  /// (TargetSummary::monotone_in) never answers less for a configuration than for a smaller one of
  /// the same network at the trained levels.
  std::map<std::string, std::vector<double>> predict_columns(const std::vector<Config>& configs,
                                                             const std::vector<Telemetry>& telemetry = {}) const;
  /// Gain importance per target, as (feature, share) sorted descending (blend-weighted).
  std::vector<std::pair<std::string, double>> importance(const std::string& target) const;
  /// Feature names a target's learners see (schema + upstream predictions).
  std::vector<std::string> feature_names(const std::string& target) const;

 private:
  /// as_trained, each at answered_precision: the configurations every answer is computed at.
  std::vector<Config> answered_as(const std::vector<Config>& cs) const;
  static CarbModel load_once(const std::filesystem::path& dir);
  std::vector<std::string> targets_;
  void index_trained();  // trained_networks_ from trained_configs_
  FeatureSchema schema_;
  std::string platform_;
  TrainOptions opts_;
  std::vector<TargetModel> models_;
  std::string data_hash_;
  std::vector<std::string> trained_configs_;
  std::vector<std::string> trained_networks_;  // network_key of each, sorted (set by index_trained)
  std::vector<std::string> trained_architectures_;  // architecture_key of each, sorted and unique
  std::map<std::string, double> trained_width_of_channels_;  // channels a trained width builds -> that width
  std::set<int> trained_resolutions_, trained_batches_;      // the levels trained (set by index_trained)
  std::map<Family, std::set<int>> trained_depths_;            // per family (set by index_trained)
  std::set<Precision> trained_precisions_;                     // set by index_trained
  std::set<double> trained_widths_;
  /// predict_columns before answers are held monotone (configurations as trained); only the first
  /// `leading` targets of the cascade (each needs only those before it).
  std::map<std::string, std::vector<double>> interpolated_columns(const std::vector<Config>& configs,
                                                                  const std::vector<Telemetry>& telemetry,
                                                                  std::size_t leading = SIZE_MAX) const;
  /// Each target's answers as the cascade passes them on (no answer said as 0 yet).
  std::map<std::string, std::vector<double>> cascade_columns(const std::vector<Config>& configs,
                                                             const std::vector<Telemetry>& telemetry,
                                                             std::size_t leading = SIZE_MAX) const;
  /// predict_columns without holding answers between trained levels: cascade_columns, with a latency
  /// or energy no device could measure said as 0.
  std::map<std::string, std::vector<double>> raw_columns(const std::vector<Config>& configs,
                                                         const std::vector<Telemetry>& telemetry,
                                                         std::size_t leading = SIZE_MAX) const;
  bool knows_trained_ = false;
  std::optional<double> drift_reference_ms_;
  DeviceLimits device_;
  TrainedEnvelope envelope_;
  TrainingRecord record_;

  const TargetModel& target_model(const std::string& target) const;  // InputError when unknown
};

/// Refuses (DataError, naming the first by its 1-based position in `d`) ok rows a dataset CSV's
/// reader would refuse too: one that repeats an earlier ok row's platform and network, and a
/// measured value outside the plausibility bounds (kPlausibleBounds: NaN, zero or negative costs,
/// utilization outside 0-100 %), an empty platform, and a target measured on some ok rows of a platform and not on
/// the first one named (it would be left out of the model). Failed rows are not looked at. CarbModel::train, evaluate_model and
/// transfer check the Dataset they are given with it.
void check_learnable_rows(const Dataset& d);

/// Targets (of kTargets, in cascade order) that have a value in every ok row of the dataset.
std::vector<std::string> available_targets(const Dataset& d);

/// Hash of a dataset's rows (configurations and targets): what CarbModel::data_hash records of
/// the rows a model trained on.
std::string dataset_hash(const Dataset& d);

/// Deterministic train/test split of row indices under a seed.
void split_indices(std::size_t n, double test_fraction, unsigned seed, std::vector<std::size_t>& train,
                   std::vector<std::size_t>& test);
Dataset subset(const Dataset& d, const std::vector<std::size_t>& idx);

}  // namespace carb
