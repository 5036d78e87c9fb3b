// make_plan: the greedy batch selection. Every candidate has a base score (the model's spread,
// per predicted second of measuring, a seeded random key, or 1 for space-filling); each pick takes
// the best score times a near-duplicate penalty (distance to the nearest measured or planned row
// over a radius, capped at 1), for space-filling the largest such distance, for stratified the
// least over-represented levels (plan/strata.hpp), then updates the distances and counts. Rows whose predicted cost would overrun the budget are passed over.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "carb/error.hpp"
#include "util/chunks.hpp"
#include "carb/model.hpp"
#include "carb/plan.hpp"
#include "carb/prediction_io.hpp"
#include "plan/config_space.hpp"
#include "plan/strata.hpp"
#include "util/join.hpp"
#include "learn/outside_as_asked.hpp"

namespace carb {
namespace {

using plan_detail::ConfigSpace;
using plan_detail::Point;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

void check_options(const PlanOptions& o, bool has_model) {
  if (!o.count && !o.budget_s) throw InputError("say how much to plan: give a count of rows or a budget in seconds");
  // Seventy-first hostile pass: a strategy cast from a number planned with every score 1, and a
  // backend of any other name was priced as the cpu's.
  if (to_string(o.strategy) == "?")
    throw InputError("strategy " + std::to_string(static_cast<int>(o.strategy)) + " is none of carb plan's strategies");
  if (o.spread != SpreadSpace::units && o.spread != SpreadSpace::log)  // as a strategy's number (a C++ tester)
    throw InputError("spread " + std::to_string(static_cast<int>(o.spread)) + " is neither units nor log");
  require_priced_backend(o.backend);
  if (o.count && *o.count == 0) throw InputError("the count of rows to plan must be at least 1");
  if (o.budget_s && !(*o.budget_s > 0 && std::isfinite(*o.budget_s)))
    throw InputError("the budget must be a positive, finite number of seconds");
  if (!(o.diversity >= 0 && std::isfinite(o.diversity))) throw InputError("diversity must be a finite number >= 0");
  const bool needs_model = o.strategy == PlanStrategy::uncertainty || o.strategy == PlanStrategy::uncertainty_per_cost;
  if (needs_model && !has_model)
    throw InputError("strategy " + to_string(o.strategy) + " needs a model (--model); without one use space-filling");
  // Twenty-fourth hostile pass: --diversity and --spread changed nothing under the other strategies,
  // without a word. They weigh the model's uncertainty, which only the uncertainty strategies rank by.
  if (!needs_model && o.diversity != PlanOptions{}.diversity)
    throw InputError("diversity spaces out the picks of the uncertainty strategies; " + to_string(o.strategy) +
                     " has its own order and would ignore it: leave it out");
  if (!needs_model && o.spread != PlanOptions{}.spread)
    throw InputError("the spread measures the model's uncertainty, which only the uncertainty strategies rank by; " +
                     to_string(o.strategy) + " would ignore it: leave it out");
  if (o.budget_s && !has_model)
    throw InputError("a budget in seconds needs a model (--model): a row's measuring time is predicted from its latency");
  if (!(o.build_s >= 0 && std::isfinite(o.build_s)))
    throw InputError("the build time of a network must be a finite number of seconds >= 0");
  if (o.build_s > 0 && !has_model)
    throw InputError("a network's build time adds to the predicted measuring time, which needs a model (--model)");
  validate(o.protocol, o.backend);
}

// Seeded keys in [0, 1) for the random order and for breaking ties: mt19937's raw output is the
// same on every platform, unlike the standard distributions.
std::vector<double> random_keys(std::size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::vector<double> k(n);
  for (double& x : k) x = double(g()) / 4294967296.0;
  return k;
}

}  // namespace

PlanStrategy parse_plan_strategy(const std::string& s) {
  for (auto st : {PlanStrategy::uncertainty, PlanStrategy::uncertainty_per_cost, PlanStrategy::space_filling,
                  PlanStrategy::stratified, PlanStrategy::random})
    if (to_string(st) == s) return st;
  throw InputError("unknown plan strategy '" + s + "' (known: " + join(plan_strategy_names()) + ")");
}

std::string to_string(PlanStrategy s) {
  switch (s) {
    case PlanStrategy::uncertainty: return "uncertainty";
    case PlanStrategy::uncertainty_per_cost: return "uncertainty-per-cost";
    case PlanStrategy::space_filling: return "space-filling";
    case PlanStrategy::stratified: return "stratified";
    case PlanStrategy::random: return "random";
  }
  return "?";
}

std::vector<std::string> plan_strategy_names() {
  return {"uncertainty", "uncertainty-per-cost", "space-filling", "stratified", "random"};
}

Plan make_plan(const std::vector<Config>& candidates, const std::vector<Config>& measured, const CarbModel* model,
               const PlanOptions& o) {
  check_options(o, model != nullptr);
  // Distinct candidates, in first-seen order; those measured (or trained on) are out.
  std::set<std::string> done, seen;
  for (const Config& c : measured) done.insert(network_key(c));  // by network: 0.251 is 0.25's
  Plan plan;
  plan.strategy = o.strategy;
  if (model) plan.platform = model->platform();
  plan.priced = model && model->has_target("latency_ms");
  plan.backend = o.backend, plan.protocol = o.protocol, plan.build_s = o.build_s;
  std::vector<Config> pool;
  for (const Config& c : candidates) {
    const std::string k = network_key(c);
    if (!seen.insert(k).second) continue;
    if (done.count(k) || (model && model->trained_on(c))) {
      ++plan.excluded;
      continue;
    }
    pool.push_back(c);
  }
  plan.candidates = seen.size();
  // What would not fit the device is not worth a lease's seconds: an out-of-memory row teaches no cost.
  if (model && !pool.empty())
    if (const auto cap = held_device_memory(*model)) {
      std::vector<Config> fits;
      detail::for_each_chunk(pool, kScoreChunk, [&](const std::vector<Config>& chunk, std::size_t end) {
        const auto memory = model->predict_columns(chunk).at("peak_memory_mb");
        for (std::size_t i = 0; i < chunk.size(); ++i)
          if (memory[i] > *cap) ++plan.over_device_memory;
          else fits.push_back(chunk[i]);
        if (o.scoring) o.scoring("device memory", end, pool.size());
      });
      pool.swap(fits);
    }

  const std::size_t n = pool.size();
  std::vector<double> unc(n, kNaN), lat(n, kNaN), cost(n, kNaN);
  std::vector<char> impossible(n, 0);
  if (model) {
    bool members_disagree = true;
    const auto scored = [&o](std::size_t predicted, std::size_t of) {
      if (o.scoring) o.scoring("uncertainty", predicted, of);
    };
    unc = model_uncertainty(*model, pool, o.spread, &lat, &members_disagree, &impossible, scored);
    plan.nonpositive_predictions = static_cast<std::size_t>(std::count(impossible.begin(), impossible.end(), 1));
    // Thirty-sixth hostile pass: with one learner and no forest nothing can disagree; every score
    // was 0 and the plan "by uncertainty" was the random order.
    const bool by_uncertainty =
        o.strategy == PlanStrategy::uncertainty || o.strategy == PlanStrategy::uncertainty_per_cost;
    if (by_uncertainty && !members_disagree && n > 0)
      throw InputError("the model's learners cannot disagree (one learner and no forest of trees), so it has no "
                       "uncertainty to rank by; train with more learners (the default three), or plan with "
                       "--strategy random, stratified or space-filling");
    if (!model->has_target("latency_ms") && o.budget_s)
      throw InputError("a budget in seconds needs a model that predicts latency_ms");
    double ref_ms = 0;
    if (o.protocol.reference && model->has_target("latency_ms"))
      ref_ms = model->predict_columns({kReferenceConfig}).at("latency_ms").at(0);
    for (std::size_t i = 0; i < n; ++i)
      if (std::isfinite(lat[i]) && lat[i] > 0) cost[i] = measure_seconds(lat[i], o.protocol, o.backend, ref_ms);
  }
  if (o.strategy == PlanStrategy::uncertainty_per_cost && !model->has_target("latency_ms"))
    throw InputError("strategy uncertainty-per-cost needs a model that predicts latency_ms");

  // Distances in the normalised space to the nearest measured row (planned ones join as picked).
  std::vector<Config> everything = pool;
  everything.insert(everything.end(), measured.begin(), measured.end());
  const ConfigSpace space(everything);
  std::vector<Point> pts(n);
  for (std::size_t i = 0; i < n; ++i) pts[i] = space.point(pool[i]);
  std::vector<double> dist(n, kInf);
  for (const Config& m : measured) {
    const Point q = space.point(m);
    for (std::size_t i = 0; i < n; ++i) dist[i] = std::min(dist[i], ConfigSpace::distance(pts[i], q));
  }
  const double radius = o.diversity * plan_detail::typical_spacing(pts);

  const std::vector<double> key = random_keys(n, o.seed);
  std::vector<double> base(n, 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (o.strategy == PlanStrategy::uncertainty) base[i] = unc[i];
    else if (o.strategy == PlanStrategy::uncertainty_per_cost) base[i] = unc[i] / cost[i];
    else if (o.strategy == PlanStrategy::random) base[i] = key[i];
    if (!std::isfinite(base[i])) base[i] = 0;
  }

  std::optional<plan_detail::Strata> strata;
  if (o.strategy == PlanStrategy::stratified) strata.emplace(pool, measured);
  std::vector<char> open(n, 1);
  double spent = 0;
  // A row of an architecture not yet planned also pays for building its network. Architectures as
  // numbers, so the selection loop below looks them up without comparing strings.
  std::vector<std::size_t> arch(n);
  std::map<std::string, std::size_t> arch_ids;
  for (std::size_t i = 0; i < n; ++i) arch[i] = arch_ids.emplace(architecture_key(pool[i]), arch_ids.size()).first->second;
  std::vector<char> built(arch_ids.size(), 0);
  auto with_build = [&](std::size_t i) { return cost[i] + (built[arch[i]] ? 0.0 : o.build_s); };
  const std::size_t want = o.count ? *o.count : n;
  while (plan.rows.size() < want) {
    std::size_t best = n;
    double best_score = -kInf;
    for (std::size_t i = 0; i < n; ++i) {
      if (!open[i]) continue;
      if (o.budget_s && !std::isfinite(cost[i])) {
        open[i] = 0;  // no time to count against the budget
        ++plan.unknown_cost;
        continue;
      }
      if (o.budget_s && spent + cost[i] > *o.budget_s) {
        open[i] = 0;  // what is spent only grows: even without a build it will never fit again
        continue;
      }
      if (o.budget_s && spent + with_build(i) > *o.budget_s) continue;  // it may once its network is built
      double s;
      if (o.strategy == PlanStrategy::space_filling) s = dist[i];
      else if (o.strategy == PlanStrategy::stratified) s = -strata->penalty(i);
      else if (o.strategy == PlanStrategy::random) s = base[i];
      // Ranked per the row's own cost, not with the build: a build serves every later row of its
      // network, and charged to the first alone it made one slow row outrank many quick ones.
      else s = base[i] * (radius > 0 ? std::min(1.0, dist[i] / radius) : 1.0);
      if (s > best_score || (s == best_score && best < n && key[i] > key[best])) best = i, best_score = s;
    }
    if (best == n) break;
    open[best] = 0;
    if (strata) strata->take(best);
    const double row_cost = with_build(best);
    built[arch[best]] = 1;
    spent += row_cost;  // NaN once a planned row's time is unknown: so is the plan's
    plan.rows.push_back({pool[best], best_score, unc[best], lat[best], row_cost, dist[best],
                         model ? outside_as_asked(*model, pool[best]) : std::vector<Excursion>{},
                         impossible[best] != 0});
    for (std::size_t i = 0; i < n; ++i)
      if (open[i]) dist[i] = std::min(dist[i], ConfigSpace::distance(pts[i], pts[best]));
    if (o.progress) o.progress(plan.rows.size(), std::min(want, n));
  }
  plan.total_cost_s = model ? spent : kNaN;
  return plan;
}

}  // namespace carb
