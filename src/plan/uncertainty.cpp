// The model's uncertainty about a configuration: how far its ensemble members disagree.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "carb/error.hpp"
#include "carb/model.hpp"
#include "carb/plan.hpp"
#include "carb/prediction_io.hpp"
#include "util/chunks.hpp"

namespace carb {
namespace {

// Variance of the members at configuration i (population variance; 0 for fewer than two).
double member_variance(const std::vector<std::vector<double>>& members, std::size_t i, SpreadSpace space) {
  if (members.size() < 2) return 0;
  double sum = 0, sq = 0;
  for (const auto& m : members) {
    const double v = space == SpreadSpace::log ? std::log(std::max(m[i], 1e-300)) : m[i];
    sum += v, sq += v * v;
  }
  const double n = double(members.size()), mean = sum / n;
  return std::max(0.0, sq / n - mean * mean);
}

double variance_of(const std::vector<double>& v, SpreadSpace space) {
  if (v.size() < 2) return 0;
  double sum = 0, sq = 0;
  for (double x : v) {
    const double y = space == SpreadSpace::log ? std::log(std::max(x, 1e-300)) : x;
    sum += y, sq += y * y;
  }
  const double n = double(v.size()), mean = sum / n;
  return std::max(0.0, sq / n - mean * mean);
}

}  // namespace

SpreadSpace parse_spread_space(const std::string& s) {
  if (s == "units") return SpreadSpace::units;
  if (s == "log") return SpreadSpace::log;
  throw InputError("unknown spread space '" + s + "' (known: units, log)");
}

std::vector<double> model_uncertainty(const CarbModel& model, const std::vector<Config>& configs, SpreadSpace space,
                                      std::vector<double>* latency_ms, bool* members_disagree,
                                      std::vector<char>* nonpositive,
                                      const std::function<void(std::size_t, std::size_t)>& scored) {
  std::vector<double> total(configs.size(), 0.0);
  if (latency_ms) latency_ms->assign(configs.size(), std::numeric_limits<double>::quiet_NaN());
  if (nonpositive) nonpositive->assign(configs.size(), 0);
  if (configs.empty()) return total;
  // Predicted kScoreChunk at a time, the caller hearing between chunks (Ctrl-C on a large pool).
  // Of each chunk's members only each row's variance is kept (all of every target's trees for the
  // whole pool took 2.5-3x the memory of predicting a target at a time: a reviewer's measurement);
  // a row's answers do not depend on the others'.
  struct Target {
    std::vector<double> pred, spread;  // per configuration: the answer, the members' variance
    std::size_t nonpositive = 0;       // configurations where it or a member is at or below zero
    bool can_disagree = false;
  };
  std::map<std::string, Target> by_target;
  detail::for_each_chunk(configs, kScoreChunk, [&](const std::vector<Config>& chunk, std::size_t end) {
    for (const auto& [target, values] : model.predict_columns(chunk)) {
      Target& t = by_target[target];
      t.pred.insert(t.pred.end(), values.begin(), values.end());
      const MemberPredictions m = model.member_predictions(chunk, target);
      t.can_disagree = m.trees.size() >= 2 || m.learners.size() >= 2;
      for (std::size_t i = 0; i < chunk.size(); ++i) {
        t.spread.push_back(member_variance(m.trees, i, space) + member_variance(m.learners, i, space));
        // Thirty-sixth hostile pass: a member's cost at or below zero (a raw-target model) has no log;
        // clamped to 1e-300 it gave every such row the same huge spread, and the plan was that artefact.
        if (space != SpreadSpace::log) continue;
        bool bad = !(values[i] > 0);
        for (const auto* set : {&m.trees, &m.learners})
          for (const auto& member : *set) bad = bad || !(member[i] > 0);
        t.nonpositive += bad;
      }
    }
    if (scored) scored(end, configs.size());
  });
  bool members_can_disagree = false;
  for (const std::string& target : model.targets()) {
    const Target& t = by_target.at(target);
    const auto& pred = t.pred;
    if (latency_ms && target == "latency_ms") *latency_ms = pred;
    if (nonpositive)
      for (std::size_t i = 0; i < configs.size(); ++i) (*nonpositive)[i] |= !(pred[i] > 0);
    members_can_disagree = members_can_disagree || t.can_disagree;
    if (space == SpreadSpace::log && t.nonpositive)
      throw InputError("--spread log needs positive predictions, but the model or one of its members predicts " +
                       target + " at or below zero for " + std::to_string(t.nonpositive) + " of " +
                       std::to_string(configs.size()) + " candidates (" + kNonPositiveWhy + "); use --spread units");
    // Each target's spread in units of how much its predictions vary over the candidates: the
    // squared ratio is the share of that variance a wrong prediction of this row would cost in R².
    double scale = variance_of(pred, space);
    // One candidate (or all predicted alike) has no variance to measure against: its spread is then
    // relative to its own prediction (a hostile tester: a lone candidate the model called a guess
    // was planned with uncertainty 0).
    if (!(scale > 0)) {
      double mean = 0;
      for (double v : pred) mean += v / double(pred.size());
      scale = space == SpreadSpace::log ? 1.0 : mean * mean;
    }
    if (!(scale > 0)) continue;
    for (std::size_t i = 0; i < configs.size(); ++i) total[i] += t.spread[i] / scale;
  }
  if (members_disagree) *members_disagree = members_can_disagree;
  for (double& t : total) t = std::sqrt(t);
  return total;
}

}  // namespace carb
