// The `carb train` job: read datasets, hold out a test split, train the CARB model,
// score it on the held-out rows, and save the bundle with its metrics.
#pragma once
#include <cstddef>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "carb/metrics.hpp"
#include "carb/model.hpp"
#include "carb/training_record.hpp"

namespace carb {

struct TrainJob {
  std::vector<std::filesystem::path> data;  // one or more dataset CSVs of one platform
  std::filesystem::path out;
  double test_fraction = 0.2;
  /// Learn drift-corrected latency from the reference_ms column (see carb/drift.hpp).
  bool drift_correct = false;
  /// Replace whatever is at `out`, not only an earlier carb bundle.
  bool force = false;
  /// An independent re-measurement of some of the data's configurations (same platform; another
  /// protocol is warned of): its spread from the data is added to every interval
  /// (CarbModel::calibrate_remeasurement).
  std::vector<std::filesystem::path> remeasured;
  /// The device's memory, recorded in the bundle (DeviceLimits): predictions above it are said
  /// not to fit, and `recommend` never picks them. The power limit comes from the data's provenance.
  std::optional<double> device_memory_mb;
  TrainOptions options;
};

/// What a `carb train` run made.
struct TrainSummary {
  std::filesystem::path model;
  std::string platform;
  std::vector<std::string> targets;  // in cascade order
  std::size_t train_rows = 0, test_rows = 0;
  double train_seconds = 0;
  std::map<std::string, std::map<std::string, double>> blend_weights;  // target -> learner kind -> weight
  std::map<std::string, FitMetrics> test_metrics;                      // held-out accuracy per target
  std::map<std::string, OofComponents> oof_components;                 // per target
  std::string data_hash;
  std::optional<double> drift_reference_ms;
  /// What the bundle knows of its device ("device" in the JSON, null where unknown), and whether its
  /// memory was given (TrainJob::device_memory_mb) or read from the data's provenance.
  DeviceLimits device;
  bool device_memory_given = false;
  /// Per target, the 90% re-measurement spread added to the intervals (as a factor, e^q), and the
  /// configurations measured in both runs; empty without --remeasured.
  std::map<std::string, double> remeasured_factor_90;
  std::size_t remeasured_pairs = 0;
  /// What evaluate warns of the same held-out rows (how many are guesses past the trained ranges).
  std::vector<std::string> warnings;
  /// The `carb train --format json` document.
  nlohmann::json to_json() const;
};

/// Trains, scores the held-out rows and saves the bundle (with its TrainingRecord).
TrainSummary run_train_job(const TrainJob& job);

/// InputError when a re-measurement file cannot be another run of `data`: one of the data files
/// (under any name), or a round the data combines (its provenance names it by path or by hash).
void check_remeasurement_files(const std::vector<std::filesystem::path>& remeasured,
                               const std::vector<std::filesystem::path>& data);

/// What a model trained on `files` (whose ok rows are `d`) knows of its device: `memory_mb` as
/// given (InputError outside DeviceLimits' range, below the largest peak memory `d` measured, or
/// where `d` measured none) and the power limit the files' provenance records for the rows'
/// protocols (the highest where they differ; none where no protocol records one). Without
/// `memory_mb`, the memory the provenance records of the device of every row's protocol
/// (platform_info.device_memory_mb; the highest where they differ), where `d` measured peak memory
/// and none above it; when a measured peak is above it, a line saying so goes to `notes` and the
/// model knows no memory.
DeviceLimits device_limits_of(const std::vector<std::filesystem::path>& files, const Dataset& d,
                              std::optional<double> memory_mb, std::vector<std::string>* notes = nullptr);

/// The ok rows of several dataset CSVs, read and checked as one dataset (see read_dataset_csvs).
/// `notes`, when given, receives what `carb train` warns of the rows left out: how many were
/// measured as oom or error, and how many of those a larger batch of the same network contradicts;
/// and of each file that is the export of an unfinished campaign (its sidecar's `campaign`).
Dataset read_datasets(const std::vector<std::filesystem::path>& files, std::vector<std::string>* notes = nullptr);

}  // namespace carb
