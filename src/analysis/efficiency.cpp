// The efficiency and divergence sections of characterize(): cost per analytic GFLOP in each
// batch tier, and how energy and latency scale apart across SM-utilization x batch tiers.
#include <algorithm>
#include <array>
#include <map>

#include "carb/metrics.hpp"
#include "characterize_sections.hpp"

namespace carb::detail {
namespace {

struct Metric {
  const char* name;
  const char* target;
};
constexpr Metric kMetrics[] = {
    {"j_per_gflop", "energy_j"}, {"ms_per_gflop", "latency_ms"}, {"mb_per_gflop", "peak_memory_mb"}};

int tier_of(int batch) {
  for (std::size_t i = 0; i < kBatchTiers.size(); ++i)
    if (kBatchTiers[i].contains(batch)) return static_cast<int>(i);
  return -1;
}

EfficiencyMetric metric_tiers(const Rows& rows, const std::vector<double>& gflops,
                              const std::string& target) {
  EfficiencyMetric out;
  out.target = target;
  double best = 0, worst = 0;
  int tiers = 0;  // with rows
  for (std::size_t t = 0; t < kBatchTiers.size(); ++t) {
    double sum_y = 0, sum_g = 0, sum_ratio = 0;
    int n = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      auto v = rows[i]->value(target);
      if (!v || tier_of(rows[i]->config.batch) != static_cast<int>(t) || gflops[i] <= 0) continue;
      sum_y += *v;
      sum_g += gflops[i];
      sum_ratio += *v / gflops[i];
      ++n;
    }
    TierCost tier{kBatchTiers[t], n, std::nullopt, std::nullopt};
    if (n > 0) {
      const double pooled = sum_y / sum_g;
      tier.pooled = pooled;
      tier.row_mean = sum_ratio / n;
      best = tiers ? std::min(best, pooled) : pooled;
      worst = tiers ? std::max(worst, pooled) : pooled;
      ++tiers;
    }
    out.tiers.push_back(tier);
  }
  // A spread across tiers needs two of them: one tier's "1x" read as no difference between tiers
  // (sixty-eighth hostile pass, on rows of batch <= 4 alone).
  if (best > 0 && tiers >= 2) out.spread = worst / best;
  return out;
}

struct Cell {
  double e = 0, l = 0;
  int n = 0;
};

}  // namespace

EfficiencySection efficiency_section(const Rows& rows, const std::vector<std::string>& targets) {
  std::vector<double> gflops;
  gflops.reserve(rows.size());
  for (const Record* r : rows) gflops.push_back(config_gflops(r->config));
  EfficiencySection out;
  out.definition =
      "pooled = sum(target) / sum(GFLOPs) over the tier's rows (weights large configurations by their "
      "compute); row_mean (in --format json) = mean of per-row target/GFLOPs; GFLOPs = analytic FLOPs of "
      "one batch / 1e9; spread = worst / best pooled tier (of two tiers or more)";
  for (const Metric& m : kMetrics) {
    EfficiencyMetric e =
        std::find(targets.begin(), targets.end(), m.target) == targets.end()
            ? unavailable<EfficiencyMetric>(std::string("no ") + m.target + " values in this dataset")
            : metric_tiers(rows, gflops, m.target);
    e.name = m.name;
    out.metrics.push_back(std::move(e));
  }
  for (const Record* r : rows) out.rows_outside_tiers += tier_of(r->config.batch) < 0;
  return out;
}

