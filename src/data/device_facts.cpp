#include "device_facts.hpp"

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

bool add_lasting_device_facts(nlohmann::json& record, const nlohmann::json& other) {
  // Not where either names no device (a review: a record made without NVML would have gained
  // another GPU's memory).
  const std::string device = measuring_device(record);
  if (device.empty() || device != measuring_device(other)) return false;
  const auto theirs = other.find("platform_info");
  const auto ours = record.find("platform_info");
  if (!theirs->is_object() || !ours->is_object()) return false;
  bool added = false;
  for (const char* key : kLastingDeviceFacts)
    if (const auto value = theirs->find(key); value != theirs->end() && !ours->contains(key))
      (*ours)[key] = *value, added = true;
  return added;
}

}  // namespace carb::detail
