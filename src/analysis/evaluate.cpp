// `carb evaluate` as a library function: reproduces the held-out split `carb train` used,
// scores the model on it and assembles the sections (baselines, leave-one-batch-tier-out,
// ablation, importance, residuals, components) into one document.
#include "carb/evaluate.hpp"

#include <chrono>
#include <cmath>
#include <iostream>

#include "../learn/model_internal.hpp"
#include "carb/drift.hpp"
#include "carb/error.hpp"
#include "carb/metrics.hpp"
#include "carb/training.hpp"
#include "carb/training_record.hpp"
#include "evaluate_internal.hpp"

namespace carb {
namespace eval {

nlohmann::json unavailable(const std::string& reason) { return {{"available", false}, {"reason", reason}}; }

std::vector<double> target_column(const Dataset& d, const std::string& target) {
  std::vector<double> y;
  y.reserve(d.rows.size());
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const auto v = d.rows[i].value(target);
    if (!v || !std::isfinite(*v))
      throw InputError("the data has no " + target + " for " + config_key(d.rows[i].config) +
                       ", but the model predicts " + target + ": evaluate on data that measured it");
    y.push_back(*v);
  }
  return y;
}

nlohmann::json score_model(const CarbModel& m, const Dataset& test) {
  nlohmann::json out = nlohmann::json::object();
  const auto pred = m.predict_columns(configs_of(test), telemetry_of(test));
  for (const auto& t : m.targets()) out[t] = fit_metrics(target_column(test, t), pred.at(t)).to_json();
  return out;
}

}  // namespace eval

namespace {

// The split: flags win, then what the bundle recorded, then carb train's defaults.
nlohmann::json resolve_split(const CarbModel& m, const EvaluateOptions& o, unsigned& seed, double& fraction) {
  const auto split = recorded_training_split(m);
  const bool recorded = split.has_value();
  const TrainingSplit s = split.value_or(TrainingSplit{});  // carb train's defaults
  seed = s.seed, fraction = s.test_fraction;
  if (o.seed) seed = *o.seed;
  if (o.test_fraction) fraction = *o.test_fraction;
  const bool flags = o.seed || o.test_fraction;
  return {{"seed", seed},
          {"test_fraction", fraction},
          {"source", flags      ? "flags"
                     : recorded ? "bundle"
                                : "default"}};
}

void check_options(const EvaluateOptions& o) {
  if (o.test_fraction && !(*o.test_fraction > 0 && *o.test_fraction < 1))
    throw InputError("--test-fraction must be in (0, 1), got " + std::to_string(*o.test_fraction));
  if (o.permutation_repeats < 1) throw InputError("permutation repeats must be at least 1");
  if (o.lobto_max_batch < 1) throw InputError("the leave-one-batch-tier-out boundary must be a batch >= 1");
}

// What a drift-corrected model says about raw (uncorrected) latencies of the held-out rows: its
// prediction as is (the latency at the typical host speed), and rescaled by each row's own
// reference reading (the latency at the host speed of that moment).
nlohmann::json drift_section(const CarbModel& m, const Dataset& raw_test,
                             const std::map<std::string, std::vector<double>>& pred, double reference) {
  nlohmann::json j = {{"reference_ms", reference},
                      {"note", "targets.latency_ms is scored against drift-corrected latency"}};
  if (!m.has_target("latency_ms")) return j;
  std::vector<double> y, as_is, at_moment;
  for (std::size_t i = 0; i < raw_test.rows.size(); ++i) {
    y.push_back(*raw_test.rows[i].latency_ms);
    as_is.push_back(pred.at("latency_ms")[i]);
    at_moment.push_back(as_is.back() * row_reference_ms(raw_test.rows[i]) / reference);
  }
  j["raw_latency"] = {{"prediction", fit_metrics(y, as_is).to_json()},
                      {"prediction_times_row_reference", fit_metrics(y, at_moment).to_json()}};
  return j;
}

template <class F>
nlohmann::json timed(const char* name, const EvaluateOptions& o, nlohmann::json& seconds, F&& f) {
  if (o.verbose) std::cerr << "evaluate: " << name << "...\n";
  const auto t0 = std::chrono::steady_clock::now();
  nlohmann::json j = f();
  seconds[name] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return j;
}

// Every ok row is a test row; nothing to fit baselines or retrained models on.
nlohmann::json evaluate_external(eval::Context& c) {
  const CarbModel& model = c.model;
  c.test = c.all;
  c.test_pred = model.predict_columns(configs_of(c.test), telemetry_of(c.test));
  std::size_t seen = 0;
  for (const auto& r : c.test.rows) seen += model.trained_on(r.config);
  nlohmann::json split = {{"external", true},
                          {"test_rows", c.test.rows.size()},
                          {"rows_in_training", model.knows_trained_configs() ? nlohmann::json(seen) : nlohmann::json()}};
  nlohmann::json doc = {{"platform", model.platform()}, {"targets_predicted", model.targets()},
                        {"rows", c.all.rows.size()},    {"split", split},
                        {"quick", c.opts.quick},        {"warnings", nlohmann::json::array()}};
  if (!model.knows_trained_configs())
    doc["warnings"].push_back("the bundle does not record its training configurations: some rows may have been "
                              "seen in training");
  else if (seen > 0)
    doc["warnings"].push_back(std::to_string(seen) + " of " + std::to_string(c.test.rows.size()) +
                              " rows are configurations the model trained on: their errors are optimistic");
  if (c.all.rows.front().platform != model.platform())
    doc["warnings"].push_back("the data is from platform '" + c.all.rows.front().platform + "', the model from '" +
                              model.platform() + "'");
  const nlohmann::json no_split = eval::unavailable("--external: no training split to fit on");
  nlohmann::json secs = nlohmann::json::object();
  doc["targets"] = timed("targets", c.opts, secs, [&] { return eval::score_model(model, c.test); });
  doc["baselines"] = {{"flops_linear", no_split}, {"flops_loglinear", no_split}, {"latency_proxy", no_split}};
  doc["importance"] = timed("importance", c.opts, secs, [&] { return eval::importance_section(c); });
  doc["residuals"] = timed("residuals", c.opts, secs, [&] { return eval::residuals_section(c); });
  doc["components"] = timed("components", c.opts, secs, [&] { return eval::components_section(c); });
  doc["lobto"] = no_split;
  doc["ablation"] = no_split;
  doc["seconds"] = secs;
  return doc;
}

}  // namespace

