// Which device a protocol's recorded settings say measured its rows, and the refusal to add rows
// of another device under them.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "data/device_facts.hpp"  // measuring_device

namespace carb::detail {

/// Throws InputError when `stored` (a store's protocols, {id: settings}) records `protocol_id` as
/// measured on another device than `settings` name. A store keeps one record of each protocol, the
/// first one, so rows of this device would be exported as measured on the other (a protocol's id
/// leaves out what runs it: the same flags on an H100 resume an H200's campaign). Nothing is
/// refused where either record names no device.
void require_same_device(const nlohmann::json& stored, const std::string& protocol_id,
                         const nlohmann::json& settings, const std::string& db);

/// Throws InputError when `recorded` (a record with "backend" and "platform_info", such as a window
/// study's sidecar) names another device than `now` does; `what` names what is being added to
/// (e.g. "study.csv's traces") and `instead` the way out. Nothing is refused where either names none.
void require_recorded_device(const nlohmann::json& recorded, const nlohmann::json& now, const std::string& what,
                             const std::string& instead);

}  // namespace carb::detail
