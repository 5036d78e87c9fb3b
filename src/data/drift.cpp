// Host-speed drift correction from the reference_ms column: see carb/drift.hpp.
#include "carb/drift.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "carb/error.hpp"
#include "carb/metrics.hpp"
#include "carb/text_table.hpp"
#include "data/csv.hpp"

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
    const double ref = row_reference_ms(r), factor = reference_ms_typical / ref;
    if (factor > kMaxReferenceDrift || factor < 1 / kMaxReferenceDrift)
      throw DataError("row " + r.platform + " " + config_key(r.config) + ": reference_ms " +
                      csv::format_number(std::optional<double>(ref)) + " ms is " +
                      fmt_num(factor >= 1 ? factor : 1 / factor) + "x " +
                      (factor >= 1 ? "below" : "above") + " the typical " +
                      csv::format_number(std::optional<double>(reference_ms_typical)) +
                      " ms, more than the " + csv::format_number(std::optional<double>(kMaxReferenceDrift)) +
                      "x drift correction trusts (a damaged cell, or a host too loaded to measure on)");
    r.latency_ms = *r.latency_ms * factor;
  }
  return out;
}

}  // namespace carb
