// Regression and rank statistics used by training, evaluation, transfer and screening.
#pragma once
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

namespace carb {

/// What a statistic is when the data cannot define it (an R² of one row or of a constant truth, a
/// rank correlation of a constant side): NaN, which tables print as "undefined" and JSON as null,
/// never a number that reads as a result.
inline constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();

/// R², MAE, RMSE and MAPE (in %, over rows with a non-zero truth) of predictions against truth.
/// R² is kUndefined for fewer than two rows or a constant truth, MAPE when no truth is non-zero,
/// every field for no rows.
struct FitMetrics {
  double r2 = 0, mae = 0, rmse = 0, mape = 0;
  std::size_t n = 0;
  nlohmann::json to_json() const;
  /// Reads to_json's document; a null value (to_json writes NaN or infinity as null) reads as NaN.
  static FitMetrics from_json(const nlohmann::json& j);
};
FitMetrics fit_metrics(const std::vector<double>& truth, const std::vector<double>& pred);

/// The median; the mean of the middle two for an even count. Throws InputError when `v` is empty.
double median(std::vector<double> v);

/// Spearman rank correlation (average ranks for ties); kUndefined for fewer than two pairs or a constant side.
double spearman(const std::vector<double>& a, const std::vector<double>& b);
/// Ranks (1-based, ties averaged).
std::vector<double> ranks(const std::vector<double>& v);

/// Least-squares line y = slope*x + intercept with its R² (kUndefined for a constant y).
struct LineFit {
  double slope = 0, intercept = 0, r2 = 0;
};
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace carb
