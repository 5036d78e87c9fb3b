// characterize(): assembles the characterization document, plus the family comparison and
// the matched-configuration precision ratios (scaling and efficiency live in their own files).
#include "carb/characterize.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "carb/error.hpp"
#include "carb/network_spec.hpp"
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

nlohmann::json unavailable(const std::string& reason) { return {{"available", false}, {"reason", reason}}; }

nlohmann::json family_section(const Rows& rows, const std::vector<std::string>& targets) {
  std::set<Family> fams;
  for (const Record* r : rows) fams.insert(r->config.family);
  if (fams.size() < 2)
    return unavailable("only one family (" + to_string(*fams.begin()) + ") in this dataset");
  nlohmann::json out = {{"available", true},
                        {"definition", "mean(bottleneck) / mean(basic) over all ok rows with a value"},
                        {"targets", nlohmann::json::object()}};
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
      out["targets"][t] = unavailable("no " + t + " values for one of the families");
      continue;
    }
    const double basic = sum[0] / n[0], bottleneck = sum[1] / n[1];
    out["targets"][t] = {{"available", true}, {"basic_mean", basic},  {"bottleneck_mean", bottleneck},
                         {"n_basic", n[0]},   {"n_bottleneck", n[1]}, {"ratio", bottleneck / basic}};
  }
  return out;
}

namespace {

// A configuration without its precision: the key that matches an fp16/bf16 row to its fp32 twin.
using MatchKey = std::tuple<Family, int, double, int, int>;
MatchKey match_key(const Config& c) { return {c.family, c.depth, c.width, c.resolution, c.batch}; }

nlohmann::json precision_pairs(const std::map<MatchKey, const Record*>& base,
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
  if (pairs == 0) return unavailable("no matched pairs with " + t + " values");
  return {{"available", true},
          {"mean_ratio", sum / pairs},
          {"min_ratio", lo},
          {"max_ratio", hi},
          {"pairs", pairs}};
}

}  // namespace

nlohmann::json precision_section(const Rows& rows, const std::vector<std::string>& targets) {
  std::map<Precision, std::map<MatchKey, const Record*>> by_prec;
  for (const Record* r : rows) by_prec[r->config.precision].emplace(match_key(r->config), r);
  if (!by_prec.count(Precision::fp32)) return unavailable("no fp32 rows to compare against");
  if (by_prec.size() < 2) return unavailable("only fp32 rows in this dataset");
  nlohmann::json out = {
      {"available", true},
      {"definition",
       "mean over matched pairs (same family, depth, width, resolution, batch) of value(low) / value(fp32)"},
      {"comparisons", nlohmann::json::object()}};
  for (Precision p : {Precision::fp16, Precision::bf16}) {
    if (!by_prec.count(p)) continue;
    nlohmann::json cmp = nlohmann::json::object();
    for (const auto& t : targets) cmp[t] = precision_pairs(by_prec[Precision::fp32], by_prec[p], t);
    out["comparisons"][to_string(p) + "_vs_fp32"] = cmp;
  }
  return out;
}

}  // namespace detail

double config_gflops(const Config& c) { return network_totals(c).flops() / 1e9; }

nlohmann::json characterize(const Dataset& d, const CharacterizeOptions& o) {
  detail::Rows rows;
  std::set<std::string> platforms;
  for (const auto& r : d.rows)
    if (r.status == "ok") {
      rows.push_back(&r);
      platforms.insert(r.platform);
    }
  if (rows.empty()) throw DataError("dataset has no ok rows to characterize");
  const auto targets = detail::present_targets(rows);
  nlohmann::json doc = {
      {"dataset",
       {{"rows", d.rows.size()}, {"ok_rows", rows.size()}, {"platforms", platforms}, {"targets", targets}}}};
  if (platforms.size() > 1)
    doc["dataset"]["warning"] = "rows of " + std::to_string(platforms.size()) + " platforms are pooled";
  if (targets.empty()) {
    const auto none =
        detail::unavailable("no target values (peak_memory_mb, energy_j, latency_ms) in this dataset");
    for (const char* s : {"scaling", "family_comparison", "precision", "efficiency", "divergence"})
      doc[s] = none;
    return doc;
  }
  doc["scaling"] = detail::scaling_section(rows, targets);
  doc["family_comparison"] = detail::family_section(rows, targets);
  doc["precision"] = detail::precision_section(rows, targets);
  doc["efficiency"] = detail::efficiency_section(rows, targets);
  doc["divergence"] = detail::divergence_section(rows, o);
  return doc;
}

}  // namespace carb
