// The typed records of training (carb/training_record.hpp) and their documents in the bundle's
// manifest: per target "components" {<learner kind>: metrics, blend, blend_corrected, form}, and
// the manifest's "extra" {split, test_metrics, train_seconds, data_files}.
#include "carb/training_record.hpp"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

namespace carb {

const char* to_string(TargetForm f) { return f == TargetForm::ratio ? "ratio" : "plain"; }

nlohmann::json FormChoice::to_json() const {
  nlohmann::json j = {{"chosen", to_string(chosen)}};
  if (!why.empty()) j["why"] = why;
  if (estimate) j["estimate"] = estimate->to_json();
  if (oof_mse_log_plain && oof_mse_log_ratio)
    j["oof_mse_log"] = {{"plain", *oof_mse_log_plain}, {"ratio", *oof_mse_log_ratio}};
  return j;
}

FormChoice FormChoice::from_json(const nlohmann::json& j) {
  FormChoice f;
  const std::string chosen = j.at("chosen").get<std::string>();
  if (chosen != "plain" && chosen != "ratio")
    throw nlohmann::json::other_error::create(501, "unknown target form '" + chosen + "'", &j);
  f.chosen = chosen == "ratio" ? TargetForm::ratio : TargetForm::plain;
  f.why = j.value("why", std::string());
  if (j.contains("estimate")) f.estimate = AnalyticEstimate::from_json(j.at("estimate"));
  if (j.contains("oof_mse_log")) {
    f.oof_mse_log_plain = j.at("oof_mse_log").at("plain").get<double>();
    f.oof_mse_log_ratio = j.at("oof_mse_log").at("ratio").get<double>();
  }
  return f;
}

nlohmann::json OofComponents::to_json() const {
  nlohmann::json j = {{"blend", blend.to_json()}, {"form", form.to_json()}};
  for (const auto& [kind, m] : learners) j[kind] = m.to_json();
  if (blend_corrected) j["blend_corrected"] = blend_corrected->to_json();
  return j;
}

OofComponents OofComponents::from_json(const nlohmann::json& j) {
  OofComponents c;
  if (!j.is_object()) throw nlohmann::json::type_error::create(302, "components must be an object", &j);
  for (const auto& [key, v] : j.items()) {
    if (key == "form")
      c.form = FormChoice::from_json(v);
    else if (key == "blend")
      c.blend = FitMetrics::from_json(v);
    else if (key == "blend_corrected")
      c.blend_corrected = FitMetrics::from_json(v);
    else
      c.learners[key] = FitMetrics::from_json(v);
  }
  if (!j.contains("blend") || !j.contains("form"))
    throw nlohmann::json::out_of_range::create(403, "components lack the blend or the form", &j);
  return c;
}

nlohmann::json TrainingRecord::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  if (split)
    j["split"] = {{"seed", split->seed},
                  {"test_fraction", split->test_fraction},
                  {"train_rows", split->train_rows},
                  {"test_rows", split->test_rows}};
  if (!test_metrics.empty() || train_seconds) {
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto& [t, m] : test_metrics) metrics[t] = m.to_json();
    j["test_metrics"] = metrics;
  }
  if (train_seconds) j["train_seconds"] = *train_seconds;
  if (!data_files.empty() || train_seconds) j["data_files"] = data_files;
  if (!remeasured_files.empty()) j["remeasured_files"] = remeasured_files;
  return j;
}

TrainingRecord TrainingRecord::from_json(const nlohmann::json& j) {
  TrainingRecord r;
  if (!j.is_object()) return r;
  if (j.contains("split")) {
    // Only what record_training_split writes: a list, a negative or fractional seed (it wrapped to
    // 4294967295 or truncated) or a missing field would make evaluate score another split.
    const auto& s = j.at("split");
    const auto whole = [&](const char* key, std::uint64_t max) {
      const auto& v = s.at(key);
      if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max)
        throw nlohmann::json::type_error::create(302, std::string("split ") + key + " must be a whole number", &s);
      return v.get<std::uint64_t>();
    };
    TrainingSplit t;
    t.seed = static_cast<unsigned>(whole("seed", std::numeric_limits<unsigned>::max()));
    if (!s.at("test_fraction").is_number()) throw nlohmann::json::type_error::create(302, "split test_fraction must be a number", &s);
    t.test_fraction = s.at("test_fraction").get<double>();
    t.train_rows = whole("train_rows", std::numeric_limits<std::uint32_t>::max());
    t.test_rows = whole("test_rows", std::numeric_limits<std::uint32_t>::max());
    r.split = t;
  }
  if (j.contains("test_metrics"))
    for (const auto& [t, m] : j.at("test_metrics").items()) r.test_metrics[t] = FitMetrics::from_json(m);
  if (j.contains("train_seconds")) r.train_seconds = j.at("train_seconds").get<double>();
  if (j.contains("data_files")) r.data_files = j.at("data_files").get<std::vector<std::string>>();
  if (j.contains("remeasured_files")) r.remeasured_files = j.at("remeasured_files").get<std::vector<std::string>>();
  return r;
}

}  // namespace carb
