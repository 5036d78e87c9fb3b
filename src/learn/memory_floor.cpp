#include "learn/memory_floor.hpp"

#include "carb/network_spec.hpp"
#include "learn/target_model.hpp"

namespace carb {

namespace {
double alive_mb(const NetworkSpec& s) {
  return static_cast<double>(s.param_bytes() + s.input_bytes() + s.activation_bytes_peak()) / 1e6;
}
}  // namespace

double memory_alive_mb(const Config& c) { return alive_mb(network_totals(c)); }

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

double answer_floor_mb(const TargetModel& tm, const NetworkSpec& s) {
  return tm.floor_outputs_alive ? alive_mb(s) : s.memory_floor_mb();
}

double answer_floor_mb(const TargetModel& tm, const Config& c) { return answer_floor_mb(tm, network_totals(c)); }

}  // namespace carb
