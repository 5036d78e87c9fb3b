// The protocols a model's training data was measured under, as the provenance sidecars of the data
// files its bundle records (TrainingRecord::data_files) hold them. `carb plan` prices a plan against
// them, `evaluate --external` compares another file's rows with them.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "carb/model.hpp"

namespace carb {

/// Protocol id -> its settings as recorded, over every data file; nullopt where that cannot be
/// known: no data files recorded, a file gone, a sidecar missing, unreadable or without protocols.
/// `why`, when given, is set where a recorded file is gone or its sidecar cannot be read (not where
/// a file simply has no provenance). Never throws for what it reads.
std::optional<std::map<std::string, nlohmann::json>> training_data_protocols(const CarbModel& m,
                                                                             std::string* why = nullptr);

/// The data files' names, "a.csv, b.csv", for messages.
std::string training_data_names(const CarbModel& m);

}  // namespace carb