nlohmann::json evaluate_model(const CarbModel& model, const Dataset& data, const EvaluateOptions& o) {
  check_options(o);
  // A drift-corrected model is scored on data corrected to its reference time (carb/drift.hpp).
  const Dataset raw = data.ok_only();
  const auto reference = model.drift_reference_ms();
  eval::Context c{model, reference ? drift_corrected(raw, *reference) : raw, {}, {}, o, false, {}};
  if (c.all.rows.empty()) throw InputError("the data has no ok rows to evaluate on");
  for (const auto& t : model.targets()) eval::target_column(c.all, t);  // fail early, naming the row
  if (o.external) return evaluate_external(c);
  unsigned seed = 0;
  double fraction = 0;
  nlohmann::json split = resolve_split(model, o, seed, fraction);
  if (fraction <= 0)
    throw InputError(
        "the model was trained with test fraction 0, so no rows were held out: pass --test-fraction "
        "(the metrics will then include rows the model was trained on)");
  std::vector<std::size_t> tr, te;
  split_indices(c.all.rows.size(), fraction, seed, tr, te);
  if (te.size() < 2 || tr.size() < 2)
    throw InputError("too few ok rows (" + std::to_string(c.all.rows.size()) +
                     ") for a held-out split at test fraction " + std::to_string(fraction));
  c.train = subset(c.all, tr), c.test = subset(c.all, te);
  c.split_matches_training = dataset_hash(c.train) == model.data_hash();
  split["train_rows"] = tr.size(), split["test_rows"] = te.size();
  split["matches_training"] = c.split_matches_training;
  c.test_pred = model.predict_columns(configs_of(c.test), telemetry_of(c.test));

  nlohmann::json doc = {{"platform", model.platform()},
                        {"targets_predicted", model.targets()},
                        {"rows", c.all.rows.size()},
                        {"split", split},
                        {"quick", o.quick},
                        {"warnings", nlohmann::json::array()}};
  if (!c.split_matches_training)
    doc["warnings"].push_back(
        "the train split of this data is not the data the model was trained on: held-out "
        "rows may have been seen in training (other data, seed or test fraction)");
  if (!c.all.rows.empty() && c.all.rows.front().platform != model.platform())
    doc["warnings"].push_back("the data is from platform '" + c.all.rows.front().platform +
                              "', the model from '" + model.platform() + "'");
  if (o.quick)
    doc["warnings"].push_back("--quick: leave-one-batch-tier-out, ablation and no-cascade were skipped");
  nlohmann::json secs = nlohmann::json::object();
  doc["targets"] = timed("targets", o, secs, [&] { return eval::score_model(model, c.test); });
  doc["baselines"] = timed("baselines", o, secs, [&] { return eval::baselines_section(c); });
  doc["importance"] = timed("importance", o, secs, [&] { return eval::importance_section(c); });
  doc["residuals"] = timed("residuals", o, secs, [&] { return eval::residuals_section(c); });
  doc["components"] = timed("components", o, secs, [&] { return eval::components_section(c); });
  doc["lobto"] = timed("lobto", o, secs, [&] { return eval::lobto_section(c); });
  doc["ablation"] = timed("ablation", o, secs, [&] { return eval::ablation_section(c); });
  if (reference) doc["drift_correction"] = drift_section(model, subset(raw, te), c.test_pred, *reference);
  doc["seconds"] = secs;
  return doc;
}

nlohmann::json run_evaluate(const std::filesystem::path& model_dir,
                            const std::vector<std::filesystem::path>& data, const EvaluateOptions& o) {
  check_options(o);
  const CarbModel m = CarbModel::load(model_dir);
  nlohmann::json doc = evaluate_model(m, read_datasets(data), o);
  std::vector<std::string> files;
  for (const auto& f : data) files.push_back(f.string());
  doc["model"] = model_dir.string();
  doc["data"] = files;
  return doc;
}

}  // namespace carb
