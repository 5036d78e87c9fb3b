// The least peak memory a model answers for a configuration. Every pass holds its weights, its
// input and its largest layer output at once (NetworkSpec::memory_floor_mb: validation refuses a
// row below it, whatever harness measured it). carb's profiler holds more: every layer output still
// to be read (NetworkSpec::activation_bytes_peak), and every shipped row, CPU and H200, peaked at
// 1.0001x that or more. A model whose training rows all held it answers at least that; one trained on
// rows that peak below it (another harness's, which may fuse layers) keeps the looser floor.
#pragma once
#include "carb/config.hpp"
#include "carb/dataset.hpp"
#include "carb/network_spec.hpp"

namespace carb {

struct TargetModel;

/// The weights, the input and the layer outputs alive at once in a pass as carb's profiler runs it, MB.
double memory_alive_mb(const Config& c);

/// Whether every ok row of `d` with a peak memory peaked at or above kMinMemoryOverNetwork x
/// memory_alive_mb (false for data with no such row).
bool peaks_hold_outputs_alive(const Dataset& d);

/// The floor `tm` (the peak_memory_mb target) holds an answer at: memory_alive_mb where its training
/// rows held it (TargetModel::floor_outputs_alive), else NetworkSpec::memory_floor_mb. `s` is the
/// configuration's network_totals.
double answer_floor_mb(const TargetModel& tm, const NetworkSpec& s);
double answer_floor_mb(const TargetModel& tm, const Config& c);

}  // namespace carb
