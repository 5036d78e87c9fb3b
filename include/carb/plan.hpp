// Active profiling: which configurations to measure next. A plan ranks configurations not yet
// measured by what the model expects to learn from them (the spread of its ensemble members),
// per second of measuring (the protocol's predicted time), picked greedily so that a batch does
// not crowd near-duplicates of rows measured or already planned. With no model it fills the space
// (maximin distance) or stratifies it (each dimension's levels, and each pair's, in the
// candidates' proportions). Plans are written as CSV (the six configuration columns, then the scores)
// and measured in their order by `carb profile --plan`.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "carb/config.hpp"
#include "carb/envelope.hpp"
#include "carb/profiler.hpp"

namespace carb {

class CarbModel;

/// Seconds it takes to measure a configuration whose latency is `latency_ms` under protocol `p` on
/// `backend`: warm-up and timed passes (the timed ones stop at max_passes or, once min_passes are
/// done, at max_timed_s), the reference network's passes when p.reference, the cuda backend's
/// energy and utilization windows, and the cooldown. `reference_ms` is the reference network's
/// latency (counted once per timed pass when p.reference). Throws InputError for a latency that is
/// not positive and finite, or a backend other than "cpu" and "cuda" (require_priced_backend).
void require_priced_backend(const std::string& backend);
double measure_seconds(double latency_ms, const Protocol& p, const std::string& backend, double reference_ms = 0);

enum class PlanStrategy {
  uncertainty,           // the model's spread alone
  uncertainty_per_cost,  // spread per predicted second of measuring
  space_filling,         // maximin distance to what is measured or planned (no model needed)
  stratified,            // levels of each dimension and pair in the candidates' proportions (no model)
  random                 // a seeded random order (the baseline)
};
/// "uncertainty", "uncertainty-per-cost", "space-filling", "stratified", "random"; InputError otherwise.
PlanStrategy parse_plan_strategy(const std::string& s);
std::string to_string(PlanStrategy s);
std::vector<std::string> plan_strategy_names();

/// Where the ensemble's spread is measured: in each target's own units (large configurations
/// weigh most, as they do in R² and in a budget of seconds) or in log space (relative spread).
enum class SpreadSpace { units, log };
SpreadSpace parse_spread_space(const std::string& s);  // "units" | "log"

struct PlanOptions {
  PlanStrategy strategy = PlanStrategy::uncertainty;
  SpreadSpace spread = SpreadSpace::units;
  std::optional<std::size_t> count;  // rows at most (at least one of count and budget_s)
  std::optional<double> budget_s;    // predicted seconds of measuring at most (needs a model)
  /// Near-duplicate penalty: a candidate within `diversity` × the typical spacing of the candidates
  /// of a measured or planned row has its score scaled by distance / that radius. 0 = off.
  double diversity = 1.0;
  Protocol protocol;          // the protocol the plan will be measured under (for the cost)
  std::string backend = "cpu";
  /// Seconds to build a network, counted once per architecture the plan measures (as `carb profile
  /// --group-architectures` measures a plan: each network built once). A planned row of a new
  /// architecture costs its own time plus this; later rows of it cost their own. 0 = not counted.
  double build_s = 0;
  unsigned seed = 42;
  /// Called after each row is chosen (a space-filling plan of 50,000 rows among 100,000 candidates
  /// takes half a minute): rows planned so far, and at most how many there will be (the rows asked
  /// for, or the candidates, whichever is fewer). The caller decides what to show and how often.
  std::function<void(std::size_t planned, std::size_t wanted)> progress;
  /// Called as the model predicts the candidates, before the first row is chosen (kScoreChunk at a
  /// time: 100,000 candidates took a minute of it, deaf to Ctrl-C): which pass ("device memory",
  /// where the model knows the device's memory, then "uncertainty"), candidates predicted so far in
  /// it and how many it predicts. A caller stops the plan by throwing from it.
  std::function<void(const char* pass, std::size_t predicted, std::size_t candidates)> scoring;
};

/// How many candidates make_plan's model predicts at a time (PlanOptions::scoring between them).
inline constexpr std::size_t kScoreChunk = 5000;

struct PlannedRow {
  Config config;
  double score = 0;          // what the greedy selection maximised when it took this row
  double uncertainty = 0;    // the model's spread (NaN without a model)
  double latency_ms = 0;     // predicted latency (NaN without a model)
  double cost_s = 0;         // predicted seconds to measure it, with the build of its network where it is
                             // its architecture's first planned row (NaN without a model)
  double distance = 0;       // to the nearest measured or earlier planned row, normalised space (inf: none)
  /// Where it lies outside what the model trained on: its predicted latency and cost are guesses there.
  std::vector<Excursion> outside;
  /// The model predicts a cost at or below zero for one of its targets here (an impossible value).
  bool nonpositive = false;
};

struct Plan {
  std::vector<PlannedRow> rows;  // in the order to measure them
  PlanStrategy strategy = PlanStrategy::space_filling;
  std::size_t candidates = 0;    // distinct configurations offered
  std::size_t excluded = 0;      // of them, already measured (or trained on by the model)
  double total_cost_s = 0;       // predicted (NaN without a model)
  /// Under a budget: candidates passed over because their measuring time cannot be predicted (the
  /// model predicts no positive latency for them). Thirty-fifth hostile pass: one such cost, NaN,
  /// turned the budget check off for every later row.
  std::size_t unknown_cost = 0;
  /// Candidates (not excluded) for which the model predicts some target at or below zero: an
  /// impossible cost, so the spread there says where the model is wrong, not how unsure a sane
  /// prediction is (thirty-ninth hostile pass: memory at or below zero was neither counted nor said).
  std::size_t nonpositive_predictions = 0;
  /// Candidates (not excluded) the model predicts to need more peak memory than its device has
  /// (DeviceLimits::memory_mb): never planned, since measuring them spends a lease's seconds on an
  /// out-of-memory row that teaches no cost.
  std::size_t over_device_memory = 0;
  /// What it was planned for, recorded in the plan's sidecar (`planned_for`) and compared by
  /// plan_departures: the model's platform (empty without a model) and, when its rows are priced
  /// (a model predicting latency), the backend, protocol and build time the costs assume.
  std::string platform;
  bool priced = false;
  std::string backend = "cpu";
  Protocol protocol;
  double build_s = 0;
  /// Of them, how many were planned.
  std::size_t planned_nonpositive() const;
  /// How many planned rows lie outside what the model trained on.
  std::size_t rows_outside() const;
  /// How many planned rows have no predicted measuring time (a model predicting no positive latency
  /// for them; without a budget they are planned). Thirty-seventh hostile pass: counted nowhere.
  std::size_t planned_unknown_cost() const;
  /// The planned rows each predicted to take more than `seconds` to measure (cost_s), in plan order.
  std::vector<std::size_t> rows_longer_than(double seconds) const;
  /// {strategy, candidates, excluded, planned, unknown_cost, planned_unknown_cost, nonpositive_predictions,
  /// planned_nonpositive, planned_outside, planned_over_an_hour, predicted_cost_s, rows: [{family..precision,
  /// rank, score, uncertainty, predicted_latency_ms, cost_s, cumulative_cost_s, distance, outside,
  /// nonpositive}]},
  /// null where unknown (as the plan CSV's empty cells).
  nlohmann::json to_json() const;
};

/// Plans among `candidates` (duplicates counted once), never a configuration in `measured` or one the
/// model trained on; `model` may be null (then only space-filling and random are possible, and no
/// budget). The same inputs and seed give the same plan. Throws InputError for options that
/// cannot work (no count and no budget, a count of 0, a budget that is not positive and finite, a
/// model-based strategy or a budget without a model, a negative diversity).
Plan make_plan(const std::vector<Config>& candidates, const std::vector<Config>& measured, const CarbModel* model,
               const PlanOptions& o);

/// Per configuration, the model's spread (see SpreadSpace): the standard deviation of its ensemble
/// members (the trees of forest learners and the blended learners), each target's in units of the
/// spread of that target's predictions over `configs`, combined as a root sum of squares. Also gives
/// the predicted latency per configuration in `latency_ms` when the model has that target (else NaN).
/// `members_disagree`, when given, says whether the model has members that can disagree at all (two
/// or more learners, or a forest): with one learner and no forest every spread is 0. Throws
/// InputError for `SpreadSpace::log` when a member predicts a cost at or below zero (no log).
/// `nonpositive`, when given, marks per configuration whether the model predicts any target at or
/// below zero (or not a number): an impossible cost. `scored`, when given, is called after each
/// kScoreChunk configurations are predicted (so many so far, of how many); the answers do not depend on it.
std::vector<double> model_uncertainty(
    const CarbModel& model, const std::vector<Config>& configs, SpreadSpace space,
    std::vector<double>* latency_ms = nullptr, bool* members_disagree = nullptr, std::vector<char>* nonpositive = nullptr,
    const std::function<void(std::size_t predicted, std::size_t configs)>& scored = {});

/// The plan CSV: family, depth, width, resolution, batch, precision, then rank, strategy, score,
/// uncertainty, predicted_latency_ms, cost_s, cumulative_cost_s, distance (empty where unknown).
void write_plan_csv(const Plan& p, std::ostream& out);
/// Written atomically (temp file + rename), then its provenance sidecar (`plan.csv` -> `plan.json`:
/// kind "carb plan", the command, the strategy, the CSV's hash), which check_plan_output reads.
/// `recheck`, when given, runs just before the write (check_plan_output again: what is at `file`
/// may have changed while the plan was computed), and the write replaces only what it found.
void write_plan_csv(const Plan& p, const std::filesystem::path& file, const std::string& command_line = "",
                    const std::function<void()>& recheck = {});
/// The configurations of a plan CSV in its order; DataError for a file that is not a plan (no rank
/// column) or that repeats a configuration.
std::vector<Config> read_plan_csv(const std::filesystem::path& file);
/// Where measuring the plan at `plan_csv` under protocol `p` on `backend` as platform `platform`
/// departs from what `carb plan` planned it for, as recorded in its sidecar: one line each for a
/// plan edited since carb wrote it, a sidecar that is missing, unreadable or edited, another backend
/// or platform, each priced protocol setting that differs (named by its `carb profile` flag, with
/// both values), and a build time counted once per architecture when the run is not `grouped` by
/// architecture. Its predicted costs, and a budget, hold only where there is none. Empty when
/// nothing departs. Never throws for what it reads.
std::vector<std::string> plan_departures(const std::filesystem::path& plan_csv, const Protocol& p,
                                         const std::string& backend, const std::string& platform, bool grouped);

/// Where pricing a plan under protocol `p` on `backend` departs from the protocol the model's
/// training data was measured under, as the provenance sidecars of the data files its bundle records
/// hold (TrainingRecord::data_files): one line naming each priced setting that differs (by its
/// `carb profile` flag), or another backend; empty when they agree or cannot be compared (a file
/// gone, no sidecar, no protocol recorded; a setting in which its protocols differ among themselves
/// is not compared). A README
/// walkthrough: the cpu-2t example priced its plan under profile's defaults, 10 warm-up and 100
/// passes, where the model's data took 5 and 10. Never throws for what it reads.
/// `unknown`, when given, is set where the model's data files are recorded but one is gone or its
/// sidecar cannot be read, so nothing could be compared (`carb plan` notes it).
std::string model_protocol_departure(const CarbModel& m, const Protocol& p, const std::string& backend,
                                     std::string* unknown = nullptr);

/// Checks, before any work, that a plan may be written at `out`: a file name ending in .csv in an
/// existing directory, neither it nor its sidecar one of `inputs` (or inside an input directory),
/// and, unless `force`, nothing there or a plan carb wrote and nobody edited since (its sidecar's
/// hash). Throws InputError naming the path otherwise.
void check_plan_output(const std::filesystem::path& out, const std::vector<std::filesystem::path>& inputs, bool force);

}  // namespace carb
