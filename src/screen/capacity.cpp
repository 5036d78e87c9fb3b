// Capacity measures: analytic proxies for model quality (bigger networks at higher resolution
// tend to be more accurate) that a Pareto set can trade against the predicted costs.
#include "carb/error.hpp"
#include "carb/network_spec.hpp"
#include "carb/screen.hpp"

namespace carb {

void check_capacity_measure(const std::string& measure) {
  if (measure != "gflops" && measure != "params")
    throw InputError("unknown capacity measure '" + measure + "': use gflops (forward GFLOPs per image) or params");
}

double capacity_of(const Config& c, const std::string& measure) {
  check_capacity_measure(measure);
  const NetworkSpec s = network_totals(c);
  if (measure == "params") return static_cast<double>(s.params) / 1e6;
  return s.flops() / 1e9 / static_cast<double>(c.batch);
}

}  // namespace carb
