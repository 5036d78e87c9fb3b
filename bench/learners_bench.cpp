// Learner benchmarks. Without arguments' special environment this is a Google
// Benchmark program timing fit of ExtraTrees(400) and both XGBoost learners on a
// synthetic dataset. With CARB_ET_CSV=path set it instead fits ExtraTrees(400,
// 2 threads, seed 0) on that CSV and prints {"fit_s","r2","mae"} as JSON: the carb
// side of bench/extra_trees_vs_sklearn.py, which runs both on the same split.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "carb/error.hpp"
#include "carb/learner.hpp"

namespace {

struct Data {
  carb::Matrix X;
  std::vector<float> y;
};

// Synthetic (generated, not measured): a smooth nonlinear function of 6 of the
// columns plus noise; the other columns are distractors, as in real feature sets.
Data make_synthetic_bench_data(std::size_t rows, std::size_t cols, unsigned seed) {
  std::mt19937 g(seed);
  auto u = [&] { return static_cast<float>(g() / 4294967296.0); };
  Data d{carb::Matrix(rows, cols), std::vector<float>(rows)};
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) d.X(r, c) = u();
    const auto x = [&](std::size_t c) { return d.X(r, c % cols); };
    d.y[r] = static_cast<float>(10 * std::sin(3.14159 * x(0) * x(1)) + 20 * (x(2) - 0.5) * (x(2) - 0.5) +
                                10 * x(3) + 5 * x(4) + 3 * std::exp(x(5)) + 0.5 * (u() - 0.5));
  }
  return d;
}

void BM_Fit(benchmark::State& state, const std::string& kind, int trees) {
  const Data d = make_synthetic_bench_data(static_cast<std::size_t>(state.range(0)), 30, 1);
  carb::LearnerParams p;
  p.n_trees = trees;
  p.threads = 2;
  p.seed = 0;
  for (auto _ : state) {
    auto learner = carb::make_learner(kind, p);
    learner->fit(d.X, d.y);
    benchmark::DoNotOptimize(learner);
  }
  state.SetLabel(kind + " x" + std::to_string(trees) + ", 30 features");
}

BENCHMARK_CAPTURE(BM_Fit, extra_trees, std::string("extra_trees"), 400)
    ->Arg(2000)
    ->Arg(13000)
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Fit, xgb_depthwise, std::string("xgb_depthwise"), 800)
    ->Arg(2000)
    ->Arg(13000)
    ->Unit(benchmark::kSecond)
    ->Iterations(1);
BENCHMARK_CAPTURE(BM_Fit, xgb_lossguide, std::string("xgb_lossguide"), 800)
    ->Arg(2000)
    ->Arg(13000)
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

// Reads a numeric CSV with a header row; the last column is the target.
Data read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw carb::InputError("cannot open CARB_ET_CSV file " + path);
  std::string line;
  std::getline(in, line);
  std::vector<float> values;
  std::size_t rows = 0, width = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::stringstream ss(line);
    std::string cell;
    std::size_t n = 0;
    for (; std::getline(ss, cell, ','); ++n) values.push_back(std::stof(cell));
    if (rows++ == 0) width = n;
    if (n != width || width < 2)
      throw carb::InputError(path + ": row " + std::to_string(rows) + " has bad width");
  }
  Data d{carb::Matrix(rows, width - 1), std::vector<float>(rows)};
  for (std::size_t r = 0; r < rows; ++r) {
    std::copy_n(values.begin() + static_cast<long>(r * width), width - 1,
                d.X.data.begin() + static_cast<long>(r * (width - 1)));
    d.y[r] = values[r * width + width - 1];
  }
  return d;
}

int compare_mode(const std::string& csv) {
  const char* f = std::getenv("CARB_ET_TEST_FRACTION");
  const double frac = f ? std::stod(f) : 0.2;
  const Data d = read_csv(csv);
  const auto n_train = static_cast<std::size_t>(std::llround(static_cast<double>(d.y.size()) * (1 - frac)));
  std::vector<std::size_t> tr(n_train), te(d.y.size() - n_train);
  for (std::size_t i = 0; i < d.y.size(); ++i) (i < n_train ? tr[i] : te[i - n_train]) = i;
  const carb::Matrix Xtr = d.X.take_rows(tr), Xte = d.X.take_rows(te);
  const std::vector<float> ytr(d.y.begin(), d.y.begin() + static_cast<long>(n_train));
  const std::vector<float> yte(d.y.begin() + static_cast<long>(n_train), d.y.end());
  carb::LearnerParams p;
  p.n_trees = 400;
  p.threads = 2;
  p.seed = 0;
  auto et = carb::make_learner("extra_trees", p);
  const auto t0 = std::chrono::steady_clock::now();
  et->fit(Xtr, ytr);
  const double fit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto pred = et->predict(Xte);
  double mean = 0, ss_res = 0, ss_tot = 0, mae = 0;
  for (float v : yte) mean += v / static_cast<double>(yte.size());
  for (std::size_t i = 0; i < yte.size(); ++i) {
    ss_res += (yte[i] - pred[i]) * double(yte[i] - pred[i]);
    ss_tot += (yte[i] - mean) * (yte[i] - mean);
    mae += std::abs(yte[i] - pred[i]) / static_cast<double>(yte.size());
  }
  std::printf("{\"fit_s\":%.4f,\"r2\":%.6f,\"mae\":%.6f,\"train_rows\":%zu,\"test_rows\":%zu}\n", fit_s,
              1 - ss_res / ss_tot, mae, n_train, yte.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (const char* csv = std::getenv("CARB_ET_CSV")) {
    try {
      return compare_mode(csv);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return 1;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
