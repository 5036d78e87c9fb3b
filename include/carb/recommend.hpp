// Deployment recommendation for one architecture: which batch size and precision minimise the
// predicted energy per image (latency per image when the model has no energy) within a latency
// budget per batch and a memory budget, among those that leave room on the device first (see
// recommend()).
#pragma once
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "carb/config.hpp"
#include "carb/model.hpp"
#include "carb/prediction_notes.hpp"

namespace carb {

struct RecommendOptions {
  Family family = Family::basic;
  int depth = 18;
  double width = 1.0;
  int resolution = 224;
  std::vector<int> batches = {1, 2, 4, 8, 16, 32, 64};
  std::vector<Precision> precisions;     // empty = default_precisions(model, family)
  std::optional<double> latency_max_ms;  // per batch
  std::optional<double> memory_max_mb;
  /// Judge the budgets on the upper bound of the split-conformal interval at this coverage
  /// (0.8, 0.9, 0.95 or 0.99) instead of the point prediction, as `screen --confidence` does.
  std::optional<double> confidence;
  std::size_t runners_up = 5;
};

/// The precisions a platform runs: fp32 and bf16 on "cpu*" platforms (CPUs have no fast fp16
/// path), fp32, fp16 and bf16 otherwise.
std::vector<Precision> default_precisions(const std::string& platform);
/// The precisions `m` was trained on (seventeenth hostile pass: the H200 model, trained on fp32
/// and fp16, recommended a bf16 guess by default); the platform's for a model that does not record them.
std::vector<Precision> default_precisions(const CarbModel& m);
/// Of those, the ones `m` trained together with `family` (its envelope's pairings); all of them
/// for a bundle that records no pairings, or when it trained none with this family.
std::vector<Precision> default_precisions(const CarbModel& m, Family family);

struct RecommendCandidate {
  Config config;
  std::map<std::string, double> value;  // predicted per batch, per target
  double objective = 0;                 // per image
  std::vector<Excursion> outside;       // where it lies outside the trained ranges (a guess there)
  std::map<std::string, std::pair<double, double>> interval;  // per target, under a confidence
  bool trained_architecture = true;  // false: the model never measured this network (at any resolution, batch)
};

struct RecommendResult {
  std::string platform;
  std::string objective;  // "energy_per_image_j" | "latency_per_image_ms"
  std::optional<double> latency_max_ms, memory_max_mb;
  /// The device's memory (DeviceLimits::memory_mb) where the model knows it ("device_memory_mb" in
  /// the JSON's constraints): a candidate whose predicted peak memory is above it is left out, on the
  /// point prediction, beside any budget, and counted ("over_device_memory").
  std::optional<double> device_memory_mb;
  std::size_t over_device_memory = 0;
  /// The device's power limit where the model knows it (DeviceLimits::power_limit_w): a recommended
  /// candidate implying more than kPredictedPowerOverLimit times it, or more than kMaxAveragePowerW
  /// where no limit is known, is said (recommendation_notes).
  std::optional<double> power_limit_w;
  std::optional<double> confidence;  // the budgets were judged on upper bounds at this coverage
  /// A drift-corrected model's reference time: latencies, and the latency budget, hold at the host
  /// speed where the reference network takes this long (carb/drift.hpp).
  std::optional<double> drift_reference_ms;
  std::size_t evaluated = 0, feasible = 0;
  /// Under a confidence: candidates within the budgets by their point prediction whose interval has
  /// no upper bound at that level, so they cannot pass (unbounded_at_confidence in the JSON).
  std::size_t unbounded = 0;
  /// Under a confidence: candidates (of those with a positive cost) whose interval of some target
  /// has no upper bound at that level, budgeted or not ("unbounded_intervals" in the JSON).
  std::size_t unbounded_intervals = 0;
  /// Candidates left out because a predicted cost is at or below zero (within_any_budget, a
  /// raw-target model past its data; nonpositive_predictions in the JSON).
  std::size_t nonpositive = 0;
  /// The precisions evaluated at which the model never measured the architecture (at any resolution
  /// or batch): its answers there are predictions for a new network ("new_network_precisions").
  std::vector<Precision> new_network_precisions;
  /// Of those, the precisions the model never trained with this family (or at all): no level
  /// bounds their intervals ("never_trained_precisions").
  std::vector<Precision> never_trained_precisions;
  /// The networks that calibrated the model's intervals for new networks (0: it has none).
  int unseen_calibration_networks = 0;
  /// Where, inside the trained ranges, a smaller batch is predicted to cost more per batch than a
  /// larger one of the same precision (by over 5%): one line per precision and target, naming the
  /// widest such pair. Less work does not cost more on hardware; the model follows measurements that
  /// disagree with each other there, and a ranking across those batches is uncertain (ninety-ninth
  /// hostile pass: batch 4 predicted 1.8x slower than batch 128 on the H200, and recommend ruled out
  /// batches 2-32 under a budget batch 128 met).
  std::vector<std::string> cost_falls_with_batch;
  /// Under a confidence: where a budget judged on the interval's upper edge passes a larger batch of
  /// a precision and fails a smaller one predicted to cost no more, inside the trained ranges; one
  /// line per precision and budget, naming the pair whose upper edges differ most. The smaller
  /// batch's interval is wider (a batch <= 8 regime whose measurements varied more, or a wider bin
  /// of predicted size): the budget decides by how sure the model is, not by which costs less
  /// (hundred-and-sixth hostile pass: batch 16 passed a 6.6 ms budget at 80% that batches 4 and 8,
  /// measured faster, failed).
  std::vector<std::string> upper_edge_falls_with_batch;
  std::optional<RecommendCandidate> best;      // empty when nothing meets the constraints
  std::vector<RecommendCandidate> runners_up;  // the next feasible ones, best first
  std::string message;                         // why nothing fits, when best is empty

  nlohmann::json to_json() const;
};

/// Recommendation::upper_edge_falls_with_batch of predictions (at a confidence) of one architecture
/// at batches x precisions under budgets `b`: per precision and budget, the pair of batches inside the
/// trained ranges whose upper edges lie on either side of the budget the wrong way round (the larger
/// batch's within it, the smaller's, predicted to cost no more, above it), the furthest apart.
std::vector<std::string> upper_edge_flips(const std::vector<Prediction>& preds, const std::map<std::string, double>& b);

/// Evaluates batches x precisions for the architecture. Throws InputError for an invalid
/// architecture, batch or precision, a non-positive constraint, or a constraint on a target the
/// model lacks (naming the targets it has). Nothing fitting is a result (best empty + message).
/// Candidates that pass are ranked by the room they leave on a device whose memory the model
/// knows (first a predicted peak x 1.21 within it and, under a confidence, a bounded memory
/// interval within it; then a bounded interval above it; then a peak within 1.21x of it), then
/// with a power the device can draw before one it cannot (power_beyond_device), then by the
/// objective per image; recommendation_notes says when the best leaves no room.
RecommendResult recommend(const CarbModel& m, const RecommendOptions& o);

/// What deserves a word about `r`, one line each without a "note: " prefix: candidates that cannot
/// pass for an unbounded interval or a cost at or below zero, intervals that judge nothing, networks
/// never measured, a recommendation that is a guess. The CLI prints them all; Python raises the
/// cautions as RuntimeWarnings (a drift-corrected model's host speed is in the result, no note).
std::vector<PredictionNote> recommendation_notes(const RecommendResult& r);
void print_recommendation(const RecommendResult& r, std::ostream& out);

}  // namespace carb
