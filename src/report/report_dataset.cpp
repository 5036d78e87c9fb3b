// The report's per-dataset section: summary tiles and the characterization as charts
// (scaling curves per knob, precision ratios, efficiency per batch tier, divergence) and tables.
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "carb/error.hpp"
#include "carb/text_table.hpp"
#include "report_html.hpp"
#include "svg.hpp"
#include "util/join.hpp"

namespace carb::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double num_or_nan(const std::optional<double>& v) { return v ? *v : kNaN; }

std::string kpis(const Dataset& d, const Characterization& ch) {
  std::size_t failed = 0;
  for (const auto& r : d.rows) failed += r.status != Status::ok;
  const std::string plat = join(ch.dataset.platforms);
  const std::string tg = join(ch.dataset.targets, [](const std::string& t) { return target_short(t); });
  auto kpi = [](const std::string& v, const std::string& l) {
    return "<div class=\"kpi\"><b>" + svg::escape(v) + "</b><span>" + svg::escape(l) + "</span></div>";
  };
  return "<div class=\"kpis\">" + kpi(std::to_string(d.rows.size()), "rows") +
         kpi(std::to_string(d.rows.size() - failed), "ok rows") + kpi(std::to_string(failed), "oom / error") +
         kpi(plat, "platform") + kpi(tg.empty() ? "none" : tg, "targets measured") + "</div>";
}

// One chart per numeric knob: each target x family curve relative to the knob's smallest level,
// so targets of different units share one axis and the end point is the scaling ratio.
std::string scaling_chart(const ScalingSection& sc, Knob knob_id) {
  const std::string knob = to_string(knob_id);
  svg::XYChart c;
  c.title = "Scaling with " + knob;
  c.draw_title = false;
  c.x = {knob, knob_id == Knob::batch || knob_id == Knob::width};
  c.y = {"mean cost relative to the smallest " + knob + " (x)", true};
  int left_out = 0, differs = 0;
  for (const auto& [fam, per_target] : sc.families)
    for (const auto& [target, knobs] : per_target) {
      const KnobScaling& k = knobs.at(static_cast<std::size_t>(knob_id));
      if (!k.available) continue;
      // A curve of pooled means where no configuration was measured at both ends, or whose end
      // goes the other way from the configurations measured at both, draws other knobs (sixty-eighth
      // hostile pass: H200 bottleneck memory fell 17x with resolution, where it rises 2.01x).
      if (k.pooled_confounded()) {
        ++left_out;
        continue;
      }
      differs += k.pooled_size_differs();
      // Color says the target, dashes say the family.
      svg::Series s{target_short(target) + " · " + to_string(fam),
                    {},
                    {},
                    svg::Series::Style::line_points,
                    target_color(target),
                    fam == Family::bottleneck};
      const double base = k.levels[0].mean;
      for (const auto& l : k.levels) {
        s.x.push_back(l.level);
        s.y.push_back(base > 0 ? l.mean / base : kNaN);
      }
      c.series.push_back(std::move(s));
    }
  const std::string why =
      left_out ? std::to_string(left_out) + " curve" + (left_out == 1 ? "" : "s") +
                     " left out: no configuration measured at both the smallest and largest " + knob +
                     ", or those measured at both scale the other way (its pooled means compare other knobs)"
               : "";
  // Curves that go the matched way by another amount are drawn, and said (seventh of December:
  // cpu-2t's basic latency rose 1.48x along depth, pooled, where each network measured at both
  // ends rises 2.65x).
  const std::string size =
      differs ? std::to_string(differs) + " curve" + (differs == 1 ? "" : "s") + " drawn change" +
                    (differs == 1 ? "s" : "") + " from the smallest to the largest " + knob +
                    " by a factor more than " + fmt_num(kPooledMatchedTolerance, 3) +
                    "x away from that of the configurations measured at both (the pooled means compare other "
                    "knobs too): the characterization's matched table has the " + knob + "'s own ratio"
              : "";
  if (c.series.empty())
    return card(c.title, warning(left_out ? why : "fewer than two " + knob + " levels in this dataset"));
  return card(c.title, svg::render(c) + (left_out ? warning(why) : "") + (differs ? warning(size) : ""));
}

