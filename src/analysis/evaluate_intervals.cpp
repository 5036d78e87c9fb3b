// Interval coverage on the scored rows: for each level a bundle calibrates, the share of the rows'
// measurements inside the model's interval, overall and in the smaller and larger half of the
// predictions, with the median width. The check a user can run on their own rows of the coverage
// the intervals state (and, with --external, on a new measurement of configurations).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "evaluate_internal.hpp"

namespace carb {
namespace eval {
namespace {

std::optional<double> share_of(std::size_t held, std::size_t n) {
  return n == 0 ? std::nullopt : std::optional<double>(static_cast<double>(held) / static_cast<double>(n));
}

// The median as statistics.median takes it (scripts/remeasure_coverage.py): the mean of the two
// middle values for an even count; empty when it is infinite (or there is nothing).
std::optional<double> median_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  const double med = v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  return std::isfinite(med) ? std::optional<double>(med) : std::nullopt;
}

}  // namespace

IntervalCoverage intervals_section(const Context& c) {
  IntervalCoverage out;
  out.drift_reference_ms = c.model.drift_reference_ms();
  // A held-out split's rows the model trained on are no test of intervals calibrated out of fold.
  Dataset rows = c.test;
  if (!c.opts.external && c.model.knows_trained_configs() && !rows.rows.empty() &&
      rows.rows.front().platform == c.model.platform()) {
    Dataset unseen = rows;
    std::erase_if(unseen.rows, [&](const Record& r) { return c.model.trained_on(r.config); });
    if (unseen.rows.size() >= 2) {
      out.left_out_trained = rows.rows.size() - unseen.rows.size();
      rows = std::move(unseen);
    } else if (unseen.rows.size() < rows.rows.size()) {
      out.in_sample = true;
    }
  }
  const auto configs = configs_of(rows);
  const auto tel = telemetry_of(rows);
  std::map<std::string, std::vector<double>> truth;
  for (const auto& t : c.model.targets()) truth[t] = target_column(rows, t);
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
      std::size_t held_small = 0, held_large = 0, held_bounded = 0;
      const std::size_t half = y.size() / 2;
      std::vector<double> widths;
      for (std::size_t k = 0; k < order.size(); ++k) {
        const std::size_t i = order[k];
        const auto [lo, hi] = pred[i].interval.at(t);
        const bool held = lo <= y[i] && y[i] <= hi;
        cov.held += held;
        (k < half ? held_small : held_large) += held;
        cov.unbounded += !std::isfinite(hi);
        held_bounded += held && std::isfinite(hi);
        widths.push_back(lo > 0 && std::isfinite(hi) ? hi / lo : std::numeric_limits<double>::infinity());
      }
      cov.share = share_of(cov.held, cov.n);
      cov.bounded_share = share_of(held_bounded, cov.n - cov.unbounded);
      if (y.size() >= 2) cov.smaller_half = share_of(held_small, half), cov.larger_half = share_of(held_large, y.size() - half);
      cov.median_width = median_of(std::move(widths));
      out.targets[t][nlohmann::json(level).dump()] = cov;  // "0.9", as the bundle keys its levels
    }
  }
  return out;
}

}  // namespace eval

nlohmann::json IntervalCoverage::to_json() const {
  const auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::json j = {{"left_out_trained", left_out_trained}, {"in_sample", in_sample}};
  if (drift_reference_ms)
    j["latency_against"] = "drift-corrected latency (reference " + nlohmann::json(*drift_reference_ms).dump() + " ms)";
  j["targets"] = nlohmann::json::object();
  for (const auto& [t, levels] : targets)
    for (const auto& [level, c] : levels)
      j["targets"][t][level] = {{"n", c.n},
                                {"held", c.held},
                                {"share", opt(c.share)},
                                {"unbounded", c.unbounded},
                                {"bounded_share", opt(c.bounded_share)},
                                {"smaller_half", opt(c.smaller_half)},
                                {"larger_half", opt(c.larger_half)},
                                {"median_width", opt(c.median_width)}};
  return j;
}

}  // namespace carb
