// The active-learning simulation (issue 13), one command: a measured dataset is the oracle pool,
// a seeded 20% is hidden as the test set, and each strategy starts from 50 rows and adds rounds of
// 50, retraining a fast model (few trees, no correctors) after each; held-out R² and MAPE per
// target and the cumulative cost of measuring the chosen rows (their measured latency under the
// dataset's protocol: warm-up + passes, the reference network's passes, cooldown) are recorded.
//   OMP_WAIT_POLICY=PASSIVE build/bench/active_learning_bench [--data data/cpu-2t.csv] [--seeds 5]
//       [--start 50] [--step 50] [--max-rows 800] [--trees 100] [--folds 3] [--csv curves.csv]
//       [--strategies random,space-filling,stratified,uncertainty,uncertainty-per-cost]
//       [--spread units|log] [--diversity 1] [--threads 2] [--start-strategy stratified] [--compare-full]
// Strategies: random (a seeded order, random start), space-filling (maximin, from a maximin start),
// stratified (from a stratified start), and carb plan by uncertainty and by uncertainty per
// predicted second (from the --start-strategy start, by default stratified: `carb plan` without a
// model). Prints the mean learning curves over seeds and, per strategy and target, the rows and
// cost needed to reach R² 0.98 and the R² random reaches with the whole pool (trained once per seed).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "carb/dataset.hpp"
#include "carb/features.hpp"
#include "carb/metrics.hpp"
#include "carb/model.hpp"
#include "carb/plan.hpp"

namespace {

using namespace carb;

struct Options {
  std::string data = "data/cpu-2t.csv", csv;
  int seeds = 5, start = 50, step = 50, max_rows = 800, trees = kFastTrees, folds = kFastFolds, threads = 2;
  double test_fraction = 0.2, diversity = 1.0, cooldown = 0.5;
  std::string spread = "units", start_strategy = "stratified";
  bool compare_full = false;  // also train the default (full) model on the first seed's whole pool
  std::vector<std::string> strategies = {"random", "space-filling", "stratified", "uncertainty", "uncertainty-per-cost"};
};

struct Point {
  std::size_t rows = 0;
  double cost_s = 0;
  std::map<std::string, FitMetrics> metrics;  // per target
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');) out.push_back(x);
  return out;
}

// The fast setting of the rounds (carb train --fast unless --trees/--folds say otherwise).
TrainOptions fast_options(const Options& opt, unsigned seed) {
  TrainOptions o;
  make_fast(o);
  o.params.n_trees = opt.trees;
  o.params.threads = opt.threads;
  o.folds = opt.folds;
  o.seed = seed;
  return o;
}

// The protocol the oracle's rows were measured under (data/cpu-2t.json): warm-up 5, 10..100 passes
// stopping after 2 s of timing, the reference network before each pass, 0.5 s cooldown.
Protocol data_protocol(const Options& opt) {
  Protocol p;
  p.warmup = 5, p.min_passes = 10, p.max_passes = 100, p.max_timed_s = 2, p.cooldown_s = opt.cooldown;
  p.reference = true;
  return p;
}

double extra_number(const Record& r, const std::string& col, double fallback) {
  const auto it = r.extra.find(col);
  if (it == r.extra.end() || it->second.empty()) return fallback;
  return std::strtod(it->second.c_str(), nullptr);
}

// What measuring the row cost: its latency × (its warm-up + its passes), the reference network
// before each pass, the cooldown.
double measured_cost(const Record& r, const Options& opt) {
  Protocol p = data_protocol(opt);
  p.warmup = static_cast<int>(extra_number(r, "warmup", p.warmup));
  p.min_passes = p.max_passes = static_cast<int>(extra_number(r, "passes", p.max_passes));
  p.max_timed_s = 0;
  return measure_seconds(*r.latency_ms, p, "cpu", extra_number(r, "reference_ms", 0));
}

// Held-out R² and MAPE of a model trained on `rows` rows that cost `cost` seconds to measure.
Point score(const CarbModel& m, const Dataset& test, std::size_t rows, double cost) {
  const auto pred = m.predict_columns(configs_of(test));
  Point p;
  p.rows = rows;
  p.cost_s = cost;
  for (const auto& t : m.targets()) {
    std::vector<double> y;
    for (const auto& r : test.rows) y.push_back(*r.value(t));
    p.metrics[t] = fit_metrics(y, pred.at(t));
  }
  return p;
}

// One strategy's curve under one seed: start, then rounds until max_rows or the pool runs out.
std::vector<Point> run_curve(const std::string& strategy, const Dataset& pool, const Dataset& test,
                             const Options& opt, unsigned seed, const std::vector<double>& cost) {
  std::vector<Config> pool_cfg = configs_of(pool);
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < pool_cfg.size(); ++i) index[config_key(pool_cfg[i])] = i;
  std::vector<std::size_t> chosen;
  std::vector<char> taken(pool_cfg.size(), 0);
  auto take = [&](const std::vector<Config>& cs) {
    for (const auto& c : cs) {
      const std::size_t i = index.at(config_key(c));
      if (!taken[i]) taken[i] = 1, chosen.push_back(i);
    }
  };
  auto plan_rows = [&](PlanStrategy s, std::size_t n, const CarbModel* model) {
    std::vector<Config> measured;
    for (auto i : chosen) measured.push_back(pool_cfg[i]);
    PlanOptions po;
    po.strategy = s;
    po.count = n;
    po.seed = seed;
    // The near-duplicate radius and the spread weigh the model's uncertainty: only the uncertainty
    // strategies take them (make_plan refuses them elsewhere, where they would change nothing).
    if (s == PlanStrategy::uncertainty || s == PlanStrategy::uncertainty_per_cost) {
      po.diversity = opt.diversity;
      po.spread = parse_spread_space(opt.spread);
    }
    po.protocol = data_protocol(opt);
    std::vector<Config> out;
    for (const auto& r : make_plan(pool_cfg, measured, model, po).rows) out.push_back(r.config);
    return out;
  };
  // The model-free strategies start as they go on; the model-based ones from --start-strategy.
  const PlanStrategy own = parse_plan_strategy(strategy);
  const bool model_free = own == PlanStrategy::random || own == PlanStrategy::space_filling || own == PlanStrategy::stratified;
  const PlanStrategy start = model_free ? own : parse_plan_strategy(opt.start_strategy);
  take(plan_rows(start, std::size_t(opt.start), nullptr));

