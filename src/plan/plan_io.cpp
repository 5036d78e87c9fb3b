// The plan CSV: written atomically with its provenance sidecar, read back in its order by
// `carb profile --plan`, and the check of --out (never an input, never a file carb did not write
// as a plan, never a plan edited since).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "carb/arch.hpp"
#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/plan.hpp"
#include "carb/prediction_io.hpp"
#include "data/csv.hpp"
#include "data/provenance.hpp"
#include "plan/plan_pricing.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPlanColumns[] = {"rank", "strategy", "score", "uncertainty", "predicted_latency_ms",
                                        "cost_s", "cumulative_cost_s", "distance", "outside"};

// `outside` last: plans written before it (twenty-fourth hostile pass) lack it and are still plans.
std::string header(bool with_outside = true) {
  std::string h;
  for (const char* c : kConfigColumns) h += (h.empty() ? "" : ",") + std::string(c);
  for (const char* c : kPlanColumns)
    if (with_outside || std::string(c) != "outside") h += "," + std::string(c);
  return h;
}

std::string number(double v) { return std::isfinite(v) ? csv::format_number(v) : std::string(); }

bool looks_like_plan(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  std::string first;
  std::getline(in, first);
  if (!first.empty() && first.back() == '\r') first.pop_back();
  return first == header() || first == header(false);
}

}  // namespace

std::size_t Plan::rows_outside() const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const PlannedRow& r) { return !r.outside.empty(); }));
}

std::vector<std::size_t> Plan::rows_longer_than(double seconds) const {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < rows.size(); ++k)
    if (rows[k].cost_s > seconds) out.push_back(k);  // NaN (unknown) is no longer than anything
  return out;
}

std::size_t Plan::planned_unknown_cost() const {
  if (rows.empty() || std::all_of(rows.begin(), rows.end(), [](const PlannedRow& r) { return std::isnan(r.latency_ms); }))
    return 0;  // no model: no row has a predicted cost to be unknown
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [](const PlannedRow& r) { return !std::isfinite(r.cost_s); }));
}

std::size_t Plan::planned_nonpositive() const {
  return static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const PlannedRow& r) { return r.nonpositive; }));
}

nlohmann::json Plan::to_json() const {
  const auto value = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); };
  nlohmann::json j = {{"strategy", to_string(strategy)}, {"candidates", candidates},
                      {"excluded", excluded},            {"planned", rows.size()},
                      {"unknown_cost", unknown_cost},    {"planned_unknown_cost", planned_unknown_cost()},
                      {"nonpositive_predictions", nonpositive_predictions},
                      {"over_device_memory", over_device_memory},
                      {"planned_nonpositive", planned_nonpositive()},
                      {"planned_outside", rows_outside()},
                      {"planned_over_an_hour", rows_longer_than(3600).size()},
                      {"predicted_cost_s", value(total_cost_s)}, {"rows", nlohmann::json::array()}};
  double cumulative = 0;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const PlannedRow& r = rows[k];
    cumulative += r.cost_s;
    nlohmann::json row = config_to_json(r.config);
    row["rank"] = k + 1;
    row["score"] = value(r.score);
    row["uncertainty"] = value(r.uncertainty);
    row["predicted_latency_ms"] = value(r.latency_ms);
    row["cost_s"] = value(r.cost_s);
    row["cumulative_cost_s"] = value(cumulative);
    row["distance"] = value(r.distance);
    row["outside"] = outside_json(r.outside);
    row["nonpositive"] = r.nonpositive;
    j["rows"].push_back(std::move(row));
  }
  return j;
}

void write_plan_csv(const Plan& p, std::ostream& out) {
  out << header() << "\n";
  double cumulative = 0;
  for (std::size_t k = 0; k < p.rows.size(); ++k) {
    const PlannedRow& r = p.rows[k];
    cumulative += r.cost_s;
    const Config& c = r.config;
    csv::write_row(out, {to_string(c.family), std::to_string(c.depth), format_width(c.width),
                         std::to_string(c.resolution), std::to_string(c.batch), to_string(c.precision),
                         std::to_string(k + 1), to_string(p.strategy), number(r.score), number(r.uncertainty),
                         number(r.latency_ms), number(r.cost_s), number(cumulative), number(r.distance),
                         outside_text(r.outside)});
  }
}

void write_plan_csv(const Plan& p, const fs::path& file, const std::string& command_line,
                    const std::function<void()>& recheck) {
  std::ostringstream out;
  write_plan_csv(p, out);
  // The sidecar holds the plan's hash: a plan edited by hand (rows reordered, some struck out) is
  // not planned over without --force (fifteenth-pass leftover).
  write_csv_with_provenance(file, out.str(), {{"kind", kPlanKind},
                          {"command", command_line},
                          {"planned_at", utc_now_iso8601()},
                          {"strategy", to_string(p.strategy)},
                          {"planned_for", plan_detail::planned_for_json(p)},
                          {"rows", p.rows.size()},
                          {"candidates", p.candidates},
                          {"excluded", p.excluded},
                          {"predicted_cost_s", std::isfinite(p.total_cost_s) ? nlohmann::json(p.total_cost_s)
                                                                              : nlohmann::json()}},
                            recheck);
}

std::vector<Config> read_plan_csv(const fs::path& file) {
  const auto rows = csv::read_file(file);
  std::size_t rank_col = std::string::npos;
  if (!rows.empty())
    for (std::size_t i = 0; i < rows.front().fields.size(); ++i)
      if (rows.front().fields[i] == "rank") rank_col = i;
  if (rank_col == std::string::npos)
    throw DataError(file.string() + ": not a plan (no rank column); write one with carb plan");
  // A plan is measured in its order, and its order is its ranks: 1, 2, 3, ... down the file. A
  // hand-edited plan with ranks "abc", -7 or out of order was measured in file order regardless.
  for (std::size_t k = 1; k < rows.size(); ++k) {
    const std::string want = std::to_string(k);
    const std::string got = rank_col < rows[k].fields.size() ? rows[k].fields[rank_col] : "";
    if (got != want)
      throw DataError(file.string() + ":" + std::to_string(rows[k].line) + ": rank is '" + got + "', expected " + want +
                      " (a plan is measured in rank order, 1, 2, 3, ... down the file)");
  }
  if (rows.size() < 2) throw DataError(file.string() + ": the plan has no configurations");
  auto configs = read_configs_csv(file);
  std::set<std::string> seen;
  for (std::size_t k = 0; k < configs.size(); ++k)
    if (!seen.insert(network_key(configs[k])).second)
      throw DataError(file.string() + ": configuration " + config_key(configs[k]) + " is planned twice (row " +
                      std::to_string(k + 1) + ")");
  return configs;
}

void check_plan_output(const fs::path& out, const std::vector<fs::path>& inputs, bool force) {
  if (out.empty() || !out.has_filename()) throw InputError("--out needs a file name");
  check_not_an_input(out, inputs);
  check_not_an_input(provenance_path(out), inputs);
  check_sealed_csv_output(out, force, kPlanKind, looks_like_plan, "a plan CSV");
}

}  // namespace carb
