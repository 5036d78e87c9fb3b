// Protocol serialisation and its stable id.
#include <cstdint>
#include <cstdio>

#include "carb/profiler.hpp"

namespace carb {

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
  return j;
}

std::string Protocol::id() const {
  // FNV-1a over the canonical JSON (keys sorted by nlohmann::json).
  const std::string s = to_json().dump();
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  char buf[20];
  std::snprintf(buf, sizeof buf, "p%012llx", static_cast<unsigned long long>(h & 0xffffffffffffull));
  return buf;
}

nlohmann::json ProfileSummary::to_json() const {
  return {{"total", total}, {"skipped", skipped}, {"ok", ok}, {"oom", oom}, {"error", error},
          {"interrupted", interrupted}};
}

}  // namespace carb
