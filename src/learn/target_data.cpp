// The transformed target of cascade training and its out-of-fold view (see target_data.hpp).
#include "target_data.hpp"

#include <cmath>

#include "carb/error.hpp"
#include "carb/features.hpp"

namespace carb {

TargetData target_data(const Dataset& d, const std::string& t, bool log_target) {
  TargetData td;
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const auto v = d.rows[i].value(t);
    // Named by configuration: after the split, an index is neither a file line nor a row the user knows.
    const auto row = [&] { return d.rows[i].platform + " " + config_key(d.rows[i].config); };
    if (!v || !std::isfinite(*v)) throw InputError(row() + " has no finite " + t);
    if (log_target && *v <= 0) throw InputError(row() + ": " + t + " must be positive");
    td.y_raw.push_back(*v);
    td.y.push_back(static_cast<float>(log_target ? std::log(*v) : *v));
  }
  td.offset.assign(td.y.size(), 0.0f);
  return td;
}

// The ratio form's out-of-fold view. The analytic estimate is itself fitted, so a row's out-of-fold
// prediction must come from an estimate fitted without that row's fold as well (sixteenth hostile
// pass: fitted on all rows, it made the out-of-fold residuals that calibrate the intervals partly
// in-sample; on 4 rows they vanished and the 80% interval had zero width).
TargetData ratio_data(const TargetData& td, const AnalyticEstimate& e, const std::string& target, const Dataset& d,
                      const std::vector<int>& folds, int k) {
  const auto configs = configs_of(d);
  TargetData ratio = td;
  for (std::size_t i = 0; i < td.y.size(); ++i) {
    ratio.offset[i] = static_cast<float>(std::log(e(configs[i])));
    ratio.y[i] = td.y[i] - ratio.offset[i];
  }
  ratio.y_by_fold.assign(static_cast<std::size_t>(k), {});
  std::vector<float> oof_offset(td.y.size(), 0.0f);
  for (int f = 0; f < k; ++f) {
    std::vector<Config> cs;
    std::vector<double> ys;
    for (std::size_t i = 0; i < configs.size(); ++i)
      if (folds[i] != f) cs.push_back(configs[i]), ys.push_back(td.y_raw[i]);
    if (cs.empty()) continue;  // no fit for this fold (FitBatch skips it too)
    const AnalyticEstimate ef = AnalyticEstimate::fit(target, cs, ys);
    auto& yf = ratio.y_by_fold[static_cast<std::size_t>(f)];
    yf.resize(td.y.size());
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const auto o = static_cast<float>(std::log(ef(configs[i])));
      yf[i] = td.y[i] - o;
      if (folds[i] == f) oof_offset[i] = o;
    }
  }
  ratio.oof_shift.resize(td.y.size());
  for (std::size_t i = 0; i < td.y.size(); ++i) ratio.oof_shift[i] = oof_offset[i] - ratio.offset[i];
  return ratio;
}

std::vector<float> oof_in_target_space(const FitBatch& b, std::size_t handle, const TargetData& td) {
  std::vector<float> p = b.oof(handle);
  if (!td.oof_shift.empty())
    for (std::size_t i = 0; i < p.size(); ++i) p[i] += td.oof_shift[i];
  return p;
}

std::size_t add_target_oof(FitBatch& b, const FitBatch::Make& make, const Matrix& X, const TargetData& td,
                           const std::vector<int>& folds, int k) {
  return td.y_by_fold.empty() ? b.add_oof(make, X, td.y, folds, k) : b.add_oof(make, X, td.y_by_fold, folds, k);
}

std::vector<double> to_raw(const std::vector<float>& v, const TargetData& td, bool log_target) {
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    out[i] = log_target ? std::exp(double(v[i]) + td.offset[i]) : v[i];
  return out;
}

double mean_squared(const std::vector<float>& y, const std::vector<float>& p) {
  double s = 0;
  for (std::size_t i = 0; i < y.size(); ++i) s += (double(y[i]) - p[i]) * (double(y[i]) - p[i]);
  return s / static_cast<double>(y.size());
}

}  // namespace carb
