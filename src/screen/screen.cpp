// The two-stage screen: stage 1 ranks the whole space with the source model and keeps the top K;
// stage 2 re-scores the shortlist with the target model, applies the budgets and extracts the
// Pareto set over every target of the final model. With one model it is a single stage.
#include "carb/screen.hpp"

#include <algorithm>
#include <limits>
#include <cmath>
#include <numeric>
#include <set>
#include <unordered_map>

#include "carb/arch.hpp"
#include "carb/envelope.hpp"
#include "carb/error.hpp"
#include "carb/prediction_io.hpp"
#include "util/chunks.hpp"

namespace carb {

namespace {

void check_options(const std::vector<Config>& configs, const CarbModel& source, const CarbModel& final_model,
                   const ScreenOptions& o, const std::string& rank) {
  if (configs.empty()) throw InputError("nothing to screen: the configuration space is empty");
  // The same network twice came back twice in the Pareto set (twenty-first hostile pass, from
  // Python; the CLI's reader refuses such a file).
  std::unordered_map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (const auto [it, fresh] = first.emplace(network_key(configs[i]), i); !fresh)
      throw InputError("configuration " + std::to_string(i + 1) + " (" + config_key(configs[i]) + ") repeats configuration " +
                       std::to_string(it->second + 1) + same_network_as(configs[i], configs[it->second]) +
                       "; list each configuration once");
  require_target(source, rank, "ranking by " + rank);
  check_budgets(o.budgets, final_model);
  if (o.top_k && *o.top_k == 0) throw InputError("top-k must be at least 1");
  if (o.confidence) check_confidence_level(*o.confidence);
  // A capacity cast from a number screened as none, without a word (a C++ tester).
  if (o.capacity != Capacity::none && o.capacity != Capacity::gflops && o.capacity != Capacity::params)
    throw InputError("capacity " + std::to_string(static_cast<int>(o.capacity)) + " is none of screen's measures");
}

// The model's answers for the whole space, ScreenOptions::kScreenChunk at a time where a caller
// listens between them (one call otherwise); a configuration's answers do not depend on the others'.
std::map<std::string, std::vector<double>> predict_space(const CarbModel& m, const std::vector<Config>& configs,
                                                         const ScreenOptions& o) {
  if (!o.progress) return m.predict_columns(configs);
  std::map<std::string, std::vector<double>> out;
  detail::for_each_chunk(configs, ScreenOptions::kScreenChunk, [&](const std::vector<Config>& chunk, std::size_t end) {
    for (auto& [t, v] : m.predict_columns(chunk)) out[t].insert(out[t].end(), v.begin(), v.end());
    o.progress(end, configs.size());
  });
  return out;
}

// A ranking's values as screen uses them: a cost at or below zero (or NaN) ranks last.
std::vector<double> as_ranked(std::vector<double> v) {
  for (double& x : v)
    if (!within_any_budget(x)) x = std::numeric_limits<double>::infinity();
  return v;
}

// How many configurations have a predicted cost at or below zero on any target.
std::size_t count_nonpositive(const std::map<std::string, std::vector<double>>& cols) {
  std::size_t n = 0, rows = cols.empty() ? 0 : cols.begin()->second.size();
  for (std::size_t i = 0; i < rows; ++i)
    n += std::any_of(cols.begin(), cols.end(), [&](const auto& tc) { return !within_any_budget(tc.second[i]); });
  return n;
}

// Indices of the k lowest values (ties broken by index, so the cut is deterministic).
std::vector<std::size_t> lowest(const std::vector<double>& v, std::size_t k) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  k = std::min(k, idx.size());
  auto less = [&](std::size_t a, std::size_t b) {
    // NaN predictions sort last: a configuration the model cannot score is never shortlisted first;
    // nor one whose predicted cost is at or below zero (thirty-fifth hostile pass).
    const bool na = !within_any_budget(v[a]), nb = !within_any_budget(v[b]);
    if (na != nb) return nb;
    return v[a] != v[b] && !na ? v[a] < v[b] : a < b;
  };
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(), less);
  idx.resize(k);
  return idx;
}

template <typename T>
std::vector<T> take(const std::vector<T>& v, const std::vector<std::size_t>& idx) {
  std::vector<T> out;
  out.reserve(idx.size());
  for (auto i : idx) out.push_back(v[i]);
  return out;
}

