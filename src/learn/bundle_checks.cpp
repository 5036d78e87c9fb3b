// What a loaded bundle must be, beyond its checksums: the checksum is not a key, so a manifest can
// be edited and re-sealed (fourth hostile pass: negative latencies from a flipped option, a model
// that "trained on none" of its rows, a segfault from 100000 threads). Each check here refuses a
// value no `carb train` writes, with a one-line ModelError naming the bundle.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/features.hpp"
#include "carb/learner.hpp"
#include "model_internal.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

// A number as people read it in a message ("1e+308", not 309 digits).
std::string shown(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

[[noreturn]] void refuse(const fs::path& dir, const std::string& what) {
  throw ModelError("model bundle " + dir.string() + " " + what + ": it was altered; retrain it");
}

void check_trained_configs(const CarbModel& m, const fs::path& dir) {
  const auto& keys = m.trained_configs();
  std::vector<Config> trained;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i > 0 && !(keys[i - 1] < keys[i])) refuse(dir, "lists its trained configurations out of order or twice");
    const auto c = parse_config_key(keys[i]);
    if (!c) refuse(dir, "lists a trained configuration that is none ('" + keys[i] + "')");
    trained.push_back(*c);
  }
  // The envelope is a function of the trained configurations: emptied or widened ranges (fifth
  // hostile pass) silenced the "outside the trained ranges" flag and the widening of intervals.
  TrainedEnvelope configs_part = m.envelope();
  configs_part.telemetry.clear();  // measured utilization, not a function of the configurations
  if (m.knows_trained_configs() && configs_part.to_json() != TrainedEnvelope::of(trained).to_json())
    refuse(dir, "has a trained envelope that is not the one of its trained configurations");
  // Training needs rows; an emptied list (with an emptied envelope) silenced the envelope flag.
  if (keys.empty()) refuse(dir, "lists no trained configurations");
  const auto& split = m.training_record().split;
  if (split && keys.size() != split->train_rows)
    refuse(dir, "lists " + std::to_string(keys.size()) + " trained configurations but trained on " +
                    std::to_string(split->train_rows) + " rows");
}

void check_record(const CarbModel& m, const fs::path& dir) {
  const TrainingRecord& r = m.training_record();
  for (const auto& [t, f] : r.test_metrics)
    if (!m.has_target(t)) refuse(dir, "records held-out scores of a target it does not predict (" + t + ")");
  if (r.train_seconds && !(*r.train_seconds >= 0 && std::isfinite(*r.train_seconds)))
    refuse(dir, "records a training time of " + shown(*r.train_seconds) + " s");
  if (r.split && !(r.split->test_fraction >= 0 && r.split->test_fraction < 1))
    refuse(dir, "records a test fraction of " + shown(r.split->test_fraction));
}

