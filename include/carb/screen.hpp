// Two-stage deployment screening: rank a configuration space with a (cheap, source-platform)
// model, keep the top K, re-score them with the target platform's model, keep those within
// the deployment budgets (optionally on the conformal upper bound), and return the Pareto
// set over every predicted cost. Also: Pareto extraction, budgets, and validation of the
// budget decisions against measurements of the target platform.
#pragma once
#include <functional>
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "carb/config.hpp"
#include "carb/dataset.hpp"
#include "carb/metrics.hpp"
#include "carb/model.hpp"
#include "carb/prediction_notes.hpp"

namespace carb {

// ---- targets and budgets (src/screen/budget.cpp) ----

/// The target column of a cost name: "energy" -> "energy_j", "latency" -> "latency_ms",
/// "memory" -> "peak_memory_mb"; a target column is accepted as itself. Throws InputError.
std::string target_column(const std::string& cost);
/// Throws InputError "<what> needs <target>, but the <platform> model predicts only: ..." unless m has it.
void require_target(const CarbModel& m, const std::string& target, const std::string& what);

/// Largest acceptable value per target column (e.g. {"latency_ms", 20}); a target not named is unbounded.
using Budgets = std::map<std::string, double>;
/// Throws InputError for a non-positive or non-finite budget or one on a target the model lacks.
void check_budgets(const Budgets& b, const CarbModel& m);
/// False for a predicted cost no configuration has (at or below zero, or NaN: a raw-target model's
/// answer past its data): it meets no budget.
bool within_any_budget(double predicted);
/// What a budget on target `t` is judged on (NaN, which meets no budget, where the point prediction
/// fails within_any_budget): the upper bound of the interval when `use_upper` (and
/// the prediction has one), else the point prediction.
double budgeted_value(const Prediction& p, const std::string& t, bool use_upper);
/// True when every budgeted target meets its budget, judged on budgeted_value.
bool accepted(const Prediction& p, const Budgets& b, bool use_upper);
/// The configurations (with their predictions, and intervals at `confidence`) that meet the budgets.
/// `cols` are m's point predictions of `configs` (predict_columns); intervals are only computed for
/// those that pass on the point prediction, since the upper bound is never below it. `unbounded`,
/// when given, counts those that passed on the point but whose interval at `confidence` has no
/// upper bound on a budgeted target (they cannot pass, whatever the budget). `nonpositive`, when
/// given, counts those with a predicted cost, on any target of `cols`, budgeted or not, that fails
/// within_any_budget: they are left out whatever the budgets. `judged`, when given under a
/// confidence, receives every prediction judged on its interval, accepted or not, with its budgeted
/// targets only (what upper_edge_flip_pairs reads).
std::vector<Prediction> apply_budgets(const CarbModel& m, const std::vector<Config>& configs,
                                      const std::map<std::string, std::vector<double>>& cols,
                                      const Budgets& b, std::optional<double> confidence,
                                      std::size_t* unbounded = nullptr, std::size_t* nonpositive = nullptr,
                                      std::vector<Prediction>* judged = nullptr);

// ---- Pareto (src/screen/pareto.cpp) ----

/// Indices (ascending) of the non-dominated points when every objective is minimized.
/// `objectives` is column-wise: objectives[k][i] is objective k of point i (all columns of equal
/// length). A point is dominated when another is <= in every objective and < in one, so exact ties
/// are all kept. O(n log n + n * front size). Throws InputError on ragged columns or NaN.
std::vector<std::size_t> pareto_front(const std::vector<std::vector<double>>& objectives);

// ---- capacity (src/screen/capacity.cpp) ----

/// A capacity measure, the analytic proxy for model quality a Pareto set can maximize against the
/// predicted costs: forward GFLOPs per image, or millions of parameters.
enum class Capacity { none, gflops, params };
/// "" for none, "gflops", "params".
std::string to_string(Capacity c);
/// The measure named `name` ("" is none); InputError naming the measures for anything else.
Capacity parse_capacity(std::string_view name);
/// A configuration's capacity under a measure (InputError for Capacity::none).
double capacity_of(const Config& c, Capacity measure);

// ---- validation (src/screen/validate.cpp) ----

/// Accept/reject decisions by prediction against the decisions by measurement.
struct BudgetConfusion {
  std::size_t true_accept = 0, false_accept = 0, true_reject = 0, false_reject = 0;
  std::size_t total() const { return true_accept + false_accept + true_reject + false_reject; }
  double accuracy() const;
  /// False accepts / configurations that measured over budget (kUndefined when there are none).
  double false_accept_rate() const;
  /// False rejects / configurations that measured within budget (kUndefined when there are none).
  double false_reject_rate() const;
  nlohmann::json to_json() const;
};

struct ScreenValidation {
  std::string model_platform;
  std::vector<std::string> measured_platforms;
  std::size_t measured = 0;                  // distinct configurations measured ok
  std::size_t measured_in_space = 0;         // of those, the ones in the screened space
  std::size_t matched = 0;                   // of those, in the screened space
  std::size_t unclassified = 0;              // matched, but a budgeted target was not measured
  std::size_t excluded_trained = 0;          // in the space, but the model trained on them (left out)
  std::size_t failed_only = 0;               // in the space, measured only as oom or error (left out)
  /// "held_out": every validated configuration is one the model did not train on;
  /// "includes_trained": asked to keep them; "unknown": the bundle does not record its training set.
  std::string split = "unknown";
  BudgetConfusion decisions;                 // at the screen's confidence (point predictions without one)
  std::map<std::string, FitMetrics> errors;  // per predicted target measured on the matched rows
  /// When a shortlist cut the space (--top-k): the screen's own decisions, where a configuration is
  /// accepted only if it was shortlisted and is within the budgets ("screen_decisions"; sixty-sixth
  /// hostile pass: the model's row alone hid the false rejects of the cut). `shortlisted`: how many
  /// of the validated configurations the shortlist kept.
  std::optional<BudgetConfusion> screen_decisions;
  std::size_t shortlisted = 0;
  /// With a confidence: the decisions at "none" (point) and each stored level "0.8" .. "0.99".
  std::vector<std::pair<std::string, BudgetConfusion>> tradeoff;
  /// What makes these figures mean less than they seem (measurements of another platform).
  std::vector<std::string> warnings;
  nlohmann::json to_json(const Budgets& b) const;
};

/// Validates the budget decisions of `m` on the configurations of `screened` that `measured`
/// (ok rows; a configuration measured more than once is averaged) contains, matched by config_key.
/// Configurations `m` trained on are left out (a held-out check) unless `include_trained`.
/// When `m` learned drift-corrected latency, the measurements are corrected the same way first.
/// Throws InputError when no measured configuration is in the screened space, or every one of
/// them trained the model. `shortlist`, when a shortlist cut the space: the configurations it kept,
/// for the screen's own decisions (ScreenValidation::screen_decisions).
ScreenValidation validate_screen(const std::vector<Config>& screened, const Dataset& measured,
                                 const CarbModel& m, const Budgets& b, std::optional<double> confidence,
                                 bool include_trained = false, const std::vector<Config>* shortlist = nullptr);

// ---- predicted cost against the batch (src/screen/batch_order.cpp) ----

/// A smaller batch predicted to cost more per batch than a larger one of the same network by more
/// than this ratio is said: less work does not cost more on hardware, so the model follows
/// measurements that disagree with each other there (a noisy or launch-bound regime), and a ranking
/// across those batches is uncertain (ninety-ninth hostile pass).
inline constexpr double kPredictedBatchInversion = 1.05;
/// What `recommend` and `screen` say such a pair means, after naming it.
inline constexpr const char* kBatchInversionMeaning =
    "Less work does not cost more on hardware: the measurements the model follows there disagree with each other "
    "(a noisy or launch-bound regime), so a ranking across those batches is uncertain";

/// Under a confidence, one network's (family, depth, width, resolution, precision) widest pair of
/// batches inside the trained ranges whose upper edges lie on either side of a budget the wrong way
/// round: the larger batch's within `limit`, the smaller's above it though its point prediction is
/// no higher. Indices into the predictions given; ratio = the smaller's upper edge over the larger's.
/// The smaller batch's interval is wider (the batch <= 8 regime's measurements varied more, or a
/// wider bin of predicted size): the budget decides by how sure the model is, not by which costs
/// less (hundred-and-sixth hostile pass).
struct UpperEdgeFlip {
  std::string target;
  double limit = 0;
  std::size_t smaller = 0, larger = 0;
  double ratio = 0;
};
/// Every network's widest such pair per budget of `b`, over predictions made at a confidence, in the
/// order of the networks' first appearance, then of the budgets. With `candidate` (one flag per
/// prediction), the larger batch of a pair must be one: within every budget, say.
std::vector<UpperEdgeFlip> upper_edge_flip_pairs(const std::vector<Prediction>& preds, const Budgets& b,
                                                 const std::vector<bool>* candidate = nullptr);

/// One network's (family, depth, width, resolution, precision) worst such pair on one target:
/// indices into the configurations given, and the smaller batch's cost over the larger's.
struct BatchInversion {
  std::string target;  // latency_ms | energy_j
  std::size_t smaller = 0, larger = 0;
  double ratio = 0;
};

/// Every network's worst inversion (ratio above kPredictedBatchInversion) on each of latency_ms and
/// energy_j that `cols` holds, among the configurations with `inside[i]` (inside the trained ranges:
/// outside them a cost is flagged as a guess already). `networks`, when given, is set to how many
/// networks have two or more batches among them. Sorted by target, then ratio descending.
/// InputError where `inside` or a column of `cols` does not hold one value per configuration.
std::vector<BatchInversion> batch_inversions(const std::vector<Config>& configs,
                                             const std::map<std::string, std::vector<double>>& cols,
                                             const std::vector<bool>& inside, std::size_t* networks = nullptr);

/// A screen's inversions on one target: how many networks, the worst pair, and how many of the
/// Pareto set are of such networks.
struct ScreenBatchInversions {
  std::string target;
  std::size_t networks = 0;     // networks with an inversion on this target
  std::size_t of_networks = 0;  // networks scored at two or more batches inside the trained ranges
  std::size_t pareto = 0;       // Pareto configurations inside the ranges, of a network with an inversion here
  Config smaller, larger;       // the worst pair
  double smaller_value = 0, larger_value = 0, ratio = 0;
};

/// What screen says of one target's inversions (its note, word for word; the report gives the
/// same): `two_stage` names the target model, `shortlist` says the networks were the shortlist's.
std::string batch_inversion_note(const ScreenBatchInversions& b, bool two_stage, bool shortlist);

// ---- the screen (src/screen/screen.cpp) ----

struct ScreenOptions {
  /// energy | latency | memory (or a target column). Empty: energy when both models predict it,
  /// else latency (ScreenResult::rank_by_default says the choice was made for the user).
  std::string rank_by;
  /// Two models: the shortlist size (default kDefaultTopK). One model: a cut by the rank target
  /// only when given; without it every configuration goes on to the budgets and the Pareto set.
  std::optional<std::size_t> top_k;
  Budgets budgets;
  std::optional<double> confidence;   // accept on the upper bound at this coverage
  const Dataset* validate = nullptr;  // measurements of the target platform, or null
  bool validate_include_trained = false;  // also validate on configurations the model trained on
  /// none: the Pareto set is over the predicted costs alone (small networks dominate). gflops or
  /// params: the set also maximizes that capacity, so it traces the cost-versus-capacity trade-off.
  Capacity capacity = Capacity::none;
  /// Called as the models predict the whole space, kScreenChunk configurations at a time (the most
  /// of a large screen's time): configurations predicted so far and how many, per model that scores
  /// the whole space. A caller stops the screen by throwing from it (Python's Ctrl-C).
  std::function<void(std::size_t predicted, std::size_t configs)> progress;
  static constexpr std::size_t kDefaultTopK = 100;
  static constexpr std::size_t kScreenChunk = 5000;
};

struct ScreenStage {
  std::string name;  // candidates | shortlist | within_budget | pareto
  std::size_t count = 0;
};

struct ScreenResult {
  std::string rank_target;
  bool rank_by_default = false;  // chosen by screen(), not given: the output says so
  /// Which model has no energy_j when the default fell to latency: "the model", "the source model",
  /// "the target model" or "neither model"; "" otherwise.
  std::string without_energy;
  std::string source_platform, target_platform;  // equal with one model
  bool two_stage = false;
  std::vector<ScreenStage> stages;
  /// Spearman's rho of the two models' rank-target predictions over the whole space
  /// (two models, both predicting the rank target).
  std::optional<double> rank_spearman;
  /// Two-stage: how many candidates lie outside what the source model trained on. Its first-stage
  /// ranking of them is a guess, and rank_spearman includes them (thirty-fourth hostile pass: only
  /// the target's guesses were flagged).
  std::size_t source_guesses = 0;
  std::vector<std::string> targets;  // the final model's targets: the Pareto objectives
  Budgets budgets;
  /// The deciding model's device memory (DeviceLimits::memory_mb) where it knows it: a configuration
  /// within the budgets whose predicted peak memory is above it is left out, on the point prediction,
  /// and counted ("device_memory_mb" and "over_device_memory" in the JSON).
  std::optional<double> device_memory_mb;
  std::size_t over_device_memory = 0;
  /// Of the configurations within budget (and on the Pareto set), those whose predicted energy over
  /// latency is beyond the device (power_beyond_device): past 1.1x the deciding model's device power limit
  /// (power_limit_w, where it knows one), or past what any device draws. Their energy or latency is
  /// off, and so is their place within budget; kept, and said ("within_budget_over_power",
  /// "pareto_over_power", "most_power_w" in the JSON).
  std::optional<double> power_limit_w;
  std::size_t within_budget_over_power = 0, pareto_over_power = 0;
  double most_power_w = 0;
  std::optional<double> confidence;
  std::size_t within_budget = 0;
  /// With a confidence: configurations within budget by their point predictions whose interval
  /// has no upper bound (a level too few training rows can bound, or an untrained precision), so
  /// none of them can pass (seventeenth hostile pass: h200 at 0.99 said only "no configuration meets").
  std::size_t unbounded = 0;
  /// Configurations the deciding model predicts a cost at or below zero for (within_any_budget), on
  /// any target, over every candidate it scores: they meet no budget and are on no Pareto front (a
  /// raw-target model's sums can dip below zero; thirty-fifth hostile pass).
  std::size_t nonpositive = 0;
  /// Two-stage: candidates whose source rank-target prediction is at or below zero; the first
  /// stage ranks them last (thirty-sixth hostile pass: they fell off the shortlist without a word).
  std::size_t source_nonpositive = 0;
  /// Two-stage, when the target scored the whole space: candidates outside what the target model
  /// trained on (rho includes its guesses for them).
  std::size_t target_guesses = 0;
  /// Of the configurations within budget, those outside what the deciding model trained on.
  std::size_t within_budget_guesses = 0;
  /// Of the configurations within budget, those of a network the deciding model never measured
  /// (Prediction::trained_architecture false): predictions for a new network, inside the ranges or not.
  std::size_t within_budget_new_architectures = 0;
  /// Of those, the ones at a family, precision or pairing of the two the model never trained: no
  /// level bounds their intervals.
  std::size_t within_budget_never_trained = 0;
  /// The networks that calibrated the deciding model's intervals for new networks (0: it has none).
  int unseen_calibration_networks = 0;
  /// Where the deciding model predicts a smaller batch dearer per batch than a larger one of the same
  /// network (batch_inversions over the configurations it scored): per target, JSON
  /// "cost_falls_with_batch".
  std::vector<ScreenBatchInversions> cost_falls_with_batch;
  /// Under a confidence, per budget: how many networks have a pair of batches whose upper edges a
  /// budget passes the wrong way round (upper_edge_flip_pairs, over the configurations judged on
  /// their intervals), and the widest pair. JSON "upper_edge_falls_with_batch".
  struct UpperEdgeFlips {
    std::string target;
    double limit = 0;
    std::size_t networks = 0;
    Prediction smaller, larger;
  };
  std::vector<UpperEdgeFlips> upper_edge_falls_with_batch;
  /// How many networks that check compared (two or more batches inside the trained ranges), over every
  /// configuration the deciding model scored: the whole space, or only the shortlist where a
  /// two-stage screen's target model scored only that (batch_order_shortlist). JSON "batch_order".
  std::size_t batch_order_networks = 0;
  bool batch_order_shortlist = false;
  std::vector<Prediction> pareto;  // sorted by the rank target (ascending), then config_key
  Capacity capacity = Capacity::none;    // the maximized capacity measure
  std::vector<double> pareto_capacity;   // its value for each pareto entry (when capacity is set)
  std::optional<ScreenValidation> validation;
  /// A drift-corrected model's reference time (carb/drift.hpp): its latencies, and the budgets on
  /// them, hold at the host speed where the reference network takes this long. Per model role.
  std::optional<double> source_drift_reference_ms, target_drift_reference_ms;

