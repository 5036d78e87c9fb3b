// Validation of a screen against measurements of the target platform: would the budget decisions
// made on predictions have been the decisions made on the measured costs? Also the prediction
// errors on the matched configurations and, with a confidence, the false-accept/false-reject
// trade-off across the stored coverage levels.
#include <algorithm>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "carb/drift.hpp"
#include "carb/error.hpp"
#include "carb/metrics.hpp"
#include "carb/prediction_io.hpp"
#include "carb/screen.hpp"
#include "carb/text_table.hpp"

namespace carb {

namespace {

// 0 of 0 is no rate: a false-accept rate with no configuration over budget printed as a perfect 0.
double ratio(std::size_t a, std::size_t b) {
  return b == 0 ? kUndefined : static_cast<double>(a) / static_cast<double>(b);
}

// One measured configuration: every target averaged over its ok rows (those that have it).
struct Measured {
  Config config;
  std::map<std::string, std::pair<double, int>> sum;  // target -> (sum, count)
  std::optional<double> value(const std::string& t) const {
    auto it = sum.find(t);
    if (it == sum.end()) return std::nullopt;
    return it->second.first / it->second.second;
  }
};

std::vector<Measured> measured_in_space(const std::vector<Config>& screened, const Dataset& d,
                                        ScreenValidation& v) {
  std::unordered_set<std::string> space;
  space.reserve(screened.size());
  for (const auto& c : screened) space.insert(network_key(c));  // 0.251 measures 0.25's network
  std::unordered_map<std::string, std::size_t> at;
  std::unordered_set<std::string> seen;
  std::set<std::string> platforms;
  std::vector<Measured> out;
  std::unordered_set<std::string> failed;
  for (const auto& r : d.rows) {
    if (r.status != Status::ok) {
      if (space.count(network_key(r.config))) failed.insert(network_key(r.config));
      continue;
    }
    platforms.insert(r.platform);
    const std::string key = network_key(r.config);
    seen.insert(key);
    if (!space.count(key)) continue;
    auto [it, fresh] = at.emplace(key, out.size());
    if (fresh) out.push_back({r.config, {}});
    for (const char* t : kTargets)
      if (auto x = r.value(t)) {
        auto& s = out[it->second].sum[t];
        s.first += *x, s.second += 1;
      }
  }
  v.measured = seen.size();
  v.measured_in_space = at.size();
  v.measured_platforms.assign(platforms.begin(), platforms.end());
  for (const auto& k : failed) v.failed_only += !at.count(k);
  return out;
}

// Measured decision; nullopt when a budgeted target was not measured.
std::optional<bool> measured_accept(const Measured& m, const Budgets& b) {
  bool ok = true;
  for (const auto& [t, limit] : b) {
    auto x = m.value(t);
    if (!x) return std::nullopt;
    ok = ok && *x <= limit;
  }
  return ok;
}

// `allowed`, when given: whether the screen could accept each configuration at all (one the
// shortlist cut, or one predicted not to fit the device's memory, is rejected).
BudgetConfusion confusion(const std::vector<Prediction>& pred, const std::vector<std::optional<bool>>& truth,
                          const Budgets& b, bool use_upper, const std::vector<bool>* allowed = nullptr) {
  BudgetConfusion c;
  for (std::size_t i = 0; i < pred.size(); ++i) {
    if (!truth[i]) continue;
    const bool acc = (!allowed || (*allowed)[i]) && accepted(pred[i], b, use_upper);
    if (*truth[i])
      (acc ? c.true_accept : c.false_reject) += 1;
    else
      (acc ? c.false_accept : c.true_reject) += 1;
  }
  return c;
}

}  // namespace

double BudgetConfusion::accuracy() const { return ratio(true_accept + true_reject, total()); }
double BudgetConfusion::false_accept_rate() const { return ratio(false_accept, false_accept + true_reject); }
double BudgetConfusion::false_reject_rate() const { return ratio(false_reject, false_reject + true_accept); }

nlohmann::json BudgetConfusion::to_json() const {
  return {{"true_accept", true_accept},
          {"false_accept", false_accept},
          {"true_reject", true_reject},
          {"false_reject", false_reject},
          {"accuracy", accuracy()},
          {"false_accept_rate", false_accept_rate()},
          {"false_reject_rate", false_reject_rate()}};
}

namespace {

// Leaves out the configurations the model trained on, unless asked to keep them.
std::vector<Measured> held_out(std::vector<Measured> rows, const CarbModel& m, bool include_trained,
                               ScreenValidation& v) {
  if (!m.knows_trained_configs()) return rows;
  if (include_trained) {
    v.split = "includes_trained";
    return rows;
  }
  v.split = "held_out";
  std::vector<Measured> out;
  for (auto& r : rows) {
    if (m.trained_on(r.config))
      v.excluded_trained += 1;
    else
      out.push_back(std::move(r));
  }
  if (out.empty())
    throw InputError("validation: the " + m.platform() + " model trained on all " + std::to_string(rows.size()) +
                     " measured configurations in the space; validate on measurements it did not train on "
                     "(or pass --validate-include-trained for an optimistic check)");
  return out;
}

}  // namespace

ScreenValidation validate_screen(const std::vector<Config>& screened, const Dataset& measured,
                                 const CarbModel& m, const Budgets& b, std::optional<double> confidence,
                                 bool include_trained, const std::vector<Config>* shortlist) {
  // As screen checks them (a C++ tester: a NaN or negative budget, or one on a target the model
  // does not predict, validated to "accuracy 1").
  check_budgets(b, m);
  ScreenValidation v;
  v.model_platform = m.platform();
  // Ninety-seventh hostile pass: with no budget every configuration is accepted, measured or
  // predicted, and the table read "accuracy 1" without a word.
  if (b.empty())
    v.warnings.push_back("no budget was given: every configuration is accepted, by the model and by the measurements "
                         "alike, so these decisions cannot be wrong and say nothing of the model; give --energy-max, "
                         "--latency-max or --memory-max to check its budget decisions");
  // A drift-corrected model predicts latency at its typical host speed: compare like with like.
  const auto reference = m.drift_reference_ms();
  auto in_space = measured_in_space(screened, reference ? drift_corrected(measured, *reference) : measured, v);
  // Said, not only done (twenty-fifth hostile pass: 0 false accepts against corrected latencies were
  // 3 of 47 against the raw measurements, and nothing told them apart).
  if (reference)
    if (const std::string note = drift_left_out_note(measured, *reference); !note.empty()) v.warnings.push_back(note);
  if (reference)
    v.warnings.push_back("the model learned latency corrected for host drift: the measured latencies were "
                         "corrected the same way (to the host speed where the reference network takes " +
                         fmt_num(*reference) + " ms) before comparing; against the raw measurements the "
                         "decisions can differ");
  if (in_space.empty())
    throw InputError("validation: none of the " + std::to_string(v.measured) +
                     " configurations measured ok is in the screened space");
  // Fifteenth hostile pass: cpu-2t measurements validated the cpu-1t model's decisions (latency R²
  // -0.18) without a word; evaluate warns of the same mismatch.
  for (const auto& p : v.measured_platforms)
    if (p != m.platform())
      v.warnings.push_back("the measurements are from platform '" + p + "', the model that decides from '" +
                           m.platform() + "': the figures compare two platforms");
  const auto rows = held_out(std::move(in_space), m, include_trained, v);
  v.matched = rows.size();
  std::vector<Config> cs;
  std::vector<std::optional<bool>> truth;
  for (const auto& r : rows) cs.push_back(r.config), truth.push_back(measured_accept(r, b));
  v.unclassified = static_cast<std::size_t>(std::count(truth.begin(), truth.end(), std::nullopt));
  if (const auto note = guesses_note(m, cs); !note.empty()) v.warnings.push_back(note);
  // Configurations of the space measured only as failures (oom, error) have no cost to compare:
  // left out, and said (twenty-fourth hostile pass: "4 of 4 measured" beside a fifth measured oom).
  if (v.failed_only)
    v.warnings.push_back(std::to_string(v.failed_only) + " configuration" + (v.failed_only == 1 ? "" : "s") +
                         " of the space measured only as oom or error " + (v.failed_only == 1 ? "is" : "are") +
                         " left out: no cost to compare");

  const auto point = m.predict(cs);
  // Thirty-seventh hostile pass: costs at or below zero were scored, and decided on, without a word.
  {
    std::map<std::string, std::vector<double>> cols;
    for (const auto& p : point)
      for (const auto& [t, x] : p.value) cols[t].push_back(x);
    if (auto note = nonpositive_note(cols); !note.empty())
      v.warnings.push_back(note + "; none of them can be accepted, so each counts as a reject");
  }
  for (const auto& t : m.targets()) {
    std::vector<double> y, p;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (auto x = rows[i].value(t)) y.push_back(*x), p.push_back(point[i].value.at(t));
    if (!y.empty()) v.errors[t] = fit_metrics(y, p);
  }
  // As the screen decides: a configuration predicted not to fit the device's memory (on its point
  // prediction) is left out whatever the budgets say (a hostile pass: validation counted such
  // configurations as accepted where the screen had dropped them).
  std::vector<bool> fits(cs.size(), true);
  const auto device_memory = held_device_memory(m);
  if (device_memory)
    for (std::size_t i = 0; i < cs.size(); ++i) fits[i] = fits_device_memory(point[i], *device_memory);
  const auto over = static_cast<std::size_t>(std::count(fits.begin(), fits.end(), false));
  if (over)
    v.warnings.push_back(std::to_string(over) + " measured configuration" + (over == 1 ? " is" : "s are") +
                         " predicted not to fit the device's " + fmt_num(*device_memory) +
                         " MB of memory: rejected, as the screen rejects them");
  const std::vector<bool>* allowed = device_memory ? &fits : nullptr;
  std::vector<bool> kept;
  if (shortlist) {
    std::unordered_set<std::string> keys;
    for (const Config& c : *shortlist) keys.insert(network_key(c));
    for (std::size_t i = 0; i < cs.size(); ++i) kept.push_back(keys.count(network_key(cs[i])) > 0 && fits[i]);
    v.shortlisted = static_cast<std::size_t>(std::count_if(cs.begin(), cs.end(), [&](const Config& c) {
      return keys.count(network_key(c)) > 0;
    }));
  }
  const std::vector<Prediction> decided = confidence ? m.predict(cs, {}, confidence) : point;
  v.decisions = confusion(decided, truth, b, confidence.has_value(), allowed);
  if (shortlist) v.screen_decisions = confusion(decided, truth, b, confidence.has_value(), &kept);
  if (!confidence) return v;
  v.tradeoff.emplace_back("none", confusion(point, truth, b, false, allowed));
  for (double level : kConfidenceLevels) {
    std::ostringstream name;
    name << level;
    v.tradeoff.emplace_back(name.str(), confusion(m.predict(cs, {}, level), truth, b, true, allowed));
  }
  return v;
}

nlohmann::json ScreenValidation::to_json(const Budgets& b) const {
  nlohmann::json j = {{"model_platform", model_platform},
                      {"measured_platforms", measured_platforms},
                      {"measured", measured},
                      {"measured_in_space", measured_in_space},
                      {"matched", matched},
                      {"unclassified", unclassified},
                      {"excluded_trained", excluded_trained},
                      {"failed_only", failed_only},
                      {"split", split},
                      {"warnings", warnings},
                      {"decisions", decisions.to_json()}};
  if (screen_decisions) j["screen_decisions"] = screen_decisions->to_json(), j["shortlisted"] = shortlisted;
  j["errors"] = nlohmann::json::object();
  for (const auto& [t, f] : errors) {
    j["errors"][t] = f.to_json();
    j["errors"][t]["budgeted"] = b.count(t) > 0;
  }
  if (!tradeoff.empty()) {
    j["tradeoff"] = nlohmann::json::array();
    for (const auto& [level, c] : tradeoff) {
      auto row = c.to_json();
      row["confidence"] = level;
      j["tradeoff"].push_back(row);
    }
  }
  return j;
}

}  // namespace carb
