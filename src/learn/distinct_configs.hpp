// The distinct configurations of a list, each with its readings, so that a list answered through the
// trees answers each once.
//
// Holding a cost monotone (monotone.hpp) answers the smaller networks below every configuration,
// and an answer between trained levels is the interpolation of the answers at the trained levels
// around it (the box's corners): 5,000 configurations at untrained resolutions and batches asked
// about 30 corners each of the same few thousand trained configurations, and the trees' sums were
// nearly all the time (models/cpu-2t: 16 s where the same list unheld takes 1.5 s).
#pragma once
#include <cstddef>
#include <vector>

#include "carb/config.hpp"
#include "carb/features.hpp"

namespace carb {

struct DistinctConfigs {
  std::vector<Config> configs;    // each configuration (with its readings) once, in order of first appearance
  std::vector<Telemetry> tel;     // their readings (none when none were given)
  std::vector<std::size_t> index;  // per configuration given, its place in `configs`
};

/// The distinct (configuration, readings) pairs of `cs` (with `tel`, one reading per configuration,
/// or none: then configurations alone). Readings equal when both fields are equal, absent ones too.
DistinctConfigs distinct_configs(const std::vector<Config>& cs, const std::vector<Telemetry>& tel);

}  // namespace carb
