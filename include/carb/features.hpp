// Feature construction: analytic features of each configuration (from its NetworkSpec),
// optional telemetry with the paper's interaction terms, log transforms of heavy-tailed
// columns, and one-hot family and precision.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "carb/config.hpp"
#include "carb/dataset.hpp"
#include "carb/matrix.hpp"

namespace carb {

/// Telemetry of one row (empty when the platform has none).
struct Telemetry {
  std::optional<double> avg_sm_util, avg_mem_util;
};

/// The feature schema: which columns, in which order. Stored in every model bundle and
/// checked on load, so a model never sees columns in another order than it was trained on.
struct FeatureSchema {
  bool telemetry = false;
  std::vector<std::string> names;  // derived from `telemetry`

  static FeatureSchema make(bool telemetry);
  std::size_t size() const { return names.size(); }
  bool operator==(const FeatureSchema&) const = default;
};

/// Names of the architecture-only features (no telemetry), in order.
const std::vector<std::string>& analytic_feature_names();
/// Names of the telemetry features (raw utilization + interactions), in order.
const std::vector<std::string>& telemetry_feature_names();

/// Builds the feature matrix. With schema.telemetry, every row needs both utilizations
/// (throws InputError naming the first row without them).
Matrix build_features(const FeatureSchema& schema, const std::vector<Config>& configs,
                      const std::vector<Telemetry>& telemetry = {});

/// Configurations and telemetry of a dataset's rows.
std::vector<Config> configs_of(const Dataset& d);
std::vector<Telemetry> telemetry_of(const Dataset& d);

}  // namespace carb
