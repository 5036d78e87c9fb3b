#include "device_facts.hpp"

#include <cmath>
#include <vector>

namespace carb::detail {
namespace {

std::string text_at(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string measuring_device(const nlohmann::json& settings) {
  if (!settings.is_object()) return "";
  const std::string backend = text_at(settings, "backend");
  const auto info = settings.find("platform_info");
  if (backend.empty() || info == settings.end()) return "";
  const std::string name = text_at(*info, backend == "cpu" ? "cpu_model" : "gpu_name");
  return name.empty() || name == "unknown" ? "" : backend + " " + name;
}

bool usable_device_fact(const nlohmann::json& value) {
  return value.is_number() && std::isfinite(value.get<double>()) && value.get<double>() > 0;
}

bool add_lasting_device_facts(nlohmann::json& record, const nlohmann::json& other) {
  // Not where either names no device (a review: a record made without NVML would have gained
  // another GPU's memory).
  const std::string device = measuring_device(record);
  if (device.empty() || device != measuring_device(other)) return false;
  const auto theirs = other.find("platform_info");
  const auto ours = record.find("platform_info");
  if (!theirs->is_object() || !ours->is_object()) return false;
  bool added = false;
  for (const char* key : kLastingDeviceFacts) {
    // Only a usable value, and over none but an unusable one (a hostile tester: "143771", -5 and
    // null were merged into the output without a word, and a store kept a null it could repair).
    const auto value = theirs->find(key);
    const auto held = ours->find(key);
    if (value != theirs->end() && usable_device_fact(*value) && (held == ours->end() || !usable_device_fact(*held)))
      (*ours)[key] = *value, added = true;
  }
  return added;
}

nlohmann::json measuring_settings(nlohmann::json settings) {
  if (!settings.is_object()) return settings;
  for (const char* k : {"command", "meter_check"}) settings.erase(k);
  if (const auto info = settings.find("platform_info"); info != settings.end() && info->is_object()) {
    std::vector<std::string> moment;
    for (const auto& [k, v] : info->items())
      if (k.size() > 4 && k.compare(k.size() - 4, 4, "_now") == 0) moment.push_back(k);
    for (const auto& k : moment) info->erase(k);
  }
  return settings;
}

}  // namespace carb::detail
