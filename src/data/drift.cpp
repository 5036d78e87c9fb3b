// Host-speed drift correction from the reference_ms column: see carb/drift.hpp.
#include "carb/drift.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "carb/error.hpp"
#include "carb/metrics.hpp"

namespace carb {

double row_reference_ms(const Record& r) {
  auto it = r.extra.find(kReferenceColumn);
  if (it == r.extra.end() || it->second.empty())
    throw DataError("row " + r.platform + " " + config_key(r.config) +
                    " has no reference_ms: drift correction needs data profiled with --reference");
  double v = 0;
  try {
    std::size_t used = 0;
    v = std::stod(it->second, &used);
    if (used != it->second.size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw DataError("row " + r.platform + " " + config_key(r.config) + ": reference_ms '" + it->second +
                    "' is not a number");
  }
  if (!(v > 0) || !std::isfinite(v))
    throw DataError("row " + r.platform + " " + config_key(r.config) + ": reference_ms must be positive, got " +
                    it->second);
  return v;
}

double median_reference_ms(const Dataset& d) {
  std::vector<double> v;
  for (const auto& r : d.rows)
    if (r.status == Status::ok) v.push_back(row_reference_ms(r));
  if (v.empty()) throw InputError("no ok rows to take the median reference time of");
  return median(std::move(v));
}

Dataset drift_corrected(const Dataset& d, double reference_ms_typical) {
  if (!(reference_ms_typical > 0)) throw InputError("the typical reference time must be positive");
  Dataset out = d;
  for (auto& r : out.rows) {
    if (r.status != Status::ok || !r.latency_ms) continue;
    r.latency_ms = *r.latency_ms * reference_ms_typical / row_reference_ms(r);
  }
  return out;
}

}  // namespace carb
