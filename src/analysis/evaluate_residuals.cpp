// The residual study on the held-out rows (the paper's "residual correctability" analysis):
// Spearman's rho between residuals and SM utilization in the high-utilization regime
// (only where the data has telemetry), and the residual spread per batch regime, which is
// what motivates the low-batch corrector. Spread is given both in target units and as the
// standard deviation of log(pred / truth), because raw residuals grow with the target and
// would make the large-batch regime look worst by scale alone.
#include <cmath>
#include <numeric>

#include "carb/metrics.hpp"
#include "evaluate_internal.hpp"

namespace carb {
namespace eval {
namespace {

struct Regime {
  const char* label;
  int lo, hi;  // inclusive batch range
};
constexpr Regime kRegimes[] = {{"<=8", 1, 8}, {"9-64", 9, 64}, {">64", 65, 1 << 30}};

// Sample standard deviation; callers pass at least two values.
double stddev(const std::vector<double>& v) {
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

std::map<std::string, RegimeSpread> regime_spread(const Context& c, const std::string& t) {
  const auto truth = target_column(c.test, t);
  const auto& pred = c.test_pred.at(t);
  std::map<std::string, RegimeSpread> out;
  for (const auto& r : kRegimes) {
    std::vector<double> res, log_ratio;
    double abs_sum = 0;
    for (std::size_t i = 0; i < truth.size(); ++i) {
      const int b = c.test.rows[i].config.batch;
      if (b < r.lo || b > r.hi) continue;
      res.push_back(truth[i] - pred[i]);
      abs_sum += std::abs(truth[i] - pred[i]);
      if (truth[i] > 0 && pred[i] > 0) log_ratio.push_back(std::log(pred[i] / truth[i]));
    }
    // A spread needs two residuals; an empty regime has no MAE either (empty, never 0).
    RegimeSpread s;
    s.n = res.size();
    if (!res.empty()) s.mae = abs_sum / static_cast<double>(res.size());
    if (res.size() >= 2) s.std = stddev(res);
    if (res.size() >= 2 && log_ratio.size() == res.size()) s.log_ratio_std = stddev(log_ratio);
    out[r.label] = s;
  }
  return out;
}

void high_util(const Context& c, ResidualStudy& s) {
  if (!c.test.has_column("avg_sm_util")) {
    // Said with the count: "no avg_sm_util telemetry in every ok row" read as none at all on the
    // H200's test rows, where some had it (sixty-eighth hostile pass).
    std::size_t with = 0;
    for (const auto& r : c.test.rows) with += r.status == Status::ok && r.avg_sm_util.has_value();
    s.high_util_reason = with == 0 ? "no scored row has avg_sm_util telemetry (a CPU platform has none)"
                                   : "only " + std::to_string(with) + " of the " + std::to_string(c.test.ok_only().rows.size()) +
                                         " scored rows have avg_sm_util telemetry; the study needs it in every one";
    return;
  }
  s.high_util_available = true;
  s.high_util_threshold = c.opts.high_util_threshold;
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < c.test.rows.size(); ++i)
    if (*c.test.rows[i].avg_sm_util > s.high_util_threshold) rows.push_back(i);
  s.high_util_rows = rows.size();
  for (const auto& t : c.model.targets()) {
    const auto truth = target_column(c.test, t);
    std::vector<double> res, util;
    for (auto i : rows)
      res.push_back(truth[i] - c.test_pred.at(t)[i]), util.push_back(*c.test.rows[i].avg_sm_util);
    HighUtilResidual h;
    h.n = rows.size();
    // Fewer than 3 pairs give a rho of +-1 or 0 by construction: not evidence of anything.
    if (rows.size() >= 3) h.rho = spearman(res, util);
    s.high_util[t] = h;
  }
}

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

}  // namespace

ResidualStudy residuals_section(const Context& c) {
  ResidualStudy s;
  for (const auto& t : c.model.targets()) s.batch_regimes[t] = regime_spread(c, t);
  high_util(c, s);
  return s;
}

}  // namespace eval

nlohmann::json ResidualStudy::to_json() const {
  nlohmann::json spread = nlohmann::json::object();
  for (const auto& [t, regimes] : batch_regimes)
    for (const auto& [label, r] : regimes)
      spread[t][label] = {{"n", r.n}, {"std", eval::opt(r.std)}, {"mae", eval::opt(r.mae)},
                          {"log_ratio_std", eval::opt(r.log_ratio_std)}};
  nlohmann::json hu = high_util_available
                          ? nlohmann::json{{"available", true},
                                           {"threshold", high_util_threshold},
                                           {"rows", high_util_rows}}
                          : eval::unavailable(high_util_reason);
  for (const auto& [t, h] : high_util) hu[t] = {{"n", h.n}, {"rho", eval::opt(h.rho)}};
  return {{"high_util", hu}, {"batch_regimes", spread}};
}

}  // namespace carb