namespace {

using Grid = std::array<std::array<Cell, kBatchTiers.size()>, 2>;  // [low/high SM][batch tier]

DivergenceCell cell_of(const Cell& c, const Cell& base, bool high, std::size_t tier) {
  DivergenceCell cell;
  cell.sm = high ? SmRegime::high : SmRegime::low;
  cell.tier = kBatchTiers[tier];
  cell.n = c.n;
  if (c.n > 0) {
    cell.mean_energy_j = c.e / c.n;
    cell.mean_latency_ms = c.l / c.n;
  }
  if (c.n > 0 && base.n > 0) {
    const double er = (c.e / c.n) / (base.e / base.n), lr = (c.l / c.n) / (base.l / base.n);
    cell.energy_ratio = er;
    cell.latency_ratio = lr;
    cell.divergence = er / lr;
  }
  return cell;
}

HighOverLow high_over_low(const Cell& lo, const Cell& hi, std::size_t tier) {
  HighOverLow row{kBatchTiers[tier], std::nullopt, std::nullopt};
  if (lo.n > 0 && hi.n > 0) {
    row.energy = (hi.e / hi.n) / (lo.e / lo.n);
    row.latency = (hi.l / hi.n) / (lo.l / lo.n);
  }
  return row;
}

// Rows with energy, latency and SM utilization, or the reason there are none.
std::string usable_rows(const Rows& rows, Rows& usable) {
  bool has_e = false, has_l = false, has_sm = false;
  for (const Record* r : rows) {
    has_e |= r->energy_j.has_value();
    has_l |= r->latency_ms.has_value();
    has_sm |= r->avg_sm_util.has_value();
    if (r->energy_j && r->latency_ms && r->avg_sm_util && tier_of(r->config.batch) >= 0) usable.push_back(r);
  }
  if (!has_e) return "no energy_j values in this dataset";
  if (!has_l) return "no latency_ms values in this dataset";
  if (!has_sm) return "no avg_sm_util telemetry in this dataset";
  if (usable.empty()) {
    // Twenty-seventh hostile pass: rows with all three, but every one past the last batch tier, were
    // said to lack them.
    for (const Record* r : rows)
      if (r->energy_j && r->latency_ms && r->avg_sm_util)
        return "every row with energy_j, latency_ms and avg_sm_util has a batch above " +
               std::to_string(kBatchTiers.back().hi) + ", past the last batch tier";
    return "no row has energy_j, latency_ms and avg_sm_util together";
  }
  return {};
}

}  // namespace

DivergenceSection divergence_section(const Rows& rows, const CharacterizeOptions& o) {
  Rows usable;
  if (auto reason = usable_rows(rows, usable); !reason.empty()) return unavailable<DivergenceSection>(reason);
  std::vector<double> sm;
  for (const Record* r : usable) sm.push_back(*r->avg_sm_util);
  const double thr = o.sm_threshold.value_or(median(sm));
  Grid cells{};
  for (const Record* r : usable) {
    Cell& c = cells[*r->avg_sm_util > thr ? 1 : 0][static_cast<std::size_t>(tier_of(r->config.batch))];
    c.e += *r->energy_j;
    c.l += *r->latency_ms;
    ++c.n;
  }
  const Cell& base = cells[0][0];
  DivergenceSection out;
  out.definition =
      "rows split at avg_sm_util > threshold (high) vs <= (low) and by batch tier; ratios are cell means "
      "relative to the low-SM, batch 1-4 baseline; divergence = energy_ratio / latency_ratio";
  // Twenty-fifth hostile pass: rows past the last tier were left out of this section without a word.
  std::size_t past = 0;
  for (const Record* r : rows)
    past += r->energy_j && r->latency_ms && r->avg_sm_util && tier_of(r->config.batch) < 0;
  if (past) out.definition += "; " + rows_past_tiers_note(past);
  // Nor the rows without telemetry: 200 of the H200's 260 (sixty-eighth hostile pass; only the
  // JSON's row count said it).
  std::size_t untimed = 0;
  for (const Record* r : rows) untimed += r->energy_j && r->latency_ms && !r->avg_sm_util;
  if (untimed)
    out.definition += "; " + std::to_string(untimed) + " row" + (untimed == 1 ? "" : "s") +
                      " with energy and latency but no avg_sm_util left out";
  out.sm_threshold = thr;
  out.threshold_given = o.sm_threshold.has_value();
  out.rows = usable.size();
  for (std::size_t t = 0; t < kBatchTiers.size(); ++t) {
    for (int s = 0; s < 2; ++s) out.cells.push_back(cell_of(cells[s][t], base, s == 1, t));
    out.high_over_low.push_back(high_over_low(cells[0][t], cells[1][t], t));
  }
  // The paper's headline: the largest populated high-SM batch tier against the baseline.
  for (std::size_t t = kBatchTiers.size(); t-- > 0;)
    if (cells[1][t].n > 0 && base.n > 0) {
      out.headline = out.cells[2 * t + 1];
      break;
    }
  if (base.n == 0) out.baseline_note = "the low-SM, batch 1-4 baseline cell is empty: no ratios to it";
  return out;
}

}  // namespace carb::detail

namespace carb {

std::string rows_past_tiers_note(std::size_t rows) {
  return std::to_string(rows) + " ok row" + (rows == 1 ? "" : "s") + " with a batch above " +
         std::to_string(kBatchTiers.back().hi) + " " + (rows == 1 ? "is" : "are") + " outside the tiers and left out";
}

}  // namespace carb
