// The record `carb train` leaves in a bundle of how it split the data, read back by `carb
// evaluate` so that it scores the same held-out rows. Stored under "split" in the manifest's
// extra section; these two functions are the one place that reads or writes it.
#pragma once
#include <cstddef>
#include <optional>

#include "carb/model.hpp"

namespace carb {

struct TrainingSplit {
  unsigned seed = 42;
  double test_fraction = 0.2;
  std::size_t train_rows = 0, test_rows = 0;
};

/// Records `s` in `m`'s manifest (saved with the bundle).
void record_training_split(CarbModel& m, const TrainingSplit& s);

/// The split `m`'s bundle recorded; unset when it recorded none. A field the record lacks keeps
/// its default.
std::optional<TrainingSplit> recorded_training_split(const CarbModel& m);

}  // namespace carb
