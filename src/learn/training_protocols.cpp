#include "learn/training_protocols.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include "data/provenance.hpp"

namespace carb {

std::optional<std::map<std::string, nlohmann::json>> protocols_of_files(const std::vector<std::string>& files,
                                                                        std::string* why, const std::string& whose) {
  if (files.empty()) return std::nullopt;
  std::map<std::string, nlohmann::json> out;
  for (const std::string& f : files) {
    try {
      if (!std::filesystem::is_regular_file(f)) {
        if (why) *why = whose + " " + f + " is gone (or not a file)";
        return std::nullopt;
      }
      const nlohmann::json side = read_provenance(f);
      if (!side.is_object() || !side.contains("protocols") || !side["protocols"].is_object()) return std::nullopt;
      for (const auto& [id, settings] : side["protocols"].items())
        if (settings.is_object()) out[id] = settings;
    } catch (const std::exception& e) {
      if (why) *why = "the provenance of " + whose + " " + f + " cannot be read (" + e.what() + ")";
      return std::nullopt;
    }
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::optional<std::map<std::string, nlohmann::json>> training_data_protocols(const CarbModel& m, std::string* why) {
  return protocols_of_files(m.training_record().data_files, why, "the model's data file");
}

std::vector<std::string> protocol_setting_differences(const nlohmann::json& theirs, const nlohmann::json& mine) {
  std::vector<std::string> out;
  if (!theirs.is_object() || !mine.is_object()) return out;
  const auto record_only = [](const std::string& k) {
    return std::find(kProtocolRecordOnlyKeys.begin(), kProtocolRecordOnlyKeys.end(), k) != kProtocolRecordOnlyKeys.end();
  };
  // As JSON with every non-ASCII and control character escaped, and cut short: a sidecar is a file
  // anyone can edit (ninety-eighth hostile pass: a key with a newline forged a "warning:" line, a
  // right-to-left override passed, a 1 MB value was echoed whole).
  const auto escaped = [](const nlohmann::json& j) {
    std::string s = j.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
  };
  const auto said = [&](const nlohmann::json& j, const std::string& k) {
    return j.contains(k) ? escaped(j.at(k)) : std::string("none recorded");
  };
  const auto named = [&](const std::string& k) {
    const bool plain = !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
    return plain ? k : escaped(nlohmann::json(k));
  };
  std::set<std::string> keys;
  for (const auto& [k, v] : theirs.items()) keys.insert(k);
  for (const auto& [k, v] : mine.items()) keys.insert(k);
  for (const std::string& k : keys)
    if (!record_only(k) && (theirs.contains(k) != mine.contains(k) || (theirs.contains(k) && theirs.at(k) != mine.at(k))))
      out.push_back(named(k) + " (" + said(theirs, k) + " against " + said(mine, k) + ")");
  return out;
}

std::string training_data_names(const CarbModel& m) {
  std::string names;
  for (const std::string& f : m.training_record().data_files)
    names += std::string(names.empty() ? "" : ", ") + std::filesystem::path(f).filename().string();
  return names;
}

}  // namespace carb
