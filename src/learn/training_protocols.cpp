#include "learn/training_protocols.hpp"

#include <filesystem>

#include "data/provenance.hpp"

namespace carb {

std::optional<std::map<std::string, nlohmann::json>> training_data_protocols(const CarbModel& m, std::string* why) {
  const auto& files = m.training_record().data_files;
  if (files.empty()) return std::nullopt;
  std::map<std::string, nlohmann::json> out;
  for (const std::string& f : files) {
    try {
      if (!std::filesystem::is_regular_file(f)) {
        if (why) *why = "the model's data file " + f + " is gone (or not a file)";
        return std::nullopt;
      }
      const nlohmann::json side = read_provenance(f);
      if (!side.is_object() || !side.contains("protocols") || !side["protocols"].is_object()) return std::nullopt;
      for (const auto& [id, settings] : side["protocols"].items())
        if (settings.is_object()) out[id] = settings;
    } catch (const std::exception& e) {
      if (why) *why = "the provenance of the model's data file " + f + " cannot be read (" + e.what() + ")";
      return std::nullopt;
    }
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::string training_data_names(const CarbModel& m) {
  std::string names;
  for (const std::string& f : m.training_record().data_files)
    names += std::string(names.empty() ? "" : ", ") + std::filesystem::path(f).filename().string();
  return names;
}

}  // namespace carb
