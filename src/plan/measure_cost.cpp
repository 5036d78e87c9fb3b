// The predicted time to measure one configuration under a protocol: what a budget in seconds counts.
#include <algorithm>
#include <cmath>

#include "carb/error.hpp"
#include "carb/plan.hpp"
#include "carb/profiler.hpp"

namespace carb {

void require_priced_backend(const std::string& backend) {
  if (backend != "cpu" && backend != "cuda")
    throw InputError("backend '" + backend + "': carb prices the measuring time of the cpu and cuda backends only");
}

double measure_seconds(double latency_ms, const Protocol& p, const std::string& backend, double reference_ms) {
  require_priced_backend(backend);
  validate(p, backend);  // a C++ tester: negative passes and cool-down priced -100 s, a NaN cool-down NaN
  if (!(latency_ms > 0) || !std::isfinite(latency_ms))
    throw InputError("cannot predict the measuring time of a latency of " + std::to_string(latency_ms) + " ms");
  const double s = latency_ms / 1000.0;
  double timed = p.max_passes;
  // Adaptive stopping: once min_passes are done, timing stops at max_timed_s (the CI target stops
  // it earlier still, but how much earlier depends on noise no model predicts: not counted).
  if (p.max_timed_s > 0) timed = std::clamp(std::ceil(p.max_timed_s / s), double(p.min_passes), double(p.max_passes));
  const double reference = p.reference ? std::max(0.0, reference_ms) / 1000.0 : 0.0;
  const double passes = timed * (s + reference);
  if (backend != "cuda") return p.warmup * s + passes + p.cooldown_s;
  // cuda: latency and energy come from one window, the timed passes extended until it lasts
  // --min-energy-window (and holds --energy-ticks counter periods, whose length only the meter
  // knows: not counted); utilization is sampled on a share of the configurations (--util), so its
  // window counts at that share; at least one warm-up pass. (Twenty-third hostile pass: the energy
  // window was priced on top of the timed passes, and every row paid the utilization window.)
  const double window = std::max(passes, p.min_energy_window_s);
  return std::max(p.warmup, 1) * s + window + std::clamp(p.util_sample, 0.0, 1.0) * p.util_window_s + p.cooldown_s;
}

}  // namespace carb
