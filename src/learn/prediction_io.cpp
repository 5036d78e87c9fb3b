// CSV and JSON output of predictions.
#include "carb/prediction_io.hpp"

#include <cstdio>

#include "carb/arch.hpp"

namespace carb {

namespace {
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}
}  // namespace

void write_predictions_csv(const std::vector<Prediction>& p, const std::vector<std::string>& targets,
                           std::ostream& out) {
  const bool intervals = !p.empty() && !p.front().interval.empty();
  out << "family,depth,width,resolution,batch,precision";
  for (const auto& t : targets) {
    out << ',' << t;
    if (intervals) out << ',' << t << "_lower," << t << "_upper";
  }
  out << '\n';
  for (const auto& x : p) {
    const Config& c = x.config;
    out << to_string(c.family) << ',' << c.depth << ',' << format_width(c.width) << ',' << c.resolution << ','
        << c.batch << ',' << to_string(c.precision);
    for (const auto& t : targets) {
      out << ',' << num(x.value.at(t));
      if (intervals) out << ',' << num(x.interval.at(t).first) << ',' << num(x.interval.at(t).second);
    }
    out << '\n';
  }
}

nlohmann::json predictions_to_json(const std::vector<Prediction>& p, const CarbModel& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& x : p) {
    nlohmann::json r = config_to_json(x.config);
    for (const auto& [t, v] : x.value) r[t] = v;
    for (const auto& [t, iv] : x.interval) r[t + "_lower"] = iv.first, r[t + "_upper"] = iv.second;
    rows.push_back(r);
  }
  nlohmann::json doc = {{"platform", m.platform()}, {"targets", m.targets()}, {"predictions", rows}};
  // A drift-corrected model predicts latency at the typical host speed of its training data.
  if (m.drift_reference_ms()) doc["drift_reference_ms"] = *m.drift_reference_ms();
  return doc;
}

}  // namespace carb
