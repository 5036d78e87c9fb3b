// The model's uncertainty about a configuration: how far its ensemble members disagree.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "carb/error.hpp"
#include "carb/model.hpp"
#include "carb/plan.hpp"
#include "carb/prediction_io.hpp"

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
  // Predicted kScoreChunk at a time, each chunk's answers appended: a row's answer does not depend
  // on the others', and the caller hears between chunks (Ctrl-C on a large pool).
  std::map<std::string, std::vector<double>> predicted;
  std::map<std::string, MemberPredictions> members;
  for (std::size_t first = 0; first < configs.size(); first += kScoreChunk) {
    const std::size_t end = std::min(configs.size(), first + kScoreChunk);
    const std::vector<Config> chunk(configs.begin() + static_cast<std::ptrdiff_t>(first),
                                    configs.begin() + static_cast<std::ptrdiff_t>(end));
    for (auto& [target, values] : model.predict_columns(chunk)) {
      auto& all = predicted[target];
      all.insert(all.end(), values.begin(), values.end());
      MemberPredictions part = model.member_predictions(chunk, target);
      auto& whole = members[target];
      for (auto [from, to] : {std::pair{&part.trees, &whole.trees}, std::pair{&part.learners, &whole.learners}}) {
        to->resize(from->size());
        for (std::size_t k = 0; k < from->size(); ++k) (*to)[k].insert((*to)[k].end(), (*from)[k].begin(), (*from)[k].end());
      }
    }
    if (scored) scored(end, configs.size());
  }
  bool members_can_disagree = false;
  for (const std::string& target : model.targets()) {
    const auto& pred = predicted.at(target);
    if (latency_ms && target == "latency_ms") *latency_ms = pred;
    if (nonpositive)
      for (std::size_t i = 0; i < configs.size(); ++i) (*nonpositive)[i] |= !(pred[i] > 0);
    const MemberPredictions& m = members.at(target);
    members_can_disagree = members_can_disagree || m.trees.size() >= 2 || m.learners.size() >= 2;
    // Thirty-sixth hostile pass: a member's cost at or below zero (a raw-target model) has no log;
    // clamped to 1e-300 it gave every such row the same huge spread, and the plan was that artefact.
    if (space == SpreadSpace::log) {
      std::size_t nonpositive = 0;
      for (std::size_t i = 0; i < configs.size(); ++i) {
        bool bad = !(pred[i] > 0);
        for (const auto* set : {&m.trees, &m.learners})
          for (const auto& member : *set) bad = bad || !(member[i] > 0);
        nonpositive += bad;
      }
      if (nonpositive)
        throw InputError("--spread log needs positive predictions, but the model or one of its members predicts " +
                         target + " at or below zero for " + std::to_string(nonpositive) + " of " +
                         std::to_string(configs.size()) + " candidates (" + kNonPositiveWhy + "); use --spread units");
    }
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
    for (std::size_t i = 0; i < configs.size(); ++i)
      total[i] += (member_variance(m.trees, i, space) + member_variance(m.learners, i, space)) / scale;
  }
  if (members_disagree) *members_disagree = members_can_disagree;
  for (double& t : total) t = std::sqrt(t);
  return total;
}

}  // namespace carb
