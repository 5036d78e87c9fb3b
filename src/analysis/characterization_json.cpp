// The JSON edge of a Characterization: the `carb characterize --format json` document, and the
// names of the knobs and SM regimes it uses.
#include <nlohmann/json.hpp>

#include "carb/characterization.hpp"
#include "carb/error.hpp"

namespace carb {

std::string to_string(Knob k) {
  switch (k) {
    case Knob::depth:
      return "depth";
    case Knob::width:
      return "width";
    case Knob::resolution:
      return "resolution";
    case Knob::batch:
      return "batch";
    case Knob::precision:
      return "precision";
  }
  return "?";
}

Knob parse_knob(std::string_view s) {
  for (Knob k : kKnobs)
    if (to_string(k) == s) return k;
  throw InputError("unknown knob '" + std::string(s) + "' (depth, width, resolution, batch, precision)");
}

std::string to_string(SmRegime r) { return r == SmRegime::high ? "high" : "low"; }

SmRegime parse_sm_regime(std::string_view s) {
  if (s == "low") return SmRegime::low;
  if (s == "high") return SmRegime::high;
  throw InputError("unknown SM regime '" + std::string(s) + "' (low, high)");
}

namespace {

using nlohmann::json;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json unavailable(const Availability& a) { return {{"available", false}, {"reason", a.reason}}; }

// A knob's level as the document writes it: an integer knob as an integer, width as a number,
// precision by name.
json level_json(Knob k, double level) {
  switch (k) {
    case Knob::width:
      return level;
    case Knob::precision:
      return to_string(static_cast<Precision>(static_cast<int>(level)));
    default:
      return static_cast<int>(level);
  }
}

json knob_json(const KnobScaling& k) {
  if (!k.available) return unavailable(k);
  json levels = json::array();
  for (const auto& l : k.levels)
    levels.push_back({{"level", level_json(k.knob, l.level)}, {"mean", l.mean}, {"n", l.n}});
  return {{"available", true},
          {"levels", levels},
          {"min", {{"level", level_json(k.knob, k.min.level)}, {"mean", k.min.mean}}},
          {"max", {{"level", level_json(k.knob, k.max.level)}, {"mean", k.max.mean}}},
          {"ratio", opt(k.ratio)},
          {"matched_ratio", opt(k.matched_ratio)},
          {"matched_levels", {level_json(k.knob, k.matched_high), level_json(k.knob, k.matched_low)}},
          {"matched_pairs", k.matched_pairs},
          {"pooled_confounded", k.pooled_confounded()},
          {"pooled_size_differs", k.pooled_size_differs()}};
}

json scaling_json(const ScalingSection& s) {
  if (!s.available) return unavailable(s);
  json knobs = json::array(), fams = json::object();
  for (Knob k : kKnobs) knobs.push_back(to_string(k));
  for (const auto& [f, per_target] : s.families) {
    json pt = json::object();
    for (const auto& [t, ks] : per_target) {
      json o = json::object();
      for (const auto& k : ks) o[to_string(k.knob)] = knob_json(k);
      pt[t] = o;
    }
    fams[to_string(f)] = pt;
  }
  return {{"available", true}, {"definition", s.definition}, {"knobs", knobs}, {"families", fams}};
}

json family_json(const FamilySection& s) {
  if (!s.available) return unavailable(s);
  json targets = json::object();
  for (const auto& [t, f] : s.targets)
    targets[t] = f.available ? json{{"available", true},
                                    {"basic_mean", f.basic_mean},
                                    {"bottleneck_mean", f.bottleneck_mean},
                                    {"n_basic", f.n_basic},
                                    {"n_bottleneck", f.n_bottleneck},
                                    {"ratio", f.ratio}}
                             : unavailable(f);
  return {{"available", true}, {"definition", s.definition}, {"targets", targets}};
}

json precision_json(const PrecisionSection& s) {
  if (!s.available) return unavailable(s);
  json cmps = json::object();
  for (const auto& c : s.comparisons) {
    json per_target = json::object();
    for (const auto& [t, r] : c.targets)
      per_target[t] = r.available ? json{{"available", true},
                                         {"mean_ratio", r.mean_ratio},
                                         {"min_ratio", r.min_ratio},
                                         {"max_ratio", r.max_ratio},
                                         {"pairs", r.pairs}}
                                  : unavailable(r);
    cmps[c.name()] = per_target;
  }
  return {{"available", true}, {"definition", s.definition}, {"comparisons", cmps}};
}

json efficiency_json(const EfficiencySection& s) {
  if (!s.available) return unavailable(s);
  json metrics = json::object();
  for (const auto& m : s.metrics) {
    if (!m.available) {
      metrics[m.name] = unavailable(m);
      continue;
    }
    json tiers = json::array();
    for (const auto& t : m.tiers)
      tiers.push_back(
          {{"tier", t.tier.label()}, {"n", t.n}, {"pooled", opt(t.pooled)}, {"row_mean", opt(t.row_mean)}});
    metrics[m.name] = {
        {"available", true}, {"target", m.target}, {"tiers", tiers}, {"spread", opt(m.spread)}};
  }
  return {{"available", true},
          {"definition", s.definition},
          {"rows_outside_tiers", s.rows_outside_tiers},
          {"metrics", metrics}};
}

json cell_json(const DivergenceCell& c) {
  return {{"sm", to_string(c.sm)},
          {"batch_tier", c.tier.label()},
          {"n", c.n},
          {"mean_energy_j", opt(c.mean_energy_j)},
          {"mean_latency_ms", opt(c.mean_latency_ms)},
          {"energy_ratio", opt(c.energy_ratio)},
          {"latency_ratio", opt(c.latency_ratio)},
          {"divergence", opt(c.divergence)}};
}

json divergence_json(const DivergenceSection& s) {
  if (!s.available) return unavailable(s);
  json cells = json::array(), per_tier = json::array();
  for (const auto& c : s.cells) cells.push_back(cell_json(c));
  for (const auto& h : s.high_over_low)
    per_tier.push_back({{"batch_tier", h.tier.label()},
                        {"high_over_low_energy", opt(h.energy)},
                        {"high_over_low_latency", opt(h.latency)}});
  json out = {{"available", true},
              {"definition", s.definition},
              {"sm_threshold", s.sm_threshold},
              {"sm_threshold_rule", s.threshold_given ? "given" : "median avg_sm_util"},
              {"rows", s.rows},
              {"cells", cells},
              {"high_over_low", per_tier}};
  if (s.headline) out["headline"] = cell_json(*s.headline);
  if (!s.baseline_note.empty()) out["baseline_note"] = s.baseline_note;
  return out;
}

}  // namespace

json Characterization::to_json() const {
  json doc = {{"dataset",
               {{"rows", dataset.rows},
                {"ok_rows", dataset.ok_rows},
                {"platforms", dataset.platforms},
                {"targets", dataset.targets}}}};
  if (!dataset.warning.empty()) doc["dataset"]["warning"] = dataset.warning;
  doc["scaling"] = scaling_json(scaling);
  doc["family_comparison"] = family_json(family_comparison);
  doc["precision"] = precision_json(precision);
  doc["efficiency"] = efficiency_json(efficiency);
  doc["divergence"] = divergence_json(divergence);
  return doc;
}

}  // namespace carb
