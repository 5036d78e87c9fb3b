// A store's protocol record names the device its rows were measured on; a run on another device
// under the same protocol is refused rather than recorded as that device's.
#include "device_identity.hpp"

#include "carb/error.hpp"

namespace carb::detail {

void require_recorded_device(const nlohmann::json& recorded, const nlohmann::json& now, const std::string& what,
                             const std::string& instead) {
  const std::string was = measuring_device(recorded);
  const std::string is = measuring_device(now);
  if (was.empty() || is.empty() || was == is) return;
  throw InputError(what + " as measured on '" + was + "', and this run's device is '" + is + "': " + instead);
}

void require_same_device(const nlohmann::json& stored, const std::string& protocol_id,
                         const nlohmann::json& settings, const std::string& db) {
  if (!stored.is_object() || !stored.contains(protocol_id)) return;
  require_recorded_device(stored.at(protocol_id), settings, db + " records protocol " + protocol_id,
                          "its rows would be exported as the other device's; profile into another --db (carb data "
                          "merge joins the exports, each with its own platform name)");
}

}  // namespace carb::detail
