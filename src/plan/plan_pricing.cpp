// A plan's predicted costs hold for the protocol, backend and platform it was planned for. The
// sidecar records them; `carb profile --plan` says where its run departs from them (a hostile
// tester's finding: a plan priced for --warmup 5 --max-timed-s 0.5 on cuda was measured under the
// defaults without a word, its budget meaningless, and an edited plan was measured as if carb had
// written it).
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "carb/error.hpp"
#include "carb/model.hpp"
#include "carb/plan.hpp"
#include "carb/text_table.hpp"
#include "data/provenance.hpp"
#include "learn/training_protocols.hpp"
#include "plan/plan_pricing.hpp"

namespace carb {
namespace {

// The settings measure_seconds reads, by the flag `carb profile` and `carb plan` take them with.
enum class Kind { count, seconds, on_off, share };
struct Setting {
  const char* key;           // in the plan's sidecar
  const char* protocol_key;  // in a dataset's provenance (Protocol::to_json)
  const char* flag;          // in the message
  bool cuda_only;
  Kind kind;
  double (*get)(const Protocol&);
};

constexpr Setting kPriced[] = {
    {"warmup", "warmup", "--warmup", false, Kind::count, [](const Protocol& p) { return double(p.warmup); }},
    {"min_passes", "min_passes", "--min-passes", false, Kind::count, [](const Protocol& p) { return double(p.min_passes); }},
    {"max_passes", "max_passes", "--max-passes", false, Kind::count, [](const Protocol& p) { return double(p.max_passes); }},
    {"max_timed_s", "max_timed_s", "--max-timed-s", false, Kind::seconds, [](const Protocol& p) { return p.max_timed_s; }},
    {"cooldown", "cooldown_s", "--cooldown", false, Kind::seconds, [](const Protocol& p) { return p.cooldown_s; }},
    {"reference", "reference", "--reference", false, Kind::on_off, [](const Protocol& p) { return p.reference ? 1.0 : 0.0; }},
    {"min_energy_window", "min_energy_window_s", "--min-energy-window", true, Kind::seconds, [](const Protocol& p) { return p.min_energy_window_s; }},
    {"util_window", "util_window_s", "--util-window", true, Kind::seconds, [](const Protocol& p) { return p.util_window_s; }},
    {"util_sample", "util_sample", "--util", true, Kind::share, [](const Protocol& p) { return p.util_sample; }},
};

// A setting as a dataset's provenance records a protocol (Protocol::to_json leaves `reference` out
// when off and `util_sample` when 1); nullopt when it records nothing usable, or nothing a plan's
// flag prices: a pause taken only above a temperature (--cooldown-above), a window counted in the
// meter's ticks (--energy-ticks), which a plan prices as the seconds it chooses.
std::optional<double> measured_value(const nlohmann::json& protocol, const Setting& s) {
  const auto positive = [&](const char* key) {
    const auto it = protocol.find(key);
    return it != protocol.end() && it->is_number() && it->get<double>() > 0;
  };
  if ((s.key == std::string("cooldown") && positive("cooldown_above_c")) ||
      (s.key == std::string("min_energy_window") && positive("energy_ticks")))
    return std::nullopt;
  const auto it = protocol.find(s.protocol_key);
  if (it == protocol.end()) {
    if (s.kind == Kind::on_off) return 0.0;
    if (s.kind == Kind::share) return 1.0;
    return std::nullopt;
  }
  // Protocol::to_json writes `reference` as the reference network's key (a hostile tester: "false"
  // and 0, written by hand, read as on); and a value no flag could have given is not said as the
  // data's (1e308 warm-up passes, a negative time limit, 10.5 passes were).
  if (s.kind == Kind::on_off) {
    if (it->is_boolean()) return it->get<bool>() ? 1.0 : 0.0;
    if (it->is_string()) return it->get<std::string>().empty() || *it == "false" ? 0.0 : 1.0;
    if (it->is_number()) return it->get<double>() != 0 ? 1.0 : 0.0;
    return it->is_null() ? std::optional<double>(0.0) : std::nullopt;
  }
  if (!it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0 || (s.kind == Kind::count && (v != std::floor(v) || v > 1e9)) ||
      (s.kind == Kind::seconds && v > 1e6) || (s.kind == Kind::share && v > 1))
    return std::nullopt;
  return v;
}

std::string shown(const Setting& s, double v) {
  if (s.kind == Kind::on_off) return v != 0 ? "on" : "off";
  if (s.kind == Kind::share) return v >= 1 ? "all" : v <= 0 ? "none" : "sample:" + fmt_num(v);
  return fmt_num(v);
}

nlohmann::json recorded(const Setting& s, const Protocol& p) {
  const double v = s.get(p);
  if (s.kind == Kind::on_off) return v != 0;
  if (s.kind == Kind::count) return static_cast<long long>(v);
  return v;
}

// What the sidecar recorded for `s`; nullopt when it recorded nothing usable.
std::optional<double> planned_value(const nlohmann::json& priced, const Setting& s) {
  const auto it = priced.find(s.key);
  if (it == priced.end()) return std::nullopt;
  if (it->is_boolean()) return it->get<bool>() ? 1.0 : 0.0;
  if (it->is_number()) return it->get<double>();
  return std::nullopt;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// A text field of a hand-editable document; nullopt when it is missing or not text (json's
// value() throws a type_error there, which reached the user as "internal error").
std::optional<std::string> text_field(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace

namespace plan_detail {

nlohmann::json planned_for_json(const Plan& p) {
  nlohmann::json priced;  // null: the rows have no predicted cost
  if (p.priced) {
    priced = {{"backend", p.backend}, {"build_s", p.build_s}};
    for (const Setting& s : kPriced)
      if (!s.cuda_only || p.backend == "cuda") priced[s.key] = recorded(s, p.protocol);
  }
  return {{"platform", p.platform.empty() ? nlohmann::json() : nlohmann::json(p.platform)}, {"priced", priced}};
}

}  // namespace plan_detail

std::vector<std::string> plan_departures(const std::filesystem::path& plan_csv, const Protocol& p,
                                         const std::string& backend, const std::string& platform, bool grouped) {
  const std::string name = plan_csv.string(), side = provenance_path(plan_csv).string();
  nlohmann::json sidecar;
  try {
    sidecar = read_provenance(plan_csv);
  } catch (const Error& e) {
    return {"the plan's sidecar cannot be read (" + std::string(e.what()) +
            "): what " + name + " was planned and priced for cannot be checked"};
  }
  if (sidecar.is_null())
    return {name + " has no sidecar (" + side + "): what it was planned and priced for cannot be checked"};
  if (!sidecar.is_object() || text_field(sidecar, "kind") != kPlanKind)
    return {side + " is not the sidecar carb plan writes: what " + name + " was planned and priced for cannot be checked"};
  std::vector<std::string> out;
  if (provenance_mismatch(plan_csv, sidecar))
    out.push_back(name + " was edited since carb plan wrote it (its hash differs from " + side +
                  "'s): it is measured as it is now, and the order, costs and budget carb planned may not be its own");
  if (sidecar_edited(sidecar))
    return out.push_back(side + " was edited since carb plan wrote it: what the plan was priced for cannot be checked"),
           out;
  const auto it = sidecar.find("planned_for");
  if (it == sidecar.end() || !it->is_object()) return out;  // a plan written before carb recorded it
  const nlohmann::json& pf = *it;
  if (pf.contains("platform") && pf["platform"].is_string() && pf["platform"] != platform)
    out.push_back(name + " was planned with a model of platform " + quoted(pf["platform"].get<std::string>()) +
                  ", whose measured rows it leaves out; this run measures platform " + quoted(platform));
  if (!pf.contains("priced") || !pf["priced"].is_object()) return out;
  const nlohmann::json& pr = pf["priced"];
  const std::optional<std::string> planned_backend = text_field(pr, "backend");
  if (!planned_backend)
    out.push_back(side + " does not say which backend " + name + "'s costs were predicted for; this run measures on " +
                  quoted(backend) + ", and its predicted measuring time may not hold");
  else if (*planned_backend != backend) {
    out.push_back(name + "'s costs were predicted for the " + quoted(*planned_backend) + " backend; this run measures on " +
                  quoted(backend) + ", so its predicted measuring time does not hold");
    return out;  // the windows priced differ in kind: the settings compare nothing more
  }
  std::string differ;
  for (const Setting& s : kPriced) {
    if (s.cuda_only && backend != "cuda") continue;
    const auto planned = planned_value(pr, s);
    const double now = s.get(p);
    if (planned && *planned != now)
      differ += std::string(differ.empty() ? "" : ", ") + s.flag + " " + shown(s, *planned) + " (this run: " +
                shown(s, now) + ")";
  }
  if (!differ.empty())
    out.push_back(name + "'s costs were predicted for " + differ +
                  ": its predicted measuring time and budget do not hold for this run (give the plan's settings, "
                  "or plan again with these)");
  // Ninety-seventh hostile pass: --rebuild-networks builds every configuration's network, where the
  // plan priced one build per architecture, and nothing said so.
  if (pr.contains("build_s") && pr["build_s"].is_number() && pr["build_s"].get<double>() > 0 && p.rebuild_networks)
    out.push_back(name + " counted each network's build once (--build-s " + fmt_num(pr["build_s"].get<double>()) +
                  "); --rebuild-networks builds it again for every configuration, so its predicted measuring time "
                  "and budget do not hold");
  else if (pr.contains("build_s") && pr["build_s"].is_number() && pr["build_s"].get<double>() > 0 && !grouped)
    out.push_back(name + " counted each network's build once (--build-s " + fmt_num(pr["build_s"].get<double>()) +
                  "), as --group-architectures measures it; without it a network is built again whenever its "
                  "architecture recurs in the plan's order");
  return out;
}

std::string model_protocol_departure(const CarbModel& m, const Protocol& p, const std::string& backend,
                                     std::string* unknown) {
  const auto recorded = training_data_protocols(m, unknown);
  if (!recorded) return "";
  std::vector<nlohmann::json> protocols;
  for (const auto& [id, settings] : *recorded) protocols.push_back(settings);
  const std::string files = training_data_names(m);
  const auto data_backend = text_field(protocols.front(), "backend");
  for (const auto& q : protocols)
    if (text_field(q, "backend") != data_backend) return "";
  if (data_backend && *data_backend != backend)
    return "the model's data (" + files + ") was measured on the " + quoted(*data_backend) + " backend; this plan's costs are "
           "priced for " + quoted(backend);
  std::string differ;
  for (const Setting& s : kPriced) {
    if (s.cuda_only && backend != "cuda") continue;
    const auto measured = measured_value(protocols.front(), s);
    if (!measured) continue;
    bool one = true;
    for (const auto& q : protocols) one = one && measured_value(q, s) == measured;
    if (!one) continue;  // the data's protocols differ here: no one setting to compare with
    if (*measured != s.get(p))
      differ += std::string(differ.empty() ? "" : ", ") + s.flag + " " + shown(s, *measured) + " (this plan: " +
                shown(s, s.get(p)) + ")";
  }
  if (differ.empty()) return "";
  return "the model's data (" + files + ") was measured with " + differ +
         ": the plan's predicted costs and budget assume this plan's settings; plan with the data's settings, and "
         "measure with them";
}

}  // namespace carb
