#include "monotone.hpp"

#include "carb/error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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

constexpr double kNone = -std::numeric_limits<double>::infinity();

// One held target's lattices over the rows of one network. A row's configurations below, at
// trained levels TR (resolutions) and TB (batches), split in three: the grid TR<r x TB<b, the
// line r x TB<b and the line TR<r x b. The grids of all rows together are a staircase (a down-set
// of the trained grid), so each row's largest answer below is one prefix maximum of the staircase
// and one of each of its two lines: linear in the network's answers below, where visiting every
// row's lattice was rows x levels^2 (20,000 rows of 129 x 64 levels: minutes).
struct NetworkLattice {
  std::vector<std::size_t> tall;  // staircase: per trained resolution index, the trained batches under it
  std::map<int, std::size_t> along_batch;       // a row's resolution -> trained batches below on its line
  std::map<int, std::size_t> along_resolution;  // a row's batch -> trained resolutions below on its line
  std::vector<std::pair<std::size_t, std::size_t>> below;  // per row: (trained resolutions, batches) below it

  NetworkLattice(const std::vector<std::size_t>& rows, const std::vector<Config>& configs, bool by_resolution,
                 bool by_batch, const std::vector<int>& resolutions, const std::vector<int>& batches) {
    const auto count_below = [](const std::vector<int>& levels, int v, bool held) -> std::size_t {
      return held ? static_cast<std::size_t>(std::lower_bound(levels.begin(), levels.end(), v) - levels.begin()) : 0;
    };
    std::vector<std::size_t> widest;  // per count of resolutions below: the most batches below
    for (std::size_t i : rows) {
      const std::size_t x = count_below(resolutions, configs[i].resolution, by_resolution);
      const std::size_t y = count_below(batches, configs[i].batch, by_batch);
      below.emplace_back(x, y);
      if (y > 0) along_batch[configs[i].resolution] = std::max(along_batch[configs[i].resolution], y);
      if (x > 0) along_resolution[configs[i].batch] = std::max(along_resolution[configs[i].batch], x);
      if (x > 0 && y > 0) {
        if (widest.size() < x + 1) widest.resize(x + 1, 0);
        widest[x] = std::max(widest[x], y);
      }
    }
    // Index x is under every row with more than x resolutions below: the widest of those.
    tall.assign(widest.empty() ? 0 : widest.size() - 1, 0);
    for (std::size_t x = tall.size(), most = 0; x-- > 0;) tall[x] = most = std::max(most, widest[x + 1]);
  }

  /// Every configuration below some row, once: fn(resolution, batch).
  template <class Fn>
  void each_place(const std::vector<int>& resolutions, const std::vector<int>& batches, Fn&& fn) const {
    for (std::size_t x = 0; x < tall.size(); ++x)
      for (std::size_t y = 0; y < tall[x]; ++y) fn(resolutions[x], batches[y]);
    for (const auto& [r, ys] : along_batch)
      for (std::size_t y = 0; y < ys; ++y) fn(r, batches[y]);
    for (const auto& [b, xs] : along_resolution)
      for (std::size_t x = 0; x < xs; ++x) fn(resolutions[x], b);
  }

  /// Per row (in `rows` order), the largest answer below it (kNone when none is finite).
  std::vector<double> largest_below(const std::vector<std::size_t>& rows, const std::vector<Config>& configs,
                                    const std::vector<int>& resolutions, const std::vector<int>& batches,
                                    const std::function<double(int, int)>& answer_at) const {
    std::vector<std::vector<double>> grid(tall.size());
    for (std::size_t x = 0; x < tall.size(); ++x) {
      grid[x].resize(tall[x]);
      for (std::size_t y = 0; y < tall[x]; ++y) {  // tall never grows with x: grid[x - 1][y] is there
        double m = answer_at(resolutions[x], batches[y]);
        if (x > 0) m = std::max(m, grid[x - 1][y]);
        if (y > 0) m = std::max(m, grid[x][y - 1]);
        grid[x][y] = m;
      }
    }
    const auto running = [](std::size_t count, auto&& at) {
      std::vector<double> v(count);
      for (std::size_t k = 0; k < count; ++k) v[k] = std::max(at(k), k > 0 ? v[k - 1] : kNone);
      return v;
    };
    std::map<int, std::vector<double>> on_batch, on_resolution;
    for (const auto& [r, ys] : along_batch)
      on_batch[r] = running(ys, [&, r = r](std::size_t y) { return answer_at(r, batches[y]); });
    for (const auto& [b, xs] : along_resolution)
      on_resolution[b] = running(xs, [&, b = b](std::size_t x) { return answer_at(resolutions[x], b); });
    std::vector<double> out(rows.size(), kNone);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const auto [x, y] = below[k];
      const Config& c = configs[rows[k]];
      if (x > 0 && y > 0) out[k] = grid[x - 1][y - 1];
      if (y > 0) out[k] = std::max(out[k], on_batch.at(c.resolution)[y - 1]);
      if (x > 0) out[k] = std::max(out[k], on_resolution.at(c.batch)[x - 1]);
    }
    return out;
  }
};

