// Throughput of the analytic path over the whole `paper` preset: full NetworkSpecs
// (layer list, params, MACs, activations) next to the allocation-free totals that features use,
// and feature rows, in configurations per second. Compare the first two as a ratio in one run.
// Screening scores whole spaces, so this is the rate that bounds it before any model runs.
#include <benchmark/benchmark.h>

#include <map>
#include <tuple>
#include <vector>

#include "carb/features.hpp"
#include "carb/network_spec.hpp"
#include "carb/space.hpp"

namespace {

const std::vector<carb::Config>& paper() {
  static const std::vector<carb::Config> cs = carb::enumerate_preset("paper");
  return cs;
}

void BM_NetworkSpecPaper(benchmark::State& state) {
  const auto& cs = paper();
  for (auto _ : state)
    for (const auto& c : cs) {
      auto spec = carb::build_network_spec(c);
      benchmark::DoNotOptimize(spec.macs);
    }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(cs.size()));
  state.counters["configs"] = static_cast<double>(cs.size());
}
BENCHMARK(BM_NetworkSpecPaper)->Unit(benchmark::kMillisecond);

void BM_NetworkTotalsPaper(benchmark::State& state) {
  const auto& cs = paper();
  for (auto _ : state)
    for (const auto& c : cs) {
      auto spec = carb::network_totals(c);
      benchmark::DoNotOptimize(spec.macs);
    }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(cs.size()));
  state.counters["configs"] = static_cast<double>(cs.size());
}
BENCHMARK(BM_NetworkTotalsPaper)->Unit(benchmark::kMillisecond);

// What features do since 2026-12-07: one walk per network and resolution at batch 1, its totals
// scaled to each batch (exact: every count but the parameters is per image). Side by side with
// BM_NetworkTotalsPaper, which walks every configuration.
void BM_NetworkTotalsPaperScaledFromBatch1(benchmark::State& state) {
  const auto& cs = paper();
  for (auto _ : state) {
    std::map<std::tuple<int, int, double, int, int>, carb::NetworkSpec> at_batch_1;  // as build_features keeps them
    for (const auto& c : cs) {
      const auto key = std::make_tuple(static_cast<int>(c.family), c.depth, c.width, c.resolution, static_cast<int>(c.precision));
      auto it = at_batch_1.find(key);
      if (it == at_batch_1.end()) {
        carb::Config one = c;
        one.batch = 1;
        it = at_batch_1.emplace(key, carb::network_totals(one)).first;
      }
      auto spec = carb::totals_at_batch(it->second, c.batch);
      benchmark::DoNotOptimize(spec.macs);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(cs.size()));
  state.counters["configs"] = static_cast<double>(cs.size());
}
BENCHMARK(BM_NetworkTotalsPaperScaledFromBatch1)->Unit(benchmark::kMillisecond);

void BM_FeaturesPaper(benchmark::State& state) {
  const auto& cs = paper();
  const auto schema = carb::FeatureSchema::make(false);
  for (auto _ : state) {
    auto m = carb::build_features(schema, cs);
    benchmark::DoNotOptimize(m);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(cs.size()));
  state.counters["configs"] = static_cast<double>(cs.size());
  state.counters["features"] = static_cast<double>(schema.size());
}
BENCHMARK(BM_FeaturesPaper)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
