#include "monotone.hpp"

#include "carb/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace carb {

namespace {

int knob_value(const Config& c, const std::string& knob) { return knob == "batch" ? c.batch : c.resolution; }

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::vector<std::string> monotone_knobs(const Dataset& d, const std::string& target) {
  std::vector<std::string> out;
  for (const auto& knob : kMonotoneKnobCandidates) {
    const std::string other = knob == "batch" ? "resolution" : "batch";
    // (architecture, the other knob's value) -> this knob's value -> the values measured there
    std::map<std::pair<std::string, int>, std::map<int, std::vector<double>>> lines;
    for (const Record& r : d.rows) {
      const auto v = r.value(target);
      if (r.status != Status::ok || !v) continue;
      lines[{architecture_key(r.config), knob_value(r.config, other)}][knob_value(r.config, knob)].push_back(*v);
    }
    int steps = 0;
    bool falls = false;
    for (const auto& [line, levels] : lines) {
      double before = 0;
      bool first = true;
      for (const auto& [level, values] : levels) {
        const double v = median_of(values);
        if (!first) {
          ++steps;
          falls = falls || v < before * (1 - kMonotoneTolerance);
        }
        before = v, first = false;
      }
    }
    if (!falls && steps >= kMinMonotoneSteps) out.push_back(knob);
  }
  return out;
}

std::vector<int> levels_below(int value, const std::set<int>& trained, bool held) {
  std::vector<int> v = {value};
  if (held)
    for (auto it = trained.begin(); it != trained.end() && *it < value; ++it) v.push_back(*it);
  return v;
}

namespace {
bool holds(const std::vector<std::string>& knobs, const char* knob) {
  return std::find(knobs.begin(), knobs.end(), knob) != knobs.end();
}
}  // namespace

std::vector<Config> configs_below(const Config& c, const std::vector<std::string>& knobs,
                                  const std::set<int>& trained_resolutions, const std::set<int>& trained_batches) {
  std::vector<Config> out;
  for (int r : levels_below(c.resolution, trained_resolutions, holds(knobs, "resolution")))
    for (int b : levels_below(c.batch, trained_batches, holds(knobs, "batch"))) {
      if (r == c.resolution && b == c.batch) continue;
      Config k = c;
      k.resolution = r, k.batch = b;
      out.push_back(k);
    }
  return out;
}

namespace {

// A network at its readings: configurations with one key differ in resolution and batch alone.
using NetworkKey = std::tuple<int, int, double, int, double, double>;

NetworkKey network_of(const Config& c, const std::vector<Telemetry>& tel, bool by_readings, std::size_t row) {
  const auto reading = [](const std::optional<double>& v) { return v ? *v : -1.0; };  // none: below any reading
  return {static_cast<int>(c.family), c.depth, c.width, static_cast<int>(c.precision),
          by_readings ? reading(tel.at(row).avg_sm_util) : 0.0, by_readings ? reading(tel.at(row).avg_mem_util) : 0.0};
}

std::uint64_t place_key(int resolution, int batch) {
  return (std::uint64_t{static_cast<std::uint32_t>(resolution)} << 32) | static_cast<std::uint32_t>(batch);
}

}  // namespace

void hold_monotone(const std::vector<Config>& configs, const std::vector<Telemetry>& tel, bool by_readings,
                   const std::map<std::string, std::vector<std::string>>& held, const std::set<int>& trained_resolutions,
                   const std::set<int>& trained_batches, std::map<std::string, std::vector<double>>& values,
                   const Answerer& answer) {
  if (held.empty()) return;
  // Integer keys, not strings: a million configurations have about twenty smaller ones each, most
  // of them asked too (a preset, a grid), and formatting each one's key cost more than answering.
  const std::size_t n = configs.size();
  std::map<NetworkKey, std::size_t> networks;
  std::vector<std::unordered_map<std::uint64_t, std::size_t>> places;  // per network: (resolution, batch) -> place
  std::vector<std::size_t> network(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto [it, fresh] = networks.emplace(network_of(configs[i], tel, by_readings, i), places.size());
    if (fresh) places.emplace_back();
    network[i] = it->second;
    places[it->second].emplace(place_key(configs[i].resolution, configs[i].batch), i);
  }
  // Each configuration's smaller ones, each visited once per held target: fn(i, place).
  const auto each_below = [&](const std::vector<std::string>& knobs, auto&& fn) {
    for (std::size_t i = 0; i < n; ++i)
      for (int r : levels_below(configs[i].resolution, trained_resolutions, holds(knobs, "resolution")))
        for (int b : levels_below(configs[i].batch, trained_batches, holds(knobs, "batch")))
          if (r != configs[i].resolution || b != configs[i].batch) fn(i, r, b);
  };
  std::vector<Config> extra;  // the smaller configurations nobody asked: place n + their index
  std::vector<Telemetry> extra_tel;
  for (const auto& [target, knobs] : held)
    each_below(knobs, [&](std::size_t i, int r, int b) {
      const auto [it, fresh] = places[network[i]].emplace(place_key(r, b), n + extra.size());
      if (!fresh) return;
      Config k = configs[i];
      k.resolution = r, k.batch = b;
      extra.push_back(k);
      if (!tel.empty()) extra_tel.push_back(tel.at(i));
    });
  const auto answered = extra.empty() ? std::map<std::string, std::vector<double>>{} : answer(extra, extra_tel);
  for (const auto& [target, knobs] : held) {
    const std::vector<double> asked = values.at(target);  // before any is raised
    const auto there = answered.find(target);
    if (!extra.empty() && (there == answered.end() || there->second.size() != extra.size()))
      throw ModelError("internal: the smaller configurations were not answered for " + target);
    auto& v = values.at(target);
    each_below(knobs, [&](std::size_t i, int r, int b) {
      if (!(asked[i] > 0)) return;  // 0: no cost any device has, said as such
      const std::size_t j = places[network[i]].at(place_key(r, b));
      const double w = j < n ? asked[j] : there->second.at(j - n);
      if (std::isfinite(w)) v[i] = std::max(v[i], w);
    });
  }
}

bool valid_monotone_knobs(const std::vector<std::string>& knobs) {
  std::size_t next = 0;  // each candidate at most once, in order
  for (const auto& k : knobs) {
    while (next < kMonotoneKnobCandidates.size() && kMonotoneKnobCandidates[next] != k) ++next;
    if (next == kMonotoneKnobCandidates.size()) return false;
    ++next;
  }
  return true;
}

}  // namespace carb
