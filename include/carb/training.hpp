// The `carb train` job: read datasets, hold out a test split, train the CARB model,
// score it on the held-out rows, and save the bundle with its metrics.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "carb/model.hpp"

namespace carb {

struct TrainJob {
  std::vector<std::filesystem::path> data;  // one or more dataset CSVs of one platform
  std::filesystem::path out;
  double test_fraction = 0.2;
  /// Learn drift-corrected latency from the reference_ms column (see carb/drift.hpp).
  bool drift_correct = false;
  /// Replace whatever is at `out`, not only an earlier carb bundle.
  bool force = false;
  TrainOptions options;
};

/// Returns a summary: platform, rows, targets, blend weights, held-out metrics per target.
nlohmann::json run_train_job(const TrainJob& job);

/// The ok rows of several dataset CSVs, read and checked as one dataset (see read_dataset_csvs).
Dataset read_datasets(const std::vector<std::filesystem::path>& files);

}  // namespace carb
