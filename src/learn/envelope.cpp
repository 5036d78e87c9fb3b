// The trained envelope (see carb/envelope.hpp): ranges of the training configurations and of the
// analytic quantities the learners lean on most, and the excursions of a new configuration.
#include "carb/envelope.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "carb/error.hpp"
#include "carb/network_spec.hpp"

namespace carb {
namespace {

// The numeric dimensions of a configuration and the analytic quantities (per batch) that drive the
// three targets: FLOPs (latency, energy), activations (memory, energy), weights (memory).
std::vector<std::pair<std::string, double>> quantities(const Config& c) {
  const NetworkSpec s = network_totals(c);
  return {{std::string("depth (") + to_string(c.family) + ")", static_cast<double>(c.depth)},
          {"width", c.width},
          {"resolution", static_cast<double>(c.resolution)},
          {"batch", static_cast<double>(c.batch)},
          {"gflops", s.flops() / 1e9},
          {"activation_mb", static_cast<double>(s.activation_bytes_total()) / 1e6},
          {"max_activation_mb", static_cast<double>(s.activation_bytes_max()) / 1e6},
          {"params_mb", static_cast<double>(s.param_bytes()) / 1e6}};
}

// The configuration's own dimensions, checked per family and precision.
std::vector<std::pair<std::string, double>> cell_dimensions(const Config& c) {
  return {{"depth", static_cast<double>(c.depth)},
          {"width", c.width},
          {"resolution", static_cast<double>(c.resolution)},
          {"batch", static_cast<double>(c.batch)}};
}

std::string cell_of(const Config& c) { return to_string(c.family) + " " + to_string(c.precision); }

std::string number(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

}  // namespace

TrainedEnvelope TrainedEnvelope::of(const std::vector<Config>& trained) {
  TrainedEnvelope e;
  for (const Config& c : trained) {
    e.families.insert(to_string(c.family));
    e.precisions.insert(to_string(c.precision));
    auto& cell = e.cells[cell_of(c)];
    for (const auto& [name, v] : cell_dimensions(c)) {
      const auto [it, fresh] = cell.emplace(name, Range{v, v});
      it->second.lo = std::min(it->second.lo, v), it->second.hi = std::max(it->second.hi, v);
    }
    for (const auto& [name, v] : quantities(c)) {
      const auto [it, fresh] = e.ranges.emplace(name, Range{v, v});
      it->second.lo = std::min(it->second.lo, v), it->second.hi = std::max(it->second.hi, v);
    }
  }
  return e;
}

std::vector<Excursion> TrainedEnvelope::outside(const Config& c, std::optional<double> asked_width) const {
  std::vector<Excursion> out;
  if (empty()) return out;  // a bundle that does not know its envelope claims nothing
  const double inf = std::numeric_limits<double>::infinity();
  if (!families.count(to_string(c.family)))
    out.push_back({"family", std::string("family ") + to_string(c.family) + " never trained", inf});
  if (!precisions.count(to_string(c.precision)))
    out.push_back({"precision", std::string("precision ") + to_string(c.precision) + " never trained", inf});
  const auto past = [&](const std::string& name, double v, const Range& r) {
    // A width as asked, then as built (ninety-third hostile pass: "width 0.0977" of a row showing 0.1).
    const std::string shown = name.rfind("width", 0) == 0 && asked_width && *asked_width != v
                                  ? number(*asked_width) + " (" + number(v) + " as built)"
                                  : number(v);
    if (v > r.hi * (1 + 1e-9))
      out.push_back({name, name + " " + shown + " > " + number(r.hi) + " trained", std::log(v / r.hi)});
    else if (v < r.lo * (1 - 1e-9))
      out.push_back({name, name + " " + shown + " < " + number(r.lo) + " trained", std::log(r.lo / v)});
  };
  // Per family and precision, where both were trained (bundles that record cells): a configuration
  // dimension is judged against its own pairing's range, which lies inside the whole training set's.
  // Thirty-fifth hostile pass: past the whole set, the whole set's bound was named and widened by,
  // so batch 96 of a pairing trained to 16 got a narrower interval than batch 64.
  const bool both_trained = families.count(to_string(c.family)) && precisions.count(to_string(c.precision));
  const auto cell = both_trained ? cells.find(cell_of(c)) : cells.end();
  if (!cells.empty() && both_trained && cell == cells.end())
    out.push_back({"pairing", to_string(c.family) + " at " + to_string(c.precision) +
                                  " never trained (each was, but not together)", inf});
  for (const auto& [name, v] : quantities(c)) {
    const auto it = ranges.find(name);
    if (it == ranges.end()) continue;  // the family's depth: reported as the family above
    const std::string dim = name.rfind("depth", 0) == 0 ? "depth" : name;
    const bool own = cell != cells.end() && cell->second.count(dim);
    if (!own) {
      past(name, v, it->second);
      continue;
    }
    // Named as the whole set's bound where the pairing's is the same (every shipped model), else as
    // the pairing's: "batch (basic bf16) 96 > 16 trained".
    const Range& r = cell->second.at(dim);
    const bool same_hi = r.hi == it->second.hi, same_lo = r.lo == it->second.lo;
    const bool above = v > r.hi * (1 + 1e-9);
    past((above ? same_hi : same_lo) ? name : dim + " (" + cell_of(c) + ")", v, r);
  }
  return out;
}

std::vector<Excursion> TrainedEnvelope::outside_telemetry(std::optional<double> avg_sm_util,
                                                          std::optional<double> avg_mem_util) const {
  std::vector<Excursion> out;
  for (const auto& [name, v] : {std::pair{std::string("avg_sm_util"), avg_sm_util}, {"avg_mem_util", avg_mem_util}}) {
    const auto it = telemetry.find(name);
    if (!v || it == telemetry.end()) continue;
    const Range& r = it->second;
    if (*v > r.hi + 1e-9)
      out.push_back({name, name + " " + number(*v) + " > " + number(r.hi) + " trained", std::log((1 + *v) / (1 + r.hi))});
    else if (*v < r.lo - 1e-9)
      out.push_back({name, name + " " + number(*v) + " < " + number(r.lo) + " trained", std::log((1 + r.lo) / (1 + *v))});
  }
  return out;
}

nlohmann::json TrainedEnvelope::to_json() const {
  nlohmann::json j = {{"families", families}, {"precisions", precisions}, {"ranges", nlohmann::json::object()}};
  for (const auto& [name, r] : ranges) j["ranges"][name] = {r.lo, r.hi};
  if (!telemetry.empty())
    for (const auto& [name, r] : telemetry) j["telemetry"][name] = {r.lo, r.hi};
  for (const auto& [key, dims] : cells)
    for (const auto& [name, r] : dims) j["cells"][key][name] = {r.lo, r.hi};
  return j;
}

TrainedEnvelope TrainedEnvelope::from_json(const nlohmann::json& j) {
  TrainedEnvelope e;
  e.families = j.at("families").get<std::set<std::string>>();
  e.precisions = j.at("precisions").get<std::set<std::string>>();
  for (auto it = j.at("ranges").begin(); it != j.at("ranges").end(); ++it) {
    const auto v = it.value().get<std::vector<double>>();
    if (v.size() != 2 || !(v[0] <= v[1]) || !(v[0] > 0))
      throw ModelError("the trained envelope's range of " + it.key() + " is not [lo, hi] with 0 < lo");
    e.ranges[it.key()] = {v[0], v[1]};
  }
  if (j.contains("cells"))
    for (auto cell = j.at("cells").begin(); cell != j.at("cells").end(); ++cell) {
      // "family precision", both among the trained ones
      const auto space = cell.key().find(' ');
      if (space == std::string::npos || !e.families.count(cell.key().substr(0, space)) ||
          !e.precisions.count(cell.key().substr(space + 1)))
        throw ModelError("the trained envelope names a cell '" + cell.key() + "' of no trained family and precision");
      for (auto it = cell.value().begin(); it != cell.value().end(); ++it) {
        const auto v = it.value().get<std::vector<double>>();
        if ((it.key() != "depth" && it.key() != "width" && it.key() != "resolution" && it.key() != "batch") ||
            v.size() != 2 || !(v[0] <= v[1]) || !(v[0] > 0))
          throw ModelError("the trained envelope's range of " + it.key() + " in " + cell.key() +
                           " is not [lo, hi] with 0 < lo");
        e.cells[cell.key()][it.key()] = {v[0], v[1]};
      }
    }
  if (j.contains("telemetry"))
    for (auto it = j.at("telemetry").begin(); it != j.at("telemetry").end(); ++it) {
      const auto v = it.value().get<std::vector<double>>();
      if ((it.key() != "avg_sm_util" && it.key() != "avg_mem_util") || v.size() != 2 || !(v[0] <= v[1]) ||
          !(v[0] >= 0) || !(v[1] <= 100))
        throw ModelError("the trained envelope's telemetry range of " + it.key() + " is not [lo, hi] within 0-100%");
      e.telemetry[it.key()] = {v[0], v[1]};
    }
  return e;
}

double extrapolation_widening(const std::vector<Excursion>& outside) {
  double w = 0;
  for (const Excursion& x : outside) w = std::max(w, x.log_ratio);
  return w;
}

}  // namespace carb
