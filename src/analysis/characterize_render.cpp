// Human renderings of the characterization document: one set of tables built from the JSON,
// printed as markdown (headings + pipe tables) or as aligned text tables.
#include <string>

#include "carb/characterize.hpp"
#include "carb/text_table.hpp"

namespace carb {
namespace {

using nlohmann::json;

std::string num(const json& v, const std::string& suffix = "") {
  return v.is_number() ? fmt_num(v.get<double>(), 3) + suffix : "-";
}

NamedTable unavailable_table(const std::string& title, const json& sec) {
  return {title, {}, {}, "unavailable: " + sec.value("reason", std::string("no data"))};
}

void scaling_tables(const json& sec, std::vector<NamedTable>& out) {
  if (!sec.value("available", false)) return out.push_back(unavailable_table("Scaling ratio per knob", sec));
  for (const auto& [fam, per_target] : sec["families"].items()) {
    NamedTable t{"Scaling ratio per knob (" + fam + ")", {"target"}, {}, sec.value("definition", "")};
    for (const auto& k : sec["knobs"]) t.header.push_back(k.get<std::string>());
    for (const char* target : kTargets) {  // cascade order, not the JSON object's alphabetical one
      if (!per_target.contains(target)) continue;
      const json& knobs = per_target[target];
      std::vector<std::string> row{target};
      for (const auto& k : sec["knobs"]) {
        const json& ks = knobs[k.get<std::string>()];
        row.push_back(ks.value("available", false) ? num(ks["ratio"], "x") : "-");
      }
      t.rows.push_back(row);
    }
    out.push_back(t);
  }
}

void family_table(const json& sec, std::vector<NamedTable>& out) {
  if (!sec.value("available", false)) return out.push_back(unavailable_table("Family comparison", sec));
  NamedTable t{"Family comparison",
               {"target", "basic mean", "bottleneck mean", "bottleneck/basic"},
               {},
               sec.value("definition", "")};
  for (const char* target : kTargets)
    if (const json v = sec["targets"].value(target, json()); v.is_object() && v.value("available", false))
      t.rows.push_back({target, num(v["basic_mean"]), num(v["bottleneck_mean"]), num(v["ratio"], "x")});
  out.push_back(t);
}

void precision_table(const json& sec, std::vector<NamedTable>& out) {
  if (!sec.value("available", false)) return out.push_back(unavailable_table("Precision ratios", sec));
  NamedTable t{"Precision ratios",
               {"comparison", "target", "mean ratio", "min", "max", "pairs"},
               {},
               sec.value("definition", "")};
  for (const auto& [cmp, targets] : sec["comparisons"].items())
    for (const auto& [target, v] : targets.items()) {
      if (v.value("available", false))
        t.rows.push_back({cmp, target, num(v["mean_ratio"], "x"), num(v["min_ratio"]), num(v["max_ratio"]),
                          std::to_string(v["pairs"].get<int>())});
      else
        t.rows.push_back({cmp, target, "-", "-", "-", "0"});
    }
  out.push_back(t);
}

void efficiency_table(const json& sec, std::vector<NamedTable>& out) {
  NamedTable t{"Efficiency per batch tier (pooled)", {"metric"}, {}, sec.value("definition", "")};
  for (const auto& b : kBatchTiers) t.header.push_back("batch " + b.label());
  t.header.push_back("spread");
  for (const char* name : kEfficiencyMetrics) {
    const json& m = sec["metrics"][name];
    std::vector<std::string> row{name};
    if (!m.value("available", false)) {
      row.resize(t.header.size(), "-");
      row.back() = m.value("reason", "");
    } else {
      for (const auto& tier : m["tiers"]) row.push_back(num(tier["pooled"]));
      row.push_back(num(m["spread"], "x"));
    }
    t.rows.push_back(row);
  }
  out.push_back(t);
}

void divergence_tables(const json& sec, std::vector<NamedTable>& out) {
  if (!sec.value("available", false))
    return out.push_back(unavailable_table("Energy-latency divergence", sec));
  NamedTable t{"Energy-latency divergence",
               {"batch tier", "SM", "n", "mean energy J", "mean latency ms", "energy ratio", "latency ratio",
                "divergence"},
               {},
               sec.value("definition", "") + " (SM threshold " + num(sec["sm_threshold"]) + "%, " +
                   sec.value("sm_threshold_rule", "") + ")"};
  for (const auto& c : sec["cells"])
    t.rows.push_back({c["batch_tier"].get<std::string>(), c["sm"].get<std::string>(),
                      std::to_string(c["n"].get<int>()), num(c["mean_energy_j"]), num(c["mean_latency_ms"]),
                      num(c["energy_ratio"], "x"), num(c["latency_ratio"], "x"), num(c["divergence"], "x")});
  out.push_back(t);
}

}  // namespace

std::vector<NamedTable> characterization_tables(const json& ch) {
  std::vector<NamedTable> out;
  scaling_tables(ch["scaling"], out);
  family_table(ch["family_comparison"], out);
  precision_table(ch["precision"], out);
  if (ch["efficiency"].value("available", false))
    efficiency_table(ch["efficiency"], out);
  else
    out.push_back(unavailable_table("Efficiency per batch tier", ch["efficiency"]));
  divergence_tables(ch["divergence"], out);
  return out;
}

void render_characterization_md(const json& ch, std::ostream& out) {
  const json& d = ch["dataset"];
  out << "# Characterization\n\n"
      << d["ok_rows"].get<std::size_t>() << " ok rows of " << d["rows"].get<std::size_t>()
      << "; platforms: " << d["platforms"].dump() << "; targets: " << d["targets"].dump() << "\n";
  for (const auto& t : characterization_tables(ch)) {
    out << "\n## " << t.title << "\n\n";
    if (!t.note.empty()) out << "_" << t.note << "_\n\n";
    if (t.rows.empty()) continue;
    auto line = [&](const std::vector<std::string>& r) {
      out << '|';
      for (const auto& c : r) out << ' ' << c << " |";
      out << '\n';
    };
    line(t.header);
    line(std::vector<std::string>(t.header.size(), "---"));
    for (const auto& r : t.rows) line(r);
  }
}

void render_characterization_table(const json& ch, std::ostream& out) {
  const json& d = ch["dataset"];
  out << "characterization: " << d["ok_rows"].get<std::size_t>() << " ok rows, platforms "
      << d["platforms"].dump() << ", targets " << d["targets"].dump() << "\n";
  for (const auto& t : characterization_tables(ch)) {
    out << "\n== " << t.title << " ==\n";
    if (t.rows.empty()) {
      out << t.note << '\n';
      continue;
    }
    TextTable tt(t.header);
    for (const auto& r : t.rows) tt.add(r);
    tt.print(out);
  }
}

}  // namespace carb
