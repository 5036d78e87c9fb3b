// The bundle's record of the training split (carb/training_record.hpp): the manifest's
// extra["split"] object {seed, test_fraction, train_rows, test_rows}.
#include "carb/training_record.hpp"

#include <nlohmann/json.hpp>

namespace carb {

void record_training_split(CarbModel& m, const TrainingSplit& s) {
  m.manifest_extra()["split"] = {{"seed", s.seed},
                                 {"test_fraction", s.test_fraction},
                                 {"train_rows", s.train_rows},
                                 {"test_rows", s.test_rows}};
}

std::optional<TrainingSplit> recorded_training_split(const CarbModel& m) {
  const auto& ex = m.manifest_extra();
  if (!ex.contains("split") || !ex["split"].is_object()) return std::nullopt;
  const auto& j = ex["split"];
  TrainingSplit s;
  s.seed = j.value("seed", s.seed);
  s.test_fraction = j.value("test_fraction", s.test_fraction);
  s.train_rows = j.value("train_rows", s.train_rows);
  s.test_rows = j.value("test_rows", s.test_rows);
  return s;
}

}  // namespace carb
