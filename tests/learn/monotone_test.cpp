// Tests of the monotone rule: which knobs a target's measurements never fell along, and the
// configurations below one along them.
#include "learn/monotone.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>

#include "carb/error.hpp"

namespace carb {
namespace {

/// Rows of memory that grows with batch and resolution by `grow` per step and in proportion to depth,
/// over 4 depths x 2 precisions x resolutions {32, 64, 96} x batches {1, 2, 4, 8}, one width: 72 batch
/// steps, 64 resolution steps, 72 depth steps and no width step.
Dataset rising(double grow = 1.5) {
  Dataset d;
  for (int depth : {10, 18, 26, 34})
    for (Precision p : {Precision::fp32, Precision::bf16})
      for (int r : {32, 64, 96})
        for (int b : {1, 2, 4, 8}) {
          Record row;
          row.platform = "test";
          row.config = {Family::basic, depth, 0.5, r, b, p};
          row.peak_memory_mb = depth * std::pow(grow, r / 32 + b);
          d.rows.push_back(row);
        }
  return d;
}

Record* find(Dataset& d, int depth, int r, int b) {
  for (auto& row : d.rows)
    if (row.config.depth == depth && row.config.resolution == r && row.config.batch == b &&
        row.config.precision == Precision::fp32)
      return &row;
  return nullptr;
}

TEST(MonotoneKnobs, AKnobIsHeldOnlyWhereNoMeasuredStepFellBeyondTheMetersGrain) {
  const std::vector<std::string> both = {"batch", "resolution", "depth"};
  EXPECT_EQ(monotone_knobs(rising(), "peak_memory_mb"), both);
  // One step along resolution falls by 2%: resolution is no longer held, batch and depth still are.
  Dataset fell = rising();
  find(fell, 18, 64, 4)->peak_memory_mb = *find(fell, 18, 32, 4)->peak_memory_mb * 0.98;
  EXPECT_EQ(monotone_knobs(fell, "peak_memory_mb"), (std::vector<std::string>{"batch", "depth"}));
  // One step along depth falls by 2%: depth is no longer held.
  Dataset shallower = rising();
  find(shallower, 26, 64, 4)->peak_memory_mb = *find(shallower, 18, 64, 4)->peak_memory_mb * 0.98;
  EXPECT_EQ(monotone_knobs(shallower, "peak_memory_mb"), (std::vector<std::string>{"batch", "resolution"}));
  // A second width, twice the memory: 96 width steps, none falling, so width is held too; a third,
  // narrower one above it in memory (a width step that falls) takes it away again.
  Dataset wider = rising();
  for (const Record& row : rising().rows) {
    Record w = row;
    w.config.width = 1.0;
    w.peak_memory_mb = *row.peak_memory_mb * 2;
    wider.rows.push_back(w);
  }
  EXPECT_EQ(monotone_knobs(wider, "peak_memory_mb"), (std::vector<std::string>{"batch", "resolution", "depth", "width"}));
  Record narrow = wider.rows.front();
  narrow.config.width = 0.25;
  narrow.peak_memory_mb = *narrow.peak_memory_mb * 1.5;
  wider.rows.push_back(narrow);
  EXPECT_EQ(monotone_knobs(wider, "peak_memory_mb"), both);
  // A fall within the grain (0.5%) is no fall.
  Dataset grain = rising();
  find(grain, 18, 64, 4)->peak_memory_mb = *find(grain, 18, 32, 4)->peak_memory_mb * 0.995;
  EXPECT_EQ(monotone_knobs(grain, "peak_memory_mb"), both);
  // A target no row has, and too few steps to show anything (one network: 9 batch steps, 8 resolution).
  EXPECT_TRUE(monotone_knobs(rising(), "energy_j").empty());
  Dataset few;
  for (const auto& row : rising().rows)
    if (row.config.depth == 10 && row.config.precision == Precision::fp32) few.rows.push_back(row);
  EXPECT_TRUE(monotone_knobs(few, "peak_memory_mb").empty());
  // Repeats count by their median: one low repeat among three high ones is no fall.
  Dataset repeats = rising();
  Record low = *find(repeats, 18, 64, 4);
  repeats.rows.push_back(low);
  repeats.rows.push_back(low);
  low.peak_memory_mb = 1.0;
  repeats.rows.push_back(low);
  EXPECT_EQ(monotone_knobs(repeats, "peak_memory_mb"), both);
  // Rows that failed (no value) are no steps.
  Dataset failed = rising();
  for (auto& row : failed.rows)
    if (row.config.batch == 8) row.status = Status::oom, row.peak_memory_mb.reset();
  EXPECT_EQ(monotone_knobs(failed, "peak_memory_mb"), both);  // 48 batch steps and 48 resolution steps left
}

// Across networks, one prediction may need the answers of every trained configuration below it: with
// too many trained levels (here 30 depths x 5 widths x 4 resolutions x 2 batches, 1,200) a cost is
// held along batch and resolution alone; with 4 widths (960) along depth and width too.
TEST(MonotoneKnobs, DepthAndWidthAreHeldOnlyWhereTheTrainedLatticeIsBounded) {
  const auto grid = [](int widths) {
    Dataset d;
    for (int depth = 10; depth < 70; depth += 2)
      for (int w = 1; w <= widths; ++w)
        for (int r : {32, 64, 96, 128})
          for (int b : {1, 2}) {
            Record row;
            row.platform = "test";
            row.config = {Family::basic, depth, 0.1 * w, r, b, Precision::fp32};
            row.peak_memory_mb = depth * w * r * b;
            d.rows.push_back(row);
          }
    return d;
  };
  const std::vector<std::string> within = {"batch", "resolution"}, all = kMonotoneKnobCandidates;
  EXPECT_EQ(monotone_knobs(grid(5), "peak_memory_mb"), within);
  EXPECT_EQ(monotone_knobs(grid(4), "peak_memory_mb"), all);
  static_assert(kMaxAcrossLattice == 1000);
  // Depths count per family over every precision, as predictions read them: 4 widths with fp32 at
  // the even depths and bf16 at the odd ones is 60 depths below a basic network (1,920), not 30.
  Dataset both = grid(4);
  for (const Record& row : grid(4).rows) {
    Record odd = row;
    odd.config.precision = Precision::bf16, odd.config.depth += 1;
    both.rows.push_back(odd);
  }
  EXPECT_EQ(monotone_knobs(both, "peak_memory_mb"), within);
}

TEST(MonotoneKnobs, TheConfigurationsBelowAreTheTrainedLevelsUnderEachHeldKnob) {
  const std::set<int> resolutions = {32, 64, 128}, batches = {1, 2, 4, 8};
  const TrainedLevels levels{resolutions, batches, {{Family::basic, {10, 18, 50}}}, {0.25, 1.0}};
  const Config c{Family::basic, 18, 0.5, 96, 4, Precision::fp16};
  const auto keys = [](const std::vector<Config>& cs) {
    std::vector<std::string> k;
    for (const auto& x : cs) k.push_back(config_key(x));
    std::sort(k.begin(), k.end());
    return k;
  };
  const auto both = configs_below(c, {"batch", "resolution"}, levels);
  EXPECT_EQ(both.size(), 8u);  // resolutions {96, 32, 64} x batches {4, 1, 2}, c itself excepted
  for (const Config& k : both) {
    EXPECT_LE(k.resolution, c.resolution);
    EXPECT_LE(k.batch, c.batch);
    EXPECT_EQ(architecture_key(k), architecture_key(c));
    EXPECT_NE(config_key(k), config_key(c));
  }
  Config b1 = c, b2 = c;
  b1.batch = 1, b2.batch = 2;
  EXPECT_EQ(keys(configs_below(c, {"batch"}, levels)), keys({b1, b2}));
  EXPECT_TRUE(configs_below(c, {}, levels).empty());
  // At the smallest levels nothing lies below.
  const Config least{Family::basic, 18, 0.5, 32, 1, Precision::fp16};
  EXPECT_TRUE(configs_below(least, {"batch", "resolution"}, levels).empty());
  // Along depth and width: depths {34, 10, 18} x widths {0.5, 0.25}, c itself excepted, at c's
  // resolution and batch; with batch too, each of those at batches {4, 1, 2}.
  const Config deep{Family::basic, 34, 0.5, 96, 4, Precision::fp16};
  const auto across = configs_below(deep, {"depth", "width"}, levels);
  EXPECT_EQ(across.size(), 5u);
  for (const Config& k : across) {
    EXPECT_LE(k.depth, deep.depth);
    EXPECT_LE(k.width, deep.width);
    EXPECT_EQ(k.resolution, deep.resolution);
    EXPECT_EQ(k.batch, deep.batch);
    EXPECT_EQ(k.family, deep.family);
    EXPECT_EQ(k.precision, deep.precision);
  }
  EXPECT_EQ(configs_below(deep, {"batch", "depth", "width"}, levels).size(), 17u);  // 3 x 2 x 3 - 1
  // Depths are the family's own: no bottleneck depth was trained, so a bottleneck has none below.
  Config bottleneck = deep;
  bottleneck.family = Family::bottleneck, bottleneck.depth = 80;
  EXPECT_EQ(configs_below(bottleneck, {"depth", "width"}, levels).size(), 1u);  // width 0.25 alone
}

// The hold itself: asked configurations raised to their network's smaller ones' answers, those
// asked by their own answers, the others by one call to the answerer.
TEST(MonotoneKnobs, TheHoldTakesTheLargestAnswerBelowAndAsksOnlyForTheUnasked) {
  const TrainedLevels levels{{32, 64}, {1, 2}, {{Family::basic, {18}}}, {0.5}};
  const auto at = [](int r, int b) { return Config{Family::basic, 18, 0.5, r, b, Precision::fp32}; };
  // Memory falling along resolution at batch 2: (32, 2) answers 9, (64, 2) answers 5.
  std::vector<Config> asked = {at(32, 1), at(32, 2), at(64, 1), at(64, 2)};
  std::map<std::string, std::vector<double>> values = {{"peak_memory_mb", {4, 9, 3, 5}}, {"latency_ms", {1, 1, 1, 1}}};
  int calls = 0;
  const Answerer none = [&](const std::vector<Config>&, const std::vector<Telemetry>&) {
    ++calls;
    return std::map<std::string, std::vector<double>>{};
  };
  hold_monotone(asked, {}, false, {{"peak_memory_mb", {"batch", "resolution"}}}, levels, values, none);
  EXPECT_EQ(values.at("peak_memory_mb"), (std::vector<double>{4, 9, 4, 9}));
  EXPECT_EQ(values.at("latency_ms"), (std::vector<double>{1, 1, 1, 1}));  // not held
  EXPECT_EQ(calls, 0);  // every smaller one was asked
  // Asked alone, (64, 2)'s smaller ones are answered in one call, and it is held at the largest.
  std::vector<Config> seen;
  const Answerer answer = [&](const std::vector<Config>& cs, const std::vector<Telemetry>&) {
    seen = cs;
    std::vector<double> v;
    for (const Config& c : cs) v.push_back(c.resolution == 32 && c.batch == 2 ? 9.0 : 1.0);
    return std::map<std::string, std::vector<double>>{{"peak_memory_mb", v}};
  };
  std::map<std::string, std::vector<double>> alone = {{"peak_memory_mb", {5}}};
  hold_monotone({at(64, 2)}, {}, false, {{"peak_memory_mb", {"batch", "resolution"}}}, levels, alone, answer);
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(alone.at("peak_memory_mb"), std::vector<double>{9});
  // An answerer that leaves a held target out is an internal error, never a read past the end.
  std::map<std::string, std::vector<double>> again = {{"peak_memory_mb", {5}}};
  EXPECT_THROW(hold_monotone({at(64, 2)}, {}, false, {{"peak_memory_mb", {"batch"}}}, levels, again, none),
               ModelError);
}

// The definition, row by row: each configuration below (configs_below), by the first asked answer
// of its network there or else the answerer's, the largest finite one.
std::vector<double> held_by_definition(const std::vector<Config>& configs, const std::vector<Telemetry>& tel,
                                       bool by_readings, const std::vector<std::string>& knobs,
                                       const TrainedLevels& levels, const std::vector<double>& before,
                                       const std::function<double(const Config&, const Telemetry&)>& f) {
  const auto same_network = [&](std::size_t i, std::size_t j) {
    return architecture_key(configs[i]) == architecture_key(configs[j]) &&
           (!by_readings || (tel[i].avg_sm_util == tel[j].avg_sm_util && tel[i].avg_mem_util == tel[j].avg_mem_util));
  };
  std::vector<double> v = before;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (!(before[i] > 0)) continue;
    for (const Config& k : configs_below(configs[i], knobs, levels)) {
      double w = f(k, tel.empty() ? Telemetry{} : tel[i]);
      for (std::size_t j = 0; j < configs.size(); ++j)
        if (same_network(i, j) && configs[j].resolution == k.resolution && configs[j].batch == k.batch) {
          w = before[j];
          break;
        }
      if (std::isfinite(w)) v[i] = std::max(v[i], w);
    }
  }
  return v;
}

// The hold reads each network's answers below once (prefix maxima over its staircase and lines),
// networks a chunk at a time: the same answers as visiting each row's lattice, on random networks,
// levels, readings, duplicates, answers that are not positive or not finite, and chunk sizes.
TEST(MonotoneKnobs, TheHoldIsTheDefinitionOnRandomNetworksAndChunks) {
  std::mt19937 rng(20261207);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const std::vector<std::vector<std::string>> knob_sets = {{"batch"}, {"resolution"}, {"batch", "resolution"}};
  // A smooth answer with holes: some configurations answer NaN or infinity.
  const auto f = [](const Config& c, const Telemetry& t) {
    const int h = (c.resolution * 7 + c.batch * 13 + c.depth) % 17;
    if (h == 3) return std::nan("");
    if (h == 5) return std::numeric_limits<double>::infinity();
    return 0.01 * c.resolution * c.batch * c.depth + h + t.avg_sm_util.value_or(0.0);
  };
  for (int trial = 0; trial < 60; ++trial) {
    std::set<int> resolutions, batches;
    for (int k = pick(1, 7); k-- > 0;) resolutions.insert(16 * pick(2, 14));
    for (int k = pick(1, 6); k-- > 0;) batches.insert(pick(1, 40));
    const bool by_readings = trial % 2 == 0;
    std::vector<Config> configs;
    std::vector<Telemetry> tel;
    for (int k = pick(1, 40); k-- > 0;) {
      Config c{Family::basic, 10 + 8 * pick(0, 2), pick(0, 1) ? 0.5 : 1.0, 0, 0, Precision::fp32};
      c.resolution = pick(0, 2) ? *std::next(resolutions.begin(), pick(0, int(resolutions.size()) - 1)) : 16 * pick(2, 15);
      c.batch = pick(0, 2) ? *std::next(batches.begin(), pick(0, int(batches.size()) - 1)) : pick(1, 48);
      configs.push_back(c);
      tel.push_back(Telemetry{pick(0, 3) ? std::optional<double>(10.0 * pick(0, 1)) : std::nullopt, std::nullopt});
    }
    if (trial % 4 == 1) tel.clear();
    std::map<std::string, std::vector<std::string>> held;
    std::map<std::string, std::vector<double>> values;
    for (const char* target : {"peak_memory_mb", "latency_ms"}) {
      if (pick(0, 3) == 0) continue;
      held[target] = knob_sets[pick(0, 2)];
      auto& v = values[target];
      for (std::size_t i = 0; i < configs.size(); ++i) v.push_back(pick(0, 9) == 0 ? -1.0 : 0.5 * pick(0, 200));
    }
    const auto before = values;
    const std::size_t at_once = std::vector<std::size_t>{1, 3, 50, kMonotoneAnsweredAtOnce}[trial % 4];
    // With readings, configurations are a network's at their readings, answered at them; without,
    // whatever readings come with a configuration do not change its answer.
    const bool readings = by_readings && !tel.empty();
    const auto g = [&](const Config& c, const Telemetry& t) { return f(c, readings ? t : Telemetry{}); };
    std::set<std::string> answered, asked_keys;  // every configuration answered at most once, never one asked
    for (std::size_t i = 0; i < configs.size(); ++i)
      asked_keys.insert(config_key(configs[i]) + (readings ? std::to_string(tel[i].avg_sm_util.value_or(-1)) : ""));
    const Answerer answer = [&](const std::vector<Config>& cs, const std::vector<Telemetry>& ts) {
      EXPECT_EQ(ts.size(), tel.empty() ? 0u : cs.size());
      // A chunk: below the size asked for until its last network, which adds at most its own.
      EXPECT_LT(cs.size(), at_once + configs.size() * (resolutions.size() + 1) * (batches.size() + 1));
      std::map<std::string, std::vector<double>> out;
      for (std::size_t k = 0; k < cs.size(); ++k) {
        const Telemetry t = ts.empty() ? Telemetry{} : ts[k];
        const std::string key = config_key(cs[k]) + (readings ? std::to_string(t.avg_sm_util.value_or(-1)) : "");
        EXPECT_TRUE(answered.insert(key).second) << key;
        EXPECT_FALSE(asked_keys.count(key)) << key;
        for (const auto& [target, knobs] : held) out[target].push_back(g(cs[k], t));
      }
      return out;
    };
    const TrainedLevels levels{resolutions, batches, {}, {}};
    hold_monotone(configs, tel, readings, held, levels, values, answer, at_once);
    for (const auto& [target, knobs] : held)
      EXPECT_EQ(values.at(target), held_by_definition(configs, tel, readings, knobs, levels, before.at(target), g))
          << "trial " << trial << " target " << target;
  }
}

// Along depth and width the answers below are the smaller networks' at the configuration's
// resolution and batch, each as held along batch and resolution: a network past the trained widths
// (0.05) answering less memory at depth 50 than at depth 18 is held at depth 18's.
TEST(MonotoneKnobs, AcrossNetworksEachSmallerNetworkCountsAsHeldWithinItself) {
  const TrainedLevels levels{{32}, {1, 2}, {{Family::basic, {18, 34, 50}}}, {0.25, 1.0}};
  const auto at = [](int depth, int b) { return Config{Family::basic, depth, 0.05, 32, b, Precision::fp32}; };
  // Asked: depth 18 at batch 1, depth 50 at batches 1 and 2. Depth 34 and depth 18 at batch 2 are
  // answered: depth 18 at batch 2 answers less (8) than depth 18 at batch 1 (10), so held it reads 10,
  // which is what depth 50 at batch 2 is held at (9.75 held within its own network alone).
  std::vector<Config> asked = {at(18, 1), at(50, 1), at(50, 2)};
  std::map<std::string, std::vector<double>> values = {{"peak_memory_mb", {10, 9.75, 9.5}}, {"latency_ms", {3, 1, 2}}};
  std::vector<std::string> seen;
  const Answerer answer = [&](const std::vector<Config>& cs, const std::vector<Telemetry>&) {
    std::map<std::string, std::vector<double>> out;
    for (const Config& c : cs) {
      seen.push_back(config_key(c));
      const double v = c.depth == 34 ? 9.0 : c.batch == 2 ? 8.0 : 10.0;
      out["peak_memory_mb"].push_back(v);
      out["latency_ms"].push_back(1.0);
    }
    return out;
  };
  hold_monotone(asked, {}, false, {{"peak_memory_mb", {"batch", "depth", "width"}}, {"latency_ms", {"batch"}}}, levels,
                values, answer);
  EXPECT_EQ(values.at("peak_memory_mb"), (std::vector<double>{10, 10, 10}));
  EXPECT_EQ(values.at("latency_ms"), (std::vector<double>{3, 1, 2}));  // along batch only: depth 18's 3 is not below
  // No width below 0.05 was trained, so only smaller depths were answered: 34 at both batches, 18 at
  // batch 2, and 18 at batch 1 again, as the configuration below 18 at batch 2 in its own network.
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  EXPECT_EQ(seen.size(), 4u);
  for (const auto& k : seen) EXPECT_EQ(k.find("basic-50"), std::string::npos) << k;
  // A configuration that answers no cost (0) is not raised; one above it is raised past the 0 to
  // depth 34's 9.
  std::map<std::string, std::vector<double>> none = {{"peak_memory_mb", {0, 8, 0}}};
  hold_monotone(asked, {}, false, {{"peak_memory_mb", {"depth"}}}, levels, none, answer);
  EXPECT_EQ(none.at("peak_memory_mb"), (std::vector<double>{0, 9, 0}));
}

// A smaller network counts by the largest answer at or below it within its own network, whatever
// its own: basic-18 at batch 2 answering 0 (no cost any device has) still leaves basic-18 at batch 1's
// 7 below basic-34 at batch 2 (a review: the hold answered 5, its own).
TEST(MonotoneKnobs, ASmallerNetworkWithoutACostStillCountsByWhatLiesBelowIt) {
  const TrainedLevels levels{{32}, {1}, {{Family::basic, {18}}}, {0.5}};
  const auto at = [](int depth, int b) { return Config{Family::basic, depth, 0.5, 32, b, Precision::fp32}; };
  const Answerer answer = [&](const std::vector<Config>& cs, const std::vector<Telemetry>&) {
    std::map<std::string, std::vector<double>> out;
    for (const Config& c : cs) out["latency_ms"].push_back(c.depth == 34 ? 1.0 : c.batch == 2 ? 0.0 : 7.0);
    return out;
  };
  for (const double own_below : {0.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    // Asked alone: every smaller configuration answered.
    std::map<std::string, std::vector<double>> alone = {{"latency_ms", {5}}};
    hold_monotone({at(34, 2)}, {}, false, {{"latency_ms", {"batch", "depth"}}}, levels, alone, answer);
    EXPECT_EQ(alone.at("latency_ms"), std::vector<double>{7});
    // Asked with basic-18 at batch 2, which answers 0, NaN or infinity: the same 7.
    std::map<std::string, std::vector<double>> with = {{"latency_ms", {5, own_below}}};
    hold_monotone({at(34, 2), at(18, 2)}, {}, false, {{"latency_ms", {"batch", "depth"}}}, levels, with, answer);
    EXPECT_EQ(with.at("latency_ms")[0], 7) << own_below;
    EXPECT_EQ(std::isnan(with.at("latency_ms")[1]), std::isnan(own_below));  // never raised
    if (!std::isnan(own_below)) {
      EXPECT_EQ(with.at("latency_ms")[1], own_below);
    }
  }
}

// The two steps together are the definition, configuration by configuration: a configuration
// answering a positive cost is raised to the largest finite answer of configs_below, the whole
// lattice of four knobs below it; one answering none is left as it is. Random groups, knobs, levels,
// readings, holes (0, NaN, infinity) and chunk sizes; every configuration asked answers as the
// answerer would.
TEST(MonotoneKnobs, TheHoldAlongAllFourKnobsIsTheDefinition) {
  std::mt19937 rng(20261208);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const auto f = [](const Config& c, const Telemetry& t) {
    const int h = (c.resolution * 7 + c.batch * 13 + c.depth * 3 + static_cast<int>(c.width * 8)) % 23;
    if (h == 3) return std::nan("");
    if (h == 5) return std::numeric_limits<double>::infinity();
    if (h == 7) return 0.0;
    return 0.001 * c.resolution * c.batch * c.depth * c.width + h + t.avg_sm_util.value_or(0.0);
  };
  const std::vector<double> width_choices = {0.25, 0.5, 0.75, 1.0, 2.0};
  for (int trial = 0; trial < 60; ++trial) {
    TrainedLevels levels;
    for (int k = pick(1, 4); k-- > 0;) levels.resolutions.insert(32 * pick(1, 5));
    for (int k = pick(1, 4); k-- > 0;) levels.batches.insert(pick(1, 16));
    for (int k = pick(1, 6); k-- > 0;) levels.depths[pick(0, 1) ? Family::basic : Family::bottleneck].insert(8 * pick(1, 8) + 2);
    for (int k = pick(1, 4); k-- > 0;) levels.widths.insert(width_choices[pick(0, 4)]);
    const auto any_of = [&](const auto& s) { return *std::next(s.begin(), pick(0, int(s.size()) - 1)); };
    const bool by_readings = trial % 2 == 0;
    std::vector<Config> configs;
    std::vector<Telemetry> tel;
    for (int k = pick(1, 40); k-- > 0;) {
      Config c{pick(0, 1) ? Family::basic : Family::bottleneck, 0, 0, 0, 0, pick(0, 1) ? Precision::fp32 : Precision::bf16};
      const auto& depths = levels.depths_of(c.family);  // a family may have none trained
      c.depth = pick(0, 2) && !depths.empty() ? any_of(depths) : 8 * pick(1, 9);
      c.width = pick(0, 2) ? any_of(levels.widths) : 0.05 * pick(1, 50);
      c.resolution = pick(0, 2) ? any_of(levels.resolutions) : 16 * pick(2, 12);
      c.batch = pick(0, 2) ? any_of(levels.batches) : pick(1, 20);
      configs.push_back(c);
      tel.push_back(Telemetry{pick(0, 3) ? std::optional<double>(10.0 * pick(0, 1)) : std::nullopt, std::nullopt});
    }
    if (trial % 4 == 1) tel.clear();
    const bool readings = by_readings && !tel.empty();
    const auto t_of = [&](std::size_t i) { return readings ? tel[i] : Telemetry{}; };
    std::map<std::string, std::vector<std::string>> held;
    for (const char* target : {"peak_memory_mb", "latency_ms"}) {
      std::vector<std::string> knobs;
      for (const auto& k : kMonotoneKnobCandidates)
        if (pick(0, 1)) knobs.push_back(k);
      if (!knobs.empty()) held[target] = knobs;
    }
    std::map<std::string, std::vector<double>> values;
    for (const auto& [target, knobs] : held)
      for (std::size_t i = 0; i < configs.size(); ++i) values[target].push_back(f(configs[i], t_of(i)));
    const std::size_t at_once = std::vector<std::size_t>{1, 3, 50, kMonotoneAnsweredAtOnce}[trial % 4];
    const Answerer answer = [&](const std::vector<Config>& cs, const std::vector<Telemetry>& ts) {
      EXPECT_EQ(ts.size(), tel.empty() ? 0u : cs.size());
      std::map<std::string, std::vector<double>> out;
      for (std::size_t k = 0; k < cs.size(); ++k)
        for (const auto& [target, knobs] : held)
          out[target].push_back(f(cs[k], readings ? ts[k] : Telemetry{}));
      return out;
    };
    hold_monotone(configs, tel, readings, held, levels, values, answer, at_once);
    const auto finite = [](double v) { return std::isfinite(v) ? v : -std::numeric_limits<double>::infinity(); };
    for (const auto& [target, knobs] : held) {
      for (std::size_t i = 0; i < configs.size(); ++i) {
        double want = f(configs[i], t_of(i));
        if (want > 0)
          for (const Config& k : configs_below(configs[i], knobs, levels)) want = std::max(want, finite(f(k, t_of(i))));
        const double got = values.at(target)[i];
        EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want)))
            << "trial " << trial << " " << target << " " << config_key(configs[i]) << ": " << got << " want " << want;
      }
    }
  }
}

TEST(MonotoneKnobs, OnlyWhatTrainingWritesIsValid) {
  EXPECT_TRUE(valid_monotone_knobs({"batch", "resolution"}));
  EXPECT_TRUE(valid_monotone_knobs({"resolution"}));
  EXPECT_TRUE(valid_monotone_knobs({"batch", "resolution", "depth", "width"}));
  EXPECT_TRUE(valid_monotone_knobs({"depth"}));
  EXPECT_TRUE(valid_monotone_knobs({"batch", "width"}));
  EXPECT_FALSE(valid_monotone_knobs({"resolution", "batch"}));
  EXPECT_FALSE(valid_monotone_knobs({"width", "depth"}));
  EXPECT_FALSE(valid_monotone_knobs({"batch", "batch"}));
  EXPECT_FALSE(valid_monotone_knobs({"family"}));
  EXPECT_FALSE(valid_monotone_knobs({"precision"}));
}

}  // namespace
}  // namespace carb
