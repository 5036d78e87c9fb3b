// Planned configurations against stored rows (planned.hpp).
#include "planned.hpp"

#include "carb/config.hpp"
#include "carb/store.hpp"

namespace carb {

std::optional<PlannedProgress> planned_progress(const Store& store, const std::string& platform,
                                                const std::string& protocol_id,
                                                const std::set<std::string>& measured_networks) {
  const auto keys = store.planned_keys(platform, protocol_id);
  if (!keys) return std::nullopt;
  std::set<std::string> wanted;
  for (const auto& k : *keys) {
    const auto c = parse_config_key(k);
    wanted.insert(c ? network_key(*c) : k);
  }
  PlannedProgress p;
  p.planned = wanted.size();
  for (const auto& n : wanted) p.unmeasured += !measured_networks.count(n);
  return p;
}

}  // namespace carb
