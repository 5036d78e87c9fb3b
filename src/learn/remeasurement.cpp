// The re-measurement spread (remeasurement.hpp).
#include "remeasurement.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "carb/error.hpp"
#include "carb/model.hpp"
#include "carb/warning.hpp"
#include "conformal.hpp"
#include "data/provenance.hpp"
#include "model_internal.hpp"
#include "target_model.hpp"

namespace carb {
namespace {

// The ok rows of both runs, paired by network (a width spelled otherwise builds the same network).
std::vector<std::pair<const Record*, const Record*>> common_pairs(const Dataset& campaign, const Dataset& again) {
  std::map<std::string, const Record*> first;
  for (const Record& r : campaign.rows)
    if (r.status == Status::ok) first.emplace(network_key(r.config), &r);
  std::map<std::string, const Record*> second;
  for (const Record& r : again.rows)
    if (r.status == Status::ok) second.emplace(network_key(r.config), &r);
  std::vector<std::pair<const Record*, const Record*>> out;
  for (const auto& [key, rb] : second)
    if (const auto it = first.find(key); it != first.end()) out.emplace_back(it->second, rb);
  return out;
}

// log(again / campaign) of `target` over the pairs where both measured it above zero.
std::vector<double> log_ratios(const std::vector<std::pair<const Record*, const Record*>>& pairs,
                               const std::string& target) {
  std::vector<double> out;
  for (const auto& [ra, rb] : pairs) {
    const auto va = ra->value(target), vb = rb->value(target);
    if (va && vb && *va > 0 && *vb > 0) out.push_back(std::log(*vb / *va));
  }
  return out;
}

std::set<std::string> platforms_of(const Dataset& d) {
  std::set<std::string> out;
  for (const Record& r : d.rows) out.insert(r.platform);
  return out;
}

// The largest |log ratio| over the targets both measured, per configuration both measured ok.
std::vector<double> pair_distances(const std::vector<std::pair<const Record*, const Record*>>& pairs) {
  std::vector<double> out;
  for (const auto& [ra, rb] : pairs) {
    double d = 0;
    for (const char* t : kTargets) {
      const auto va = ra->value(t), vb = rb->value(t);
      if (va && vb && *va > 0 && *vb > 0) d = std::max(d, std::fabs(std::log(*vb / *va)));
      else if (va != vb) d = std::numeric_limits<double>::infinity();  // measured in one run only
    }
    out.push_back(d);
  }
  return out;
}

// The relative difference under which two runs' values are the same number written twice
// (rounded to 6 digits, say): no two measurements of a cost agree that closely on most configurations.
constexpr double kSameValue = 1e-4;

}  // namespace

void check_remeasurement(const Dataset& campaign, const Dataset& again) {
  const auto pa = platforms_of(campaign), pb = platforms_of(again);
  if (pb.empty()) throw InputError("the re-measurement holds no rows");
  if (pa != pb)
    throw InputError("the re-measurement is of platform '" + *pb.begin() + "', the data of '" +
                     (pa.empty() ? std::string() : *pa.begin()) + "': a re-measurement is of the same platform");
  std::vector<double> d = pair_distances(common_pairs(campaign, again));
  if (d.empty()) throw InputError("the re-measurement shares no configuration with the data");
  // Seventy-fifth hostile pass: the data with one value changed, or rounded to 6 digits, was taken
  // as a new run (spread 0): refused where most configurations hold the data's own values.
  std::sort(d.begin(), d.end());
  if (d[d.size() / 2] < kSameValue)
    throw InputError("the re-measurement holds the data's own values (to 0.01%) for " +
                     std::to_string(std::count_if(d.begin(), d.end(), [](double x) { return x < kSameValue; })) +
                     " of the " + std::to_string(d.size()) +
                     " configurations both measured: a copy, not a new measurement");
}

void warn_remeasurement(const Dataset& campaign, const Dataset& again) {
  std::set<std::string> protocols_a, protocols_b;
  for (const Record& r : campaign.rows) protocols_a.insert(protocol_of(r));
  for (const Record& r : again.rows) protocols_b.insert(protocol_of(r));
  // Said, not refused: a protocol differing only in what the timed window does not see (the H200's
  // repeats sample no utilization, its campaign a fifth of the rows) measures the same costs, and a
  // real difference only widens the intervals.
  if (!protocols_b.empty() && protocols_a != protocols_b)
    warn("the re-measurement was measured under protocol " +
         (protocols_b.begin()->empty() ? std::string("(none)") : *protocols_b.begin()) + ", the data under " +
         (protocols_a.empty() || protocols_a.begin()->empty() ? std::string("(none)") : *protocols_a.begin()) +
         ": its spread includes whatever the two protocols measure differently");
  // Seventy-fifth hostile pass: every latency doubled passed as noise. A run on a slower or faster
  // host is one (the spread then widens both sides by the shift), and is said.
  const auto pairs = common_pairs(campaign, again);
  for (const char* t : kTargets) {
    std::vector<double> r = log_ratios(pairs, t);
    if (r.size() < kMinRemeasuredPairs) continue;
    std::nth_element(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(r.size() / 2), r.end());
    const double shift = r[r.size() / 2];
    if (std::fabs(shift) > kRemeasuredShift)
      warn("the re-measurement's " + std::string(t) + " is " + std::to_string(std::lround(100 * std::fabs(std::expm1(shift)))) +
           "% " + (shift > 0 ? "higher" : "lower") + " than the data's (median of " + std::to_string(r.size()) +
           " configurations): a run on a slower or faster host, or another setting; its spread widens both sides "
           "of every interval by that much");
  }
}

RemeasuredSpread remeasured_spread(const Dataset& campaign, const Dataset& again, const std::string& target) {
  std::vector<double> r = log_ratios(common_pairs(campaign, again), target);
  for (double& x : r) x = std::fabs(x);
  if (r.size() < kMinRemeasuredPairs)
    throw InputError("the re-measurement measured " + target + " of " + std::to_string(r.size()) +
                     " configuration" + (r.size() == 1 ? "" : "s") + " the data holds; its spread needs at least " +
                     std::to_string(kMinRemeasuredPairs));
  std::sort(r.begin(), r.end());
  RemeasuredSpread s;
  s.pairs = r.size();
  for (double level : kConfidenceLevels)
    s.spread[conformal_key(level)] =
        finite_sample_quantile(r, level).value_or(std::numeric_limits<double>::infinity());
  return s;
}

std::pair<double, double> with_remeasured_spread(double v, std::pair<double, double> iv, double q) {
  const double inf = std::numeric_limits<double>::infinity();
  if (!std::isfinite(q)) return {0.0, inf};
  auto [lo, hi] = iv;
  if (!(v > 0) || q == 0) return iv;
  if (lo > 0) lo = v * std::exp(-std::hypot(std::log(std::max(v / lo, 1.0)), q));
  if (std::isfinite(hi)) hi = v * std::exp(std::hypot(std::log(std::max(hi / v, 1.0)), q));
  return {lo, hi};
}

bool CarbModel::has_remeasured_spread() const {
  return !models_.empty() && !models_.front().remeasured_spread.empty();
}

void CarbModel::calibrate_remeasurement(const Dataset& campaign, const Dataset& again) {
  check_remeasurement(campaign, again);
  warn_remeasurement(campaign, again);
  if (!campaign.rows.empty() && campaign.rows.front().platform != platform_)
    throw InputError("the data is of platform '" + campaign.rows.front().platform + "', the model of '" + platform_ + "'");
  if (drift_reference_ms_)
    throw InputError("a drift-corrected model learned latency at one host speed; its re-measurement spread is not "
                     "implemented (train without --drift-correct, or without --remeasured)");
  std::vector<RemeasuredSpread> spreads;  // every target or none
  for (const auto& tm : models_) spreads.push_back(remeasured_spread(campaign, again, tm.target));
  for (std::size_t i = 0; i < models_.size(); ++i) {
    models_[i].remeasured_pairs = spreads[i].pairs;
    models_[i].remeasured_spread = spreads[i].spread;
  }
  // Said at training, not first at predict (seventy-fifth hostile pass).
  std::string unbounded;
  for (double level : kConfidenceLevels)
    if (std::isinf(spreads.front().spread.at(conformal_key(level))))
      unbounded += (unbounded.empty() ? "" : ", ") + std::to_string(std::lround(level * 100)) + "%";
  if (!unbounded.empty())
    warn("the re-measurement's " + std::to_string(spreads.front().pairs) + " configurations cannot bound the " +
         unbounded + " level (99% needs 99): intervals there have no upper bound");
}

}  // namespace carb
