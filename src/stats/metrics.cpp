// Regression metrics, the median, Spearman's rho and least-squares lines.
#include "carb/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "carb/error.hpp"

namespace carb {

nlohmann::json FitMetrics::to_json() const {
  return {{"r2", r2}, {"mae", mae}, {"rmse", rmse}, {"mape", mape}, {"n", n}};
}

FitMetrics FitMetrics::from_json(const nlohmann::json& j) {
  auto number = [&](const char* key) {
    const auto& v = j.at(key);
    return v.is_null() ? std::nan("") : v.get<double>();
  };
  FitMetrics f;
  f.r2 = number("r2"), f.mae = number("mae"), f.rmse = number("rmse"), f.mape = number("mape");
  // Values fit_metrics cannot produce (an R² above 1, a negative error, a row count that is no
  // count) are a document no carb wrote.
  const auto& n = j.at("n");
  if (!n.is_number_unsigned()) throw nlohmann::json::type_error::create(302, "a row count must be a whole number >= 0", &j);
  f.n = n.get<std::size_t>();
  if (f.r2 > 1 || f.mae < 0 || f.rmse < 0 || f.mape < 0 || f.rmse < f.mae * (1 - 1e-9))
    throw nlohmann::json::other_error::create(
        501, "metrics no fit can have (R2 above 1, a negative error, or an RMSE below the MAE)", &j);
  return f;
}

FitMetrics fit_metrics(const std::vector<double>& y, const std::vector<double>& pred) {
  if (y.size() != pred.size()) throw InputError("fit_metrics: truth and prediction sizes differ");
  FitMetrics f;
  f.n = y.size();
  if (y.empty()) return {kUndefined, kUndefined, kUndefined, kUndefined, 0};
  const double n = static_cast<double>(y.size());
  const double mean = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double ss_res = 0, ss_tot = 0, ape = 0;
  std::size_t n_ape = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double e = pred[i] - y[i];
    ss_res += e * e;
    ss_tot += (y[i] - mean) * (y[i] - mean);
    f.mae += std::abs(e);
    if (y[i] != 0) ape += std::abs(e / y[i]), ++n_ape;
  }
  // One row or a constant truth: no variance to explain. 0 would read as "no better than the mean".
  f.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : kUndefined;
  f.mae /= n;
  f.rmse = std::sqrt(ss_res / n);
  f.mape = n_ape ? 100.0 * ape / static_cast<double>(n_ape) : kUndefined;
  return f;
}

std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](auto a, auto b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double avg = 0.5 * static_cast<double>(i + j) + 1.0;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

namespace {
double pearson(const std::vector<double>& a, const std::vector<double>& b) {
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n, mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : kUndefined;
}
}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) throw InputError("median of no values");
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) throw InputError("spearman: sizes differ");
  if (a.size() < 2) return kUndefined;
  return pearson(ranks(a), ranks(b));
}

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) throw InputError("fit_line: need at least two matched points");
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / n, my = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  LineFit f;
  f.slope = sxx > 0 ? sxy / sxx : 0;
  f.intercept = my - f.slope * mx;
  std::vector<double> pred(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) pred[i] = f.slope * x[i] + f.intercept;
  f.r2 = fit_metrics(y, pred).r2;
  return f;
}

}  // namespace carb
