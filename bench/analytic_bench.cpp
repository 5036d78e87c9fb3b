// Throughput of the analytic path over the whole `paper` preset: full NetworkSpecs
// (layer list, params, MACs, activations) next to the allocation-free totals that features use,
// and feature rows, in configurations per second. Compare the first two as a ratio in one run.
// Screening scores whole spaces, so this is the rate that bounds it before any model runs.
#include <benchmark/benchmark.h>

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
