// The report's screening section, drawn from a `carb screen --format json` document: the
// candidate funnel (stages), the Pareto front as a scatter of two targets, and its table.
#include <algorithm>
#include <limits>

#include "carb/dataset.hpp"
#include "carb/prediction_io.hpp"
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

// The clause for those of the networks never measured at a family, precision or pairing the model
// never trained: no interval level bounds them.
std::string never_trained_words(long long n) {
  return n > 0 ? "; " + std::to_string(n) + " of them at a family, precision or pairing of the two it never trained, "
                 "which no interval level bounds"
               : "";
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
    // Thirty-sixth hostile pass: screen --confidence printed each row's interval; the report dropped it.
    for (const auto& target : targets) {
      t.header.push_back(target);
      if (pareto[0].contains(target + "_upper")) t.header.push_back(target + " interval");
    }
    if (!pareto.empty() && pareto[0].contains("capacity")) t.header.emplace_back("capacity");
    // Twenty-fifth hostile pass: rows screen flags as guesses (past the trained ranges) were shown
    // unflagged here.
    std::size_t guesses = 0;
    for (const auto& r : pareto) guesses += r.contains("outside") && r["outside"].is_array() && !r["outside"].empty();
    // Networks the deciding model never measured, as screen marks them.
    const auto never_measured = [](const json& r) {
      return r.contains("trained_architecture") && r["trained_architecture"].is_boolean() &&
             !r["trained_architecture"].get<bool>();
    };
    const auto news = std::count_if(pareto.begin(), pareto.end(), never_measured);
    for (const auto& r : pareto) {
      std::vector<std::string> row;
      for (const auto& h : t.header) {
        const auto at = h.rfind(" interval");
        if (at != std::string::npos && at + 9 == h.size()) {
          const std::string target = h.substr(0, at);
          row.push_back(r.contains(target + "_lower") && r.contains(target + "_upper")
                            ? "[" + cell(r[target + "_lower"]) + ", " + cell(r[target + "_upper"]) + "]"
                            : "-");
          continue;
        }
        row.push_back(r.contains(h) ? cell(r[h]) : "-");
      }
      if (news) row.emplace_back(never_measured(r) ? "yes" : "");
      if (guesses) {
        std::string where;
        if (r.contains("outside") && r["outside"].is_array())
          for (const auto& x : r["outside"])
            if (x.is_object() && x.contains("text") && x["text"].is_string())
              where += (where.empty() ? "" : "; ") + x["text"].get<std::string>();
        row.push_back(where);
      }
      t.rows.push_back(std::move(row));
    }
    if (news) t.header.emplace_back(kNewNetworkColumn);
    if (guesses) t.header.emplace_back("outside the trained ranges (a guess)");
    const std::string flagged =
        guesses ? warning(std::to_string(guesses) + " of these configurations lie outside the ranges the model "
                          "trained on: their predicted costs are guesses")
                : "";
    cards.push_back(card(t.title, flagged + html_table(t, 40), true));
  }
  // What screen said of the configurations it could not judge (thirty-fifth hostile pass: the
  // unbounded count was printed by screen and left out here).
  const auto count = [&](const char* k) {
    return screen.contains(k) && screen[k].is_number_integer() ? screen[k].get<long long>() : 0LL;
  };
  if (const long long n = count("unbounded_at_confidence"); n > 0)
    cards.push_back(card("Not judged", warning(std::to_string(n) + " configuration" + (n == 1 ? "" : "s") +
                                               " within budget by the point prediction cannot pass: the model has "
                                               "no bounded interval for them at this confidence"),
                         true));
  if (const long long n = count("nonpositive_predictions"); n > 0)
    cards.push_back(card("Left out", warning("the model predicts a cost at or below zero for " + std::to_string(n) +
                                             " candidate" + (n == 1 ? "" : "s") +
                                             ": none of them can meet a budget or be on the Pareto front, "
                                             "shortlisted or not"),
                         true));
  if (const long long n = count("source_nonpositive_predictions"); n > 0)
    cards.push_back(card("First stage", warning("the source model predicts a cost at or below zero for " +
                                                std::to_string(n) + " candidate" + (n == 1 ? "" : "s") +
                                                ": its first stage ranks them last"),
                         true));
  if (const long long n = count("within_budget_guesses"); n > 0)
    cards.push_back(card("Within budget", warning(std::to_string(n) + " of the configurations within budget lie outside "
                                                  "what the deciding model trained on: their costs are guesses"),
                         true));
  if (const long long n = count("within_budget_new_architectures"); n > 0)
    cards.push_back(card("Within budget", warning(std::to_string(n) + " of the configurations within budget " +
                                                  (n == 1 ? "is a network" : "are networks") +
                                                  " the deciding model never measured: their costs are predictions "
                                                  "for a new network" + never_trained_words(count("within_budget_never_trained"))),
                         true));
  // Screen's note where configurations within budget imply more power than the device draws, word for word.
  if (const long long n = count("within_budget_over_power"); n > 0) {
    ScreenResult said;
    said.within_budget_over_power = static_cast<std::size_t>(n);
    said.within_budget = static_cast<std::size_t>(std::max(n, count("within_budget")));
    said.pareto_over_power = static_cast<std::size_t>(count("pareto_over_power"));
    if (screen.contains("power_limit_w") && screen["power_limit_w"].is_number())
      said.power_limit_w = screen["power_limit_w"].get<double>();
    if (screen.contains("most_power_w") && screen["most_power_w"].is_number())
      said.most_power_w = screen["most_power_w"].get<double>();
    cards.push_back(card("Beyond the device", warning(screen_power_note(said)), true));
  }
  // Screen's note where a cost falls as the batch grows, word for word (hundred-and-seventeenth
  // hostile pass: the report kept every other note of the screen and dropped these).
  const bool shortlist = screen.contains("batch_order") && screen["batch_order"].is_object() &&
                         screen["batch_order"].value("over", std::string()) == "shortlist";
  for (const ScreenBatchInversions& b : screen_batch_inversions(screen, "the screening document"))
    cards.push_back(card("Costs that fall as the batch grows",
                         warning(batch_inversion_note(b, screen.value("two_stage", false), shortlist)), true));
  // What screen says where a budget on the upper edge passes a larger batch and not a smaller one
  // predicted to cost no more (hundred-and-sixth hostile pass).
  if (screen.contains("upper_edge_falls_with_batch") && screen["upper_edge_falls_with_batch"].is_array())
    for (const json& u : screen["upper_edge_falls_with_batch"]) {
      if (!u.is_object() || !u.contains("target") || !u["target"].is_string() || !u.contains("networks") ||
          !u["networks"].is_number_integer() || !u.contains("budget") || !u["budget"].is_number())
        continue;
      const long long n = u["networks"].get<long long>();
      cards.push_back(card("Budgets on the upper edge",
                           warning("the " + u["target"].get<std::string>() + " budget of " + cell(u["budget"]) +
                                   ", judged on the interval's upper edge, passes a larger batch and not a smaller "
                                   "one predicted to cost no more in " + std::to_string(n) + " network" +
                                   (n == 1 ? "" : "s") + ": the smaller batches' intervals are wider, so the "
                                   "budget there decides by how sure the model is, not by which costs less"),
                           true));
    }
  if (const long long n = count("source_guesses"); n > 0)
    cards.push_back(card("First stage", warning(std::to_string(n) + " candidate" + (n == 1 ? " lies" : "s lie") +
                                                " outside what the source model trained on: its first-stage "
                                                "ranking of them is a guess"),
                         true));
  // Forty-sixth hostile pass: screen said its latencies and budgets hold at a drift-corrected
  // model's reference host speed, and gave a two-stage screen's rank agreement; the report dropped both.
  const bool two_stage = screen.value("two_stage", false);
  if (screen.contains("drift_reference_ms") && screen["drift_reference_ms"].is_object()) {
    const json& d = screen["drift_reference_ms"];
    const auto at_speed = [&](const json& ms) {
      return "at the host speed where the reference network takes " + cell(ms) + " ms";
    };
    if (two_stage && d.contains("source") && d["source"].is_number())
      cards.push_back(card("Drift-corrected", warning("the source model is drift-corrected: its first-stage latencies "
                                                      "are " + at_speed(d["source"])), true));
    if (d.contains("target") && d["target"].is_number())
      cards.push_back(card("Drift-corrected", warning(std::string(two_stage ? "the target model" : "the model") +
                                                      " is drift-corrected: latency is predicted, and budgets judged, " +
                                                      at_speed(d["target"])), true));
  }
  if (two_stage && screen.contains("rank_spearman")) {
    const json& rho = screen["rank_spearman"];
    const long long target_guesses = count("target_guesses");
    cards.push_back(card("Rank agreement",
                         rho.is_number()
                             ? "<p>rank Spearman ρ of the two models over the whole space: " + cell(rho) + "</p>" +
                                   (target_guesses > 0
                                        ? warning(std::to_string(target_guesses) + " candidate" +
                                                  (target_guesses == 1 ? " lies" : "s lie") +
                                                  " outside what the target model trained on: ρ includes its guesses "
                                                  "for them")
                                        : std::string())
                             : warning("no rank agreement: the target model lacks the rank target"),
                         true));
  }
  // How the set was chosen, and how well the decisions held, as screen printed them.
  std::vector<std::string> how;
  if (screen.contains("budgets") && screen["budgets"].is_object() && !screen["budgets"].empty()) {
    std::string b;
    for (const auto& [k, v] : screen["budgets"].items()) b += (b.empty() ? "" : ", ") + k + " ≤ " + cell(v);
    how.push_back("budgets " + b);
  }
  if (screen.contains("device_memory_mb") && screen["device_memory_mb"].is_number())
    how.push_back("peak memory within the device's " + cell(screen["device_memory_mb"]) + " MB (point predictions)");
  if (screen.contains("confidence") && screen["confidence"].is_number())
    how.push_back("budgets judged on the upper end of the " + cell(screen["confidence"]) + " interval");
  if (screen.contains("capacity") && screen["capacity"].is_string())
    how.push_back("Pareto set taken against capacity in " + screen["capacity"].get<std::string>());
  if (screen.contains("validation") && screen["validation"].is_object()) {
    const json& v = screen["validation"];
    if (v.contains("decisions") && v["decisions"].is_object()) {
      const json& d = v["decisions"];
      std::string text = "validated on " + (v.contains("matched") ? cell(v["matched"]) : std::string("?")) +
                         " measured configurations";
      for (const char* k : {"accuracy", "false_accept", "false_reject"})
        if (d.contains(k)) text += ", " + std::string(k) + " " + cell(d[k]);
      // The screen's own decisions, the shortlist's cut included (sixty-sixth hostile pass).
      if (v.contains("screen_decisions") && v["screen_decisions"].is_object()) {
        const json& s = v["screen_decisions"];
        text += " by the deciding model alone; with the shortlist's cut (" +
                (v.contains("shortlisted") ? cell(v["shortlisted"]) : std::string("?")) + " kept)";
        for (const char* k : {"accuracy", "false_accept", "false_reject"})
          if (s.contains(k)) text += ", " + std::string(k) + " " + cell(s[k]);
      }
      how.push_back(text);
    }
    if (v.contains("warnings") && v["warnings"].is_array())
      for (const auto& w : v["warnings"])
        if (w.is_string()) cards.push_back(card("Validation", warning(w.get<std::string>()), true));
  }
  std::string lead = "Screening result";
  if (screen.contains("rank_by") && screen["rank_by"].is_string())
    lead += ": ranked by " + screen["rank_by"].get<std::string>() +
            // As screen says whose choice it was (hundred-and-seventeenth hostile pass).
            (!screen.value("rank_by_default", false) ? ""
             : screen["rank_by"] == "energy_j"       ? " (the default)"
                                                     : " (the default where a model predicts no energy_j)");
  if (screen.contains("source_platform") && screen["source_platform"].is_string())
    lead += ", source platform " + screen["source_platform"].get<std::string>();
  if (screen.contains("target_platform") && screen["target_platform"].is_string())
    lead += ", target platform " + screen["target_platform"].get<std::string>();
  for (const auto& h : how) lead += "; " + h;
  return section("screen", "Screening", lead + ".", cards);
}

}  // namespace carb::report