// Charts of unavailable sections are left out: the section's table card says why.
std::string precision_chart(const PrecisionSection& sec) {
  if (!sec.available) return {};
  svg::BarChart b;
  b.title = "Reduced precision vs fp32 (matched configurations)";
  b.draw_title = false;
  b.y = {"mean ratio to fp32", false};
  std::set<std::string> targets;
  for (const auto& cmp : sec.comparisons)
    for (const auto& [t, v] : cmp.targets) targets.insert(t);
  for (const char* t : kTargets)
    if (targets.count(t)) b.categories.push_back(t);
  for (const auto& cmp : sec.comparisons) {
    svg::BarGroup g{cmp.name(), {}, ""};
    for (const auto& t : b.categories) {
      const auto it = cmp.targets.find(t);
      g.values.push_back(it != cmp.targets.end() && it->second.available ? it->second.mean_ratio : kNaN);
    }
    b.groups.push_back(std::move(g));
  }
  for (auto& c : b.categories) c = target_short(c);
  bool any = false;
  for (const auto& g : b.groups)
    for (double v : g.values) any |= std::isfinite(v);
  if (!any)
    return card(b.title,
                warning("no fp32 configuration was also measured at reduced precision (0 matched pairs)"));
  return card(b.title, svg::render(b));
}

void efficiency_charts(const EfficiencySection& sec, std::vector<std::string>& cards) {
  static const std::map<std::string, std::string> units = {
      {"j_per_gflop", "J per GFLOP"}, {"ms_per_gflop", "ms per GFLOP"}, {"mb_per_gflop", "MB per GFLOP"}};
  for (const EfficiencyMetric& m : sec.metrics) {
    const std::string title = units.at(m.name) + " by batch tier";
    if (!m.available) {
      cards.push_back(card(title, warning("unavailable: " + m.reason)));
      continue;
    }
    svg::BarChart b;
    b.title = title;
    b.draw_title = false;
    b.x_label = "batch size";
    b.y = {units.at(m.name) + " (pooled)", false};
    svg::BarGroup g{"", {}, target_color(m.target)};
    for (const auto& t : m.tiers) {
      b.categories.push_back(t.tier.label());
      g.values.push_back(num_or_nan(t.pooled));
    }
    b.groups.push_back(std::move(g));
    cards.push_back(card(title, svg::render(b) + note("spread (worst/best tier): " +
                                                      (m.spread ? fmt_num(*m.spread, 3) + "x" : "-"))));
  }
}

std::string divergence_chart(const DivergenceSection& sec) {
  const std::string title = "Energy-latency divergence";
  if (!sec.available) return {};
  svg::BarChart b;
  b.title = title + " (vs low-SM, batch 1-4)";
  b.draw_title = false;
  b.x_label = "batch size";
  b.y = {"ratio to the baseline cell (x)", true};
  svg::BarGroup eh{"energy, high SM", {}, "#D55E00"}, lh{"latency, high SM", {}, "#0072B2"},
      el{"energy, low SM", {}, "#F4B183"}, ll{"latency, low SM", {}, "#9DC3E6"};
  for (const auto& c : sec.cells) {
    const bool high = c.sm == SmRegime::high;
    if (!high) b.categories.push_back(c.tier.label());
    (high ? eh : el).values.push_back(num_or_nan(c.energy_ratio));
    (high ? lh : ll).values.push_back(num_or_nan(c.latency_ratio));
  }
  b.groups = {el, ll, eh, lh};
  return card(b.title, svg::render(b) + note("SM split at " + fmt_num(sec.sm_threshold, 3) + "% (" +
                                             (sec.threshold_given ? "given" : "median avg_sm_util") + ")"));
}

}  // namespace

std::string dataset_section(const NamedDataset& d, std::size_t index) {
  const std::string id = "data-" + std::to_string(index);
  Characterization ch;
  try {
    ch = characterize(d.data);
  } catch (const DataError& e) {  // e.g. no ok rows: the report still renders, saying why
    return section(id, "Dataset " + d.name, "", {card("Characterization", warning(e.what()), true)});
  }
  std::vector<std::string> cards = {card("Summary", kpis(d.data, ch), true)};
  if (ch.scaling.available)
    for (Knob k : {Knob::depth, Knob::width, Knob::resolution, Knob::batch})
      cards.push_back(scaling_chart(ch.scaling, k));
  if (auto c = precision_chart(ch.precision); !c.empty()) cards.push_back(c);
  if (ch.efficiency.available) efficiency_charts(ch.efficiency, cards);
  if (auto c = divergence_chart(ch.divergence); !c.empty()) cards.push_back(c);
  for (const auto& t : characterization_tables(ch))
    cards.push_back(card(t.title, t.rows.empty() ? warning(t.note) : html_table(t), t.header.size() > 5));
  return section(
      id, "Dataset " + d.name,
      "Characterization of the ok rows: how each measured cost scales along each knob (other knobs "
      "pooled), what reduced precision buys on matched configurations, cost per analytic GFLOP by "
      "batch tier, and how energy and latency diverge across utilization and batch.",
      cards);
}

}  // namespace carb::report
