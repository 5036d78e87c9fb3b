// Host-speed drift correction from the reference_ms column: see carb/drift.hpp.
#include "carb/drift.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
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

namespace {

// The factor drift correction scales an ok row's latency by, or nullopt for a row it leaves out.
// Throws for a row it cannot correct at all.
std::optional<double> correction_factor(const Record& r, double reference_ms_typical) {
  if (!(reference_ms_typical > 0)) throw InputError("the typical reference time must be positive");
  const double ref = row_reference_ms(r), factor = reference_ms_typical / ref;
  if (factor > kMaxReferenceDrift || factor < 1 / kMaxReferenceDrift)
    throw DataError("row " + r.platform + " " + config_key(r.config) + ": reference_ms " +
                    csv::format_number(std::optional<double>(ref)) + " ms is " +
                    fmt_num(factor >= 1 ? factor : 1 / factor) + "x " +
                    (factor >= 1 ? "below" : "above") + " the typical " +
                    csv::format_number(std::optional<double>(reference_ms_typical)) +
                    " ms, more than the " + csv::format_number(std::optional<double>(kMaxReferenceDrift)) +
                    "x any drift can explain (a damaged cell, or a host too loaded to measure on)");
  if (factor > kMaxTrustedReferenceDrift || factor < 1 / kMaxTrustedReferenceDrift) return std::nullopt;
  return factor;
}

bool corrected(const Record& r) { return r.status == Status::ok && r.latency_ms; }

}  // namespace

Dataset drift_corrected(const Dataset& d, double reference_ms_typical) {
  if (!(reference_ms_typical > 0)) throw InputError("the typical reference time must be positive");
  Dataset out = d;
  out.rows.clear();
  for (const auto& r : d.rows) {
    if (!corrected(r)) {
      out.rows.push_back(r);
      continue;
    }
    const auto factor = correction_factor(r, reference_ms_typical);
    if (!factor) continue;
    out.rows.push_back(r);
    out.rows.back().latency_ms = *r.latency_ms * *factor;
  }
  return out;
}

bool drift_keeps(const Record& r, double reference_ms_typical) {
  return !corrected(r) || correction_factor(r, reference_ms_typical).has_value();
}

std::string drift_left_out_note(const Dataset& d, double reference_ms_typical) {
  std::size_t n = 0;
  std::string first;
  for (const auto& r : d.rows)
    if (!drift_keeps(r, reference_ms_typical)) {
      if (n++ == 0) first = config_key(r.config) + " at " + csv::format_number(std::optional<double>(row_reference_ms(r))) + " ms";
    }
  if (n == 0) return "";
  return std::to_string(n) + " ok row" + (n == 1 ? "" : "s") + " left out of the drift-corrected data (" + first +
         (n > 1 ? ", ..." : "") + "): a reference time more than " +
         csv::format_number(std::optional<double>(kMaxTrustedReferenceDrift)) + "x from the typical " +
         fmt_num(reference_ms_typical) + " ms is more often a stall of the reference alone than the host's speed during the pass, and would scale "
         "the row's latency by as much";
}

}  // namespace carb
