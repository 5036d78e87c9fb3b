// The check of a `carb screen --format json` document before the report draws it. Fifteenth
// hostile pass: `{}`, negative or 1e308 latencies and a latency "n/a" (which made the whole column
// vanish) were drawn as a screening result with exit 0.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "carb/config.hpp"
#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/model.hpp"
#include "carb/network_spec.hpp"
#include "carb/screen.hpp"
#include "carb/text_table.hpp"
#include "report_html.hpp"

namespace carb::report {
namespace {

using nlohmann::json;

[[noreturn]] void refuse(const std::string& file, const std::string& what) {
  throw InputError(file + ": " + what + " (expected `carb screen --format json` output)");
}

const json& member(const json& j, const char* key, const std::string& where, const std::string& file) {
  if (!j.contains(key)) refuse(file, where + " has no \"" + key + "\"");
  return j[key];
}

double finite_number(const json& v, const std::string& where, const std::string& file) {
  if (!v.is_number()) refuse(file, where + " is " + v.dump() + ", not a number");
  const double x = v.get<double>();
  if (!std::isfinite(x)) refuse(file, where + " is not finite");
  return x;
}

int whole_number(const json& v, const std::string& where, const std::string& file) {
  const double x = finite_number(v, where, file);
  if (x != std::floor(x) || std::abs(x) > 1e9) refuse(file, where + " is " + v.dump() + ", not a whole number");
  return static_cast<int>(x);
}

std::string text(const json& v, const std::string& where, const std::string& file) {
  if (!v.is_string()) refuse(file, where + " is " + v.dump() + ", not a string");
  return v.get<std::string>();
}

Config config_of(const json& row, const std::string& where, const std::string& file) {
  try {
    Config c;
    c.family = parse_family(text(member(row, "family", where, file), where + ".family", file));
    c.depth = whole_number(member(row, "depth", where, file), where + ".depth", file);
    c.width = finite_number(member(row, "width", where, file), where + ".width", file);
    c.resolution = whole_number(member(row, "resolution", where, file), where + ".resolution", file);
    c.batch = whole_number(member(row, "batch", where, file), where + ".batch", file);
    c.precision = parse_precision(text(member(row, "precision", where, file), where + ".precision", file));
    validate(c);
    return c;
  } catch (const InputError& e) {
    if (std::string(e.what()).rfind(file + ":", 0) == 0) throw;
    refuse(file, where + ": " + e.what());
  }
}

}  // namespace

namespace {

// A confusion row's four counts (true_accept, false_accept, true_reject, false_reject).
struct Counts {
  long long true_accept = 0, false_accept = 0, true_reject = 0, false_reject = 0;
  long long total() const { return true_accept + false_accept + true_reject + false_reject; }
};

// `d`'s counts where all four are whole numbers; nullopt otherwise, or, when `strict`, refused
// (negatives too).
std::optional<Counts> counts_of(const json& d, const std::string& where, const std::string& file, bool strict) {
  Counts c;
  for (const auto& [k, n] : {std::pair<const char*, long long*>{"true_accept", &c.true_accept},
                             {"false_accept", &c.false_accept},
                             {"true_reject", &c.true_reject},
                             {"false_reject", &c.false_reject}}) {
    const std::string at = where + "." + k;
    if (!strict && (!d.contains(k) || !d[k].is_number_integer())) return std::nullopt;
    *n = strict ? whole_number(member(d, k, at, file), at, file) : d[k].get<long long>();
    if (strict && *n < 0) refuse(file, at + " is negative");
  }
  return c;
}

// The validation's counts: the screen's own decisions count among the validated configurations,
// the accuracies drawn are their counts' own, and the screen's decisions are the model's, less what
// the shortlist cut (sixty-sixth and sixty-seventh hostile passes: edited ones were drawn as given).
void check_validation(const json& v, const std::map<std::string, int>& stage_count, const std::string& file) {
  if (v.contains("shortlisted")) {
    const int kept = whole_number(v["shortlisted"], "validation.shortlisted", file);
    if (kept < 0) refuse(file, "validation.shortlisted is negative");
    if (v.contains("matched") && kept > whole_number(v["matched"], "validation.matched", file))
      refuse(file, "validation.shortlisted is more than validation.matched");
    if (const auto it = stage_count.find("shortlist"); it != stage_count.end() && kept > it->second)
      refuse(file, "validation.shortlisted is more than the shortlist stage counts");
  }
  for (const char* which : {"decisions", "screen_decisions"}) {
    if (!v.contains(which) || !v[which].is_object() || !v[which].contains("accuracy") || v[which]["accuracy"].is_null())
      continue;
    const std::string where = std::string("validation.") + which;
    const auto c = counts_of(v[which], where, file, false);
    if (c && c->total() > 0 &&
        std::abs(finite_number(v[which]["accuracy"], where + ".accuracy", file) -
                 static_cast<double>(c->true_accept + c->true_reject) / static_cast<double>(c->total())) > 1e-9)
      refuse(file, where + ".accuracy is not what its counts give");
  }
  if (!v.contains("screen_decisions")) return;
  if (!v["screen_decisions"].is_object() || !v.contains("decisions") || !v["decisions"].is_object() ||
      !v.contains("shortlisted"))
    refuse(file, "validation.screen_decisions needs an object beside validation.decisions and validation.shortlisted");
  const Counts model = *counts_of(v["decisions"], "validation.decisions", file, true);
  const Counts cut = *counts_of(v["screen_decisions"], "validation.screen_decisions", file, true);
  if (cut.true_accept + cut.false_reject != model.true_accept + model.false_reject ||
      cut.false_accept + cut.true_reject != model.false_accept + model.true_reject)
    refuse(file, "validation.screen_decisions and validation.decisions judge different configurations");
  if (cut.true_accept > model.true_accept || cut.false_accept > model.false_accept)
    refuse(file, "validation.screen_decisions accepts more than validation.decisions, which the shortlist only cuts");
  if (cut.true_accept + cut.false_accept > v["shortlisted"].get<long long>())
    refuse(file, "validation.screen_decisions accepts more than validation.shortlisted kept");
}

}  // namespace

std::vector<ScreenBatchInversions> screen_batch_inversions(const json& doc, const std::string& file) {
  std::vector<ScreenBatchInversions> out;
  if (!doc.is_object() || !doc.contains("cost_falls_with_batch")) return out;  // a document from before
  const json& all = doc["cost_falls_with_batch"];
  if (!all.is_array()) refuse(file, "\"cost_falls_with_batch\" is not a list");
  for (std::size_t i = 0; i < all.size(); ++i) {
    const std::string where = "cost_falls_with_batch[" + std::to_string(i) + "]";
    const json& e = all[i];
    if (!e.is_object()) refuse(file, where + " is not an object");
    ScreenBatchInversions b;
    b.target = text(member(e, "target", where, file), where + ".target", file);
    if (b.target != "latency_ms" && b.target != "energy_j") refuse(file, where + ".target is neither latency_ms nor energy_j");
    const auto count = [&](const char* k) {
      const int n = whole_number(member(e, k, where, file), where + "." + k, file);
      if (n < 0) refuse(file, where + "." + k + " is negative");
      return static_cast<std::size_t>(n);
    };
    b.networks = count("networks"), b.of_networks = count("of_networks"), b.pareto = count("pareto");
    if (b.networks > b.of_networks) refuse(file, where + " counts more networks than it scored");
    const json& w = member(e, "worst", where, file);
    if (!w.is_object()) refuse(file, where + ".worst is not an object");
    b.smaller = config_of(member(w, "smaller", where + ".worst", file), where + ".worst.smaller", file);
    b.larger = config_of(member(w, "larger", where + ".worst", file), where + ".worst.larger", file);
    b.smaller_value = finite_number(member(w, "smaller_value", where + ".worst", file), where + ".worst.smaller_value", file);
    b.larger_value = finite_number(member(w, "larger_value", where + ".worst", file), where + ".worst.larger_value", file);
    b.ratio = finite_number(member(w, "ratio", where + ".worst", file), where + ".worst.ratio", file);
    out.push_back(std::move(b));
  }
  return out;
}

void check_screen_document(const json& doc, const std::string& file) {
  if (!doc.is_object()) refuse(file, "not a JSON object");
  (void)screen_batch_inversions(doc, file);
  const json& targets = member(doc, "targets", "the document", file);
  if (!targets.is_array() || targets.empty()) refuse(file, "\"targets\" is not a list of targets");
  std::vector<std::string> names;
  for (const auto& t : targets) {
    const std::string name = text(t, "a target", file);
    if (!plausible_bounds(name)) refuse(file, "\"" + name + "\" is not a target carb predicts");
    names.push_back(name);
  }
  const json& stages = member(doc, "stages", "the document", file);
  if (!stages.is_array()) refuse(file, "\"stages\" is not a list");
  // Each stage keeps some of the one before it (fifty-fifth hostile pass: a "within_budget" stage of
  // 3,000 after a shortlist of 5 was drawn as a bar of 3,000).
  std::map<std::string, int> stage_count;
  int before = -1;
  std::string before_name;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const std::string where = "stages[" + std::to_string(i) + "]";
    if (!stages[i].is_object()) refuse(file, where + " is not an object");
    const std::string name = text(member(stages[i], "name", where, file), where + ".name", file);
    const int count = whole_number(member(stages[i], "count", where, file), where + ".count", file);
    if (count < 0) refuse(file, where + ".count is negative");
    if (before >= 0 && count > before)
      refuse(file, where + " (" + name + ") keeps " + std::to_string(count) + " of the " + std::to_string(before) + " " +
                       before_name + " before it: a stage only keeps some of what it is given");
    stage_count.emplace(name, count);
    before = count, before_name = name;
  }
  const int candidates = stages.empty() ? -1 : stages.front()["count"].get<int>();
  // Counts the report states (thirty-fifth hostile pass: the unbounded count was left out), each at
  // most what it counts among.
  for (const char* k : {"unbounded_at_confidence", "source_guesses", "nonpositive_predictions",
                        "source_nonpositive_predictions", "within_budget_guesses", "within_budget_new_architectures",
                        "within_budget_never_trained",
                        "target_guesses", "within_budget", "within_budget_over_power", "pareto_over_power"})
    if (doc.contains(k)) {
      const int n = whole_number(doc[k], k, file);
      if (n < 0) refuse(file, std::string(k) + " is negative");
      if (candidates >= 0 && n > candidates)
        refuse(file, std::string(k) + " is " + std::to_string(n) + ", more than the " + std::to_string(candidates) +
                         " candidates");
    }
  if (doc.contains("within_budget") && stage_count.count("within_budget") &&
      doc["within_budget"].get<int>() != stage_count["within_budget"])
    refuse(file, "within_budget is " + doc["within_budget"].dump() + " but its stage counts " +
                     std::to_string(stage_count["within_budget"]));
  for (const char* k :
       {"within_budget_guesses", "within_budget_new_architectures", "within_budget_never_trained", "within_budget_over_power"})
    if (doc.contains(k) && doc.contains("within_budget") && doc[k].get<int>() > doc["within_budget"].get<int>())
      refuse(file, std::string(k) + " is more than within_budget");
  if (doc.contains("within_budget_never_trained") && doc.contains("within_budget_new_architectures") &&
      doc["within_budget_never_trained"].get<int>() > doc["within_budget_new_architectures"].get<int>())
    refuse(file, "within_budget_never_trained is more than within_budget_new_architectures");
  // The power screen's note names (a most_power_w of 0 or text would be said as "up to 0 W").
  if (doc.contains("within_budget_over_power") && doc["within_budget_over_power"].get<int>() > 0) {
    const double w = finite_number(member(doc, "most_power_w", "the document", file), "most_power_w", file);
    if (!(w > 0)) refuse(file, "most_power_w is " + fmt_num(w) + ", not the power of anything within budget");
  }
  if (doc.contains("power_limit_w") && !(finite_number(doc["power_limit_w"], "power_limit_w", file) > 0))
    refuse(file, "power_limit_w is not a positive number of watts");
  if (doc.contains("validation") && doc["validation"].is_object())
    check_validation(doc["validation"], stage_count, file);
  // A rank correlation is in [-1, 1] (fifty-fifth hostile pass: -7 was drawn as rho).
  if (doc.contains("rank_spearman") && !doc["rank_spearman"].is_null()) {
    const double rho = finite_number(doc["rank_spearman"], "rank_spearman", file);
    if (rho < -1 || rho > 1) refuse(file, "rank_spearman is " + fmt_num(rho) + ", outside [-1, 1]");
  }
  bool confident = false;
  if (doc.contains("confidence") && !doc["confidence"].is_null()) {
    const double c = finite_number(doc["confidence"], "confidence", file);
    if (std::find(kConfidenceLevels.begin(), kConfidenceLevels.end(), c) == kConfidenceLevels.end())
      refuse(file, "confidence is " + fmt_num(c) + ", not a level carb screen judges at (0.8, 0.9, 0.95 or 0.99)");
    confident = true;
  }
  // What it ranked by is a target carb predicts; one the final model lacks only in a two-stage screen,
  // whose source ranked (fifty-sixth hostile pass: "ranked by foo" was drawn).
  if (doc.contains("rank_by")) {
    const std::string by = text(doc["rank_by"], "rank_by", file);
    if (std::find(std::begin(kTargets), std::end(kTargets), by) == std::end(kTargets))
      refuse(file, "rank_by \"" + by + "\" is not a target carb predicts");
    const bool two = doc.contains("two_stage") && doc["two_stage"].is_boolean() && doc["two_stage"].get<bool>();
    if (std::find(names.begin(), names.end(), by) == names.end() && !two)
      refuse(file, "rank_by " + by + " is not among the document's targets, which a one-stage screen ranks by");
  }
  // Fifty-second hostile pass: a Pareto row edited to 999 ms was drawn beside "budgets latency_ms <=
  // 20". Every row the screen passed meets its budgets: on the upper bound where it has an interval.
  std::vector<std::pair<std::string, double>> budgets;
  if (doc.contains("budgets")) {
    if (!doc["budgets"].is_object()) refuse(file, "\"budgets\" is not an object");
    for (const auto& [t, limit] : doc["budgets"].items()) {
      if (std::find(names.begin(), names.end(), t) == names.end())
        refuse(file, "a budget on " + t + ", which is not among the document's targets");
      budgets.emplace_back(t, finite_number(limit, "budgets." + t, file));
    }
  }
  const json& pareto = member(doc, "pareto", "the document", file);
  if (!pareto.is_array()) refuse(file, "\"pareto\" is not a list");
  if (stage_count.count("pareto") && static_cast<int>(pareto.size()) != stage_count["pareto"])
    refuse(file, "\"pareto\" lists " + std::to_string(pareto.size()) + " rows but its stage counts " +
                     std::to_string(stage_count["pareto"]));
  // A Pareto set holds each configuration once, and none that another of its rows beats on every
  // cost (and capacity, where it was taken against one) (fifty-sixth hostile pass: a dominated row,
  // and a duplicate, were drawn as part of the front). Gathered row by row, judged after the loop.
  std::set<std::string> keys;
  std::vector<std::vector<double>> objectives(names.size());
  const bool capacity = doc.contains("capacity") && !doc["capacity"].is_null();
  if (capacity) objectives.emplace_back();
  std::size_t never_measured = 0;
  for (std::size_t i = 0; i < pareto.size(); ++i) {
    const std::string where = "pareto[" + std::to_string(i) + "]";
    if (!pareto[i].is_object()) refuse(file, where + " is not an object");
    if (pareto[i].contains("trained_architecture")) {
      if (!pareto[i]["trained_architecture"].is_boolean()) refuse(file, where + ".trained_architecture is not true or false");
      never_measured += !pareto[i]["trained_architecture"].get<bool>();
    }
    const Config c = config_of(pareto[i], where, file);
    if (!keys.insert(config_key(c)).second) refuse(file, where + " is a configuration listed before it");
    const NetworkSpec spec = network_totals(c);
    for (const auto& t : names) {
      const double v = finite_number(member(pareto[i], t.c_str(), where, file), where + "." + t, file);
      const ColumnBounds& b = *plausible_bounds(t);
      if (!b.contains(v)) refuse(file, where + "." + t + " is " + fmt_num(v) + ", outside the plausible range " + b.describe());
      // No prediction carb writes is a cost no forward pass can have (fifty-fifth hostile pass: a
      // peak of 1e-6 MB was drawn for a network whose weights alone take more): the memory floor
      // predict raises to, and the compute rate and efficiency no device exceeds.
      const auto impossible = [&](const std::string& why) {
        refuse(file, where + "." + t + " is " + fmt_num(v) + " for " + config_key(c) + ", " + why +
                         " (edited since carb screen wrote it?)");
      };
      if (t == "peak_memory_mb" && v < spec.memory_floor_mb() * (1 - 1e-9))
        impossible("under the " + fmt_num(spec.memory_floor_mb()) + " MB its weights, input and largest layer output take");
      if (t == "latency_ms" && v / 1000 < spec.flops() / kMaxFlopsPerSecond)
        impossible("faster than the " + fmt_num(kMaxFlopsPerSecond / 1e15) + " PFLOP/s any device computes");
      if (t == "energy_j" && v < spec.flops() / kMaxFlopsPerJoule)
        impossible("under what its FLOPs take at the " + fmt_num(kMaxFlopsPerJoule / 1e12) + " TFLOP/J of any device");
      const std::string lo = t + "_lower", hi = t + "_upper";
      if (pareto[i].contains(lo) || pareto[i].contains(hi)) {
        const double l = finite_number(member(pareto[i], lo.c_str(), where, file), where + "." + lo, file);
        const double h = finite_number(member(pareto[i], hi.c_str(), where, file), where + "." + hi, file);
        if (!(l <= v && v <= h)) refuse(file, where + ": the interval of " + t + " does not hold its prediction");
      }
    }
    for (const auto& [t, limit] : budgets) {
      const std::string judged = pareto[i].contains(t + "_upper") ? t + "_upper" : t;
      const double v = pareto[i][judged].get<double>();  // checked finite above
      if (!(v <= limit))
        refuse(file, where + "." + judged + " is " + fmt_num(v) + ", over the document's own budget " + t + " <= " +
                         fmt_num(limit) + " (edited since carb screen wrote it?)");
    }
    if (pareto[i].contains("capacity") && finite_number(pareto[i]["capacity"], where + ".capacity", file) < 0)
      refuse(file, where + ".capacity is negative");
    // A budget judged at a confidence level judged the row's interval, which it then has.
    if (confident)
      for (const auto& [t, limit] : budgets)
        if (!pareto[i].contains(t + "_upper"))
          refuse(file, where + " has no interval of " + t + ", though its budget was judged at the document's confidence");
    for (std::size_t k = 0; k < names.size(); ++k) objectives[k].push_back(pareto[i][names[k]].get<double>());
    if (capacity)
      objectives.back().push_back(-finite_number(member(pareto[i], "capacity", where, file), where + ".capacity", file));
  }
  // The Pareto rows are within budget: no more of them new networks than screen counted.
  if (doc.contains("within_budget_new_architectures") &&
      static_cast<long long>(never_measured) > doc["within_budget_new_architectures"].get<long long>())
    refuse(file, std::to_string(never_measured) + " Pareto rows are of networks never measured, more than "
                     "within_budget_new_architectures counts");
  const std::vector<std::size_t> front = pareto_front(objectives);
  if (front.size() != pareto.size()) {
    std::vector<bool> on(pareto.size(), false);
    for (std::size_t i : front) on[i] = true;
    const std::size_t off = static_cast<std::size_t>(std::find(on.begin(), on.end(), false) - on.begin());
    refuse(file, "pareto[" + std::to_string(off) + "] is beaten on every cost by another row of the set, so it is no "
                 "Pareto row (edited since carb screen wrote it?)");
  }
}

}  // namespace carb::report
