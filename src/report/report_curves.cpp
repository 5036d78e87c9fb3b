// The report's active-profiling section: learning curves of the strategies (held-out R² against
// rows measured and against seconds of measuring), the mean over seeds, from the CSV that
// bench/active_learning_bench writes with --csv.
#include <algorithm>
#include <map>
#include <set>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/text_table.hpp"
#include "data/csv.hpp"
#include "report_html.hpp"
#include "svg.hpp"

namespace carb {

std::vector<CurvePoint> read_curves_csv(const std::filesystem::path& file) {
  const auto rows = csv::read_file(file);
  if (rows.empty()) throw DataError(file.string() + ": empty file (expected learning curves)");
  const std::vector<std::string> need = {"strategy", "seed", "round", "rows", "cost_s", "target", "r2", "mape"};
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < rows[0].fields.size(); ++i) col[rows[0].fields[i]] = i;
  for (const auto& n : need)
    if (!col.count(n))
      throw DataError(file.string() + ": missing column '" + n + "' (expected the --csv of bench/active_learning_bench)");
  std::vector<CurvePoint> out;
  std::vector<std::size_t> lines;  // each point's line in the file
  std::set<std::string> seen;
  for (std::size_t k = 1; k < rows.size(); ++k) {
    const auto& f = rows[k].fields;
    auto at = [&](const std::string& n) {
      if (col[n] >= f.size())
        throw DataError(file.string() + ":" + std::to_string(rows[k].line) + ": too few fields (no '" + n + "')");
      return csv::Where{file.string(), rows[k].line, col[n], n};
    };
    CurvePoint p;
    p.strategy = f[at("strategy").field];
    p.target = f[at("target").field];
    const int seed = csv::parse_int(f[col["seed"]], at("seed"));
    p.round = csv::parse_int(f[col["round"]], at("round"));
    p.rows = csv::parse_int(f[col["rows"]], at("rows"));
    p.cost_s = csv::parse_number(f[col["cost_s"]], at("cost_s"));
    p.r2 = csv::parse_number(f[col["r2"]], at("r2"));
    p.mape = csv::parse_number(f[col["mape"]], at("mape"));
    // Values a learning curve cannot have: plotted, they looked like data.
    auto bad = [&](const std::string& column, const std::string& why) {
      throw DataError(at(column).str() + ": " + why);
    };
    if (std::find(std::begin(kTargets), std::end(kTargets), p.target) == std::end(kTargets))
      bad("target", "'" + csv::show(p.target) + "' is not a target carb predicts");
    if (p.strategy.empty()) bad("strategy", "empty");
    if (seed < 0) bad("seed", "must be at least 0");  // a seed of -1 was read as 4294967295
    p.seed = static_cast<unsigned>(seed);
    if (p.round < 0) bad("round", "must be at least 0");
    if (p.rows < 1) bad("rows", "must be at least 1");
    if (p.cost_s < 0 || p.cost_s > 1e9) bad("cost_s", "must be between 0 and 1e9 seconds");
    // The curves plot 1 - R² on a log axis: one R² of -1e300 flattened every real curve to a line.
    // A held-out R² below -1000 (errors 30x the spread of the truth) is no learning curve.
    if (p.r2 > 1 || p.r2 < -1000) bad("r2", "must be between -1000 and 1 (an R² cannot exceed 1)");
    if (p.mape < 0 || p.mape > 1e6) bad("mape", "must be between 0 and 1e6 %");
    const std::string key = p.strategy + "\x1f" + std::to_string(p.seed) + "\x1f" + std::to_string(p.round) + "\x1f" + p.target;
    if (!seen.insert(key).second)
      throw DataError(file.string() + ":" + std::to_string(rows[k].line) + ": strategy " + csv::show(p.strategy) +
                      ", seed " + std::to_string(p.seed) + ", round " + std::to_string(p.round) + ", " + p.target +
                      " appears twice");
    out.push_back(p);
    lines.push_back(rows[k].line);
  }
  if (out.empty()) throw DataError(file.string() + ": no curve rows");
  // Across rows (fifty-sixth hostile pass: rows and costs that fell from round to round, and one
  // round's targets at 7x each other's rows, were drawn as curves): a round's targets are scored on
  // the same rows at the same cost, and a later round has measured at least what an earlier one had.
  std::map<std::string, std::map<int, std::pair<std::size_t, std::size_t>>> by_run;  // run -> round -> (point, line)
  for (std::size_t i = 0; i < out.size(); ++i) {
    const CurvePoint& p = out[i];
    auto& rounds = by_run[p.strategy + "\x1f" + std::to_string(p.seed)];
    const auto [it, fresh] = rounds.emplace(p.round, std::make_pair(i, lines[i]));
    if (!fresh) {
      const CurvePoint& q = out[it->second.first];
      if (q.rows != p.rows || q.cost_s != p.cost_s)
        throw DataError(file.string() + ":" + std::to_string(lines[i]) + ": strategy " + csv::show(p.strategy) + ", seed " +
                        std::to_string(p.seed) + ", round " + std::to_string(p.round) + " has " + std::to_string(p.rows) +
                        " rows and " + csv::format_number(p.cost_s) + " s for " + p.target + " but " +
                        std::to_string(q.rows) + " rows and " + csv::format_number(q.cost_s) + " s for " + q.target +
                        " (line " + std::to_string(it->second.second) + "): a round's targets are scored on the same rows");
    }
  }
  for (const auto& [run, rounds] : by_run) {
    const CurvePoint* before = nullptr;
    for (const auto& [round, at] : rounds) {
      const CurvePoint& p = out[at.first];
      if (before && (p.rows < before->rows || p.cost_s < before->cost_s))
        throw DataError(file.string() + ":" + std::to_string(at.second) + ": strategy " + csv::show(p.strategy) +
                        ", seed " + std::to_string(p.seed) + ", round " + std::to_string(round) + " has measured " +
                        std::to_string(p.rows) + " rows for " + csv::format_number(p.cost_s) + " s, less than round " +
                        std::to_string(before->round) + "'s " + std::to_string(before->rows) + " rows for " +
                        csv::format_number(before->cost_s) + " s: rows and cost only grow from round to round");
      before = &p;
    }
  }
  return out;
}

