// The scaling section of characterize(): per family and target, the group mean of the target
// at each level of one knob with all other knobs pooled, and the max/min ratio of those means
// (the paper's "depth spans 13.8x").
#include <map>
#include <set>

#include "characterize_sections.hpp"

namespace carb::detail {
namespace {

constexpr const char* kKnobs[] = {"depth", "width", "resolution", "batch", "precision"};

// Sort key of a knob level (precision by enum order fp32 < fp16 < bf16) and its JSON form.
struct Level {
  double key;
  nlohmann::json value;
};

Level level_of(const Config& c, const std::string& knob) {
  if (knob == "depth") return {double(c.depth), c.depth};
  if (knob == "width") return {c.width, c.width};
  if (knob == "resolution") return {double(c.resolution), c.resolution};
  if (knob == "batch") return {double(c.batch), c.batch};
  return {double(static_cast<int>(c.precision)), to_string(c.precision)};
}

struct Acc {
  nlohmann::json value;
  double sum = 0;
  int n = 0;
};

nlohmann::json knob_scaling(const Rows& rows, const std::string& knob, const std::string& target) {
  std::map<double, Acc> groups;
  for (const Record* r : rows)
    if (auto v = r->value(target)) {
      const Level l = level_of(r->config, knob);
      Acc& a = groups[l.key];
      a.value = l.value;
      a.sum += *v;
      ++a.n;
    }
  if (groups.size() < 2)
    return unavailable(groups.empty() ? "no " + target + " values" : "only one " + knob + " level");
  nlohmann::json levels = nlohmann::json::array();
  const Acc* lo = nullptr;
  const Acc* hi = nullptr;
  for (const auto& [k, a] : groups) {
    levels.push_back({{"level", a.value}, {"mean", a.sum / a.n}, {"n", a.n}});
    if (!lo || a.sum / a.n < lo->sum / lo->n) lo = &a;
    if (!hi || a.sum / a.n > hi->sum / hi->n) hi = &a;
  }
  const double lo_mean = lo->sum / lo->n, hi_mean = hi->sum / hi->n;
  nlohmann::json out = {{"available", true},
                        {"levels", levels},
                        {"min", {{"level", lo->value}, {"mean", lo_mean}}},
                        {"max", {{"level", hi->value}, {"mean", hi_mean}}}};
  // A non-positive mean (never for real costs) makes the ratio meaningless: say so instead.
  if (lo_mean > 0)
    out["ratio"] = hi_mean / lo_mean;
  else
    out["ratio"] = nullptr;
  return out;
}

}  // namespace

nlohmann::json scaling_section(const Rows& rows, const std::vector<std::string>& targets) {
  std::map<Family, Rows> by_family;
  for (const Record* r : rows) by_family[r->config.family].push_back(r);
  nlohmann::json fams = nlohmann::json::object();
  for (const auto& [f, fr] : by_family) {
    nlohmann::json per_target = nlohmann::json::object();
    for (const auto& t : targets) {
      nlohmann::json knobs = nlohmann::json::object();
      for (const char* k : kKnobs) knobs[k] = knob_scaling(fr, k, t);
      per_target[t] = knobs;
    }
    fams[to_string(f)] = per_target;
  }
  return {{"available", true},
          {"definition",
           "per family and target: mean of the target at each level of the knob (other knobs pooled); "
           "ratio = max mean / min mean"},
          {"knobs", {"depth", "width", "resolution", "batch", "precision"}},
          {"families", fams}};
}

}  // namespace carb::detail
