#include "learn/memory_floor.hpp"

#include "carb/network_spec.hpp"
#include "learn/target_model.hpp"

namespace carb {

double memory_alive_mb(const Config& c) {
  const NetworkSpec s = network_totals(c);
  return static_cast<double>(s.param_bytes() + s.input_bytes() + s.activation_bytes_peak()) / 1e6;
}

bool peaks_hold_outputs_alive(const Dataset& d) {
  bool any = false;
  for (const Record& r : d.rows) {
    const auto v = r.value("peak_memory_mb");
    if (r.status != Status::ok || !v) continue;
    if (!(*v >= kMinMemoryOverNetwork * memory_alive_mb(r.config))) return false;
    any = true;
  }
  return any;
}

double answer_floor_mb(const TargetModel& tm, const Config& c) {
  return tm.floor_outputs_alive ? memory_alive_mb(c) : network_totals(c).memory_floor_mb();
}

}  // namespace carb