  std::vector<Point> curve;
  const std::size_t limit = std::min<std::size_t>(pool_cfg.size(), std::size_t(opt.max_rows));
  while (true) {
    const Dataset train = subset(pool, chosen);
    double spent = 0;
    for (auto i : chosen) spent += cost[i];
    const CarbModel m = CarbModel::train(train, fast_options(opt, seed));
    curve.push_back(score(m, test, chosen.size(), spent));
    if (chosen.size() >= limit) break;
    const std::size_t n = std::min<std::size_t>(std::size_t(opt.step), limit - chosen.size());
    const PlanStrategy s = parse_plan_strategy(strategy);
    const bool needs_model = s == PlanStrategy::uncertainty || s == PlanStrategy::uncertainty_per_cost;
    take(plan_rows(s, n, needs_model ? &m : nullptr));
  }
  return curve;
}

double mean(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); }

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "active_learning_bench: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--data") opt.data = next();
    else if (a == "--csv") opt.csv = next();
    else if (a == "--seeds") opt.seeds = std::atoi(next().c_str());
    else if (a == "--start") opt.start = std::atoi(next().c_str());
    else if (a == "--step") opt.step = std::atoi(next().c_str());
    else if (a == "--max-rows") opt.max_rows = std::atoi(next().c_str());
    else if (a == "--trees") opt.trees = std::atoi(next().c_str());
    else if (a == "--folds") opt.folds = std::atoi(next().c_str());
    else if (a == "--threads") opt.threads = std::atoi(next().c_str());
    else if (a == "--diversity") opt.diversity = std::atof(next().c_str());
    else if (a == "--spread") opt.spread = next();
    else if (a == "--start-strategy") opt.start_strategy = next();
    else if (a == "--compare-full") opt.compare_full = true;
    else if (a == "--strategies") opt.strategies = split_list(next());
    else {
      std::cerr << "usage: active_learning_bench [--data CSV] [--seeds N] [--start N] [--step N] [--max-rows N] "
                   "[--trees N] [--folds N] [--threads N] [--diversity F] [--spread units|log] [--start-strategy S] "
                   "[--strategies a,b,...] [--csv FILE] [--compare-full]\n";
      return 2;
    }
  }
  if (opt.seeds < 1 || opt.start < 1 || opt.step < 1 || opt.max_rows < opt.start || opt.trees < 1 || opt.folds < 2) {
    std::cerr << "active_learning_bench: seeds, start, step, trees >= 1, folds >= 2, max-rows >= start\n";
    return 2;
  }
  try {
    for (const auto& s : opt.strategies) parse_plan_strategy(s);
    const auto t0 = std::chrono::steady_clock::now();
    const Dataset all = read_dataset_csv(opt.data).ok_only();
    const auto targets = available_targets(all);
    // curves[strategy][seed] and whole-pool R² per seed (random's ceiling: every pool row).
    std::map<std::string, std::vector<std::vector<Point>>> curves;
    std::vector<Point> whole;
    for (int k = 0; k < opt.seeds; ++k) {
      const unsigned seed = 1000u + unsigned(k);
      std::vector<std::size_t> tr, te;
      split_indices(all.rows.size(), opt.test_fraction, seed, tr, te);
      const Dataset pool = subset(all, tr), test = subset(all, te);
      std::vector<double> cost;
      for (const auto& r : pool.rows) cost.push_back(measured_cost(r, opt));
      const auto f0 = std::chrono::steady_clock::now();
      const Point w = score(CarbModel::train(pool, fast_options(opt, seed)), test, pool.rows.size(),
                            std::accumulate(cost.begin(), cost.end(), 0.0));
      const double fast_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count();
      if (opt.compare_full && k == 0) {
        // What the fast setting costs in accuracy: the default model (paper trees, 5 folds,
        // correctors) on the same whole pool and test rows.
        TrainOptions full;
        full.params.threads = opt.threads;
        full.seed = seed;
        const auto g0 = std::chrono::steady_clock::now();
        const Point f = score(CarbModel::train(pool, full), test, pool.rows.size(), w.cost_s);
        const double full_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - g0).count();
        for (const auto& t : targets)
          std::printf("fast vs full, seed %u whole pool, %s: R2 %.4f vs %.4f, MAPE %.2f%% vs %.2f%%\n", seed, t.c_str(),
                      w.metrics.at(t).r2, f.metrics.at(t).r2, w.metrics.at(t).mape, f.metrics.at(t).mape);
        std::printf("fast vs full, seed %u whole pool: training %.1f s vs %.1f s\n", seed, fast_s, full_s);
      }
      whole.push_back(w);
      std::printf("seed %u: pool %zu rows (%.0f s to measure), test %zu rows; whole pool R2", seed, pool.rows.size(),
                  w.cost_s, test.rows.size());
      for (const auto& t : targets) std::printf(" %s %.4f", t.c_str(), w.metrics.at(t).r2);
      std::printf("  [%.0f s elapsed]\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      for (const auto& s : opt.strategies) {
        curves[s].push_back(run_curve(s, pool, test, opt, seed, cost));
        const Point& last = curves[s].back().back();
        std::printf("  %-21s %4zu rows: latency R2 %.4f  [%.0f s elapsed]\n", s.c_str(), last.rows,
                    last.metrics.count("latency_ms") ? last.metrics.at("latency_ms").r2 : NAN,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
    }

    // Mean over seeds, round by round (every seed has the same row counts per round).
    const std::size_t n_rounds = curves.begin()->second.front().size();
    auto mean_at = [&](const std::string& s, std::size_t r, const std::string& t, bool mape) {
      std::vector<double> v;
      for (const auto& c : curves[s]) v.push_back(mape ? c[r].metrics.at(t).mape : c[r].metrics.at(t).r2);
      return mean(v);
    };
    auto cost_at = [&](const std::string& s, std::size_t r) {
      std::vector<double> v;
      for (const auto& c : curves[s]) v.push_back(c[r].cost_s);
      return mean(v);
    };
    std::vector<double> pool_cost, whole_r2;
    for (const auto& w : whole) pool_cost.push_back(w.cost_s);
    const double full_cost = mean(pool_cost);
    const std::size_t pool_rows = all.rows.size() - static_cast<std::size_t>(std::llround(opt.test_fraction * double(all.rows.size())));

    std::printf("\nmean over %d seeds; %d trees, %d folds, no correctors; pool %zu rows, %.0f s to measure it all\n",
                opt.seeds, opt.trees, opt.folds, pool_rows, full_cost);
    for (const auto& t : targets) {
      std::printf("\n%s: held-out R2 (MAPE %%) and cumulative measuring cost (s), per round\n%5s", t.c_str(), "rows");
      for (const auto& s : opt.strategies) std::printf(" | %-29s", s.c_str());
      std::printf("\n");
      for (std::size_t r = 0; r < n_rounds; ++r) {
        std::printf("%5zu", curves.begin()->second.front()[r].rows);
        for (const auto& s : opt.strategies)
          std::printf(" | %.4f (%5.1f%%) %9.0f s", mean_at(s, r, t, false), mean_at(s, r, t, true), cost_at(s, r));
        std::printf("\n");
      }
    }

    std::printf("\nrows and cost to reach a mean held-out R2 (first round at or above it; '-' = not within %d rows)\n",
                opt.max_rows);
    std::printf("%-15s %-21s %-26s %-34s %s\n", "target", "strategy", "R2 0.98: rows, cost",
                "random's whole-pool R2: rows, cost", "rounds below random (worst gap)");
    for (const auto& t : targets) {
      std::vector<double> wr;
      for (const auto& w : whole) wr.push_back(w.metrics.at(t).r2);
      const double ceiling = mean(wr);
      for (const auto& s : opt.strategies) {
        auto reach = [&](double goal) {
          for (std::size_t r = 0; r < n_rounds; ++r)
            if (mean_at(s, r, t, false) >= goal) {
              const std::size_t rows = curves[s].front()[r].rows;
              char b[96];
              std::snprintf(b, sizeof b, "%zu (%.0f%%), %.0f s (%.0f%%)", rows, 100.0 * double(rows) / double(pool_rows),
                            cost_at(s, r), 100.0 * cost_at(s, r) / full_cost);
              return std::string(b);
            }
          return std::string("-");
        };
        int below = 0;
        double worst = 0;
        if (curves.count("random"))
          for (std::size_t r = 0; r < n_rounds; ++r) {
            const double gap = mean_at(s, r, t, false) - mean_at("random", r, t, false);
            if (gap < 0) ++below, worst = std::min(worst, gap);
          }
        char g[64];
        std::snprintf(g, sizeof g, "%d of %zu (%.4f)", below, n_rounds, worst);
        std::printf("%-15s %-21s %-26s %-34s %s\n", t.c_str(), s.c_str(), reach(0.98).c_str(), reach(ceiling).c_str(), g);
      }
      std::printf("%-15s random's whole-pool R2 %.4f (mean of %d seeds, %zu rows)\n", t.c_str(), ceiling, opt.seeds,
                  pool_rows);
    }

    if (!opt.csv.empty()) {
      std::ostringstream out;
      out << "strategy,seed,round,rows,cost_s,target,r2,mape\n";
      for (const auto& [s, per_seed] : curves)
        for (std::size_t k = 0; k < per_seed.size(); ++k)
          for (std::size_t r = 0; r < per_seed[k].size(); ++r)
            for (const auto& [t, m] : per_seed[k][r].metrics)
              out << s << ',' << 1000 + k << ',' << r << ',' << per_seed[k][r].rows << ',' << per_seed[k][r].cost_s
                  << ',' << t << ',' << m.r2 << ',' << m.mape << '\n';
      for (std::size_t k = 0; k < whole.size(); ++k)
        for (const auto& [t, m] : whole[k].metrics)
          out << "whole-pool," << 1000 + k << ",0," << whole[k].rows << ',' << whole[k].cost_s << ',' << t << ','
              << m.r2 << ',' << m.mape << '\n';
      std::ofstream(opt.csv) << out.str();
      std::printf("\ncurves written to %s\n", opt.csv.c_str());
    }
    std::printf("total %.0f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  } catch (const std::exception& e) {
    std::cerr << "active_learning_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
