// CSV and JSON output of predictions.
#include <algorithm>
#include "carb/prediction_io.hpp"

#include <cmath>
#include <cstdio>

#include "carb/arch.hpp"
#include "carb/error.hpp"
#include "carb/text_table.hpp"

namespace carb {

namespace {
// Excursion texts hold no comma or quote, but a field is quoted if it ever does.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}
}  // namespace

std::string outside_text(const std::vector<Excursion>& outside) {
  std::string s;
  for (const auto& x : outside) s += (s.empty() ? "" : "; ") + x.text;
  return s;
}

nlohmann::json outside_json(const std::vector<Excursion>& outside) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& x : outside)
    a.push_back({{"dimension", x.dimension},
                 {"text", x.text},
                 {"log_ratio", std::isfinite(x.log_ratio) ? nlohmann::json(x.log_ratio) : nlohmann::json(nullptr)}});
  return a;
}

std::string guesses_note(const CarbModel& m, const std::vector<Config>& configs) {
  std::size_t outside = 0, never = 0;
  for (const Config& c : configs) {
    const auto x = m.envelope().outside(m.as_trained(c));
    outside += !x.empty();
    never += !x.empty() && !std::isfinite(extrapolation_widening(x));
  }
  if (outside == 0) return "";
  return std::to_string(outside) + " of " + std::to_string(configs.size()) +
         " scored configurations lie outside the ranges the model trained on" +
         (never ? " (" + std::to_string(never) + " at a family, precision or pairing of the two it never trained)" : std::string()) +
         ": its answers there are guesses, and these scores include them";
}

int draws_needed(double level) { return static_cast<int>(std::ceil(level / (1 - level) - 1e-9)); }

std::string unbounded_causes(double level, int networks) {
  const std::string pct = fmt_num(level * 100, 3) + "%";
  const std::string needed = std::to_string(draws_needed(level));
  // Sixty-seventh hostile pass: "too few trained networks (80% needs 4, the model has 8)" and "a
  // lower --confidence may bound them" at 80% were causes that could not be.
  const bool too_few_networks = networks > 0 && draws_needed(level) > networks;
  const bool lower_level = level > kConfidenceLevels.front();
  return "too few training rows per batch regime for " + pct + " (it needs " + needed + " per regime)" +
         (too_few_networks ? ", or, for an architecture it never trained, too few trained networks (" + pct + " needs " +
                                 needed + ", the model has " + std::to_string(networks) + ")"
                           : std::string()) +
         // Sixty-fifth hostile pass: a bundle whose rate at a level is unbounded (no
         // widening held its held-out rows) had this note name every cause but that one.
         ", or, past the trained ranges, an extrapolation rate unbounded at " + pct +
         " (held-out rows no widening held)" + (lower_level ? " (a lower --confidence may bound them)" : "") +
         ", or a precision, family or pairing of the two it never trained (no level will)";
}

namespace {
// The highest stored level `networks` calibrating networks bound (draws_needed), or nullopt.
std::optional<double> highest_bounded_level(int networks) {
  std::optional<double> top;
  for (double level : kConfidenceLevels)
    if (draws_needed(level) <= networks) top = level;
  return top;
}
}  // namespace

std::string new_network_judgement(std::optional<double> level, int networks, const std::string& never_trained) {
  // Sixty-sixth hostile pass: recommend --precisions fp32,bf16 on a model that never trained bf16
  // said --confidence would judge bf16 on intervals calibrated for new networks; no level bounds it.
  // Its review: nor does a level that needs more networks than calibrated them (90% with 8).
  const std::string which =
      never_trained.empty() ? "" : never_trained + " (at a family, precision or pairing of the two it never trained)";
  if (level) {
    const std::string pct = fmt_num(*level * 100, 3) + "%";
    std::string judged =
        networks == 0 ? ", judged on intervals this model has not calibrated for new networks (it predates them, or "
                        "trained on fewer than 3 networks): they may hold the measurement less often than stated"
        : draws_needed(*level) > networks
            ? ", whose " + pct + " intervals have no upper bound: " + pct + " needs " +
                  std::to_string(draws_needed(*level)) + " calibrating networks, the model has " + std::to_string(networks)
            : ", judged on the wider intervals calibrated by holding whole networks out of training";
    return judged + (which.empty() ? "" : "; no level bounds " + which);
  }
  if (networks > 0) {
    const auto top = highest_bounded_level(networks);
    return "; --confidence judges them on intervals calibrated for new networks" +
           (top == kConfidenceLevels.back()
                ? std::string()
                : " (its " + std::to_string(networks) + " calibrating networks bound " +
                      (top ? "levels up to " + fmt_num(*top * 100, 3) + "%" : std::string("no level")) + ")") +
           (which.empty() ? "" : ", except " + which + ", which no level bounds");
  }
  return which.empty() ? "" : "; no --confidence level bounds " + which;
}

