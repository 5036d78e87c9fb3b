// The protocols a model's training data was measured under, as the provenance sidecars of the data
// files its bundle records (TrainingRecord::data_files) hold them. `carb plan` prices a plan against
// them, `evaluate --external` compares another file's rows with them.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "carb/model.hpp"

namespace carb {

/// Protocol id -> its settings as recorded in the provenance sidecars of `files`; nullopt where that
/// cannot be known (as training_data_protocols, whose messages name the files as `whose`).
std::optional<std::map<std::string, nlohmann::json>> protocols_of_files(const std::vector<std::string>& files,
                                                                        std::string* why = nullptr,
                                                                        const std::string& whose = "the data file");

/// Protocol id -> its settings as recorded, over every data file; nullopt where that cannot be
/// known: no data files recorded, a file gone, a sidecar missing, unreadable or without protocols.
/// `why`, when given, is set where a recorded file is gone or its sidecar cannot be read (not where
/// a file simply has no provenance). Never throws for what it reads.
std::optional<std::map<std::string, nlohmann::json>> training_data_protocols(const CarbModel& m,
                                                                             std::string* why = nullptr);

/// The settings that make a protocol (all but kProtocolRecordOnlyKeys: the command, the meter check,
/// the platform's facts) in which `theirs` differs from `mine`, each as "ci ("student_t" against
/// none recorded)", in key order; empty when they measure alike.
std::vector<std::string> protocol_setting_differences(const nlohmann::json& theirs, const nlohmann::json& mine);

/// The data files' names, "a.csv, b.csv", for messages.
std::string training_data_names(const CarbModel& m);

}  // namespace carb
