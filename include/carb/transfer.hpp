// Cross-platform transfer: how one platform's measurements (A, the source) map onto another's
// (B, the target) on the configurations both measured — a least-squares line y_B = a*y_A + b
// with R², Spearman's rank correlation, the zero-shot error of a source-platform model on the
// target, and few-shot calibration (an affine map fitted on k measured target configurations).
//
// transfer() returns the `carb transfer --format json` document:
//   targets.<t>        {slope, intercept, r2, spearman, n}
//   few_shot.<t>       [{k, mae, mape, repeats}, ...]   affine map applied to A's measurements
//   zero_shot.<t>      {mae, mape, r2, n}               model given only
//   few_shot_model.<t> [{k, mae, mape, repeats}, ...]   affine map applied to the model's predictions
#pragma once
#include <nlohmann/json.hpp>
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

/// The transfer document (see the file comment). `model`, when given, is a source-platform model
/// whose predictions of the joined configurations are scored against the target's measurements.
nlohmann::json transfer(const Dataset& source, const Dataset& dest, const TransferOptions& o = {},
                        const CarbModel* model = nullptr);

/// Aligned text tables of a transfer document.
void render_transfer_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace carb
