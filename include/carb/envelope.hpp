// The trained envelope: the ranges a model saw in training, per configuration dimension and per
// main analytic quantity. Tree ensembles answer with leaf averages, so past the largest value they
// saw they return a constant; a prediction outside the envelope is a guess, and carb says so:
// predict, screen and recommend name the dimension and widen the interval (see CarbModel::predict).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "carb/config.hpp"

namespace carb {

/// One way a configuration lies outside the envelope.
struct Excursion {
  std::string dimension;  // "resolution", "depth (bottleneck)", "gflops", "precision", "pairing", "width (bottleneck bf16)", ...
  std::string text;       // "resolution 224 > 128 trained"
  /// |log(value / nearest trained bound)|: how far past the data, in the log space the models and
  /// intervals live in. Infinite for a family, precision or pairing of the two never trained.
  double log_ratio = 0;
};

struct TrainedEnvelope {
  struct Range {
    double lo = 0, hi = 0;
  };
  std::map<std::string, Range> ranges;  // numeric dimensions and analytic quantities
  std::set<std::string> families, precisions;
  /// Per trained family and precision together ("bottleneck bf16"): the ranges of depth, width,
  /// resolution and batch trained there. Trees learn no interaction they never saw (thirty-fourth
  /// hostile pass: bottleneck at bf16, never trained though each was, was predicted unflagged, its
  /// "90%" interval holding 26% of the measured memory). Empty in bundles older than this.
  std::map<std::string, std::map<std::string, Range>> cells;
  /// A telemetry model's measured utilization in training ("avg_sm_util", "avg_mem_util", in %);
  /// empty for other models. Not a function of the trained configurations.
  std::map<std::string, Range> telemetry;

  bool empty() const { return ranges.empty(); }
  /// The envelope of a training set.
  static TrainedEnvelope of(const std::vector<Config>& trained);
  /// Every excursion of `c`, in a fixed order; empty inside the envelope. `asked_width`: the width
  /// `c` was asked at where `c` holds the one its channels build (CarbModel::as_trained): a width
  /// excursion then names both, "width 0.1 (0.0976562 as built) < 0.25 trained".
  std::vector<Excursion> outside(const Config& c, std::optional<double> asked_width = std::nullopt) const;
  /// Every excursion of a configuration's measured utilization from the telemetry ranges
  /// (seventeenth hostile pass: memory utilization 100 against 54.9 trained passed without a word).
  /// Its log_ratio is |log((1 + v) / (1 + bound))|, since utilization may be 0.
  std::vector<Excursion> outside_telemetry(std::optional<double> avg_sm_util, std::optional<double> avg_mem_util) const;

  nlohmann::json to_json() const;
  /// Throws ModelError (or nlohmann::json::exception, which the bundle loader reports) on a
  /// malformed document.
  static TrainedEnvelope from_json(const nlohmann::json& j);
};

/// How far past the trained ranges these excursions reach, in log space: the largest log_ratio;
/// infinite when a family, precision or pairing of the two was never trained. A prediction's
/// interval is widened by this distance times its target's extrapolation rate, calibrated in
/// training (TargetSummary::extrapolation_rate; 1 in bundles from before it).
double extrapolation_widening(const std::vector<Excursion>& outside);

}  // namespace carb
