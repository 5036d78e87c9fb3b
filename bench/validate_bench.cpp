// Validation speed: the dominance search of `carb data validate` (data/dominance.hpp), which every
// reader of a dataset runs, bounded and in its k-d tree (`automatic`) against scanning every configuration, side by side on
// the same rows. With every configuration distinct (as here), scanning them is comparing every pair
// of rows, which is how validate searched until the twenty-fourth session (74 s for 135,000 rows).
//
// Layouts: `grid` takes the rows from the paper preset's axes (a few values per dimension, as every
// campaign measures), one family and precision; `sparse` draws each dimension from many values
// (resolutions 32-288 in steps of 1, 64 batch sizes, 64 widths).
#include <benchmark/benchmark.h>

#include <random>

#include "carb/space.hpp"
#include "data/dominance.hpp"

namespace {

using namespace carb;

struct Group {
  Dataset d;
  std::vector<DominanceRow> rows;
};

// Costs by formula (not measured): latency grows with FLOPs, so few rows break the rule (a few in
// a thousand are made to, at a tenth of their cost, so the searches have rows to find).
Group make_group(int n, bool sparse) {
  std::mt19937 rng(11);
  Group g;
  std::vector<Config> configs;
  if (!sparse) {
    for (const Config& c : enumerate_preset("paper"))
      if (c.family == Family::basic && c.precision == Precision::fp32) configs.push_back(c);
    // Distinct rows past the preset's 1,296: more resolutions on the same axes.
    for (int extra = 1; static_cast<int>(configs.size()) < n; ++extra)
      for (const Config& c : enumerate_preset("paper"))
        if (c.family == Family::basic && c.precision == Precision::fp32) {
          Config more = c;
          more.resolution += extra;
          configs.push_back(more);
        }
  } else {
    std::uniform_int_distribution<int> depth(0, 5), width(1, 64), res(32, 288), batch(1, 64);
    const int depths[] = {8, 18, 34, 50, 102, 152};
    for (int k = 0; k < n; ++k)
      configs.push_back({Family::basic, depths[depth(rng)], 0.0625 * width(rng), res(rng), batch(rng), Precision::fp32});
  }
  configs.resize(n);
  std::lognormal_distribution<double> noise(0, 0.1);
  for (const Config& c : configs) {
    const double flops = 2.0 * c.depth * c.width * c.width * c.resolution * c.resolution * c.batch;
    Record r;
    r.platform = "p";
    r.config = c;
    r.latency_ms = flops / 1e9 * noise(rng) * (rng() % 500 == 0 ? 0.1 : 1.0);
    g.rows.push_back({g.d.rows.size(), flops, false});
    g.d.rows.push_back(r);
  }
  return g;
}

void run(benchmark::State& state, bool sparse, DominanceSearch how) {
  const Group g = make_group(static_cast<int>(state.range(0)), sparse);
  std::size_t held = 0;
  for (auto _ : state) {
    const auto out = costliest_outdone(g.d, g.rows, "latency_ms", kMinCostOverDominated, how);
    held = 0;
    for (const auto& o : out) held += o.has_value();
    benchmark::DoNotOptimize(held);
  }
  state.counters["rows_held"] = static_cast<double>(held);
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

void BM_Dominance_Grid_Automatic(benchmark::State& s) { run(s, false, DominanceSearch::automatic); }
void BM_Dominance_Grid_ScanCells(benchmark::State& s) { run(s, false, DominanceSearch::cells); }
void BM_Dominance_Sparse_Automatic(benchmark::State& s) { run(s, true, DominanceSearch::automatic); }
void BM_Dominance_Sparse_ScanCells(benchmark::State& s) { run(s, true, DominanceSearch::cells); }

BENCHMARK(BM_Dominance_Grid_Automatic)->Arg(4000)->Arg(20000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Dominance_Grid_ScanCells)->Arg(4000)->Arg(20000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Dominance_Sparse_Automatic)->Arg(4000)->Arg(20000)->Arg(100000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Dominance_Sparse_ScanCells)->Arg(4000)->Arg(20000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
