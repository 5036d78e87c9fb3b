// The monotone hold (learn/monotone.hpp) over many trained levels: each network's answers below
// read once, as prefix maxima of its staircase and lines, networks a chunk at a time (`Hold`),
// against visiting every row's lattice with all answers below held at once (`PerRowLattice`, how
// the hold ran until 2026-12-07), side by side on the same rows. The answerer is a formula, so the
// times are the hold's own work; `largest_call` is the most configurations answered in one call,
// which is what the answers' features and predictions held in memory at once.
//
// Layouts: `sparse` is a tester's: about 5 rows per network over 26 depths and 151 widths, at
// resolutions 32-288 in steps of 2 and batches 1-64 (129 x 64 trained levels); `grid` is the paper
// preset's axes (4 resolutions x 10 batches), every configuration of each network asked.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <unordered_map>

#include "carb/space.hpp"
#include "learn/monotone.hpp"

namespace {

using namespace carb;

struct Rows {
  std::vector<Config> configs;
  std::set<int> resolutions, batches;
  std::map<std::string, std::vector<double>> values;
};

double formula(const Config& c) { return 1e-6 * c.depth * c.width * c.width * c.resolution * c.resolution * c.batch + 1; }

Rows make_rows(int n, bool sparse) {
  Rows r;
  if (sparse) {
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> depth(5, 30), width(25, 175), res(16, 144), batch(1, 64);
    for (int k = 0; k < n; ++k)
      r.configs.push_back({Family::basic, 2 * depth(rng), width(rng) / 100.0, 2 * res(rng), batch(rng), Precision::fp32});
  } else {
    for (const Config& c : enumerate_preset("paper"))
      if (static_cast<int>(r.configs.size()) < n) r.configs.push_back(c);
  }
  for (const Config& c : r.configs) {
    r.resolutions.insert(c.resolution), r.batches.insert(c.batch);
    r.values["peak_memory_mb"].push_back(formula(c));
  }
  return r;
}

TrainedLevels levels_of(const Rows& r) { return {r.resolutions, r.batches, {}, {}}; }

Answerer by_formula(std::size_t& largest) {
  return [&largest](const std::vector<Config>& cs, const std::vector<Telemetry>&) {
    largest = std::max(largest, cs.size());
    std::vector<double> v;
    v.reserve(cs.size());
    for (const Config& c : cs) v.push_back(formula(c));
    return std::map<std::string, std::vector<double>>{{"peak_memory_mb", std::move(v)}};
  };
}

// The hold as it was (cee8d4b): every row's configurations below looked up one by one, after every
// one of them not asked was answered in one call. Integer keys per network, as there.
void per_row_lattice(const Rows& r, std::map<std::string, std::vector<double>>& values, const Answerer& answer) {
  const std::vector<std::string> knobs = {"batch", "resolution"};
  const std::size_t n = r.configs.size();
  const auto at = [](int res, int b) { return (std::uint64_t(std::uint32_t(res)) << 32) | std::uint32_t(b); };
  std::map<std::string, std::size_t> networks;
  std::vector<std::unordered_map<std::uint64_t, std::size_t>> places;
  std::vector<std::size_t> network(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto [it, fresh] = networks.emplace(architecture_key(r.configs[i]), places.size());
    if (fresh) places.emplace_back();
    network[i] = it->second;
    places[it->second].emplace(at(r.configs[i].resolution, r.configs[i].batch), i);
  }
  const auto each_below = [&](auto&& fn) {
    for (std::size_t i = 0; i < n; ++i)
      for (int res : levels_below(r.configs[i].resolution, r.resolutions, true))
        for (int b : levels_below(r.configs[i].batch, r.batches, true))
          if (res != r.configs[i].resolution || b != r.configs[i].batch) fn(i, res, b);
  };
  std::vector<Config> extra;
  each_below([&](std::size_t i, int res, int b) {
    if (!places[network[i]].emplace(at(res, b), n + extra.size()).second) return;
    Config k = r.configs[i];
    k.resolution = res, k.batch = b;
    extra.push_back(k);
  });
  const auto answered = answer(extra, {});
  const std::vector<double> asked = values.at("peak_memory_mb");
  auto& v = values.at("peak_memory_mb");
  each_below([&](std::size_t i, int res, int b) {
    const std::size_t j = places[network[i]].at(at(res, b));
    v[i] = std::max(v[i], j < n ? asked[j] : answered.at("peak_memory_mb")[j - n]);
  });
}

void run(benchmark::State& state, bool sparse, bool per_row) {
  const Rows r = make_rows(static_cast<int>(state.range(0)), sparse);
  std::size_t largest = 0;
  const Answerer answer = by_formula(largest);
  {  // the two give the same answers, or there is nothing to compare
    auto held = r.values, visited = r.values;
    hold_monotone(r.configs, {}, false, {{"peak_memory_mb", {"batch", "resolution"}}}, levels_of(r), held, answer);
    per_row_lattice(r, visited, answer);
    if (held != visited) state.SkipWithError("the hold and the per-row lattice differ");
    largest = 0;
  }
  for (auto _ : state) {
    auto values = r.values;
    if (per_row)
      per_row_lattice(r, values, answer);
    else
      hold_monotone(r.configs, {}, false, {{"peak_memory_mb", {"batch", "resolution"}}}, levels_of(r), values, answer);
    benchmark::DoNotOptimize(values);
  }
  state.counters["largest_call"] = static_cast<double>(largest);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_Monotone_Sparse_Hold(benchmark::State& s) { run(s, true, false); }
void BM_Monotone_Sparse_PerRowLattice(benchmark::State& s) { run(s, true, true); }
void BM_Monotone_Grid_Hold(benchmark::State& s) { run(s, false, false); }
void BM_Monotone_Grid_PerRowLattice(benchmark::State& s) { run(s, false, true); }

BENCHMARK(BM_Monotone_Sparse_Hold)->Arg(500)->Arg(2000)->Arg(20000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Monotone_Sparse_PerRowLattice)->Arg(500)->Arg(2000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Monotone_Grid_Hold)->Arg(1296)->Arg(12960)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Monotone_Grid_PerRowLattice)->Arg(1296)->Arg(12960)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
