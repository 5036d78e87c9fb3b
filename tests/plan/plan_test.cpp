// carb plan's library: the selection never repeats a measured or planned configuration, keeps to
// its budget, is reproducible under a seed, fills the space without a model, and refuses options
// that cannot work.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "analysis/synthetic_datasets.hpp"
#include "carb/error.hpp"
#include "carb/plan.hpp"
#include "carb/network_spec.hpp"
#include "carb/training.hpp"
#include "plan/config_space.hpp"
#include "screen/screen_test_util.hpp"

namespace carb {
namespace {

// Candidates around the synthetic grid the test model trained on: its 96 configurations and
// 240 more between and beyond them (other depths, widths, resolutions and batches).
std::vector<Config> candidates() {
  std::vector<Config> out;
  for (int d : {10, 18, 26, 34})
    for (double w : {0.5, 0.75, 1.0})
      for (int r : {32, 48, 64})
        for (int b : {1, 8, 32, 128})
          for (Precision p : {Precision::fp32, Precision::fp16}) out.push_back({Family::basic, d, w, r, b, p});
  return out;
}

const CarbModel& model() { return testing::synthetic_source_model(); }

PlanOptions options(PlanStrategy s, std::optional<std::size_t> count, std::optional<double> budget = std::nullopt) {
  PlanOptions o;
  o.strategy = s;
  o.count = count;
  o.budget_s = budget;
  return o;
}

const PlanStrategy kAll[] = {PlanStrategy::uncertainty, PlanStrategy::uncertainty_per_cost,
                             PlanStrategy::space_filling, PlanStrategy::random};

TEST(Plan, NeverRepeatsAMeasuredOrPlannedConfiguration) {
  auto cands = candidates();
  cands.insert(cands.end(), cands.begin(), cands.begin() + 50);  // offered twice: counted once
  const std::vector<Config> measured(cands.begin() + 100, cands.begin() + 140);
  for (PlanStrategy s : kAll) {
    const Plan p = make_plan(cands, measured, &model(), options(s, 1000));
    std::set<std::string> keys, gone;
    for (const Config& c : measured) gone.insert(config_key(c));
    for (const auto& r : p.rows) {
      EXPECT_TRUE(keys.insert(config_key(r.config)).second) << to_string(s) << " repeats " << config_key(r.config);
      EXPECT_FALSE(gone.count(config_key(r.config))) << to_string(s) << " plans measured " << config_key(r.config);
      EXPECT_FALSE(model().trained_on(r.config)) << to_string(s) << " plans trained-on " << config_key(r.config);
    }
    EXPECT_EQ(p.candidates, candidates().size());
    EXPECT_EQ(p.rows.size() + p.excluded, p.candidates) << to_string(s) << ": every open candidate is planned";
    EXPECT_GT(p.excluded, measured.size()) << "the model's own training rows are excluded too";
  }
  // Thirteenth hostile pass: measured rows written with another spelling of the width (0.5 as
  // 0.5000001: the same channels) were planned again.
  std::vector<Config> respelled = measured;
  for (Config& c : respelled) c.width += 1e-7;
  const Plan a = make_plan(cands, measured, &model(), options(PlanStrategy::random, 1000));
  const Plan b = make_plan(cands, respelled, &model(), options(PlanStrategy::random, 1000));
  EXPECT_EQ(b.excluded, a.excluded);
  EXPECT_EQ(b.rows.size(), a.rows.size());
}

// What the model's device could not hold is never planned: measuring it spends a lease's seconds
// on an out-of-memory row that teaches no cost.
TEST(Plan, WhatWouldNotFitTheDeviceIsNeverPlanned) {
  const auto cands = candidates();
  // A model of its own to set limits on (never freed, as the shared ones).
  const auto dir = std::filesystem::temp_directory_path() / ("carb_plan_device_" + std::to_string(::getpid()));
  model().save(dir, true);
  CarbModel& m = *new CarbModel(CarbModel::load(dir));
  std::filesystem::remove_all(dir);
  const Plan all = make_plan(cands, {}, &m, options(PlanStrategy::random, 1000));
  std::vector<double> memory;
  for (const auto& r : all.rows) memory.push_back(m.predict_columns({r.config}).at("peak_memory_mb").at(0));
  std::sort(memory.begin(), memory.end());
  const double cap = memory[memory.size() / 2];
  m.set_device_limits({cap, std::nullopt});
  for (PlanStrategy s : kAll) {
    const Plan p = make_plan(cands, {}, &m, options(s, 1000));
    EXPECT_EQ(p.over_device_memory, static_cast<std::size_t>(std::count_if(memory.begin(), memory.end(),
                                                                           [&](double v) { return v > cap; })));
    EXPECT_GT(p.over_device_memory, 0u);
    EXPECT_EQ(p.rows.size() + p.excluded + p.over_device_memory, p.candidates) << to_string(s);
    for (const auto& r : p.rows) EXPECT_LE(m.predict_columns({r.config}).at("peak_memory_mb").at(0), cap);
    EXPECT_EQ(p.to_json()["over_device_memory"], p.over_device_memory);
  }
}

TEST(Plan, KeepsToTheBudgetAndLeavesNoAffordableRowBehind) {
  const auto cands = candidates();
  for (PlanStrategy s : kAll) {
    const double budget = 40;
    const Plan p = make_plan(cands, {}, &model(), options(s, std::nullopt, budget));
    ASSERT_FALSE(p.rows.empty());
    double sum = 0;
    std::set<std::string> planned;
    for (const auto& r : p.rows) sum += r.cost_s, planned.insert(config_key(r.config));
    EXPECT_LE(sum, budget) << to_string(s);
    EXPECT_NEAR(p.total_cost_s, sum, 1e-9);
    // Greedy with skipping: no candidate left out would still have fitted.
    const Plan all = make_plan(cands, {}, &model(), options(PlanStrategy::random, 100000));
    for (const auto& r : all.rows)
      if (!planned.count(config_key(r.config))) {
        EXPECT_GT(sum + r.cost_s, budget) << config_key(r.config);
      }
  }
}

// --build-s: a row of an architecture the plan has not yet planned also pays for building its
// network (once per architecture, as profile --group-architectures measures a plan). The budget
// holds with the builds counted, each architecture's first planned row carries its build, and no
// candidate left out would still have fitted, its build counted unless its network is planned.
TEST(Plan, BuildsAreCountedOncePerArchitectureAgainstTheBudget) {
  const auto cands = candidates();
  const double build = 3, budget = 60;
  auto row_time = [&](const Config& c) {  // the row's own predicted time, as make_plan prices it
    const Plan one = make_plan({c}, {}, &model(), options(PlanStrategy::random, 1));
    return one.rows.at(0).cost_s;
  };

  for (PlanStrategy s : kAll) {
    PlanOptions o = options(s, std::nullopt, budget);
    o.build_s = build;
    const Plan p = make_plan(cands, {}, &model(), o);
    ASSERT_FALSE(p.rows.empty()) << to_string(s);
    double sum = 0;
    std::set<std::string> archs;
    for (const auto& r : p.rows) {
      const bool first = archs.insert(architecture_key(r.config)).second;
      EXPECT_NEAR(r.cost_s, row_time(r.config) + (first ? build : 0.0), 1e-9) << to_string(s) << " " << config_key(r.config);
      sum += r.cost_s;
    }
    EXPECT_LE(sum, budget) << to_string(s);
    EXPECT_NEAR(p.total_cost_s, sum, 1e-9);
    EXPECT_GT(archs.size(), 1u) << to_string(s);
    std::set<std::string> planned;
    for (const auto& r : p.rows) planned.insert(config_key(r.config));
    for (const auto& r : make_plan(cands, {}, &model(), options(PlanStrategy::random, 100000)).rows)
      if (!planned.count(config_key(r.config))) {
        EXPECT_GT(sum + r.cost_s + (archs.count(architecture_key(r.config)) ? 0.0 : build), budget)
            << to_string(s) << " left out " << config_key(r.config);
      }
  }
  PlanOptions bad = options(PlanStrategy::random, 5);
  bad.build_s = 3;  // no model: nothing to add a build to
  EXPECT_THROW(make_plan(cands, {}, nullptr, bad), InputError);
  bad = options(PlanStrategy::random, std::nullopt, 10.0);
  bad.build_s = -1;
  EXPECT_THROW(make_plan(cands, {}, &model(), bad), InputError);
}

// Thirty-fifth hostile pass: a raw-target linear model predicting a negative latency gave a cost of
// NaN; `spent + NaN > budget` is false, the row was planned, and every later check passed: 2,241 rows
// planned for a 60 s budget, 6,979 s of them. Such rows are passed over under a budget, and counted.
TEST(Plan, ARowWhoseTimeCannotBePredictedIsNotPlannedUnderABudget) {
  const CarbModel& m = testing::falling_linear_model();
  const std::vector<Config> cands = testing::falling_model_configs();
  const auto lat = m.predict_columns(cands).at("latency_ms");
  ASSERT_LE(lat[2], 0) << "the test needs a non-positive prediction";
  const Plan p = make_plan(cands, {}, &m, options(PlanStrategy::random, std::nullopt, 1e6));
  EXPECT_EQ(p.rows.size(), 2u);
  EXPECT_EQ(p.unknown_cost, 3u);
  EXPECT_TRUE(std::isfinite(p.total_cost_s));
  for (const auto& r : p.rows) EXPECT_GT(r.latency_ms, 0);
}

// Thirty-ninth hostile pass: planned by uncertainty (--spread units), candidates whose memory the
// model predicts at or below zero were neither counted nor said; their spread is that of an
// impossible value.
TEST(Plan, CandidatesWithImpossibleCostsAreCounted) {
  static const CarbModel m = [] {
    const Dataset d = testing::depth_batch_grid([](const Config& c) { return 1.0 + c.depth + c.batch; },
                                                [](const Config& c) { return 100.0 - 3 * c.depth + c.batch; });
    TrainOptions o = testing::raw_linear_options();
    o.learners = {"linear", "extra_trees"};
    o.params.n_trees = 10;
    return CarbModel::train(d, o);
  }();
  const auto cands = testing::falling_model_configs();  // depths 12 and 16 in the data, 50 to 82 past it
  const auto mem = m.predict_columns(cands).at("peak_memory_mb");
  std::size_t impossible = 0;
  for (double v : mem) impossible += !(v > 0);
  ASSERT_GE(impossible, 1u) << "the test needs memory predicted at or below zero";
  ASSERT_LT(impossible, cands.size());
  PlanOptions o = options(PlanStrategy::uncertainty, 2);
  const Plan p = make_plan(cands, {}, &m, o);
  EXPECT_EQ(p.nonpositive_predictions, impossible);
  std::size_t planned = 0;
  for (const auto& r : p.rows) {
    const double v = m.predict_columns({r.config}).at("peak_memory_mb").at(0);
    EXPECT_EQ(r.nonpositive, !(v > 0));
    planned += !(v > 0);
  }
  EXPECT_EQ(p.planned_nonpositive(), planned);
  EXPECT_EQ(p.to_json()["nonpositive_predictions"], impossible);
  EXPECT_EQ(p.to_json()["planned_nonpositive"], planned);
  // A model whose every cost is positive counts none.
  EXPECT_EQ(make_plan(candidates(), {}, &model(), options(PlanStrategy::uncertainty, 5)).nonpositive_predictions, 0u);
}

// Thirty-sixth hostile pass: a plan "by uncertainty" from a one-learner model scored every row 0 and
// was the random order; under --spread log a member's cost at or below zero (no log) was clamped to
// 1e-300 and every such row got the same huge spread.
TEST(Plan, AnUncertaintyPlanNeedsMembersThatCanDisagreeAndLogsOfPositiveCosts) {
  const CarbModel& one = testing::falling_linear_model();  // one learner, no forest
  const auto cands = testing::falling_model_configs();
  for (PlanStrategy s : {PlanStrategy::uncertainty, PlanStrategy::uncertainty_per_cost}) {
    try {
      (void)make_plan(cands, {}, &one, options(s, 2));
      ADD_FAILURE() << to_string(s) << " planned from a model with nothing to disagree";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("learners cannot disagree"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(make_plan(cands, {}, &one, options(PlanStrategy::random, 2)).rows.size(), 2u);
  // Thirty-seventh hostile pass: planned by count, rows without a measuring time were counted nowhere.
  const Plan all = make_plan(cands, {}, &one, options(PlanStrategy::random, 5));
  EXPECT_EQ(all.planned_unknown_cost(), 3u);
  EXPECT_EQ(all.to_json()["planned_unknown_cost"], 3);
  EXPECT_EQ(make_plan(cands, {}, nullptr, options(PlanStrategy::random, 5)).planned_unknown_cost(), 0u);
  PlanOptions log = options(PlanStrategy::uncertainty, 3);
  log.spread = SpreadSpace::log;
  try {
    (void)model_uncertainty(one, cands, SpreadSpace::log);
    ADD_FAILURE() << "a log spread of costs at or below zero";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--spread log needs positive predictions"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("for 3 of 5 candidates"), std::string::npos) << e.what();
  }
  bool disagree = true;
  (void)model_uncertainty(one, cands, SpreadSpace::units, nullptr, &disagree);
  EXPECT_FALSE(disagree);
  (void)model_uncertainty(model(), candidates(), SpreadSpace::units, nullptr, &disagree);
  EXPECT_TRUE(disagree);
}

// A hostile tester: one candidate left (the others trained on) was planned with uncertainty 0, its
// spread measured against a variance over the candidates that one has not.
TEST(Plan, ALoneCandidateHasTheSpreadOfItsOwnPrediction) {
  const auto cands = candidates();
  for (const SpreadSpace space : {SpreadSpace::units, SpreadSpace::log}) {
    const auto lone = model_uncertainty(model(), {cands.front()}, space);
    ASSERT_EQ(lone.size(), 1u);
    EXPECT_GT(lone[0], 0) << (space == SpreadSpace::log ? "log" : "units");
  }
}

TEST(Plan, SameSeedSamePlanAndTheSeedMatters) {
  const auto cands = candidates();
  auto keys = [](const Plan& p) {
    std::vector<std::string> k;
    for (const auto& r : p.rows) k.push_back(config_key(r.config));
    return k;
  };
  for (PlanStrategy s : kAll) {
    PlanOptions o = options(s, 30);
    EXPECT_EQ(keys(make_plan(cands, {}, &model(), o)), keys(make_plan(cands, {}, &model(), o))) << to_string(s);
  }
  PlanOptions a = options(PlanStrategy::random, 30), b = a;
  b.seed = a.seed + 1;
  EXPECT_NE(keys(make_plan(cands, {}, &model(), a)), keys(make_plan(cands, {}, &model(), b)));
}

// Progress for a caller that shows it (`carb plan` on a terminal) and may stop the choosing by
// throwing from it (a signal): one call per row chosen, with the most there can be.
TEST(Plan, ProgressIsToldOfEveryRowAndAThrowStopsTheChoosing) {
  const auto cands = candidates();
  std::vector<std::pair<std::size_t, std::size_t>> told;
  PlanOptions o = options(PlanStrategy::space_filling, 12);
  o.progress = [&](std::size_t planned, std::size_t wanted) { told.emplace_back(planned, wanted); };
  const Plan p = make_plan(cands, {}, nullptr, o);
  ASSERT_EQ(p.rows.size(), 12u);
  ASSERT_EQ(told.size(), 12u);
  for (std::size_t i = 0; i < told.size(); ++i) EXPECT_EQ(told[i], std::make_pair(i + 1, std::size_t{12}));
  // More rows asked for than there are candidates: the most there can be is the candidates.
  told.clear();
  o.count = cands.size() + 100;
  EXPECT_EQ(make_plan(cands, {}, nullptr, o).rows.size(), cands.size());
  ASSERT_FALSE(told.empty());
  EXPECT_EQ(told.back(), std::make_pair(cands.size(), cands.size()));
  o.progress = [](std::size_t planned, std::size_t) {
    if (planned == 3) throw std::runtime_error("stop");
  };
  EXPECT_THROW(make_plan(cands, {}, nullptr, o), std::runtime_error);
}

// More candidates than the model predicts at a time (kScoreChunk): 11,264 basic networks.
std::vector<Config> many_candidates() {
  std::vector<Config> out;
  for (int d = 10; d <= 50; d += 4)
    for (double w = 0.25; w <= 2.0; w += 0.25)
      for (int r : {32, 40, 48, 56, 64, 72, 80, 96})
        for (int b : {1, 2, 4, 8, 16, 32, 64, 128})
          for (Precision p : {Precision::fp32, Precision::fp16}) out.push_back({Family::basic, d, w, r, b, p});
  return out;
}

// Scoring the candidates before the first row is chosen was one call deaf to Ctrl-C (a minute for
// 100,000 candidates): the caller now hears after each chunk, and a throw stops the plan there.
TEST(Plan, ScoringIsToldOfEveryChunkAndAThrowStopsIt) {
  const auto cands = many_candidates();
  ASSERT_GT(cands.size(), 2 * kScoreChunk);
  std::size_t open = 0;
  for (const Config& c : cands) open += !model().trained_on(c);
  // A device's memory adds the fit check's pass over the candidates (a model of its own to set it on).
  const auto dir = std::filesystem::temp_directory_path() / ("carb_plan_chunks_" + std::to_string(::getpid()));
  model().save(dir, true);
  CarbModel with_device = CarbModel::load(dir);
  std::filesystem::remove_all(dir);
  with_device.set_device_limits(DeviceLimits{1e9, std::nullopt});
  using Told = std::tuple<std::string, std::size_t, std::size_t>;
  std::vector<Told> told;
  PlanOptions o = options(PlanStrategy::uncertainty, 5);
  o.scoring = [&](const char* pass, std::size_t predicted, std::size_t of) { told.emplace_back(pass, predicted, of); };
  const Plan p = make_plan(cands, {}, &with_device, o);
  EXPECT_EQ(p.rows.size(), 5u);
  const auto pass = [&](const std::string& name) {
    return std::vector<Told>{{name, kScoreChunk, open}, {name, 2 * kScoreChunk, open}, {name, open, open}};
  };
  std::vector<Told> both = pass("device memory");
  for (const Told& t : pass("uncertainty")) both.push_back(t);
  EXPECT_EQ(told, both);
  // The same plan as without the device's memory (nothing was left out), told once per chunk.
  told.clear();
  const Plan q = make_plan(cands, {}, &model(), o);
  EXPECT_EQ(told, pass("uncertainty"));
  ASSERT_EQ(q.rows.size(), p.rows.size());
  for (std::size_t i = 0; i < p.rows.size(); ++i) EXPECT_EQ(config_key(q.rows[i].config), config_key(p.rows[i].config));
  o.scoring = [](const char*, std::size_t predicted, std::size_t) {
    if (predicted == kScoreChunk) throw std::runtime_error("stop");
  };
  EXPECT_THROW(make_plan(cands, {}, &model(), o), std::runtime_error);
}

// A configuration's uncertainty does not depend on which chunk it was predicted in.
TEST(Plan, UncertaintyDoesNotDependOnTheChunking) {
  auto cands = many_candidates();
  std::vector<double> lat;
  const auto forward = model_uncertainty(model(), cands, SpreadSpace::units, &lat);
  EXPECT_EQ(lat, model().predict_columns(cands).at("latency_ms"));
  std::vector<Config> reversed(cands.rbegin(), cands.rend());
  const auto backward = model_uncertainty(model(), reversed, SpreadSpace::units);
  ASSERT_EQ(forward.size(), backward.size());
  for (std::size_t i = 0; i < forward.size(); ++i) ASSERT_NEAR(forward[i], backward[backward.size() - 1 - i], 1e-9 * (1 + forward[i])) << i;
}

TEST(Plan, UncertaintyPicksWhatTheModelDisagreesAboutMost) {
  PlanOptions o = options(PlanStrategy::uncertainty, 1);
  o.diversity = 0;
  const Plan p = make_plan(candidates(), {}, &model(), o);
  ASSERT_EQ(p.rows.size(), 1u);
  std::vector<Config> open;
  for (const Config& c : candidates())
    if (!model().trained_on(c)) open.push_back(c);
  const auto u = model_uncertainty(model(), open, SpreadSpace::units);
  double top = 0;
  for (double x : u) top = std::max(top, x);
  EXPECT_GT(top, 0);
  EXPECT_DOUBLE_EQ(p.rows[0].uncertainty, top);
  // Per cost prefers cheap rows: its first pick costs no more than the uncertainty pick.
  o.strategy = PlanStrategy::uncertainty_per_cost;
  const Plan q = make_plan(candidates(), {}, &model(), o);
  EXPECT_LE(q.rows[0].cost_s, p.rows[0].cost_s);
}

TEST(Plan, SpaceFillingWithoutAModelSpreadsOutMoreThanRandom) {
  const auto cands = candidates();
  auto min_gap = [&](const Plan& p) {
    std::vector<Config> all = cands;
    const plan_detail::ConfigSpace space(all);
    double gap = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < p.rows.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        gap = std::min(gap, plan_detail::ConfigSpace::distance(space.point(p.rows[i].config),
                                                               space.point(p.rows[j].config)));
    return gap;
  };
  const Plan fill = make_plan(cands, {}, nullptr, options(PlanStrategy::space_filling, 20));
  const Plan rnd = make_plan(cands, {}, nullptr, options(PlanStrategy::random, 20));
  ASSERT_EQ(fill.rows.size(), 20u);
  EXPECT_GT(min_gap(fill), min_gap(rnd));
  EXPECT_TRUE(std::isnan(fill.rows[0].cost_s)) << "no model, no cost";
  EXPECT_TRUE(std::isnan(fill.total_cost_s));
}

// Stratified: each dimension's levels in the candidates' proportions, so a small start is neither
// a corner set (maximin) nor a lucky draw (random): the most over-represented level of any
// dimension is at most one row above its proportional share.
TEST(Plan, StratifiedFollowsTheCandidatesProportionsInEveryDimension) {
  const auto cands = candidates();
  const Plan s = make_plan(cands, {}, nullptr, options(PlanStrategy::stratified, 24));
  ASSERT_EQ(s.rows.size(), 24u);
  auto worst_excess = [&](const Plan& p) {
    double worst = 0;
    const auto dims = {+[](const Config& c) { return double(c.depth); }, +[](const Config& c) { return c.width; },
                       +[](const Config& c) { return double(c.resolution); },
                       +[](const Config& c) { return double(c.batch); },
                       +[](const Config& c) { return double(static_cast<int>(c.precision)); }};
    for (auto f : dims) {
      std::map<double, double> share, taken;
      for (const Config& c : cands) share[f(c)] += 1.0 / double(cands.size());
      for (const auto& r : p.rows) taken[f(r.config)] += 1;
      for (const auto& [level, w] : share) worst = std::max(worst, taken[level] - w * double(p.rows.size()));
    }
    return worst;
  };
  EXPECT_LE(worst_excess(s), 1.0 + 1e-9);
  // Measured rows count as taken: a plan after them fills the levels they left short.
  std::vector<Config> measured;
  for (const Config& c : cands)
    if (c.batch == cands.front().batch) measured.push_back(c);
  const Plan after = make_plan(cands, measured, nullptr, options(PlanStrategy::stratified, 5));
  ASSERT_FALSE(after.rows.empty());  // a test audit: or the loop checks nothing
  for (const auto& r : after.rows) EXPECT_NE(r.config.batch, cands.front().batch) << config_key(r.config);
  EXPECT_EQ(config_key(make_plan(cands, {}, nullptr, options(PlanStrategy::stratified, 24)).rows.back().config),
            config_key(s.rows.back().config));  // deterministic
}

TEST(Plan, RefusesOptionsThatCannotWork) {
  const auto cands = candidates();
  EXPECT_THROW(make_plan(cands, {}, &model(), options(PlanStrategy::uncertainty, std::nullopt)), InputError);
  EXPECT_THROW(make_plan(cands, {}, &model(), options(PlanStrategy::uncertainty, 0)), InputError);
  for (double bad : {0.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()})
    EXPECT_THROW(make_plan(cands, {}, &model(), options(PlanStrategy::uncertainty, std::nullopt, bad)), InputError);
  EXPECT_THROW(make_plan(cands, {}, nullptr, options(PlanStrategy::uncertainty, 5)), InputError);
  EXPECT_THROW(make_plan(cands, {}, nullptr, options(PlanStrategy::uncertainty_per_cost, 5)), InputError);
  EXPECT_THROW(make_plan(cands, {}, nullptr, options(PlanStrategy::space_filling, 5, 10.0)), InputError);
  PlanOptions o = options(PlanStrategy::space_filling, 5);
  o.diversity = -1;
  EXPECT_THROW(make_plan(cands, {}, nullptr, o), InputError);
  // Twenty-fourth hostile pass: --diversity and --spread changed nothing under the strategies that
  // do not rank by the model's uncertainty, without a word.
  for (PlanStrategy s : {PlanStrategy::random, PlanStrategy::stratified, PlanStrategy::space_filling}) {
    PlanOptions d = options(s, 5);
    d.diversity = 5;
    EXPECT_THROW(make_plan(cands, {}, nullptr, d), InputError) << to_string(s);
    PlanOptions l = options(s, 5);
    l.spread = SpreadSpace::log;
    EXPECT_THROW(make_plan(cands, {}, nullptr, l), InputError) << to_string(s);
    EXPECT_NO_THROW(make_plan(cands, {}, nullptr, options(s, 5))) << to_string(s);
  }
  // Seventy-first hostile pass: a strategy cast from a number planned with every score 1; a backend
  // carb cannot price was priced as the cpu's.
  EXPECT_THROW(make_plan(cands, {}, nullptr, options(static_cast<PlanStrategy>(42), 5)), InputError);
  PlanOptions tpu = options(PlanStrategy::uncertainty, 5);
  tpu.backend = "tpu";
  EXPECT_THROW(make_plan(cands, {}, &model(), tpu), InputError);
  EXPECT_THROW(parse_plan_strategy("greedy"), InputError);
  EXPECT_THROW(parse_spread_space("linear"), InputError);
  // A spread cast from a number planned as if it were one (a C++ tester).
  PlanOptions spread = options(PlanStrategy::uncertainty, 5);
  spread.spread = static_cast<SpreadSpace>(42);
  EXPECT_THROW(make_plan(cands, {}, &model(), spread), InputError);
}

TEST(MeasureSeconds, CountsWarmupPassesWindowsAndCooldown) {
  Protocol p;  // warm-up 10, 100 passes, cooldown 1 s
  EXPECT_NEAR(measure_seconds(10, p, "cpu"), 0.01 * 110 + 1.0, 1e-12);
  // The timing limit stops after max_timed_s, but never before min_passes.
  p.max_timed_s = 0.5, p.min_passes = 10;
  EXPECT_NEAR(measure_seconds(10, p, "cpu"), 0.01 * (10 + 50) + 1.0, 1e-12);
  EXPECT_NEAR(measure_seconds(1000, p, "cpu"), 1.0 * (10 + 10) + 1.0, 1e-12);
  // The reference network runs before every timed pass; cuda adds its energy and utilization windows.
  p.reference = true;
  EXPECT_NEAR(measure_seconds(10, p, "cpu", 5), 0.01 * 10 + 50 * 0.015 + 1.0, 1e-12);
  p.reference = false;
  // cuda: one window for latency and energy (the timed passes, extended to --min-energy-window), the
  // utilization window on its share of the rows, at least one warm-up pass.
  p.min_energy_window_s = 1.0, p.util_window_s = 2.0, p.util_sample = 1.0;
  EXPECT_NEAR(measure_seconds(10, p, "cuda"), 0.01 * 10 + 1.0 + 2.0 + 1.0, 1e-12);  // passes 0.5 s < 1 s window
  EXPECT_NEAR(measure_seconds(100, p, "cuda"), 0.1 * 10 + 0.1 * 10 + 2.0 + 1.0, 1e-12);  // 10 passes: 1 s
  EXPECT_NEAR(measure_seconds(1000, p, "cuda"), 1.0 * 10 + 1.0 * 10 + 2.0 + 1.0, 1e-12);  // passes outlast the window
  p.util_sample = 0.2, p.warmup = 0;
  EXPECT_NEAR(measure_seconds(10, p, "cuda"), 0.01 * 1 + 1.0 + 0.2 * 2.0 + 1.0, 1e-12);
  EXPECT_THROW(measure_seconds(0, p, "cpu"), InputError);
  EXPECT_THROW(measure_seconds(std::nan(""), p, "cpu"), InputError);
  EXPECT_THROW(measure_seconds(10, p, "bogus"), InputError);
  // A protocol make_plan refuses is priced by nobody (a C++ tester: -100 s, and NaN).
  Protocol bad;
  bad.max_passes = -10, bad.warmup = -5, bad.cooldown_s = -100;
  EXPECT_THROW(measure_seconds(1, bad, "cpu"), InputError);
  Protocol nan_cooldown;
  nan_cooldown.cooldown_s = std::nan("");
  EXPECT_THROW(measure_seconds(1, nan_cooldown, "cpu"), InputError);
}

TEST(MemberPredictions, TreesAverageToTheForestAndLearnersMatchTheModel) {
  const auto cands = candidates();
  for (const std::string& target : model().targets()) {
    const MemberPredictions m = model().member_predictions(cands, target);
    const TargetSummary tm = model().target_summary(target);
    ASSERT_EQ(m.learners.size(), tm.learners.size());
    ASSERT_EQ(m.trees.size(), 30u) << "the extra_trees learner's 30 trees";
    const std::size_t forest = tm.learners[0] == "extra_trees" ? 0 : 1;
    for (std::size_t i = 0; i < cands.size(); i += 17) {
      double log_mean = 0;  // trees average in the learners' (log) space
      for (const auto& t : m.trees) log_mean += std::log(t[i]) / double(m.trees.size());
      EXPECT_NEAR(std::exp(log_mean), m.learners[forest][i], 1e-3 * m.learners[forest][i]) << target;
    }
  }
  EXPECT_THROW(model().member_predictions(cands, "no_such_target"), InputError);
}

}  // namespace
}  // namespace carb
