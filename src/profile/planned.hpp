// How far a campaign has come: the configurations a store's runs were given for one platform and
// protocol (Store::put_planned) against those it holds a row of. Shared by `data export` and
// `data info STORE.db`.
#pragma once
#include <cstddef>
#include <optional>
#include <set>
#include <string>

namespace carb {

class Store;

struct PlannedProgress {
  std::size_t planned = 0, unmeasured = 0;
};

/// The planned configurations of (platform, protocol_id), counted by network as resume counts
/// them, and those whose network is not in `measured_networks` (network_key of every stored row
/// of the pair, any status). nullopt for a store made before carb recorded plans.
std::optional<PlannedProgress> planned_progress(const Store& store, const std::string& platform,
                                                const std::string& protocol_id,
                                                const std::set<std::string>& measured_networks);

}  // namespace carb
