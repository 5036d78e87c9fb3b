// The report's screening section, drawn from a `carb screen --format json` document: the
// candidate funnel (stages), the Pareto front as a scatter of two targets, and its table.
#include <algorithm>
#include <limits>

#include "carb/dataset.hpp"
#include "carb/text_table.hpp"
#include "report_html.hpp"
#include "svg.hpp"

namespace carb::report {
namespace {

using nlohmann::json;

std::string cell(const json& v) {
  if (v.is_number_float()) return fmt_num(v.get<double>(), 4);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  return v.dump();
}

// Targets present in the Pareto rows, in cascade order.
std::vector<std::string> pareto_targets(const json& pareto) {
  std::vector<std::string> out;
  for (const char* t : kTargets)
    if (!pareto.empty() && pareto[0].contains(t) && pareto[0][t].is_number()) out.emplace_back(t);
  return out;
}

std::string funnel(const json& stages) {
  svg::BarChart b;
  b.title = "Screening funnel";
  b.draw_title = false;
  b.y = {"configurations", true};
  svg::BarGroup g{"", {}, svg::palette(0)};
  for (const auto& s : stages) {
    b.categories.push_back(s.value("name", std::string("?")));
    g.values.push_back(s.contains("count") && s["count"].is_number()
                           ? s["count"].get<double>()
                           : std::numeric_limits<double>::quiet_NaN());
  }
  b.groups.push_back(std::move(g));
  return card(b.title, svg::render(b));
}

std::string front_chart(const json& pareto, const std::vector<std::string>& targets) {
  // Energy against latency when both exist (the usual trade-off), otherwise the first two targets.
  std::string tx = targets[0], ty = targets[1];
  if (std::count(targets.begin(), targets.end(), "energy_j") &&
      std::count(targets.begin(), targets.end(), "latency_ms"))
    tx = "latency_ms", ty = "energy_j";
  svg::XYChart c;
  c.title = "Pareto front: " + target_short(ty) + " vs " + target_short(tx);
  c.draw_title = false;
  c.x = {"predicted " + target_label(tx), true};
  c.y = {"predicted " + target_label(ty), true};
  svg::Series fp32{"fp32", {}, {}, svg::Series::Style::points, svg::palette(0)},
      low{"fp16 / bf16", {}, {}, svg::Series::Style::points, svg::palette(1)};
  for (const auto& r : pareto) {
    auto& s = r.value("precision", std::string("fp32")) == "fp32" ? fp32 : low;
    s.x.push_back(r[tx].get<double>());
    s.y.push_back(r[ty].get<double>());
  }
  c.series = {fp32, low};
  return card(c.title, svg::render(c));
}

}  // namespace

std::string screen_section(const json& screen) {
  std::vector<std::string> cards;
  if (screen.contains("stages") && screen["stages"].is_array() && !screen["stages"].empty())
    cards.push_back(funnel(screen["stages"]));
  const json pareto =
      screen.contains("pareto") && screen["pareto"].is_array() ? screen["pareto"] : json::array();
  const auto targets = pareto_targets(pareto);
  if (targets.size() >= 2) cards.push_back(front_chart(pareto, targets));
  if (pareto.empty()) {
    cards.push_back(card("Pareto front", warning("the screening document has no Pareto rows"), true));
  } else {
    NamedTable t{"Pareto front (" + std::to_string(pareto.size()) + " configurations)", {}, {}, ""};
    for (const char* c : kConfigColumns) t.header.emplace_back(c);
    for (const auto& target : targets) t.header.push_back(target);
    for (const auto& r : pareto) {
      std::vector<std::string> row;
      for (const auto& h : t.header) row.push_back(r.contains(h) ? cell(r[h]) : "-");
      t.rows.push_back(std::move(row));
    }
    cards.push_back(card(t.title, html_table(t, 40), true));
  }
  std::string lead = "Screening result";
  if (screen.contains("rank_by") && screen["rank_by"].is_string())
    lead += ": ranked by " + screen["rank_by"].get<std::string>();
  if (screen.contains("source_platform") && screen["source_platform"].is_string())
    lead += ", source platform " + screen["source_platform"].get<std::string>();
  if (screen.contains("target_platform") && screen["target_platform"].is_string())
    lead += ", target platform " + screen["target_platform"].get<std::string>();
  return section("screen", "Screening", lead + ".", cards);
}

}  // namespace carb::report