bool new_network_doubt(std::optional<double> level, int networks, bool never_trained) {
  // Without a level, a doubt where the calibrating networks bound no level at all (the review: the
  // CLI said "bound no level", Python said nothing).
  if (!level) return never_trained || (networks > 0 && !highest_bounded_level(networks));
  return never_trained || networks == 0 || draws_needed(*level) > networks;
}

std::size_t count_nonpositive(const std::vector<double>& predicted) {
  return static_cast<std::size_t>(std::count_if(predicted.begin(), predicted.end(), [](double x) { return !(x > 0); }));
}

std::string nonpositive_note(const std::map<std::string, std::vector<double>>& predicted) {
  std::string which;
  std::size_t rows = 0;
  for (const auto& [t, v] : predicted) {
    const std::size_t n = count_nonpositive(v);
    if (n) which += (which.empty() ? "" : ", ") + std::to_string(n) + " of " + t;
    rows = std::max(rows, v.size());
  }
  if (which.empty()) return "";
  return "predictions at or below zero, which no configuration costs (" + std::string(kNonPositiveWhy) + "): " + which + " among " + std::to_string(rows) + " rows, scored as they are";
}

std::optional<double> held_device_memory(const CarbModel& m) {
  return m.has_target("peak_memory_mb") ? m.device_limits().memory_mb : std::nullopt;
}

nlohmann::json device_json(const DeviceLimits& d) {
  const auto value = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  return {{"memory_mb", value(d.memory_mb)}, {"power_limit_w", value(d.power_limit_w)}};
}

bool fits_device_memory(const Prediction& x, double memory_mb) {
  const auto it = x.value.find("peak_memory_mb");
  return it == x.value.end() || !(it->second > memory_mb);
}

std::optional<double> predicted_power_w(const Prediction& x) { return predicted_power_w(x.value); }

std::optional<double> predicted_power_w(const std::map<std::string, double>& value) {
  const auto e = value.find("energy_j"), l = value.find("latency_ms");
  if (e == value.end() || l == value.end()) return std::nullopt;
  // A cost at or below zero, or not a number, is unknown (said by its own note): no power follows.
  const auto known = [](double v) { return v > 0 && std::isfinite(v); };
  if (!known(e->second) || !known(l->second)) return std::nullopt;
  return average_power_w(e->second, l->second);
}

std::optional<double> power_beyond_device(const std::map<std::string, double>& value,
                                          std::optional<double> power_limit_w) {
  const double most = power_limit_w ? kPredictedPowerOverLimit * *power_limit_w : kMaxAveragePowerW;
  const auto w = predicted_power_w(value);
  return w && *w > most ? w : std::nullopt;
}

std::optional<double> power_beyond_device(const Prediction& x, std::optional<double> power_limit_w) {
  return power_beyond_device(x.value, power_limit_w);
}

bool within_power_limit(const Prediction& x, double power_limit_w) { return !power_beyond_device(x, power_limit_w); }