  nlohmann::json to_json() const;
};

/// Screens `configs`. `target` may be null (one model, one stage). Throws InputError for an
/// empty space, a rank target the source model lacks, a budget on a target the final model lacks,
/// top_k of 0, or a confidence outside (0, 0.99].
ScreenResult screen(const std::vector<Config>& configs, const CarbModel& source, const CarbModel* target,
                    const ScreenOptions& o);

// ---- rendering (src/screen/screen_render.cpp) ----

/// Human-readable: the stage funnel, rho, budgets, the Pareto table and the validation summary.
void print_screen_table(const ScreenResult& r, std::ostream& out);
/// Everything of the table but the Pareto rows: the funnel, the notes and the validation summary
/// (what `screen --format csv` prints on stderr; thirty-eighth hostile pass: the CSV dropped them).
void print_screen_summary(const ScreenResult& r, std::ostream& out);
/// What the table and the summary note about `r`, one line each without a "note: " prefix
/// (unbounded intervals, costs at or below zero, guesses, networks never measured). Python raises
/// the cautions as RuntimeWarnings.
std::vector<PredictionNote> screen_notes(const ScreenResult& r);
/// Its note where configurations within budget imply more power than the device draws
/// (ScreenResult::within_budget_over_power > 0), word for word as the report gives it.
std::string screen_power_note(const ScreenResult& r);
/// The Pareto configurations as a predictions CSV (with _lower/_upper columns under a confidence).
void write_screen_csv(const ScreenResult& r, std::ostream& out);

}  // namespace carb
