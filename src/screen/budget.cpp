// Deployment budgets: naming the cost targets, checking budgets against a model, and
// accepting configurations on point predictions or on the conformal upper bound.
#include <cmath>
#include <limits>
#include <string>

#include "carb/error.hpp"
#include "carb/screen.hpp"
#include "carb/text_table.hpp"
#include "util/join.hpp"
#include "learn/outside_as_asked.hpp"

namespace carb {

std::string target_column(const std::string& cost) {
  if (cost == "energy" || cost == "energy_j") return "energy_j";
  if (cost == "latency" || cost == "latency_ms") return "latency_ms";
  if (cost == "memory" || cost == "peak_memory_mb") return "peak_memory_mb";
  throw InputError("unknown cost '" + cost + "' (known: energy, latency, memory)");
}

void require_target(const CarbModel& m, const std::string& target, const std::string& what) {
  if (m.has_target(target)) return;
  const std::string known = join(m.targets());
  throw InputError(what + " needs " + target + ", but the model of platform '" + m.platform() +
                   "' predicts only: " + known);
}

void check_budgets(const Budgets& b, const CarbModel& m) {
  for (const auto& [t, v] : b) {
    if (!std::isfinite(v) || v <= 0)
      throw InputError("the budget on " + t + " must be a positive number, got " + fmt_num(v));
    require_target(m, t, "a budget on " + t);
  }
}

bool within_any_budget(double predicted) { return predicted > 0; }  // NaN too is none

double budgeted_value(const Prediction& p, const std::string& t, bool use_upper) {
  // Seventy-sixth hostile pass: a Prediction without the target threw std::out_of_range.
  if (!p.value.count(t)) throw InputError("the prediction has no " + t + " to hold to a budget (its targets: " +
                                          (p.value.empty() ? std::string("none") : join(p.value, [](const auto& kv) {
                                            return kv.first;
                                          })) + ")");
  // A predicted cost at or below zero is no cost a configuration has (a raw-target model's answer
  // past its data): it meets no budget, on its point or on an interval (thirty-fifth hostile pass).
  if (!within_any_budget(p.value.at(t))) return std::numeric_limits<double>::quiet_NaN();
  const auto iv = p.interval.find(t);
  return use_upper && iv != p.interval.end() ? iv->second.second : p.value.at(t);
}

bool accepted(const Prediction& p, const Budgets& b, bool use_upper) {
  for (const auto& [t, limit] : b)
    if (!(budgeted_value(p, t, use_upper) <= limit)) return false;  // a NaN is never within budget
  return true;
}

std::vector<Prediction> apply_budgets(const CarbModel& m, const std::vector<Config>& configs,
                                      const std::map<std::string, std::vector<double>>& cols,
                                      const Budgets& b, std::optional<double> confidence,
                                      std::size_t* unbounded, std::size_t* nonpositive,
                                      std::vector<Prediction>* judged) {
  // A library caller's columns (a C++ tester: one value for two configurations read past the end; a
  // missing one threw std::out_of_range): every budgeted target, one value per configuration.
  check_budgets(b, m);
  for (const auto& [t, limit] : b)
    if (!cols.count(t)) throw InputError("the budget on " + t + " has no predicted " + t + " column to judge");
  for (const auto& [t, v] : cols)
    if (v.size() != configs.size())
      throw InputError(std::to_string(v.size()) + " " + t + " values for " + std::to_string(configs.size()) +
                       " configurations: give one per configuration");
  std::vector<Config> pass;
  std::vector<std::size_t> idx;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    // Every predicted cost, budgeted or not: one at or below zero would top the Pareto front too.
    bool impossible = false, over = false;
    for (const auto& [t, v] : cols) impossible = impossible || !within_any_budget(v[i]);
    for (const auto& [t, limit] : b) over = over || (within_any_budget(cols.at(t)[i]) && !(cols.at(t)[i] <= limit));
    if (nonpositive && impossible) ++*nonpositive;
    if (!impossible && !over) pass.push_back(configs[i]), idx.push_back(i);
  }
  std::vector<Prediction> out;
  if (confidence) {
    // Intervals only for the survivors of the point test: the upper bound is never below the point.
    for (auto& p : m.predict(pass, {}, confidence)) {
      if (judged) {  // what a pair of batches is judged on: its budgeted targets, not every target
        Prediction j;
        j.config = p.config;
        j.outside = p.outside;
        j.trained_architecture = p.trained_architecture;
        for (const auto& [t, limit] : b) j.value[t] = p.value.at(t), j.interval[t] = p.interval.at(t);
        judged->push_back(std::move(j));
      }
      if (accepted(p, b, true)) {
        out.push_back(std::move(p));
      } else if (unbounded) {
        // Only when the unbounded interval is what fails it: a finite upper bound over its budget
        // fails it anyway (nineteenth hostile pass, from reading the code).
        bool any_unbounded = false, bounded_over = false;
        for (const auto& [t, limit] : b) {
          const double hi = p.interval.at(t).second;
          any_unbounded = any_unbounded || std::isinf(hi);
          bounded_over = bounded_over || (std::isfinite(hi) && !(hi <= limit));
        }
        if (any_unbounded && !bounded_over) ++*unbounded;
      }
    }
    return out;
  }
  out.reserve(pass.size());
  for (std::size_t j = 0; j < pass.size(); ++j) {
    Prediction p;
    p.config = pass[j];
    p.outside = outside_as_asked(m, pass[j]);
    p.trained_architecture = m.trained_architecture(pass[j]);
    for (const auto& [t, v] : cols) p.value[t] = v[idx[j]];
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace carb
