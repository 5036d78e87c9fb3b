// The notes on a set of predictions (carb/prediction_notes.hpp): one count and one wording for the
// CLI's notes and Python's warnings.
#include "carb/prediction_notes.hpp"

#include <algorithm>
#include <cmath>

#include "carb/prediction_io.hpp"
#include "carb/text_table.hpp"
#include "model_internal.hpp"

namespace carb {
namespace {

bool nonpositive(const Prediction& x) {
  return std::any_of(x.value.begin(), x.value.end(), [](const auto& tv) { return !(tv.second > 0); });
}

bool unbounded(const Prediction& x) {
  return std::any_of(x.interval.begin(), x.interval.end(), [](const auto& iv) { return std::isinf(iv.second.second); });
}

std::string plural(std::size_t n, const char* one, const char* many) { return n == 1 ? one : many; }

}  // namespace

PredictionNotes count_prediction_notes(const std::vector<Prediction>& p, const CarbModel& m) {
  PredictionNotes n;
  n.total = p.size();
  const bool calibrated = m.calibrates_unseen_architectures();
  for (const Prediction& x : p) {
    // A cost at or below zero has no interval worth a word: it is unknown (thirty-sixth hostile pass:
    // its unbounded interval was blamed on too few rows).
    if (nonpositive(x)) {
      ++n.nonpositive;
      continue;
    }
    // A hostile tester: 2.4 TB of peak memory on the 141 GB H200, and 1,226 W on its 700 W limit,
    // were answered with the outside-the-ranges note alone.
    const DeviceLimits& d = m.device_limits();
    if (const auto mem = x.value.find("peak_memory_mb"); d.memory_mb && mem != x.value.end()) {
      const auto iv = x.interval.find("peak_memory_mb");
      if (mem->second > *d.memory_mb)
        ++n.over_memory;
      // A hostile tester: [5.7e4, 1.2e6] on 150,109 MB. An unbounded interval is said as one, not
      // as reaching above the device (a review: it counted 15 MB predictions [12, inf] twice).
      else if (iv != x.interval.end() && std::isfinite(iv->second.second) && iv->second.second > *d.memory_mb)
        ++n.may_exceed_memory;
    }
    // Past the device's limit, or (hundred-and-sixteenth hostile pass: 49.7 J in 1.8 ms, 27 kW, said
    // nothing of) past what any device draws where no limit is recorded.
    if (const auto w = power_beyond_device(x, d.power_limit_w))
      ++(d.power_limit_w ? n.over_power : n.over_any_device_power), n.most_power_w = std::max(n.most_power_w, *w);
    if (!x.outside.empty()) {
      n.unbounded_outside += unbounded(x);
      continue;
    }
    const bool new_network = !x.trained_architecture;
    n.new_networks += new_network;
    if (unbounded(x)) ++(new_network && calibrated ? n.unbounded_new : n.unbounded_inside);
  }
  return n;
}

std::vector<PredictionNote> prediction_note_lines(const PredictionNotes& n, const CarbModel& m,
                                                  std::optional<double> level, const std::string& confidence_name) {
  std::vector<PredictionNote> out;
  if (n.nonpositive > 0)
    out.push_back({std::to_string(n.nonpositive) + plural(n.nonpositive, " prediction is", " predictions are") +
                   " at or below zero, which is no cost a configuration has (" + kNonPositiveWhy + "): read " +
                   plural(n.nonpositive, "it", "them") + " as unknown; no budget accepts " +
                   plural(n.nonpositive, "it", "them") +
                   (level ? plural(n.nonpositive, " and its interval is unbounded", " and their intervals are unbounded")
                          : "")});
  const DeviceLimits& d = m.device_limits();
  if (n.over_memory > 0)
    out.push_back({std::to_string(n.over_memory) + plural(n.over_memory, " prediction needs", " predictions need") +
                   " more memory than the device has (peak memory above its " + fmt_num(*d.memory_mb, 10) +
                   " MB): " + plural(n.over_memory, "it", "they") + " would run out of memory there, and " +
                   plural(n.over_memory, "its", "their") + " other costs are of a run that cannot happen"});
  if (n.over_power > 0)
    out.push_back({std::to_string(n.over_power) + plural(n.over_power, " prediction implies", " predictions imply") +
                   " more than " + fmt_num(kPredictedPowerOverLimit, 3) + "x the " + fmt_num(*d.power_limit_w, 10) +
                   " W power limit the device's data was measured under (energy over latency, up to " +
                   fmt_num(n.most_power_w, 4) +
                   " W): " + plural(n.over_power, "its", "their") +
                   " energy or latency is off (past the measured grid, most likely)"});
  if (n.over_any_device_power > 0)
    out.push_back({std::to_string(n.over_any_device_power) +
                   plural(n.over_any_device_power, " prediction implies", " predictions imply") + " more than " +
                   fmt_num(kMaxAveragePowerW, 10) + " W (energy over latency, up to " + fmt_num(std::round(n.most_power_w), 10) +
                   " W), more than any single device draws or a measured row may show: " +
                   plural(n.over_any_device_power, "its", "their") +
                   " energy or latency is off (past the measured grid, most likely)"});
  if (!level) return out;
  const std::string pct = fmt_num(*level * 100, 3) + "%";
  if (n.may_exceed_memory > 0)
    out.push_back({std::to_string(n.may_exceed_memory) + plural(n.may_exceed_memory, " prediction", " predictions") +
                   " within the device's " + fmt_num(*d.memory_mb, 10) + " MB " +
                   plural(n.may_exceed_memory, "reaches", "reach") + " above it at the upper end of " +
                   plural(n.may_exceed_memory, "its ", "their ") + pct + " interval of peak memory: " +
                   plural(n.may_exceed_memory, "it", "they") +
                   " may not fit (recommend and screen judge such a budget on the upper bound under a confidence)"});
  const int networks = m.unseen_calibration_networks();
  const int needed = draws_needed(*level);
  // Fifty-eighth hostile pass: outside the trained ranges, [0, inf] was printed without a word.
  if (n.unbounded_outside > 0)
    out.push_back({std::to_string(n.unbounded_outside) + plural(n.unbounded_outside, " prediction", " predictions") +
                   " outside the trained ranges " + plural(n.unbounded_outside, "has", "have") + " no upper bound at " +
                   pct + ": " + unbounded_causes(*level, networks) + "; read such an interval as unknown"});
  // Seventeenth hostile pass: h200 at 0.99 printed [0, inf] inside the ranges without a word.
  // Seventy-fifth hostile pass: a re-measurement of 20-98 configurations leaves 99% unbounded, and
  // the note blamed the training rows.
  std::size_t pairs = 0;
  for (const auto& t : m.target_summaries())
    if (const auto q = t.remeasured_spread.find(conformal_key(*level)); q != t.remeasured_spread.end() && std::isinf(q->second))
      pairs = t.remeasured_pairs;
  if (n.unbounded_inside > 0)
    out.push_back({std::to_string(n.unbounded_inside) + plural(n.unbounded_inside, " prediction", " predictions") +
                   " inside the trained ranges " + plural(n.unbounded_inside, "has", "have") + " no upper bound at " +
                   pct + ": " +
                   (pairs > 0 ? "the re-measurement that calibrated its spread has " + std::to_string(pairs) +
                                    " configurations, too few to bound that level (it needs " +
                                    std::to_string(needed) + ")"
                              : "the model has too few training rows per batch regime to bound that level (a " + pct +
                                    " interval needs " + std::to_string(needed) + " per regime)") +
                   "; a lower " + confidence_name + " may bound them"});
  if (n.new_networks > 0) {
    const bool calibrated = m.calibrates_unseen_architectures();
    out.push_back(
        {std::to_string(n.new_networks) + " of " + std::to_string(n.total) +
             " configurations inside the trained ranges " +
             plural(n.new_networks, "is of an architecture", "are of architectures") +
             " (family, depth, width, precision) the model never trained on: " +
             (calibrated ? plural(n.new_networks, "its interval is", "their intervals are") +
                               std::string(" calibrated by holding whole architectures out of training")
                         : std::string("this model has no intervals calibrated for that (it predates them, or trained "
                                       "on fewer than 3 architectures), so ") +
                               plural(n.new_networks, "its interval", "theirs") +
                               " may hold the measurement less often than stated"),
         !calibrated});
  }
  if (n.unbounded_new > 0)
    out.push_back({std::to_string(n.unbounded_new) + plural(n.unbounded_new, " prediction", " predictions") +
                   " inside the trained ranges, of architectures never trained, " +
                   plural(n.unbounded_new, "has", "have") + " no upper bound at " + pct + ": a new network's " + pct +
                   " interval needs " + std::to_string(needed) + " trained networks, and the model has " +
                   std::to_string(networks) + " (or its rows per batch regime are too few for that level); a lower " +
                   confidence_name + " may bound them"});
  return out;
}

}  // namespace carb
