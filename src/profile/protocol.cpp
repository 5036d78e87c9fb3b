// Protocol serialisation, its stable id, and the one place that refuses settings which
// contradict each other or mean nothing on the chosen backend.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <tuple>

#include "carb/error.hpp"
#include "carb/profiler.hpp"
#include "data/provenance.hpp"
#include "util/fnv.hpp"

namespace carb {
namespace {

std::string show(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// The CLI checks each flag's range as it parses; these are the invariants the profiling loop
// relies on, checked again for library callers (a NaN window would never end, a negative count
// would never start).
void check_values(const Protocol& p) {
  // The CLI's ranges, so that library and Python callers are refused what the CLI refuses (a review:
  // threads 2000 was stored as platform cpu-2000t, a CI target of 5 taken).
  const std::tuple<const char*, int, int, int> counts[] = {{"--warmup", p.warmup, 0, 100000},
                                                           {"--min-passes", p.min_passes, 1, 1000000},
                                                           {"--max-passes", p.max_passes, 1, 1000000},
                                                           {"--threads", p.threads, 1, 1024},
                                                           {"--energy-ticks", p.energy_ticks, 0, 100000}};
  for (const auto& [flag, v, lo, hi] : counts)
    if (v < lo || v > hi)
      throw InputError(std::string(flag) + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                       ", not " + std::to_string(v));
  if (!(p.util_sample >= 0 && p.util_sample <= 1))
    throw InputError("--util sample:P needs P between 0 and 1, not " + show(p.util_sample));
  // Each setting beside its own upper bound (the CLI's range).
  const std::tuple<const char*, double, double> amounts[] = {{"--target-ci", p.target_rel_ci, 1.0},
                                                             {"--max-timed-s", p.max_timed_s, 1e6},
                                                             {"--cooldown", p.cooldown_s, 3600.0},
                                                             {"--min-energy-window", p.min_energy_window_s, 3600.0},
                                                             {"--util-window", p.util_window_s, 3600.0},
                                                             {"--cooldown-above", p.cooldown_above_c, 200.0}};
  for (const auto& [flag, v, hi] : amounts) {
    if (!std::isfinite(v) || v < 0)
      throw InputError(std::string(flag) + " must be a finite number at least 0, not " + show(v));
    if (v > hi) throw InputError(std::string(flag) + " must be at most " + show(hi) + ", not " + show(v));
  }
}

}  // namespace

void validate(const Protocol& p, const std::string& backend) {
  check_values(p);
  if (p.min_passes > p.max_passes)
    throw InputError("--min-passes " + std::to_string(p.min_passes) + " is more than --max-passes " +
                     std::to_string(p.max_passes) + ": give a minimum at most the maximum");
  // Ninety-seventh hostile pass: both stop timing early, between the minimum and the maximum, and
  // were taken where those are equal (the defaults, 100 and 100): recorded in the protocol, they
  // changed nothing measured, and rows were read as if timed to that interval or limit.
  if (p.min_passes == p.max_passes && (p.target_rel_ci > 0 || p.max_timed_s > 0))
    throw InputError(std::string(p.target_rel_ci > 0 ? "--target-ci" : "--max-timed-s") +
                     " stops timing early, between --min-passes and --max-passes, and both are " +
                     std::to_string(p.min_passes) + ": every configuration takes " + std::to_string(p.min_passes) +
                     " passes. Give a smaller --min-passes (e.g. 10), or leave it out");
  if (backend != "cpu") {
    if (p.reference) throw InputError("--reference is implemented for the cpu backend only, not " + backend);
    if (p.keep_memory)
      throw InputError("--keep-memory is implemented for the cpu backend only, not " + backend);
    // Refused here too (the cuda backend refuses it as well), before any device is touched.
    if (p.lock_clocks)
      throw InputError(
          "--lock-clocks: clock locking is not implemented; carb never changes GPU settings on its own");
    return;
  }
  if (p.lock_clocks) throw InputError("--lock-clocks: there are no clocks to lock on the cpu backend");
  // Compared with the defaults because a Protocol cannot tell "given" from "left alone". A changed
  // value would be ignored by the cpu backend yet change the protocol id, so a resumed run would
  // silently measure everything again under a protocol that differs in nothing measured.
  const Protocol defaults;
  if (p.util_window_s != defaults.util_window_s)
    throw InputError(
        "--util-window means nothing on the cpu backend (it samples no GPU utilization); "
        "leave it out or use --backend cuda");
  if (p.min_energy_window_s != defaults.min_energy_window_s)
    throw InputError(
        "--min-energy-window means nothing on the cpu backend (RAPL energy, where readable, "
        "covers the timed passes); leave it out or use --backend cuda");
  if (p.energy_ticks != defaults.energy_ticks)
    throw InputError(
        "--energy-ticks means nothing on the cpu backend (RAPL energy, where readable, covers the timed "
        "passes); leave it out or use --backend cuda");
  if (p.util_sample != defaults.util_sample)
    throw InputError("--util means nothing on the cpu backend (it samples no GPU utilization); leave it out");
  if (p.cooldown_above_c != defaults.cooldown_above_c)
    throw InputError("--cooldown-above needs a temperature the cpu backend does not read; leave it out");
}

bool samples_utilization(const Protocol& p, const Config& c) {
  if (p.util_sample >= 1) return true;
  if (p.util_sample <= 0) return false;
  // The top 53 bits of the key's hash as a fraction in [0, 1): the same configurations everywhere.
  const double u = static_cast<double>(detail::fnv1a64(config_key(c)) >> 11) / 9007199254740992.0;
  return u < p.util_sample;
}

nlohmann::json Protocol::to_json() const {
  nlohmann::json j = {{"warmup", warmup},
                      {"min_passes", min_passes},
                      {"max_passes", max_passes},
                      {"target_rel_ci", target_rel_ci},
                      {"max_timed_s", max_timed_s},
                      {"cooldown_s", cooldown_s},
                      {"threads", threads},
                      {"channels_last", channels_last},
                      {"min_energy_window_s", min_energy_window_s},
                      {"util_window_s", util_window_s},
                      {"lock_clocks", lock_clocks},
                      {"realtime", realtime}};
  // Only when on, so that protocols from before the option keep their ids (and their rows resume).
  if (reference) j["reference"] = config_key(kReferenceConfig);
  if (keep_memory) j["keep_memory"] = true;
  if (energy_ticks != 0) j["energy_ticks"] = energy_ticks;
  if (util_sample != 1.0) j["util_sample"] = util_sample;
  if (cooldown_above_c != 0) j["cooldown_above_c"] = cooldown_above_c;
  if (rebuild_networks) j["rebuild_networks"] = true;
  // Since the interval became Student's t (it was z = 1.96), --target-ci stops later on few passes:
  // rows measured under the old rule are not resumed as this protocol's.
  if (target_rel_ci > 0) j["ci"] = "student_t";
  return j;
}

std::string Protocol::id() const {
  // carb's FNV-1a over the canonical JSON (keys sorted by nlohmann::json), made where a dataset's
  // recorded settings are checked against their id (data/provenance.hpp).
  return protocol_id_of(to_json());
}

nlohmann::json ProfileSummary::to_json() const {
  nlohmann::json j = {{"total", total},
                      {"skipped", skipped},
                      {"skipped_errors", skipped_errors},
                      {"replaced", replaced},
                      {"kept_on_error", kept_on_error},
                      {"ci_target_missed", ci_target_missed},
                      {"export_problems", export_problems},
                      {"first_export_problem", first_export_problem},
                      {"ok", ok},
                      {"oom", oom},
                      {"error", error},
                      {"interrupted", interrupted},
                      {"wall_s", wall_s},
                      {"compute_s", compute_s},
                      {"configs_per_s", configs_per_s()},
                      {"compute_share", compute_share()}};
  if (interrupted) j["signal"] = signal;
  if (store_moved) j["store_moved"] = true;
  return j;
}

}  // namespace carb
