// The report's comparison sections: parity plots and residuals of each model on each dataset of
// its platform, and transfer scatters (with the fitted line) between datasets of two platforms.
#include <algorithm>
#include <cmath>
#include <set>

#include "carb/error.hpp"
#include "carb/evaluate.hpp"
#include "carb/features.hpp"
#include "carb/metrics.hpp"
#include "carb/prediction_io.hpp"
#include "carb/text_table.hpp"
#include "carb/transfer.hpp"
#include "report_html.hpp"
#include "svg.hpp"
#include "util/join.hpp"

namespace carb::report {
namespace {

std::set<std::string> platforms_of(const Dataset& d) {
  std::set<std::string> p;
  for (const auto& r : d.rows)
    if (r.status == Status::ok) p.insert(r.platform);
  return p;
}

std::string parity_chart(const std::string& target, const std::vector<double>& meas,
                         const std::vector<double>& pred) {
  const auto [lo, hi] = std::minmax_element(meas.begin(), meas.end());
  svg::XYChart c;
  c.title = "Parity: " + target_label(target);
  c.draw_title = false;
  c.x = {"measured " + target_label(target), true};
  c.y = {"predicted " + target_label(target), true};
  c.series.push_back({"", meas, pred, svg::Series::Style::points, target_color(target)});
  c.lines.push_back({*lo, *lo, *hi, *hi, "y = x", "#6b7280", true});
  // Thirty-sixth hostile pass: predictions at or below zero vanished from the log axes without a word.
  const std::size_t off_axis = count_nonpositive(pred);
  return card(c.title, (off_axis ? warning(std::to_string(off_axis) + " of " + std::to_string(pred.size()) +
                                           " predictions are at or below zero and cannot be drawn on these log axes")
                                 : std::string()) +
                           svg::render(c));
}

// The ok rows a model is scored on, and what to say about them. Fifteenth hostile pass: the
// report scored a model on the rows it trained on (held-out R² 0.954 shown as 0.99) without a word.
// Rows the model trained on are left out; when nothing else is left, they are scored and the
// figures are called in-sample.
struct ScoredRows {
  Dataset rows;
  std::string caption;
  bool in_sample = false;
};

ScoredRows rows_to_score(const CarbModel& model, const Dataset& ok) {
  if (!model.knows_trained_configs())
    return {ok, "the model does not record the configurations it trained on: some of these rows may be in-sample"};
  ScoredRows s;
  s.rows.extra_columns = ok.extra_columns;
  std::size_t seen = 0;
  for (const Record& r : ok.rows) {
    if (model.trained_on(r.config))
      ++seen;
    else
      s.rows.rows.push_back(r);
  }
  // With fewer than 2 rows left the trained ones are scored too, and said; with none trained on,
  // whatever there is is held out (a one-row file was called in-sample, trained on "0 of these 1").
  if (s.rows.rows.size() >= 2 || seen == 0) {
    const std::size_t n = s.rows.rows.size();
    s.caption = "held out: the " + std::to_string(n) + (n == 1 ? " row" : " rows") + " the model did not train on" +
                (seen ? " (" + std::to_string(seen) + " rows it trained on are left out)" : "");
  } else {
    s.rows = ok;
    s.in_sample = true;
    s.caption = "in-sample: the model trained on " + std::to_string(seen) + " of these " + std::to_string(ok.rows.size()) +
                " rows, so these figures are optimistic; carb evaluate gives its held-out accuracy";
  }
  return s;
}

// Predictions of one model on one dataset: charts per target, residuals by batch, metrics table.
std::vector<std::string> model_on_data(const NamedModel& m, const NamedDataset& d) {
  // A telemetry model predicts only rows with measured utilization: the others are left out, and
  // said (twenty-fifth hostile pass: five such rows dropped the whole section, naming one).
  Dataset usable = d.data.ok_only();
  std::size_t without_telemetry = 0;
  if (m.model->schema().telemetry) {
    std::vector<Record> kept;
    for (const Record& r : usable.rows)
      if (r.avg_sm_util && r.avg_mem_util) kept.push_back(r);
      else ++without_telemetry;
    usable.rows = std::move(kept);
  }
  const ScoredRows scored = rows_to_score(*m.model, usable);
  const Dataset& ok = scored.rows;
  const auto configs = configs_of(ok);
  // The answers with their 90% intervals, whose coverage of these rows the table states.
  std::vector<Prediction> at90;
  try {
    at90 = m.model->predict(configs, m.model->schema().telemetry ? telemetry_of(ok) : std::vector<Telemetry>{}, 0.9);
  } catch (const InputError& e) {  // e.g. a telemetry model on data without telemetry
    return {card(m.name + " on " + d.name, warning(std::string("cannot predict: ") + e.what()), true)};
  }
  std::vector<std::string> cards;
  NamedTable t{m.name + " on " + d.name,
               {"target", "n", "R²", "MAE", "MAPE %", "90% interval holds"},
               {},
               scored.in_sample ? "" : scored.caption};
  svg::XYChart res;
  res.title = "Residuals by batch (" + m.name + ")";
  res.draw_title = false;
  res.x = {"batch size", true};
  res.y = {"prediction error (%)", false};
  std::size_t most = 0;  // the most rows any target has a value on
  for (const auto& target : m.model->targets()) {
    std::vector<double> y, p, batch, err;
    std::size_t held = 0, unbounded = 0;
    for (std::size_t i = 0; i < ok.rows.size(); ++i)
      if (auto v = ok.rows[i].value(target)) {
        y.push_back(*v);
        p.push_back(at90[i].value.at(target));
        batch.push_back(ok.rows[i].config.batch);
        err.push_back(*v != 0 ? 100.0 * (p.back() / *v - 1.0) : std::nan(""));
        const auto [lo, hi] = at90[i].interval.at(target);
        held += lo <= *v && *v <= hi;
        unbounded += !std::isfinite(hi);
      }
    most = std::max(most, y.size());
    if (y.size() < 2) continue;
    const FitMetrics fm = fit_metrics(y, p);
    // An unbounded interval holds its row by construction: said beside the share, not hidden in it.
    const std::string holds = fmt_num(100.0 * static_cast<double>(held) / static_cast<double>(y.size()), 3) + "%" +
                              (unbounded ? " (" + std::to_string(unbounded) + " unbounded)" : "");
    t.rows.push_back(
        {target, std::to_string(fm.n), fmt_num(fm.r2, 5), fmt_num(fm.mae, 4), fmt_num(fm.mape, 3), holds});
    cards.push_back(parity_chart(target, y, p));
    res.series.push_back(
        {target_short(target), batch, err, svg::Series::Style::points, target_color(target)});
  }
  if (t.rows.empty())
    return {card(t.title,
                 warning(most == 1 ? "one row has a measured value of the model's targets: scoring takes at least two"
                                   : "the data has no measured value of the model's targets"),
                 true)};
  double hi = 2;
  for (const auto& s : res.series)
    for (double b : s.x) hi = std::max(hi, b);
  const double lo = 1;
  res.lines.push_back({lo, 0, hi, 0, "", "#6b7280", true});
  cards.push_back(card(res.title, svg::render(res)));
  // What evaluate warns of, said here too (twenty-fifth hostile pass: the report dropped both).
  std::string warnings = scored.in_sample ? warning(scored.caption) : "";
  if (without_telemetry)
    warnings += note(std::to_string(without_telemetry) + " row" + (without_telemetry == 1 ? "" : "s") +
                     " without measured utilization left out: the model predicts from it");
  if (const auto guesses = guesses_note(*m.model, configs); !guesses.empty()) warnings += warning(guesses);
  // And of another protocol's rows and of scores from few rows (hundred-and-seventeenth hostile pass:
  // 5 rows measured with 1 warm-up pass against the model's 5 read R2 -1.39, unqualified).
  if (const auto other = other_protocol_warning(*m.model, ok)) warnings += warning(*other);
  if (const auto few = few_rows_warning(ok.rows.size())) warnings += warning(*few);
  if (const auto ref = m.model->drift_reference_ms(); ref && m.model->has_target("latency_ms"))
    warnings += note("the model learned latency corrected for host drift (reference " + fmt_num(*ref, 4) +
                     " ms); its latency is scored here against the raw measurements, as measured; carb evaluate "
                     "scores it against both");
  cards.insert(cards.begin(), card("Accuracy: " + t.title + (scored.in_sample ? " (in-sample)" : ""),
                                   warnings + html_table(t)));
  return cards;
}

std::string transfer_chart(const std::string& target, const JoinedTarget& j, const TransferFit& fit) {
  const auto [lo, hi] = std::minmax_element(j.source.begin(), j.source.end());
  svg::XYChart c;
  c.title = "Transfer: " + target_label(target);
  c.draw_title = false;
  c.x = {"source " + target_label(target), false};
  c.y = {"target " + target_label(target), false};
  c.series.push_back({"configurations", j.source, j.dest, svg::Series::Style::points, target_color(target)});
  const double a = fit.slope, b = fit.intercept;
  // A source that never varies has no slope: no line, not "fit y = undefinedx" (hundred-and-second pass).
  if (std::isfinite(a))
    c.lines.push_back({*lo, a * *lo + b, *hi, a * *hi + b,
                       "fit y = " + fmt_num(a, 3) + "x " + (b < 0 ? "- " : "+ ") + fmt_num(std::abs(b), 3),
                       "#111827", false});
  c.lines.push_back({*lo, *lo, *hi, *hi, "y = x", "#6b7280", true});
  return card(c.title, svg::render(c));
}

std::vector<std::string> transfer_cards(const NamedDataset& a, const NamedDataset& b, unsigned seed) {
  const std::string title = a.name + " → " + b.name;
  TransferResult res;
  std::vector<JoinedTarget> joined;
  try {
    TransferOptions o;
    o.seed = seed;
    res = transfer(a.data, b.data, o);
    joined = join_targets(a.data, b.data);
  } catch (const DataError& e) {
    return {card(title, warning(e.what()), true)};
  }
  NamedTable t{"Transfer fits " + title, {"target", "n", "slope", "intercept", "R²", "Spearman ρ", "note"}, {}, ""};
  NamedTable fs{"Few-shot calibration " + title,
                {"target", "k", "MAE", "MAPE %", "note"},
                {},
                "affine map fitted on k measured target configurations, scored on the rest; mean of " +
                    std::to_string(res.repeats) + " draws (seed " + std::to_string(seed) + ")"};
  std::vector<std::string> cards;
  svg::XYChart k_chart;
  k_chart.title = "Few-shot calibration error vs k " + title;
  k_chart.draw_title = false;
  k_chart.x = {"k (measured target configurations)", true};
  k_chart.y = {"MAPE on the other configurations (%)", false};
  for (const auto& j : joined) {
    const TransferFit& f = res.targets.at(j.target);
    if (!f.available) continue;
    cards.push_back(transfer_chart(j.target, j, f));
    t.rows.push_back({j.target, std::to_string(f.n), fmt_num(f.slope, 4), fmt_num(f.intercept, 4),
                      fmt_num(f.r2, 4), fmt_num(f.spearman, 4), ""});
    const auto& points = res.few_shot.at(j.target);
    svg::Series s{target_short(j.target), {}, {}, svg::Series::Style::line_points, target_color(j.target)};
    for (const auto& e : points)
      if (e.mape) s.x.push_back(e.k), s.y.push_back(*e.mape);
    k_chart.series.push_back(std::move(s));
    for (const auto& e : points)
      fs.rows.push_back({j.target, std::to_string(e.k), e.mae ? fmt_num(*e.mae, 4) : "-",
                         e.mape ? fmt_num(*e.mape, 3) : "-", e.table_note(3)});
  }
  // Hundred-and-second hostile pass: a target without a fit (two common configurations, energy on
  // one side only) was left out of the tables without the reason `carb transfer` gives.
  for (const auto& [target, f] : res.targets)
    if (!f.available) t.rows.push_back({target, std::to_string(f.n), "-", "-", "-", "-", "no fit: " + f.reason});
  cards.insert(cards.begin(), card(t.title, html_table(t)));
  cards.push_back(card(k_chart.title, svg::render(k_chart)));
  cards.push_back(card(fs.title, html_table(fs)));
  return cards;
}

}  // namespace

std::string parity_section(const std::vector<NamedDataset>& ds, const std::vector<NamedModel>& models) {
  std::vector<std::string> cards;
  for (const auto& m : models)
    for (const auto& d : ds) {
      const auto plats = platforms_of(d.data);
      if (!plats.count(m.model->platform()) || plats.size() != 1) {
        cards.push_back(card(m.name + " on " + d.name,
                             note("skipped: the model was trained on " + m.model->platform() +
                                  ", the data comes from " + (plats.empty() ? "no platform" : join(plats)))));
        continue;
      }
      for (auto& c : model_on_data(m, d)) cards.push_back(std::move(c));
    }
  return section(
      "models", "Model accuracy",
      "Each model predicts the configurations of every dataset measured on its own platform; parity "
      "plots are log-log with the y = x line, residuals are (predicted / measured - 1).",
      cards);
}

std::string transfer_section(const std::vector<NamedDataset>& ds, unsigned seed) {
  std::vector<std::string> cards, skipped;
  for (std::size_t i = 0; i < ds.size(); ++i)
    for (std::size_t j = i + 1; j < ds.size(); ++j) {
      const auto pa = platforms_of(ds[i].data), pb = platforms_of(ds[j].data);
      // Hundred-and-second hostile pass: two datasets without an ok row ("no platform" each) were
      // said to come from the same platform, and a same-platform pair beside others went unsaid.
      if (pa.empty() || pb.empty()) {
        skipped.push_back(ds[i].name + " and " + ds[j].name + ": " + (pa.empty() ? ds[i].name : ds[j].name) +
                          " holds no ok row");
        continue;
      }
      if (pa == pb) {
        skipped.push_back(ds[i].name + " and " + ds[j].name + ": both measure " + join(pa) +
                          " (two measurements of one platform, not a transfer)");
        continue;
      }
      for (auto& c : transfer_cards(ds[i], ds[j], seed)) cards.push_back(std::move(c));
    }
  if (!skipped.empty()) cards.push_back(card("Transfer", note("not compared: " + join(skipped, AsText{}, "; ")), true));
  return section(
      "transfer", "Cross-platform transfer",
      "Measurements of the configurations both platforms ran: a least-squares line y_target = a * "
      "y_source + b per target, Spearman rank correlation, and few-shot calibration error against k.",
      cards);
}

}  // namespace carb::report
