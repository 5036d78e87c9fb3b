// Interval coverage on the scored rows: for each level a bundle calibrates, the share of the rows'
// measurements inside the model's interval, overall and in the smaller and larger half of the
// predictions, with the median width. The check a user can run on their own rows of the coverage
// the intervals state (and, with --external, on a new measurement of configurations).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "evaluate_internal.hpp"

namespace carb {
namespace eval {
namespace {

std::optional<double> share_of(std::size_t held, std::size_t n) {
  return n == 0 ? std::nullopt : std::optional<double>(static_cast<double>(held) / static_cast<double>(n));
}

}  // namespace

IntervalCoverage intervals_section(const Context& c) {
  IntervalCoverage out;
  const auto configs = configs_of(c.test);
  const auto tel = telemetry_of(c.test);
  std::map<std::string, std::vector<double>> truth;
  for (const auto& t : c.model.targets()) truth[t] = target_column(c.test, t);
  for (const double level : kConfidenceLevels) {
    const auto pred = c.model.predict(configs, tel, level);
    for (const auto& t : c.model.targets()) {
      const auto& y = truth.at(t);
      // The halves by the point answer, as the size bins split a regime's rows (ties by row order).
      std::vector<std::size_t> order(y.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(),
                       [&](std::size_t a, std::size_t b) { return pred[a].value.at(t) < pred[b].value.at(t); });
      IntervalLevelCoverage cov;
      cov.n = y.size();
      std::size_t held_small = 0, held_large = 0;
      const std::size_t half = y.size() / 2;
      std::vector<double> widths;
      for (std::size_t k = 0; k < order.size(); ++k) {
        const std::size_t i = order[k];
        const auto [lo, hi] = pred[i].interval.at(t);
        const bool held = lo <= y[i] && y[i] <= hi;
        cov.held += held;
        (k < half ? held_small : held_large) += held;
        if (!std::isfinite(hi))
          ++cov.unbounded;
        else if (lo > 0)
          widths.push_back(hi / lo);
      }
      cov.share = share_of(cov.held, cov.n);
      if (y.size() >= 2) cov.smaller_half = share_of(held_small, half), cov.larger_half = share_of(held_large, y.size() - half);
      if (!widths.empty()) {
        std::nth_element(widths.begin(), widths.begin() + static_cast<std::ptrdiff_t>(widths.size() / 2), widths.end());
        cov.median_width = widths[widths.size() / 2];
      }
      out.targets[t][nlohmann::json(level).dump()] = cov;  // "0.9", as the bundle keys its levels
    }
  }
  return out;
}

}  // namespace eval

nlohmann::json IntervalCoverage::to_json() const {
  const auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [t, levels] : targets)
    for (const auto& [level, c] : levels)
      j[t][level] = {{"n", c.n},
                     {"held", c.held},
                     {"share", opt(c.share)},
                     {"unbounded", c.unbounded},
                     {"smaller_half", opt(c.smaller_half)},
                     {"larger_half", opt(c.larger_half)},
                     {"median_width", opt(c.median_width)}};
  return j;
}

}  // namespace carb