std::string beyond_device_text(const Prediction& x, const DeviceLimits& device) {
  std::string cell;
  if (device.memory_mb && !fits_device_memory(x, *device.memory_mb))
    cell = "peak memory > " + fmt_num(*device.memory_mb, 10) + " MB";
  if (const auto w = power_beyond_device(x, device.power_limit_w))
    cell += (cell.empty() ? "" : "; ") + fmt_num(*w, 4) + " W > " +
            (device.power_limit_w ? fmt_num(kPredictedPowerOverLimit, 3) + "x " + fmt_num(*device.power_limit_w, 10) + " W"
                                  : fmt_num(kMaxAveragePowerW, 10) + " W (any device)");
  return cell;
}

DeviceLimits held_device(const CarbModel& m) {
  DeviceLimits d;
  d.memory_mb = held_device_memory(m);
  if (m.has_target("energy_j") && m.has_target("latency_ms")) d.power_limit_w = m.device_limits().power_limit_w;
  return d;
}

void write_predictions_csv(const std::vector<Prediction>& p, const std::vector<std::string>& targets,
                           std::ostream& out, const std::pair<std::string, std::vector<double>>* extra,
                           std::optional<double> confidence, const DeviceLimits& device) {
  const bool intervals = !p.empty() && !p.front().interval.empty();
  // Thirty-third hostile pass: the bounds' columns did not say what coverage they have; the table
  // and the JSON did.
  const bool level = intervals && confidence;
  if (extra && extra->second.size() != p.size()) throw InputError("one " + extra->first + " value per prediction is needed");
  out << "family,depth,width,resolution,batch,precision";
  for (const auto& t : targets) {
    out << ',' << t;
    if (intervals) out << ',' << t << "_lower," << t << "_upper";
  }
  if (extra) out << ',' << extra->first;
  if (level) out << ",confidence";
  // A hostile tester: only a count on stderr said which rows would not fit the device.
  if (device.memory_mb) out << ",fits_device_memory";
  if (device.power_limit_w) out << ",within_power_limit";
  out << ",trained_architecture,outside\n";
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Prediction& x = p[i];
    const Config& c = x.config;
    out << to_string(c.family) << ',' << c.depth << ',' << format_width(c.width) << ',' << c.resolution << ','
        << c.batch << ',' << to_string(c.precision);
    for (const auto& t : targets) {
      out << ',' << num(x.value.at(t));
      if (intervals) out << ',' << num(x.interval.at(t).first) << ',' << num(x.interval.at(t).second);
    }
    if (extra) out << ',' << num(extra->second[i]);
    if (level) out << ',' << num(*confidence);
    if (device.memory_mb) out << ',' << (fits_device_memory(x, *device.memory_mb) ? "true" : "false");
    if (device.power_limit_w) out << ',' << (within_power_limit(x, *device.power_limit_w) ? "true" : "false");
    out << ',' << (x.trained_architecture ? "true" : "false");
    out << ',' << csv_field(outside_text(x.outside)) << '\n';
  }
}

nlohmann::json predictions_to_json(const std::vector<Prediction>& p, const CarbModel& m,
                                   std::optional<double> confidence) {
  nlohmann::json rows = nlohmann::json::array();
  const DeviceLimits device = held_device(m);
  for (const auto& x : p) {
    nlohmann::json r = config_to_json(x.config);
    for (const auto& [t, v] : x.value) r[t] = v;
    for (const auto& [t, iv] : x.interval) r[t + "_lower"] = iv.first, r[t + "_upper"] = iv.second;
    if (device.memory_mb) r["fits_device_memory"] = fits_device_memory(x, *device.memory_mb);
    if (device.power_limit_w) r["within_power_limit"] = within_power_limit(x, *device.power_limit_w);
    r["trained_architecture"] = x.trained_architecture;
    r["outside"] = outside_json(x.outside);
    rows.push_back(r);
  }
  nlohmann::json doc = {{"platform", m.platform()},
                        {"targets", m.targets()},
                        {"confidence", confidence ? nlohmann::json(*confidence) : nlohmann::json()},
                        {"predictions", rows}};
  // A drift-corrected model predicts latency at the typical host speed of its training data.
  if (m.drift_reference_ms()) doc["drift_reference_ms"] = *m.drift_reference_ms();
  if (!m.device_limits().empty()) doc["device"] = device_json(m.device_limits());
  return doc;
}

}  // namespace carb
