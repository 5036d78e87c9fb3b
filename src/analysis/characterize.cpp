// characterize(): assembles the Characterization, plus the family comparison and
// the matched-configuration precision ratios (scaling and efficiency live in their own files).
#include "carb/characterize.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "carb/error.hpp"
#include "carb/network_spec.hpp"
#include "carb/text_table.hpp"
#include "characterize_sections.hpp"

namespace carb {
namespace detail {

std::vector<std::string> present_targets(const Rows& rows) {
  std::vector<std::string> out;
  for (const char* t : kTargets)
    for (const Record* r : rows)
      if (r->value(t)) {
        out.emplace_back(t);
        break;
      }
  return out;
}

FamilySection family_section(const Rows& rows, const std::vector<std::string>& targets) {
  std::set<Family> fams;
  for (const Record* r : rows) fams.insert(r->config.family);
  if (fams.size() < 2)
    return unavailable<FamilySection>("only one family (" + to_string(*fams.begin()) + ") in this dataset");
  FamilySection out;
  out.definition = "mean(bottleneck) / mean(basic) over all ok rows with a value";
  for (const auto& t : targets) {
    double sum[2] = {0, 0};
    int n[2] = {0, 0};
    for (const Record* r : rows)
      if (auto v = r->value(t)) {
        const int f = r->config.family == Family::basic ? 0 : 1;
        sum[f] += *v;
        ++n[f];
      }
    if (n[0] == 0 || n[1] == 0) {
      out.targets[t] = unavailable<FamilyRatio>("no " + t + " values for one of the families");
      continue;
    }
    FamilyRatio& f = out.targets[t];
    f.basic_mean = sum[0] / n[0];
    f.bottleneck_mean = sum[1] / n[1];
    f.ratio = f.bottleneck_mean / f.basic_mean;
    f.n_basic = n[0];
    f.n_bottleneck = n[1];
  }
  return out;
}

namespace {

// A configuration without its precision: the key that matches an fp16/bf16 row to its fp32 twin.
using MatchKey = std::tuple<Family, int, double, int, int>;
MatchKey match_key(const Config& c) { return {c.family, c.depth, c.width, c.resolution, c.batch}; }

PrecisionRatio precision_pairs(const std::map<MatchKey, const Record*>& base,
                               const std::map<MatchKey, const Record*>& low, const std::string& t) {
  double sum = 0, lo = 0, hi = 0;
  int pairs = 0;
  for (const auto& [k, r] : low) {
    auto it = base.find(k);
    if (it == base.end()) continue;
    auto a = it->second->value(t), b = r->value(t);
    if (!a || !b || *a <= 0) continue;
    const double q = *b / *a;
    lo = pairs ? std::min(lo, q) : q;
    hi = pairs ? std::max(hi, q) : q;
    sum += q;
    ++pairs;
  }
  if (pairs == 0) return unavailable<PrecisionRatio>("no matched pairs with " + t + " values");
  PrecisionRatio out;
  out.mean_ratio = sum / pairs;
  out.min_ratio = lo;
  out.max_ratio = hi;
  out.pairs = pairs;
  return out;
}

}  // namespace

PrecisionSection precision_section(const Rows& rows, const std::vector<std::string>& targets) {
  std::map<Precision, std::map<MatchKey, const Record*>> by_prec;
  for (const Record* r : rows) by_prec[r->config.precision].emplace(match_key(r->config), r);
  if (!by_prec.count(Precision::fp32))
    return unavailable<PrecisionSection>("no fp32 rows to compare against");
  if (by_prec.size() < 2) return unavailable<PrecisionSection>("only fp32 rows in this dataset");
  PrecisionSection out;
  out.definition =
      "mean over matched pairs (same family, depth, width, resolution, batch) of value(low) / value(fp32)";
  for (Precision p : {Precision::bf16, Precision::fp16}) {  // name order, as the JSON object lists them
    if (!by_prec.count(p)) continue;
    PrecisionComparison cmp{p, {}};
    for (const auto& t : targets) cmp.targets[t] = precision_pairs(by_prec[Precision::fp32], by_prec[p], t);
    out.comparisons.push_back(std::move(cmp));
  }
  return out;
}

}  // namespace detail

double config_gflops(const Config& c) { return network_totals(c).flops() / 1e9; }

Characterization characterize(const Dataset& data, const CharacterizeOptions& o) {
  // The CLI's range, for every caller (a NaN threshold put every row on one side without a word).
  if (o.sm_threshold && !(*o.sm_threshold >= 0 && *o.sm_threshold <= 100))
    throw InputError("the SM threshold is " + fmt_num(*o.sm_threshold, 6) + "; it is a utilization, 0 to 100 (%)");
  const Dataset d = with_one_width_per_network(data);  // width levels are networks, not spellings
  detail::Rows rows;
  Characterization ch;
  for (const auto& r : d.rows)
    if (r.status == Status::ok) {
      rows.push_back(&r);
      ch.dataset.platforms.insert(r.platform);
    }
  if (rows.empty()) throw DataError("dataset has no ok rows to characterize");
  const auto targets = detail::present_targets(rows);
  ch.dataset.rows = d.rows.size();
  ch.dataset.ok_rows = rows.size();
  ch.dataset.targets = targets;
  if (ch.dataset.platforms.size() > 1)
    ch.dataset.warning = "rows of " + std::to_string(ch.dataset.platforms.size()) + " platforms are pooled";
  if (targets.empty()) {
    const std::string none = "no target values (peak_memory_mb, energy_j, latency_ms) in this dataset";
    ch.scaling = detail::unavailable<ScalingSection>(none);
    ch.family_comparison = detail::unavailable<FamilySection>(none);
    ch.precision = detail::unavailable<PrecisionSection>(none);
    ch.efficiency = detail::unavailable<EfficiencySection>(none);
    ch.divergence = detail::unavailable<DivergenceSection>(none);
    return ch;
  }
  ch.scaling = detail::scaling_section(rows, targets);
  ch.family_comparison = detail::family_section(rows, targets);
  ch.precision = detail::precision_section(rows, targets);
  ch.efficiency = detail::efficiency_section(rows, targets);
  ch.divergence = detail::divergence_section(rows, o);
  return ch;
}

}  // namespace carb
