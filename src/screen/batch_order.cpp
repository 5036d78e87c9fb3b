// Where a model predicts a smaller batch of a network to cost more per batch than a larger one:
// the check recommend and screen share.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <unordered_map>

#include "carb/error.hpp"
#include "carb/screen.hpp"

namespace carb {

std::vector<BatchInversion> batch_inversions(const std::vector<Config>& configs,
                                             const std::map<std::string, std::vector<double>>& cols,
                                             const std::vector<bool>& inside, std::size_t* networks) {
  if (inside.size() != configs.size())
    throw InputError("batch order: " + std::to_string(inside.size()) + " inside-the-ranges flags for " +
                     std::to_string(configs.size()) + " configurations");
  for (const auto& [target, v] : cols)
    if (v.size() != configs.size())
      throw InputError("batch order: " + std::to_string(v.size()) + " " + target + " values for " +
                       std::to_string(configs.size()) + " configurations");
  // Each network's configurations inside the ranges, by its key at batch 1, in the order given.
  std::unordered_map<std::string, std::vector<std::size_t>> by_network;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (!inside[i]) continue;
    Config at_one = configs[i];
    at_one.batch = 1;
    auto [it, fresh] = by_network.try_emplace(network_key(at_one));
    if (fresh) order.push_back(it->first);
    it->second.push_back(i);
  }
  if (networks)
    *networks = static_cast<std::size_t>(
        std::count_if(by_network.begin(), by_network.end(), [](const auto& n) { return n.second.size() > 1; }));
  std::vector<BatchInversion> out;
  for (const char* target : {"energy_j", "latency_ms"}) {
    const auto col = cols.find(target);
    if (col == cols.end()) continue;
    const std::vector<double>& v = col->second;
    for (const std::string& key : order) {
      const auto& members = by_network.at(key);
      BatchInversion worst{target, 0, 0, 0};
      for (std::size_t a : members)
        for (std::size_t c : members) {
          if (configs[a].batch >= configs[c].batch || !(v[c] > 0) || !(v[a] > kPredictedBatchInversion * v[c])) continue;
          if (v[a] / v[c] > worst.ratio) worst = {target, a, c, v[a] / v[c]};
        }
      if (worst.ratio > 0) out.push_back(worst);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const BatchInversion& a, const BatchInversion& b) {
    return std::tie(a.target, b.ratio) < std::tie(b.target, a.ratio);
  });
  return out;
}

std::vector<UpperEdgeFlip> upper_edge_flip_pairs(const std::vector<Prediction>& preds, const Budgets& b,
                                                 const std::vector<bool>* candidate) {
  if (candidate && candidate->size() != preds.size())
    throw InputError("upper-edge flips: " + std::to_string(candidate->size()) + " candidate flags for " +
                     std::to_string(preds.size()) + " predictions");
  std::unordered_map<std::string, std::vector<std::size_t>> by_network;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < preds.size(); ++i) {
    if (!preds[i].outside.empty()) continue;  // past the ranges a cost is flagged as a guess already
    Config at_one = preds[i].config;
    at_one.batch = 1;
    auto [it, fresh] = by_network.try_emplace(network_key(at_one));
    if (fresh) order.push_back(it->first);
    it->second.push_back(i);
  }
  std::vector<UpperEdgeFlip> out;
  for (const std::string& key : order) {
    const auto& members = by_network.at(key);
    for (const auto& [t, limit] : b) {
      UpperEdgeFlip worst{t, limit, 0, 0, 0};
      for (std::size_t a : members)
        for (std::size_t c : members) {
          const Prediction &pa = preds[a], &pc = preds[c];
          if (pa.config.batch >= pc.config.batch || !pa.interval.count(t) || !pc.interval.count(t)) continue;
          if (candidate && !(*candidate)[c]) continue;  // the larger must be within every budget
          const double ua = pa.interval.at(t).second, uc = pc.interval.at(t).second;
          // Costs a configuration can have (a raw-target model's answer at or below zero passes no
          // budget: a review), the smaller no dearer, its finite upper edge over the budget, the larger's in.
          if (!within_any_budget(pa.value.at(t)) || !within_any_budget(pc.value.at(t))) continue;
          if (!(pa.value.at(t) <= pc.value.at(t)) || !(uc > 0) || !(uc <= limit) || !(ua > limit) || !std::isfinite(ua))
            continue;
          if (ua / uc > worst.ratio) worst = {t, limit, a, c, ua / uc};
        }
      if (worst.ratio > 0) out.push_back(worst);
    }
  }
  return out;
}

}  // namespace carb
