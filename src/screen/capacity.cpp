// Capacity measures: analytic proxies for model quality (bigger networks at higher resolution
// tend to be more accurate) that a Pareto set can trade against the predicted costs.
#include "carb/error.hpp"
#include "carb/network_spec.hpp"
#include "carb/screen.hpp"

namespace carb {

std::string to_string(Capacity c) {
  switch (c) {
    case Capacity::none: return "";
    case Capacity::gflops: return "gflops";
    case Capacity::params: return "params";
  }
  return "";
}

Capacity parse_capacity(std::string_view name) {
  for (Capacity c : {Capacity::none, Capacity::gflops, Capacity::params})
    if (name == to_string(c)) return c;
  throw InputError("unknown capacity measure '" + std::string(name) +
                   "': use gflops (forward GFLOPs per image) or params");
}

double capacity_of(const Config& c, Capacity measure) {
  if (measure == Capacity::none) throw InputError("no capacity measure given: use gflops or params");
  // Per image, from the network at batch 1: FLOPs(batch) / batch differed in the last bit between
  // batches of one network, and the Pareto set kept a batch the other dominated (fifteenth pass).
  Config one = c;
  one.batch = 1;
  const NetworkSpec s = network_totals(one);
  if (measure == Capacity::params) return static_cast<double>(s.params) / 1e6;
  return s.flops() / 1e9;
}

}  // namespace carb