std::map<std::string, std::vector<double>> take_cols(const std::map<std::string, std::vector<double>>& cols,
                                                     const std::vector<std::size_t>& idx) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [t, v] : cols) out[t] = take(v, idx);
  return out;
}

// Pareto set of the accepted predictions (minimizing every target, and maximizing the capacity
// measure when one is given), sorted by the rank target (or the first target) then key.
void pareto_of(std::vector<Prediction> accepted, Capacity capacity, ScreenResult& r) {
  if (accepted.empty()) return;
  const auto& targets = r.targets;
  std::vector<std::vector<double>> obj(targets.size());
  for (std::size_t k = 0; k < targets.size(); ++k)
    for (const auto& p : accepted) obj[k].push_back(p.value.at(targets[k]));
  std::vector<double> cap;
  if (capacity != Capacity::none) {
    for (const auto& p : accepted) cap.push_back(capacity_of(p.config, capacity));
    obj.emplace_back();
    for (double c : cap) obj.back().push_back(-c);
  }
  std::vector<std::size_t> front = pareto_front(obj);
  const std::string by =
      std::find(targets.begin(), targets.end(), r.rank_target) != targets.end() ? r.rank_target : targets.front();
  std::sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
    const double va = accepted[a].value.at(by), vb = accepted[b].value.at(by);
    if (va != vb) return va < vb;
    // On a tie the one the model knows better first, as recommend ranks (an untrained precision is
    // answered as its trained twin: a review found the untrained listed first by its name).
    const auto oa = accepted[a].outside.size(), ob = accepted[b].outside.size();
    return oa != ob ? oa < ob : config_key(accepted[a].config) < config_key(accepted[b].config);
  });
  r.capacity = capacity;
  for (auto i : front) {
    r.pareto.push_back(std::move(accepted[i]));
    if (!cap.empty()) r.pareto_capacity.push_back(cap[i]);
  }
}

// Whether each configuration lies inside what `m` trained on.
std::vector<bool> inside_ranges(const CarbModel& m, const std::vector<Config>& configs) {
  std::vector<bool> inside;
  inside.reserve(configs.size());
  for (const Config& c : configs) inside.push_back(m.envelope().outside(m.as_trained(c)).empty());
  return inside;
}

// The network a configuration runs, whatever its batch: what batch_inversions groups by.
std::string network_at_any_batch(Config c) {
  c.batch = 1;
  return network_key(c);
}

// Where the deciding model predicts a smaller batch dearer than a larger one of the same network,
// among the configurations it scored inside its trained ranges (as recommend says it).
std::vector<BatchInversion> inversions_of(const std::vector<Config>& scored, const std::vector<bool>& inside,
                                          const std::map<std::string, std::vector<double>>& cols, ScreenResult& r) {
  std::size_t& networks = r.batch_order_networks;
  const auto all = batch_inversions(scored, cols, inside, &networks);
  for (const BatchInversion& w : all) {
    if (r.cost_falls_with_batch.empty() || r.cost_falls_with_batch.back().target != w.target) {
      // The first of a target is its worst (sorted by ratio).
      const std::vector<double>& v = cols.at(w.target);
      r.cost_falls_with_batch.push_back({w.target, 0, networks, 0, scored[w.smaller], scored[w.larger], v[w.smaller],
                                         v[w.larger], w.ratio});
    }
    ++r.cost_falls_with_batch.back().networks;
  }
  return all;
}

// How many of the Pareto set are of a network with an inversion, per target.
void count_pareto_inversions(const std::vector<Config>& scored, ScreenResult& r,
                             const std::vector<BatchInversion>& all) {
  for (ScreenBatchInversions& s : r.cost_falls_with_batch) {
    std::set<std::string> nets;
    for (const BatchInversion& w : all)
      if (w.target == s.target) nets.insert(network_at_any_batch(scored[w.smaller]));
    for (const Prediction& p : r.pareto)
      s.pareto += p.outside.empty() && nets.count(network_at_any_batch(p.config));  // outside: no part of the check
  }
}

}  // namespace