// What the model answers for configurations it trained on must be a cost a platform can have:
// a flipped log_target gave negative latencies, a forged estimate floor 1e308.
void check_predictions(const CarbModel& m, const nlohmann::json& manifest, const fs::path& dir) {
  const auto& keys = m.trained_configs();
  if (keys.empty()) return;
  // The first, middle and last trained configuration, and the first and last of each family and
  // precision: a forged coefficient of one precision's term (gflops*bf16) reaches only its rows.
  std::vector<Config> probe;
  std::map<std::string, std::vector<Config>> groups;
  for (const auto& k : keys) {
    const Config c = *parse_config_key(k);
    groups[to_string(c.family) + '/' + to_string(c.precision)].push_back(c);
  }
  for (std::size_t i : {std::size_t{0}, keys.size() / 2, keys.size() - 1}) probe.push_back(*parse_config_key(keys[i]));
  for (const auto& g : groups) probe.push_back(g.second.front()), probe.push_back(g.second.back());
  // And an even sample of the rest (at most 128 in all): a learner file edited to answer absurdly
  // only at depth 200 slipped past the probes above.
  for (std::size_t i = 0, step = std::max<std::size_t>(1, keys.size() / 128); i < keys.size(); i += step)
    probe.push_back(*parse_config_key(keys[i]));
  const std::size_t trained_probes = probe.size();
  // And every family and precision the model did not train on, at a trained configuration's shape:
  // training writes their estimate terms as 0, and a forged 1e300 there answered 6.5e299 ms.
  const Config first = *parse_config_key(keys.front());
  for (Family f : {Family::basic, Family::bottleneck})
    for (Precision p : {Precision::fp32, Precision::fp16, Precision::bf16}) {
      Config c = first;
      if (c.family != f) c.family = f, c.depth = f == Family::basic ? 18 : 50;
      c.precision = p;
      probe.push_back(c);
    }
  // A telemetry model predicts from measured utilization, which a bundle does not keep: any value a
  // platform can report gives a bounded answer from a model carb trained, so probe at mid-range.
  const std::vector<Telemetry> tel(m.schema().telemetry ? probe.size() : 0, Telemetry{50.0, 50.0});
  const auto p = m.predict(probe, tel, 0.99);
  std::map<std::string, double> smallest;  // per target, over the trained probes
  for (std::size_t k = 0; k < p.size(); ++k)
    for (const auto& tv : p[k].value) {
      const std::string& t = tv.first;  // (a structured binding: clang 14 cannot capture it)
      const double v = tv.second;
      const ColumnBounds* b = plausible_bounds(t);
      const auto& [lo, hi] = p[k].interval.at(t);
      // A raw-target model's sums of trees may dip below zero near a small cost (a known limit of
      // that form, README): only a log-target model's prediction must be a positive cost.
      const bool too_low = m.options().log_target && b && v < b->lo;
      // (Past the trained families and precisions the interval is unbounded by design, and so is
      // a level too few rows could bound: the conformal width is then stored as null. A finite
      // width is capped at load, so an interval must only hold its prediction.)
      const bool bad_interval = k < trained_probes && !(lo <= v && v <= hi);
      if (!std::isfinite(v) || too_low || (b && v > b->hi) || bad_interval)
        refuse(dir, "predicts " + t + " " + shown(v) + " for " + config_key(p[k].config) +
                        (k < trained_probes ? ", a configuration it trained on" : ""));
      if (k < trained_probes) smallest[t] = smallest.count(t) ? std::min(smallest[t], v) : v;
    }
  // At a configuration it trained on, each learner alone answers near the others: a learner whose
  // trees were edited answered e^28 times more at depth 200 (ninth hostile pass), and in raw-target
  // and telemetry bundles too (tenth). Compared with the median of the learners, which one edited
  // learner of three cannot move; the worst training gives on the shipped and test bundles is a
  // factor of 9, so a factor of 1000 is no training's. (Raw-target sums may dip to 0 or below near
  // a small cost: such configurations are not compared.)
  {
    const std::vector<Config> trained(probe.begin(), probe.begin() + static_cast<std::ptrdiff_t>(trained_probes));
    const std::vector<Telemetry> trained_tel(tel.empty() ? 0 : trained.size(), Telemetry{50.0, 50.0});
    for (const std::string& t : m.targets()) {
      const MemberPredictions mp = m.member_predictions(trained, t, trained_tel);
      if (mp.learners.size() < 3) continue;  // with two, neither is the odd one out
      for (std::size_t k = 0; k < trained.size(); ++k) {
        std::vector<double> v;
        for (const auto& l : mp.learners) v.push_back(l[k]);
        if (std::any_of(v.begin(), v.end(), [](double x) { return !(x > 0) || !std::isfinite(x); })) {
          if (m.options().log_target) refuse(dir, "has a learner answering no positive cost for " + config_key(trained[k]));
          continue;
        }
        std::vector<double> sorted = v;
        std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
        const double median = sorted[sorted.size() / 2];
        for (double alone : v)
          if (!(std::fabs(std::log(alone) - std::log(median)) <= std::log(1000.0)))
            refuse(dir, "has a learner answering " + shown(alone) + " where its others answer " + shown(median) + " (" +
                            t + ", " + config_key(trained[k]) + ", a configuration it trained on)");
      }
    }
  }
  // Training gives a precision it never saw no weight in the estimate (its term's coefficient is
  // 0): a forged gflops*bf16 coefficient of 2e6 in a model without bf16 answered 9.3e6 ms there.
  std::set<std::string> trained_precisions;
  for (const auto& g : groups) trained_precisions.insert(g.first.substr(g.first.find('/') + 1));
  for (const auto& [t, tm] : manifest.at("models").items()) {
    if (!tm.contains("estimate") || !tm["estimate"].is_object()) continue;
    const auto& e = tm["estimate"];
    for (std::size_t i = 0; i < e.at("terms").size() && i < e.at("coefficients").size(); ++i) {
      const std::string term = e["terms"][i].get<std::string>();
      const auto star = term.find('*');
      if (star == std::string::npos) continue;
      const std::string precision = term.substr(star + 1);
      if (!trained_precisions.count(precision) && e["coefficients"][i].get<double>() != 0.0)
        refuse(dir, "gives " + precision + ", which it never trained on, an estimate coefficient of " +
                        shown(e["coefficients"][i].get<double>()) + " for " + t);
    }
  }
  // The estimate's floor is a thousandth of the smallest cost measured, far below what the model
  // answers for any configuration it trained on; a floor re-sealed at 20 ms lifted a 0.29 ms
  // prediction to 6 ms. (Log-target models: a raw-target model's answers may dip to 0.)
  if (!m.options().log_target) return;
  for (const auto& [t, lowest] : smallest) {
    const auto& tm = manifest.at("models").at(t);
    if (!tm.contains("estimate") || !tm["estimate"].is_object()) continue;
    const double floor = tm["estimate"].value("floor", 0.0);
    if (!(floor <= 0.01 * lowest))
      refuse(dir, "has an estimate floor of " + shown(floor) + " for " + t + ", above a hundredth of what it predicts (" +
                      shown(lowest) + ") for configurations it trained on");
  }
}

}  // namespace

void check_bundle_options(const TrainOptions& o, const fs::path& dir) {
  try {
    check_train_options(o);  // what training takes, stated once
  } catch (const InputError& e) {
    refuse(dir, std::string("has options no training writes (") + e.what() + ")");
  }
}

void check_loaded_model(const CarbModel& m, const nlohmann::json& manifest, const fs::path& dir) {
  const std::string& p = m.platform();
  if (p.empty() || std::any_of(p.begin(), p.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
    refuse(dir, "has an empty platform or one with a control character");
  if (!manifest.at("extra").is_object()) refuse(dir, "has a training record that is no object");
  if (!manifest.contains("envelope")) refuse(dir, "has no trained envelope");
  // Every bundle carb writes records its trained configurations; without them the envelope and
  // prediction checks below would have nothing to check against (sixth hostile pass).
  if (!manifest.contains("trained_configs")) refuse(dir, "does not record its trained configurations");
  check_record(m, dir);
  check_trained_configs(m, dir);
  check_predictions(m, manifest, dir);
}

}  // namespace carb