bool holds(const std::vector<std::string>& knobs, const char* knob) {
  return std::find(knobs.begin(), knobs.end(), knob) != knobs.end();
}

}  // namespace

std::vector<int> levels_below(int value, const std::set<int>& trained, bool held) {
  std::vector<int> v = {value};
  if (held)
    for (auto it = trained.begin(); it != trained.end() && *it < value; ++it) v.push_back(*it);
  return v;
}

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

void hold_monotone(const std::vector<Config>& configs, const std::vector<Telemetry>& tel, bool by_readings,
                   const std::map<std::string, std::vector<std::string>>& held, const std::set<int>& trained_resolutions,
                   const std::set<int>& trained_batches, std::map<std::string, std::vector<double>>& values,
                   const Answerer& answer, std::size_t answered_at_once) {
  if (held.empty()) return;
  const std::size_t n = configs.size();
  const std::vector<int> resolutions(trained_resolutions.begin(), trained_resolutions.end());
  const std::vector<int> batches(trained_batches.begin(), trained_batches.end());
  // Integer keys, not strings: a million configurations have about twenty smaller ones each, most
  // of them asked too (a preset, a grid), and formatting each one's key cost more than answering.
  std::vector<std::vector<std::size_t>> networks;  // rows, by network, in order of first appearance
  {
    std::map<NetworkKey, std::size_t> index;
    for (std::size_t i = 0; i < n; ++i) {
      const auto [it, fresh] = index.emplace(network_of(configs[i], tel, by_readings, i), networks.size());
      if (fresh) networks.emplace_back();
      networks[it->second].push_back(i);
    }
  }
  std::map<std::string, std::vector<double>> asked;  // before any is raised
  for (const auto& [target, knobs] : held) asked[target] = values.at(target);
  // Networks are held a chunk at a time, whole, so that the answers below rows with many trained
  // levels under them never all stand in memory at once.
  for (std::size_t first = 0; first < networks.size();) {
    std::vector<std::unordered_map<std::uint64_t, std::size_t>> places;  // per network of the chunk: place
    std::vector<std::vector<NetworkLattice>> lattices;                     // per network of the chunk
    std::vector<Config> extra;  // the smaller configurations nobody asked: place n + their index
    std::vector<Telemetry> extra_tel;
    std::size_t last = first;
    for (; last < networks.size() && (last == first || extra.size() < answered_at_once); ++last) {
      const auto& rows = networks[last];
      auto& place = places.emplace_back();
      for (std::size_t i : rows) place.emplace(place_key(configs[i].resolution, configs[i].batch), i);
      auto& lattice = lattices.emplace_back();  // one per held target, in `held`'s order
      for (const auto& [target, knobs] : held)
        lattice.emplace_back(rows, configs, holds(knobs, "resolution"), holds(knobs, "batch"), resolutions, batches)
            .each_place(resolutions, batches, [&](int r, int b) {
              if (!place.emplace(place_key(r, b), n + extra.size()).second) return;
              Config k = configs[rows.front()];
              k.resolution = r, k.batch = b;
              extra.push_back(k);
              if (!tel.empty()) extra_tel.push_back(tel.at(rows.front()));  // one network, one reading
            });
    }
    const auto answered = extra.empty() ? std::map<std::string, std::vector<double>>{} : answer(extra, extra_tel);
    std::size_t held_index = 0;
    for (const auto& [target, knobs] : held) {
      const auto there = answered.find(target);
      if (!extra.empty() && (there == answered.end() || there->second.size() != extra.size()))
        throw ModelError("internal: the smaller configurations were not answered for " + target);
      const auto& before = asked.at(target);
      auto& v = values.at(target);
      for (std::size_t k = first; k < last; ++k) {
        const auto& rows = networks[k];
        const auto& place = places[k - first];
        const auto answer_at = [&](int r, int b) {
          const std::size_t j = place.at(place_key(r, b));
          const double w = j < n ? before[j] : there->second[j - n];
          return std::isfinite(w) ? w : kNone;
        };
        const auto most = lattices[k - first][held_index].largest_below(rows, configs, resolutions, batches, answer_at);
        for (std::size_t m = 0; m < rows.size(); ++m)
          if (before[rows[m]] > 0) v[rows[m]] = std::max(v[rows[m]], most[m]);  // 0: no cost any device has
      }
      ++held_index;
    }
    first = last;
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