ScreenResult screen(const std::vector<Config>& configs, const CarbModel& source, const CarbModel* target,
                    const ScreenOptions& o) {
  source.require_trained();
  if (target) target->require_trained();
  const CarbModel& final_model = target ? *target : source;
  ScreenResult r;
  r.rank_by_default = o.rank_by.empty();
  // Energy is what carb exists to rank by; a platform that cannot measure it (a CPU) ranks by latency.
  const bool energy = source.has_target("energy_j") && final_model.has_target("energy_j");
  r.rank_target = r.rank_by_default ? (energy ? "energy_j" : "latency_ms") : target_column(o.rank_by);
  // Thirty-fourth hostile pass: "the source model has no energy_j" was said when it was the target.
  if (!energy) {
    const bool s = source.has_target("energy_j"), t = final_model.has_target("energy_j");
    r.without_energy = !target ? "the model" : !s && !t ? "neither model" : !s ? "the source model" : "the target model";
  }
  check_options(configs, source, final_model, o, r.rank_target);
  r.two_stage = target != nullptr;
  r.source_platform = source.platform();
  r.target_platform = final_model.platform();
  if (source.has_target("latency_ms")) r.source_drift_reference_ms = source.drift_reference_ms();
  if (final_model.has_target("latency_ms")) r.target_drift_reference_ms = final_model.drift_reference_ms();
  r.targets = final_model.targets();
  r.unseen_calibration_networks = final_model.unseen_calibration_networks();
  r.budgets = o.budgets;
  // As recommend does (a hostile tester: 2.4 TB answers on the 141 GB H200 passed as feasible): the
  // device's memory, where the deciding model knows it, holds every configuration on its point
  // prediction, beside the budgets (on the upper bound it removed nearly all at --confidence 0.99,
  // where memory intervals are unbounded: a review).
  r.device_memory_mb = held_device_memory(final_model);
  r.confidence = o.confidence;
  r.stages.push_back({"candidates", configs.size()});

  const auto src_cols = predict_space(source, configs, o);
  // The target model scores the whole space only when rho over the whole space can be computed;
  // otherwise only the shortlist is re-scored.
  std::map<std::string, std::vector<double>> tgt_all;
  if (target && target->has_target(r.rank_target)) {
    tgt_all = predict_space(*target, configs, o);
    // On the rankings as used: a cost at or below zero ranks last, not cheapest (thirty-sixth
    // hostile pass: rho 0.995 counted them cheapest; as used it was about 0.85).
    r.rank_spearman = spearman(as_ranked(src_cols.at(r.rank_target)), as_ranked(tgt_all.at(r.rank_target)));
  }
  // Thirty-sixth hostile pass: the first stage ranked such configurations last and cut them off the
  // shortlist without a word, and the count covered only the shortlist. Counted over every candidate
  // a model scores: the source's rank target in a two-stage screen, every target of the deciding model.
  // Where the deciding model scored the whole space: inside its ranges or not, for the count of its
  // guesses and for the batch-order check below.
  std::vector<bool> inside_all;
  if (!target || !tgt_all.empty()) inside_all = inside_ranges(final_model, configs);
  if (target && !tgt_all.empty())
    r.target_guesses = static_cast<std::size_t>(std::count(inside_all.begin(), inside_all.end(), false));
  if (target) {
    for (double v : src_cols.at(r.rank_target)) r.source_nonpositive += !within_any_budget(v);
    if (!tgt_all.empty()) r.nonpositive = count_nonpositive(tgt_all);
  } else {
    r.nonpositive = count_nonpositive(src_cols);
  }

  if (target)
    for (const Config& c : configs) r.source_guesses += !source.envelope().outside(source.as_trained(c)).empty();
  std::vector<Config> shortlist = configs;
  std::map<std::string, std::vector<double>> cols = target ? tgt_all : src_cols;
  const std::optional<std::size_t> k = target ? o.top_k.value_or(ScreenOptions::kDefaultTopK) : o.top_k;
  if (k) {
    const auto idx = lowest(src_cols.at(r.rank_target), *k);
    shortlist = take(configs, idx);
    cols = target && tgt_all.empty() ? target->predict_columns(shortlist) : take_cols(cols, idx);
    r.stages.push_back({"shortlist", shortlist.size()});
  } else if (target && tgt_all.empty()) {
    cols = target->predict_columns(shortlist);
  }

  // Over everything the deciding model scored (pass 100: over the shortlist only, the note said "the
  // networks the model scored" of a few, and missed pairs whose larger batch the cut left out).
  const bool scored_all = !target || !tgt_all.empty();
  r.batch_order_shortlist = !scored_all && shortlist.size() < configs.size();
  const auto inversions = scored_all ? inversions_of(configs, inside_all, target ? tgt_all : src_cols, r)
                                     : inversions_of(shortlist, inside_ranges(final_model, shortlist), cols, r);
  // Only where the deciding model scored no more than the shortlist (a target without the rank target).
  std::vector<Prediction> judged;
  auto accepted = apply_budgets(final_model, shortlist, cols, r.budgets, o.confidence, &r.unbounded,
                                target && tgt_all.empty() ? &r.nonpositive : nullptr, &judged);
  // Hundred-and-sixth hostile pass: a budget on the upper edge passed a larger batch of a network and
  // failed smaller ones predicted to cost less (their batch regime's intervals are wider). Counted per
  // budget over the configurations judged on their intervals, the widest pair named.
  std::vector<bool> within;  // the larger batch of a pair is within every budget, as the note says
  for (const Prediction& p : judged) within.push_back(carb::accepted(p, r.budgets, true));
  for (const UpperEdgeFlip& f : upper_edge_flip_pairs(judged, r.budgets, &within)) {
    auto& all = r.upper_edge_falls_with_batch;
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& u) { return u.target == f.target; });
    if (it == all.end()) it = all.insert(all.end(), {f.target, f.limit, 0, judged[f.smaller], judged[f.larger]});
    ++it->networks;
    const auto upper = [&](const Prediction& p) { return p.interval.at(f.target).second; };
    if (f.ratio > upper(it->smaller) / upper(it->larger)) it->smaller = judged[f.smaller], it->larger = judged[f.larger];
  }
  if (r.device_memory_mb) {
    const auto over = std::remove_if(accepted.begin(), accepted.end(),
                                     [&](const Prediction& p) { return !fits_device_memory(p, *r.device_memory_mb); });
    r.over_device_memory = static_cast<std::size_t>(accepted.end() - over);
    accepted.erase(over, accepted.end());
  }
  r.within_budget = accepted.size();
  // Twenty-seventh session: 76 of the deploy preset imply up to 849 W on the H200's 700 W, and
  // predict said so where screen passed them within budget without a word.
  r.power_limit_w = held_device(final_model).power_limit_w;
  const auto over_power = [&](const Prediction& p) { return power_beyond_device(p, r.power_limit_w).has_value(); };
  for (const Prediction& p : accepted)
    if (const auto w = power_beyond_device(p, r.power_limit_w))
      ++r.within_budget_over_power, r.most_power_w = std::max(r.most_power_w, *w);
  r.within_budget_guesses = static_cast<std::size_t>(
      std::count_if(accepted.begin(), accepted.end(), [](const Prediction& p) { return !p.outside.empty(); }));
  r.within_budget_new_architectures = static_cast<std::size_t>(
      std::count_if(accepted.begin(), accepted.end(), [](const Prediction& p) { return !p.trained_architecture; }));
  r.within_budget_never_trained =
      static_cast<std::size_t>(std::count_if(accepted.begin(), accepted.end(), [](const Prediction& p) {
        return !p.trained_architecture && std::isinf(extrapolation_widening(p.outside));
      }));
  r.stages.push_back({"within_budget", r.within_budget});
  pareto_of(std::move(accepted), o.capacity, r);
  count_pareto_inversions(scored_all ? configs : shortlist, r, inversions);
  r.pareto_over_power = static_cast<std::size_t>(std::count_if(r.pareto.begin(), r.pareto.end(), over_power));
  r.stages.push_back({"pareto", r.pareto.size()});
  if (o.validate)
    r.validation = validate_screen(configs, *o.validate, final_model, r.budgets, o.confidence,
                                   o.validate_include_trained,
                                   k && shortlist.size() < configs.size() ? &shortlist : nullptr);
  return r;
}

