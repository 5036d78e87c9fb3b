// The scaling section of characterize(): per family and target, the group mean of the target
// at each level of one knob with all other knobs pooled, and the max/min ratio of those means
// (the paper's "depth spans 13.8x").
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "characterize_sections.hpp"

namespace carb::detail {
namespace {

// A knob's value in a configuration (a precision as its enum's number, so levels sort
// fp32 < fp16 < bf16).
double level_of(const Config& c, Knob knob) {
  switch (knob) {
    case Knob::depth:
      return c.depth;
    case Knob::width:
      return c.width;
    case Knob::resolution:
      return c.resolution;
    case Knob::batch:
      return c.batch;
    case Knob::precision:
      return static_cast<int>(c.precision);
  }
  return 0;
}

struct Acc {
  double sum = 0;
  int n = 0;
};

// The network with `knob` left out: two rows with the same key differ in that knob alone.
using NetworkKey = std::pair<std::string, std::vector<double>>;
NetworkKey key_without(const Record& r, Knob knob) {
  NetworkKey key{r.platform, {static_cast<double>(r.config.family)}};
  for (Knob k : kKnobs)
    if (k != knob) key.second.push_back(level_of(r.config, k));
  return key;
}

// Precision has no order: its matched ratio is the pooled costliest level's over the cheapest's,
// the quotient the pooled ratio is (ninety-third hostile pass: the pooled read fp32/bf16 1.40x beside
// a matched bf16/fp32 0.71x, the same finding read as two opposite ones). Where every precision
// costs alike, the levels' own order.
bool ordered_by_cost(const KnobScaling& k) { return k.knob == Knob::precision && k.min.level != k.max.level; }

// Sixty-second hostile pass: on cpu-2t the pooled batch ratio of basic latency read 6.36x where the
// 94 networks measured at both batch 1 and 64 scale 9.67x: the space keeps only small networks at
// large batches, so the pooled means compare different networks. The matched ratio takes the knob's
// lowest and highest levels (not the pooled extremes, which that bias picks) and, per network
// measured at both, the mean of its rows there.
void matched_ratio(const Rows& rows, Knob knob, const std::string& target, KnobScaling& out) {
  const bool by_cost = ordered_by_cost(out);
  const double lowest = by_cost ? out.min.level : out.levels.front().level;
  const double highest = by_cost ? out.max.level : out.levels.back().level;
  std::map<NetworkKey, std::pair<Acc, Acc>> at;  // network without the knob -> (lowest, highest)
  for (const Record* r : rows) {
    const double level = level_of(r->config, knob);
    if (level != lowest && level != highest) continue;
    if (auto v = r->value(target)) {
      auto& both = at[key_without(*r, knob)];
      Acc& a = level == lowest ? both.first : both.second;
      a.sum += *v, ++a.n;
    }
  }
  double lo = 0, hi = 0;
  for (const auto& [key, v] : at)
    if (v.first.n > 0 && v.second.n > 0) {
      lo += v.first.sum / v.first.n, hi += v.second.sum / v.second.n;
      ++out.matched_pairs;
    }
  out.matched_low = lowest, out.matched_high = highest;
  if (out.matched_pairs > 0 && lo > 0) out.matched_ratio = hi / lo;
}

KnobScaling knob_scaling(const Rows& rows, Knob knob, const std::string& target) {
  std::map<double, Acc> groups;
  for (const Record* r : rows)
    if (auto v = r->value(target)) {
      Acc& a = groups[level_of(r->config, knob)];
      a.sum += *v;
      ++a.n;
    }
  if (groups.size() < 2) {
    auto out = unavailable<KnobScaling>(groups.empty() ? "no " + target + " values"
                                                       : "only one " + to_string(knob) + " level");
    out.knob = knob;
    return out;
  }
  KnobScaling out;
  out.knob = knob;
  for (const auto& [level, a] : groups) {
    const LevelMean l{level, a.sum / a.n, a.n};
    out.levels.push_back(l);
    if (out.levels.size() == 1 || l.mean < out.min.mean) out.min = l;
    if (out.levels.size() == 1 || l.mean > out.max.mean) out.max = l;
  }
  // A non-positive mean (never for real costs) makes the ratio meaningless: say so instead.
  if (out.min.mean > 0) out.ratio = out.max.mean / out.min.mean;
  matched_ratio(rows, knob, target, out);
  return out;
}

}  // namespace

ScalingSection scaling_section(const Rows& rows, const std::vector<std::string>& targets) {
  std::map<Family, Rows> by_family;
  for (const Record* r : rows) by_family[r->config.family].push_back(r);
  ScalingSection out;
  out.definition =
      "per family and target: mean of the target at each level of the knob (other knobs pooled); "
      "ratio = max mean / min mean";
  for (const auto& [f, fr] : by_family)
    for (const auto& t : targets)
      for (Knob k : kKnobs) out.families[f][t].push_back(knob_scaling(fr, k, t));
  return out;
}

}  // namespace carb::detail

namespace carb {

// Sixty-eighth hostile pass: the H200's bottleneck rows read depth, width and precision 29.1x each
// (they changed together) and memory falling 17x with resolution (its largest network measured at
// 32 px alone), where the 9 configurations measured at both ends rise 2.01x.
bool KnobScaling::pooled_confounded() const {
  if (!available || levels.size() < 2) return false;
  if (!matched_ratio) return true;
  // As matched_ratio orients it: precision's costliest level over its cheapest, else highest over lowest.
  const bool by_cost = detail::ordered_by_cost(*this);
  const double first = by_cost ? min.mean : levels.front().mean, last = by_cost ? max.mean : levels.back().mean;
  return !(first > 0) || (last / first - 1) * (*matched_ratio - 1) < 0;
}

namespace {
// The pooled curve's end, oriented as matched_ratio is (nullopt where pooled_confounded says more).
std::optional<double> pooled_end(const KnobScaling& k) {
  if (!k.available || k.levels.size() < 2 || !k.matched_ratio || k.pooled_confounded()) return std::nullopt;
  const bool by_cost = detail::ordered_by_cost(k);
  return (by_cost ? k.max.mean : k.levels.back().mean) / (by_cost ? k.min.mean : k.levels.front().mean);
}
}  // namespace

bool KnobScaling::pooled_size_differs() const {
  const auto end = pooled_end(*this);
  if (!end) return false;
  if (!(*matched_ratio > 0)) return true;
  return std::max(*end / *matched_ratio, *matched_ratio / *end) > kPooledMatchedTolerance;
}

}  // namespace carb
