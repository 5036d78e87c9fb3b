// A model scored on another file whose rows are, nearly all, one constant factor away from its
// answers: the file is likely in another unit than the model's training data (latency in s or
// µs, energy in mJ, memory in GB), or from a platform that much faster or slower. Ninetieth
// hostile pass: `evaluate --external` of a good model on latencies x10 said R2 -0.26 and not why.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "evaluate_internal.hpp"

namespace carb::eval {
namespace {

// Said only with this many rows, when the median factor is at least this far from 1, the middle
// 80% of the rows' factors all lie beyond kSameSideFactor on the same side of 1, and within
// kMaxSpread of each other: a model's own scatter (H200 energy MAPE 27%) stays well inside the
// first two, a unit or a platform's speed does not; another device altogether (the cpu-2t model on
// H200 rows: 0.003x to 0.27x, a review) is no constant factor.
constexpr std::size_t kMinRows = 10;
constexpr double kMinMedianFactor = 1.8;  // a file at exactly 2x a slightly biased model's answers: 1.96x
constexpr double kSameSideFactor = 1.5;
constexpr double kMaxSpread = 3.0;

double quantile(const std::vector<double>& sorted, double q) {  // non-empty, ascending; nearest rank
  return sorted[static_cast<std::size_t>(std::lround(q * static_cast<double>(sorted.size() - 1)))];
}

std::string factor(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, x >= 10 ? "%.0fx" : "%.2gx", x);
  return buf;
}

}  // namespace

std::vector<std::string> constant_factor_notes(const CarbModel& m, const Dataset& test,
                                               const std::map<std::string, std::vector<double>>& pred) {
  std::vector<std::string> out;
  for (const auto& t : m.targets()) {
    const auto it = pred.find(t);
    if (it == pred.end()) continue;
    std::vector<double> ratio;
    for (std::size_t i = 0; i < test.rows.size() && i < it->second.size(); ++i) {
      const auto y = test.rows[i].value(t);
      const double p = it->second[i];
      if (y && std::isfinite(*y) && *y > 0 && std::isfinite(p) && p > 0) ratio.push_back(*y / p);
    }
    if (ratio.size() < kMinRows) continue;
    std::sort(ratio.begin(), ratio.end());
    const double lo = quantile(ratio, 0.1), mid = quantile(ratio, 0.5), hi = quantile(ratio, 0.9);
    const bool above = mid >= kMinMedianFactor && lo > kSameSideFactor;
    const bool below = mid <= 1 / kMinMedianFactor && hi < 1 / kSameSideFactor;
    if ((!above && !below) || hi > kMaxSpread * lo) continue;
    out.push_back("measured " + t + " is " + factor(mid) + " the model's answer at the median row (the middle 80% of " +
                  std::to_string(ratio.size()) + " rows: " + factor(lo) + " to " + factor(hi) +
                  "): a nearly constant factor, as when the file is in another unit than the model's training data, "
                  "or from a platform where it costs that much " + (above ? "more" : "less") +
                  " (carb transfer fits such a factor between platforms)");
  }
  return out;
}

}  // namespace carb::eval
