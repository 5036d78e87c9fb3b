// Rendering predictions: CSV (the six configuration columns + one per target, and
// <target>_lower/_upper with intervals) and JSON.
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "carb/model.hpp"

namespace carb {

/// The excursions of a prediction as one cell: "resolution 224 > 128 trained; gflops ..." ("" inside).
std::string outside_text(const std::vector<Excursion>& outside);
/// The same as a JSON array of {dimension, text, log_ratio} (log_ratio null when unbounded).
nlohmann::json outside_json(const std::vector<Excursion>& outside);

/// Why a prediction can be at or below zero, in the words every note about such answers gives: a
/// raw-target model's sum below zero, or a latency or energy faster than kMaxFlopsPerSecond or
/// kMaxFlopsPerJoule allow, said as 0 (hundred-and-sixteenth hostile pass: evaluate, screen,
/// recommend and plan named only the first, on a log-target model's zeros).
inline constexpr const char* kNonPositiveWhy =
    "a raw-target model's sums can dip below zero, and an answer no device could measure, past 10 PFLOP/s or "
    "5 TFLOP/J, is shown as 0";

/// A warning for a table of scores over `configs`: how many lie outside what `m` trained on (its
/// answers there are guesses, and the scores include them), and how many of those at a family or
/// precision never trained; empty when none does. (Twenty-fourth hostile pass: `evaluate --external`
/// and `screen --validate` scored four guesses, one of them bf16, as "held-out accuracy".)
std::string guesses_note(const CarbModel& m, const std::vector<Config>& configs);
/// "predictions at or below zero, which no configuration costs (...): 3 of latency_ms among 40
/// rows, scored as they are" for per-target prediction columns, or "" when every one is positive
/// (a raw-target model's sums can dip below zero; thirty-sixth and thirty-seventh hostile passes:
/// evaluate, its retrained sections and screen --validate scored them without a word).
std::string nonpositive_note(const std::map<std::string, std::vector<double>>& predicted);
/// How many of `predicted` are no cost a configuration has: at or below zero, or NaN.
std::size_t count_nonpositive(const std::vector<double>& predicted);

/// With an "outside" column last (the excursions from the trained ranges; empty inside them).
/// `extra`, when given, is one more named column (one value per prediction) before it. With bounds,
/// a "confidence" column before "outside" holds `confidence`, the coverage they were computed at.
/// A "trained_architecture" column (true/false, Prediction::trained_architecture) comes just before
/// "outside": false marks a network the model never measured at any resolution or batch. With
/// `device` (held_device(m)): with its memory, a "fits_device_memory" column before it says whether
/// the predicted peak memory is within the device's; with its power limit, a "within_power_limit"
/// column whether the energy and latency predicted imply at most kPredictedPowerOverLimit times it.
void write_predictions_csv(const std::vector<Prediction>& p, const std::vector<std::string>& targets,
                           std::ostream& out,
                           const std::pair<std::string, std::vector<double>>* extra = nullptr,
                           std::optional<double> confidence = std::nullopt, const DeviceLimits& device = {});
/// Whether `x`'s predicted peak memory is within `memory_mb` (true when it predicts no memory).
bool fits_device_memory(const Prediction& x, double memory_mb);
/// The device's memory that `m`'s answers are held to: DeviceLimits::memory_mb where `m` predicts
/// peak memory, nullopt otherwise (what predict flags and recommend, screen and plan leave out).
std::optional<double> held_device_memory(const CarbModel& m);
/// The average power `x`'s predicted energy and latency imply (W), where it predicts both as positive,
/// finite costs (a cost at or below zero is unknown, and implies no power).
std::optional<double> predicted_power_w(const Prediction& x);
/// The same from per-target values ("energy_j", "latency_ms"), as recommend's candidates hold them.
std::optional<double> predicted_power_w(const std::map<std::string, double>& value);
/// The power predicted_power_w implies where it is more than an answer may: above
/// kPredictedPowerOverLimit times the device's `power_limit_w`, or above kMaxAveragePowerW (the most
/// a measured row may show) where no limit is known. nullopt where it is not, or no power is implied.
/// Above it, the answer's energy or latency is off. The one rule predict's notes and flags, screen
/// and recommend judge power by.
std::optional<double> power_beyond_device(const std::map<std::string, double>& value,
                                          std::optional<double> power_limit_w);
std::optional<double> power_beyond_device(const Prediction& x, std::optional<double> power_limit_w);
/// Whether `x` implies no power beyond the device's `power_limit_w` (power_beyond_device; true where
/// no power is implied: false marks only what is known to be above).
bool within_power_limit(const Prediction& x, double power_limit_w);
/// What `x` asks of its device beyond what it has, for a table's "beyond the device" cell: peak
/// memory above `device.memory_mb`; power beyond it (power_beyond_device, of the device's limit or,
/// with none known, of any device). Empty where nothing is beyond it.
std::string beyond_device_text(const Prediction& x, const DeviceLimits& device);
/// The device limits `m`'s answers are judged against: held_device_memory, and the power limit
/// where `m` predicts both energy and latency (what predict flags per row).
DeviceLimits held_device(const CarbModel& m);
/// {"memory_mb", "power_limit_w"}, null where unknown: the "device" of train's and predict's JSON.
nlohmann::json device_json(const DeviceLimits& d);
/// The finite-sample rule: a level L is bounded only with ceil(L / (1 - L)) draws (training rows
/// per batch regime; trained networks, for a network never trained): 0.8 needs 4, 0.9 needs 9,
/// 0.95 needs 19, 0.99 needs 99.
int draws_needed(double level);
/// For notes: why an interval at `level` can have no upper bound, given the networks that
/// calibrated the model's intervals for new networks (0: it has none).
std::string unbounded_causes(double level, int networks);
/// For notes on networks never measured: how their costs are judged at `level` (nullopt: without a
/// confidence, how --confidence would judge them), by a model whose new-network intervals `networks`
/// networks calibrated (0: none), which bound only the levels draws_needed allows. `never_trained`
/// names those of them at a family, precision or pairing the model never trained, whose intervals
/// no level bounds ("the bf16 ones", "2 of them"; "": none).
std::string new_network_judgement(std::optional<double> level, int networks, const std::string& never_trained = "");
/// Whether such a note is a doubt (an interval unbounded or uncalibrated), not only worth knowing.
bool new_network_doubt(std::optional<double> level, int networks, bool never_trained);

/// The tables' column that marks a network the model never measured ("yes"; empty otherwise).
inline constexpr const char* kNewNetworkColumn = "network never measured";

/// `confidence`: the coverage the `_lower`/`_upper` bounds were computed at, recorded as
/// "confidence" (null without bounds) so a reader of the JSON knows what the bounds mean. Each row
/// carries "trained_architecture" and "outside".
nlohmann::json predictions_to_json(const std::vector<Prediction>& p, const CarbModel& m,
                                   std::optional<double> confidence = std::nullopt);

}  // namespace carb
