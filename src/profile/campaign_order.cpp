// Campaign order: one architecture at a time, architectures in a seeded random order.
#include <map>
#include <random>

#include "carb/profiler.hpp"

namespace carb {

std::string architecture_key(const Config& c) {
  return to_string(c.family) + "-" + std::to_string(c.depth) + "-w" + format_width(c.width) + "-" +
         to_string(c.precision);
}

std::vector<Config> order_by_architecture(const std::vector<Config>& configs, uint64_t seed) {
  std::vector<std::string> archs;  // in first-seen order, so the shuffle does not depend on map order
  std::map<std::string, std::vector<Config>> groups;
  for (const auto& c : configs) {
    auto& g = groups[architecture_key(c)];
    if (g.empty()) archs.push_back(architecture_key(c));
    g.push_back(c);
  }
  // Fisher-Yates with mt19937_64, whose output the standard fixes (std::shuffle's is not): the
  // same seed gives the same order with every compiler.
  std::mt19937_64 rng(seed);
  for (std::size_t i = archs.size(); i > 1; --i) std::swap(archs[i - 1], archs[rng() % i]);
  std::vector<Config> out;
  out.reserve(configs.size());
  for (const auto& a : archs)
    for (const auto& c : groups[a]) out.push_back(c);
  return out;
}

}  // namespace carb
