// Cross-platform transfer: how one platform's measurements (A, the source) map onto another's
// (B, the target) on the configurations both measured — a least-squares line y_B = a*y_A + b
// with R², Spearman's rank correlation, the zero-shot error of a source-platform model on the
// target, and few-shot calibration (an affine map fitted on k measured target configurations).
//
// transfer() returns a TransferResult; its to_json() is the `carb transfer --format json` document:
//   targets.<t>        {slope, intercept, r2, spearman, n}
//   few_shot.<t>       [{k, mae, mape, repeats, nonpositive_share}, ...]   affine map applied to A's measurements
//   zero_shot.<t>      {mae, mape, r2, n, nonpositive_share}  model given only
//   few_shot_model.<t> [{k, mae, mape, repeats, nonpositive_share}, ...]   the same on the model's predictions
#pragma once
#include <cstddef>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "carb/dataset.hpp"
#include "carb/model.hpp"

namespace carb {

struct TransferOptions {
  std::vector<int> ks = {5, 10, 20, 50};  // target configurations measured for calibration
  int repeats = 20;                       // random draws of the k configurations per k
  unsigned seed = 42;
};

/// One target's measurements on the configurations both datasets measured (ok rows, both with a
/// value), sorted by config_key.
struct JoinedTarget {
  std::string target;
  std::vector<Config> configs;
  std::vector<double> source, dest;
};

/// Joins the ok rows of two datasets on config_key, per target present in both (kTargets order).
/// Throws DataError when a dataset has a configuration twice (several platforms pooled) or when
/// the datasets share no configuration with a common target.
std::vector<JoinedTarget> join_targets(const Dataset& source, const Dataset& dest);

/// The line y_B = a*y_A + b of one target over the configurations both platforms measured.
/// Unavailable (no fit, `reason` says why) when fewer than three configurations were measured on both.
struct TransferFit {
  std::size_t n = 0;
  bool available = true;
  std::string reason;
  double slope = 0, intercept = 0, r2 = 0, spearman = 0;
};

/// Few-shot calibration at one k: the affine map fitted on k drawn target configurations, scored
/// on the rest and averaged over `repeats` draws. No error (and repeats 0, `note` says why) when
/// k leaves nothing to fit or to score; with an error, `note` says what limits it (a source that
/// never varies) or is empty.
struct FewShotPoint {
  int k = 0;
  std::optional<double> mae, mape;
  int repeats = 0;
  std::string note;
  /// Share of the scored predictions the affine map put at or below zero (a cost no configuration
  /// has: a steep map with a negative intercept does it to small configurations). Scored as they
  /// are, and said (eighteenth hostile pass: cpu-2t -> cpu-1t latency scored 32 such rows silently).
  double nonpositive_share = 0;
  /// What a table says beside the point: `note`, then the share of predictions at or below zero
  /// (percent to `digits` significant digits) when there are any; "" when neither.
  std::string table_note(int digits = 4) const;
};

/// The source-platform model's error on the target's measurements, uncalibrated. Unavailable
/// when the model does not predict the target.
struct ZeroShot {
  bool available = true;
  std::string reason;
  double mae = 0, mape = 0, r2 = 0;
  std::size_t n = 0;
  /// Share of the model's predictions at or below zero, scored as they are (thirty-sixth hostile
  /// pass: only the few-shot tables said it).
  double nonpositive_share = 0;
};

/// The source-platform model transfer() was given.
struct TransferModel {
  std::string platform;
  std::vector<std::string> targets;
  std::string note;  // set when the model was not trained on a source platform
};

/// Everything transfer() measured, per target name (the maps iterate in name order, as the JSON
/// document does). `zero_shot` and `few_shot_model` are filled only when `model` is set.
struct TransferResult {
  std::set<std::string> source_platforms, target_platforms;
  unsigned seed = 0;
  int repeats = 0;
  std::map<std::string, TransferFit> targets;
  std::map<std::string, std::vector<FewShotPoint>> few_shot;
  std::optional<TransferModel> model;
  std::map<std::string, ZeroShot> zero_shot;
  std::map<std::string, std::vector<FewShotPoint>> few_shot_model;
  /// What the figures rest on (JSON "notes", "note:" lines in the table): both sides one platform,
  /// so a repeatability and not a transfer, and their protocols where they differ.
  std::vector<std::string> notes;

  /// The `carb transfer --format json` document (see the file comment).
  nlohmann::json to_json() const;
};

/// Transfer from `source` to `dest` (see the file comment). `model`, when given, is a
/// source-platform model whose predictions of the joined configurations are scored against the
/// target's measurements.
TransferResult transfer(const Dataset& source, const Dataset& dest, const TransferOptions& o = {},
                        const CarbModel* model = nullptr);

/// Aligned text tables of a transfer result.
void render_transfer_table(const TransferResult& r, std::ostream& out);

}  // namespace carb
