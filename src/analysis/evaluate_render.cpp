// Human rendering of an evaluate document: one compact text table per section, in the
// order of the paper's evaluation (accuracy, baselines, LOBTO, ablation, components,
// importance, residuals, interval coverage). Unavailable sections print their reason instead of a table.
#include <string>

#include "carb/evaluate.hpp"
#include "carb/text_table.hpp"

namespace carb {
namespace {

std::vector<std::string> metric_cells(const FitMetrics& m) {
  return {fmt_num(m.r2, 5), fmt_num(m.mae, 4), fmt_num(m.rmse, 4), fmt_num(m.mape, 3)};
}

// What the test rows are, for every section scored on them (forty-eighth hostile pass: after the
// in-sample warning, the components, residual and importance sections still said "held-out").
std::string test_rows(const Evaluation& e) {
  const EvaluationSplit& s = e.split;
  return s.in_sample_rows > 0 ? "test rows, " + std::to_string(s.in_sample_rows) + " of " + std::to_string(s.test_rows) +
                                    " in-sample"
                              : "held-out test";
}

void render_header(const Evaluation& e, std::ostream& out) {
  const EvaluationSplit& s = e.split;
  out << "evaluation of the " << e.platform << " model on " << e.rows << " ok rows; ";
  if (s.external)
    out << "every row held out (--external)"
        << (s.rows_in_training ? ", " + std::to_string(*s.rows_in_training) + " of them trained the model" : "")
        << '\n';
  else
    out << "held-out split seed " << s.seed << ", test fraction " << nlohmann::json(s.test_fraction).dump() << " (" << s.source
        << "): " << s.train_rows << " train / " << s.test_rows << " test rows\n";
  for (const auto& w : e.warnings) out << "warning: " << w << '\n';
  if (s.in_sample_rows > 0)
    out << "\n== accuracy on the test rows (" << s.in_sample_rows << " of " << s.test_rows
        << " trained the model: in-sample, not held-out) ==\n";
  else
    out << "\n== held-out accuracy ==\n";
  TextTable t({"target", "n", "R2", "MAE", "RMSE", "MAPE %"});
  for (const auto& name : e.targets_predicted) {
    const auto it = e.targets.find(name);
    if (it == e.targets.end()) continue;
    std::vector<std::string> row = {name, std::to_string(it->second.n)};
    for (auto& c : metric_cells(it->second)) row.push_back(c);
    t.add(row);
  }
  t.print(out);
  if (e.drift_correction && e.drift_correction->raw_prediction) {
    const DriftCorrectionScore& d = *e.drift_correction;
    out << "latency is drift-corrected to the reference time " << fmt_num(d.reference_ms, 4)
        << " ms; against the raw measured latency:\n";
    TextTable r({"prediction", "R2", "MAE", "RMSE", "MAPE %"});
    for (const auto& [name, m] : {std::pair{"prediction", *d.raw_prediction},
                                  std::pair{"prediction_times_row_reference", *d.raw_prediction_times_row_reference}}) {
      std::vector<std::string> row = {name};
      for (auto& c : metric_cells(m)) row.push_back(c);
      r.add(row);
    }
    r.print(out);
  }
}

void render_baselines(const Evaluation& e, std::ostream& out) {
  out << "\n== baselines (fitted on the train split) ==\n";
  // Fifty-eighth hostile pass: the note was printed over baselines that had no figures at all.
  const bool any_baseline =
      e.baselines.flops_linear.available || e.baselines.flops_loglinear.available || e.baselines.latency_proxy.available;
  if (e.split.in_sample_rows > 0 && any_baseline)
    out << "note: CARB's MAE here is on " << test_rows(e) << " (the model trained on them), the baselines' on rows "
        << "they did not fit: the reduction overstates CARB\n";
  TextTable t({"baseline", "target", "R2", "MAE", "CARB MAE reduction %"});
  const std::pair<const char*, const Baseline*> all[] = {{"flops_linear", &e.baselines.flops_linear},
                                                         {"flops_loglinear", &e.baselines.flops_loglinear},
                                                         {"latency_proxy", &e.baselines.latency_proxy}};
  for (const auto& [name, b] : all) {
    if (!b->available) {
      t.add({name, "-", "-", "-", b->reason});
      continue;
    }
    for (const auto& [target, s] : b->targets) {
      if (!s.available)
        t.add({name, target, "-", "-", s.reason});
      else
        t.add({name, target, fmt_num(s.metrics.r2, 5), fmt_num(s.metrics.mae, 4), fmt_num(s.carb_mae_reduction_pct, 3)});
    }
  }
  t.print(out);
}

// Prints the title and, when the section is unavailable, its reason; true when it is.
bool heading(std::ostream& out, const std::string& title, bool available, const std::string& reason) {
  out << "\n== " << title << " ==\n";
  if (!available) out << "not available: " << reason << '\n';
  return !available;
}

std::string r2_cell(const std::map<std::string, FitMetrics>& m, const std::string& target) {
  const auto it = m.find(target);
  return it == m.end() ? "-" : fmt_num(it->second.r2, 5);
}

void render_lobto_ablation(const Evaluation& e, std::ostream& out) {
  const LobtoResult& l = e.lobto;
  if (!heading(out, "leave-one-batch-tier-out", l.available, l.reason)) {
    out << l.split << " (" << l.train_rows << " / " << l.test_rows << " rows)\n";
    for (const auto& w : l.warnings) out << "warning: " << w << '\n';
    TextTable t({"target", "R2", "MAE", "RMSE", "MAPE %"});
    for (const auto& name : e.targets_predicted) {
      const auto it = l.targets.find(name);
      if (it == l.targets.end()) continue;
      std::vector<std::string> row = {name};
      for (auto& c : metric_cells(it->second)) row.push_back(c);
      t.add(row);
    }
    t.print(out);
  }
  const AblationResult& a = e.ablation;
  if (heading(out, "telemetry ablation (held-out R2)", a.available, a.reason)) return;
  out << "rows with telemetry: " << a.train_rows << " train / " << a.test_rows << " test";
  if (a.train_without_telemetry + a.test_without_telemetry > 0)
    out << " (left out without it: " << a.train_without_telemetry << " / " << a.test_without_telemetry << ")";
  out << "\n";
  for (const auto& w : a.warnings) out << "warning: " << w << '\n';
  TextTable t({"target", "all features", "architecture only", "architecture only - all"});
  for (const auto& n : e.targets_predicted) {
    const auto d = a.delta_r2.find(n);
    t.add({n, r2_cell(a.all_features, n), r2_cell(a.architecture_only, n),
           d == a.delta_r2.end() ? "-" : fmt_num(d->second, 3)});
  }
  t.print(out);
}

std::string cell(const std::optional<double>& v, int digits) { return v ? fmt_num(*v, digits) : "-"; }

// One row per part: the learners first, then the blend, the blend + corrector and the answers held
// monotone (the model's own).
void render_components(const Evaluation& e, std::ostream& out) {
  out << "\n== components (out-of-fold on train / " << test_rows(e) << ") ==\n";
  TextTable t({"target", "variant", "weight", "OOF R2", "OOF MAE", "test R2", "test MAE"});
  auto add = [&](const std::string& target, const std::string& variant, std::optional<double> weight,
                 const FitMetrics* oof, const FitMetrics& test) {
    t.add({target, variant, cell(weight, 3), oof ? fmt_num(oof->r2, 5) : "-", oof ? fmt_num(oof->mae, 4) : "-",
           fmt_num(test.r2, 5), fmt_num(test.mae, 4)});
  };
  for (const auto& target : e.targets_predicted) {
    const auto it = e.components.find(target);
    if (it == e.components.end()) continue;
    const TargetComponents& c = it->second;
    for (const auto& [kind, m] : c.learners_test) {
      const auto w = c.weights.find(kind);
      const auto o = c.oof.learners.find(kind);
      add(target, kind, w == c.weights.end() ? std::nullopt : std::optional<double>(w->second),
          o == c.oof.learners.end() ? nullptr : &o->second, m);
    }
    add(target, "blend", std::nullopt, &c.oof.blend, c.blend_test);
    if (c.blend_corrected_test)
      add(target, "blend_corrected", std::nullopt, c.oof.blend_corrected ? &*c.oof.blend_corrected : nullptr,
          *c.blend_corrected_test);
    if (c.held_monotone_test) add(target, "held_monotone", std::nullopt, nullptr, *c.held_monotone_test);
    t.add({target, "no_cascade", "-", "-", "-", c.no_cascade ? fmt_num(c.no_cascade->r2, 5) : "skipped",
           c.no_cascade ? fmt_num(c.no_cascade->mae, 4) : "-"});
  }
  t.print(out);
}

void render_importance(const Evaluation& e, std::ostream& out, std::size_t top) {
  out << "\n== feature importance (top " << top << " by gain; permutation = MAE increase on the " << test_rows(e)
      << ") ==\n";
  TextTable t({"target", "feature", "gain", "permutation", "perm % of MAE"});
  for (const auto& target : e.targets_predicted) {
    const auto it = e.importance.find(target);
    if (it == e.importance.end()) continue;
    for (std::size_t i = 0; i < it->second.size() && i < top; ++i) {
      const FeatureImportance& f = it->second[i];
      t.add({target, f.feature, fmt_num(f.gain, 3), fmt_num(f.permutation, 3), fmt_num(f.permutation_pct, 3)});
    }
  }
  t.print(out);
}

void render_residuals(const Evaluation& e, std::ostream& out) {
  const ResidualStudy& r = e.residuals;
  if (!heading(out, "residuals vs SM utilization, on rows above the threshold (" + test_rows(e) + ")", r.high_util_available,
               r.high_util_reason)) {
    TextTable t({"target", "n", "Spearman rho"});
    for (const auto& name : e.targets_predicted) {
      const auto it = r.high_util.find(name);
      if (it == r.high_util.end()) continue;
      t.add({name, std::to_string(it->second.n), cell(it->second.rho, 3)});
    }
    t.print(out);
  }
  out << "\n== residual spread per batch regime (" << test_rows(e) << " rows) ==\n";
  TextTable t({"target", "batch", "n", "residual std", "MAE", "log-ratio std"});
  for (const auto& target : e.targets_predicted) {
    const auto regimes = r.batch_regimes.find(target);
    if (regimes == r.batch_regimes.end()) continue;
    for (const char* label : {"<=8", "9-64", ">64"}) {
      const auto it = regimes->second.find(label);
      if (it == regimes->second.end()) continue;
      const RegimeSpread& m = it->second;
      t.add({target, label, std::to_string(m.n), cell(m.std, 4), cell(m.mae, 4), cell(m.log_ratio_std, 3)});
    }
  }
  t.print(out);
}

std::string percent(const std::optional<double>& share) {
  return share ? fmt_num(100 * *share, 3) : std::string("-");
}

// The stated coverage checked on the scored rows; an unbounded interval holds its row by
// construction, so the rows whose intervals are unbounded are counted beside the share.
void render_intervals(const Evaluation& e, std::ostream& out) {
  const IntervalCoverage& iv = e.intervals;
  std::string rows = test_rows(e) + " rows";
  if (iv.left_out_trained > 0)
    rows = "held-out test rows, the " + std::to_string(iv.left_out_trained) + " the model trained on left out";
  else if (iv.in_sample)
    rows = "test rows, in-sample: nearly every one the model trained on, so these shares say little";
  out << "\n== interval coverage (" << rows << "; halves by the predicted value) ==\n";
  if (iv.drift_reference_ms)
    out << "latency is scored against drift-corrected latency (reference " << fmt_num(*iv.drift_reference_ms, 4)
        << " ms), as the accuracy above; carb report scores it against the raw measurements\n";
  TextTable t({"target", "level", "n", "held %", "smaller half %", "larger half %", "median upper/lower", "unbounded",
               "held % of bounded"});
  for (const auto& target : e.targets_predicted) {
    const auto levels = e.intervals.targets.find(target);
    if (levels == e.intervals.targets.end()) continue;
    for (const auto& [level, c] : levels->second)
      t.add({target, level, std::to_string(c.n), percent(c.share), percent(c.smaller_half), percent(c.larger_half),
             c.median_width ? "x" + fmt_num(*c.median_width, 3) : std::string(c.n ? "inf" : "-"),
             std::to_string(c.unbounded), percent(c.bounded_share)});
  }
  t.print(out);
}

}  // namespace

void render_evaluation_table(const Evaluation& e, std::ostream& out) {
  render_header(e, out);
  render_baselines(e, out);
  render_lobto_ablation(e, out);
  render_components(e, out);
  render_importance(e, out, 6);
  render_residuals(e, out);
  render_intervals(e, out);
}

}  // namespace carb
