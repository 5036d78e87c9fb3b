// Campaign order: architectures in a seeded random order, one architecture at a time, either all
// of its configurations at once or a few per visit in rounds.
#include <algorithm>
#include <map>
#include <random>

#include "carb/profiler.hpp"

namespace carb {
namespace {

// Fisher-Yates with mt19937_64, whose output the standard fixes (std::shuffle's is not): the same
// seed gives the same order with every compiler.
template <class T>
void seeded_shuffle(std::vector<T>& v, std::mt19937_64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng() % i]);
}

// One architecture's configurations in the order visits take them: round-robin over its
// resolutions (lanes in a shuffled order), each lane taking the batch sizes in one seeded order of
// them, lane j starting j x (batches / lanes) further along it. The lanes of a round then hold
// different batch sizes, so a visit of K spreads over min(K, batches) of them, and every prefix
// spreads over both knobs.
std::vector<Config> spread(const std::vector<Config>& configs, std::mt19937_64& rng) {
  std::map<int, std::vector<Config>> by_resolution;
  std::vector<int> batches;
  for (const auto& c : configs) {
    by_resolution[c.resolution].push_back(c);
    if (std::find(batches.begin(), batches.end(), c.batch) == batches.end()) batches.push_back(c.batch);
  }
  std::sort(batches.begin(), batches.end());
  seeded_shuffle(batches, rng);
  std::vector<std::vector<Config>> lanes;
  for (auto& [res, lane] : by_resolution) lanes.push_back(std::move(lane));
  seeded_shuffle(lanes, rng);
  const std::size_t step = std::max<std::size_t>(1, batches.size() / lanes.size());
  for (std::size_t j = 0; j < lanes.size(); ++j) {
    std::vector<Config> ordered;  // the lane in its rotated batch order (duplicates kept, in order)
    for (std::size_t k = 0; k < batches.size(); ++k) {
      const int b = batches[(k + j * step) % batches.size()];
      for (const auto& c : lanes[j])
        if (c.batch == b) ordered.push_back(c);
    }
    lanes[j] = std::move(ordered);
  }
  std::vector<Config> out;
  out.reserve(configs.size());
  for (std::size_t i = 0; out.size() < configs.size(); ++i)
    for (const auto& lane : lanes)
      if (i < lane.size()) out.push_back(lane[i]);
  return out;
}

// Architectures in the order of their first configuration, and each one's configurations in order.
struct Groups {
  std::vector<std::string> archs;
  std::map<std::string, std::vector<Config>> configs;
  explicit Groups(const std::vector<Config>& all) {
    for (const auto& c : all) {
      auto& g = configs[architecture_key(c)];
      if (g.empty()) archs.push_back(architecture_key(c));
      g.push_back(c);
    }
  }
  std::vector<Config> concatenated() {
    std::vector<Config> out;
    for (const auto& a : archs) out.insert(out.end(), configs[a].begin(), configs[a].end());
    return out;
  }
};

}  // namespace

std::vector<Config> group_by_architecture(const std::vector<Config>& configs) {
  return Groups(configs).concatenated();
}

std::vector<Config> order_by_architecture(const std::vector<Config>& configs, uint64_t seed, std::size_t per_visit) {
  Groups groups(configs);  // first-seen order, so the shuffle does not depend on map order
  auto& archs = groups.archs;
  std::mt19937_64 rng(seed);
  seeded_shuffle(archs, rng);
  if (per_visit == 0) return groups.concatenated();
  std::vector<Config> out;
  out.reserve(configs.size());
  for (const auto& a : archs) groups.configs[a] = spread(groups.configs[a], rng);
  for (std::size_t round = 0; out.size() < configs.size(); ++round)
    for (const auto& a : archs) {
      const auto& g = groups.configs[a];
      for (std::size_t i = round * per_visit; i < std::min(g.size(), (round + 1) * per_visit); ++i) out.push_back(g[i]);
    }
  return out;
}

}  // namespace carb