nlohmann::json ScreenResult::to_json() const {
  nlohmann::json j;
  j["rank_by"] = rank_target;
  j["rank_by_default"] = rank_by_default;
  j["source_platform"] = source_platform;
  j["target_platform"] = target_platform;
  j["two_stage"] = two_stage;
  j["stages"] = nlohmann::json::array();
  for (const auto& s : stages) j["stages"].push_back({{"name", s.name}, {"count", s.count}});
  j["rank_spearman"] = rank_spearman ? nlohmann::json(*rank_spearman) : nlohmann::json(nullptr);
  if (two_stage) j["source_guesses"] = source_guesses;
  j["targets"] = targets;
  j["budgets"] = nlohmann::json::object();
  for (const auto& [t, v] : budgets) j["budgets"][t] = v;
  if (device_memory_mb) j["device_memory_mb"] = *device_memory_mb, j["over_device_memory"] = over_device_memory;
  if (power_limit_w) j["power_limit_w"] = *power_limit_w;
  j["within_budget_over_power"] = within_budget_over_power;
  j["pareto_over_power"] = pareto_over_power;
  if (within_budget_over_power > 0) j["most_power_w"] = most_power_w;
  j["confidence"] = confidence ? nlohmann::json(*confidence) : nlohmann::json(nullptr);
  j["within_budget"] = within_budget;
  j["within_budget_guesses"] = within_budget_guesses;
  j["within_budget_new_architectures"] = within_budget_new_architectures;
  j["within_budget_never_trained"] = within_budget_never_trained;
  j["unseen_calibration_networks"] = unseen_calibration_networks;
  if (two_stage) j["target_guesses"] = target_guesses;
  if (confidence) j["unbounded_at_confidence"] = unbounded;
  j["nonpositive_predictions"] = nonpositive;
  if (two_stage) j["source_nonpositive_predictions"] = source_nonpositive;
  // Only when a model is drift-corrected, as predict writes it (thirtieth hostile pass: only stderr said it).
  if (source_drift_reference_ms || target_drift_reference_ms)
    j["drift_reference_ms"] = {
        {"source", source_drift_reference_ms ? nlohmann::json(*source_drift_reference_ms) : nlohmann::json()},
        {"target", target_drift_reference_ms ? nlohmann::json(*target_drift_reference_ms) : nlohmann::json()}};
  j["batch_order"] = {{"networks", batch_order_networks}, {"over", batch_order_shortlist ? "shortlist" : "space"}};
  j["cost_falls_with_batch"] = nlohmann::json::array();
  for (const ScreenBatchInversions& s : cost_falls_with_batch)
    j["cost_falls_with_batch"].push_back({{"target", s.target},
                                          {"networks", s.networks},
                                          {"of_networks", s.of_networks},
                                          {"pareto", s.pareto},
                                          {"worst",
                                           {{"smaller", config_to_json(s.smaller)},
                                            {"larger", config_to_json(s.larger)},
                                            {"smaller_value", s.smaller_value},
                                            {"larger_value", s.larger_value},
                                            {"ratio", s.ratio}}}});
  if (confidence) {
    j["upper_edge_falls_with_batch"] = nlohmann::json::array();
    for (const UpperEdgeFlips& u : upper_edge_falls_with_batch) {
      const auto side = [&](const Prediction& p) {
        nlohmann::json c = config_to_json(p.config);
        c["value"] = p.value.at(u.target), c["upper"] = p.interval.at(u.target).second;
        return c;
      };
      j["upper_edge_falls_with_batch"].push_back({{"target", u.target},
                                                  {"budget", u.limit},
                                                  {"networks", u.networks},
                                                  {"widest", {{"smaller", side(u.smaller)}, {"larger", side(u.larger)}}}});
    }
  }
  j["capacity"] = capacity == Capacity::none ? nlohmann::json(nullptr) : nlohmann::json(to_string(capacity));
  j["pareto"] = nlohmann::json::array();
  for (std::size_t i = 0; i < pareto.size(); ++i) {
    const auto& p = pareto[i];
    nlohmann::json row = config_to_json(p.config);
    if (i < pareto_capacity.size()) row["capacity"] = pareto_capacity[i];
    for (const auto& [t, v] : p.value) row[t] = v;
    for (const auto& [t, iv] : p.interval) row[t + "_lower"] = iv.first, row[t + "_upper"] = iv.second;
    row["trained_architecture"] = p.trained_architecture;
    row["outside"] = outside_json(p.outside);
    // Per row, as the CSV has it (hundred-and-thirty-third hostile pass: the JSON had only the count).
    if (power_limit_w && p.value.count("energy_j") && p.value.count("latency_ms"))  // as the CSV: with a limit
      row["within_power_limit"] = !power_beyond_device(p, power_limit_w).has_value();
    j["pareto"].push_back(row);
  }
  if (validation) j["validation"] = validation->to_json(budgets);
  return j;
}

}  // namespace carb