namespace report {
namespace {

struct Mean {
  double rows = 0, cost = 0, r2 = 0;
  int n = 0;
};

// strategy -> round -> mean over seeds, for one target.
std::map<std::string, std::map<int, Mean>> means(const std::vector<CurvePoint>& c, const std::string& target) {
  std::map<std::string, std::map<int, Mean>> m;
  for (const auto& p : c) {
    if (p.target != target) continue;
    Mean& x = m[p.strategy][p.round];
    x.rows += p.rows, x.cost += p.cost_s, x.r2 += p.r2, ++x.n;
  }
  for (auto& [s, rounds] : m)
    for (auto& [r, x] : rounds) x.rows /= x.n, x.cost /= x.n, x.r2 /= x.n;
  return m;
}

std::string chart(const std::map<std::string, std::map<int, Mean>>& m, const std::string& target, bool by_cost) {
  svg::XYChart c;
  c.title = target_short(target) + " R² against " + (by_cost ? "seconds of measuring" : "rows measured");
  c.x = {by_cost ? "cumulative measuring cost (s)" : "rows measured", false};
  // 1 - R² on a log axis: R² of 0.995 and 0.999 are a factor 5 apart there, not 0.4% of an axis.
  c.y = {"held-out 1 - R² (lower is better)", true};
  for (const auto& [strategy, rounds] : m) {
    svg::Series s{strategy, {}, {}, svg::Series::Style::line_points, ""};
    for (const auto& [r, x] : rounds) s.x.push_back(by_cost ? x.cost : x.rows), s.y.push_back(1 - x.r2);
    c.series.push_back(std::move(s));
  }
  return card(c.title, svg::render(c));
}

}  // namespace

std::string curves_section(const std::vector<CurvePoint>& curves) {
  std::set<std::string> targets;
  std::set<unsigned> seeds;
  for (const auto& p : curves) targets.insert(p.target), seeds.insert(p.seed);
  std::vector<std::string> cards;
  for (const auto& t : targets) {
    const auto m = means(curves, t);
    cards.push_back(chart(m, t, false));
    cards.push_back(chart(m, t, true));
    NamedTable tab{"last round, " + target_short(t), {"strategy", "rows", "cost s", "R²"}, {}, ""};
    for (const auto& [strategy, rounds] : m) {
      const Mean& x = rounds.rbegin()->second;
      tab.rows.push_back({strategy, fmt_num(x.rows, 4), fmt_num(x.cost, 4), fmt_num(x.r2, 5)});
    }
    cards.push_back(card(tab.title, html_table(tab)));
  }
  return section("curves", "Active profiling: learning curves",
                 "Mean over " + std::to_string(seeds.size()) +
                     " seeds of the held-out error (1 - R², log axis) after each round, against the rows measured "
                     "and against the seconds it took to measure them.",
                 cards);
}

}  // namespace report
}  // namespace carb
