// Human rendering of an evaluate document: one compact text table per section, in the
// order of the paper's evaluation (accuracy, baselines, LOBTO, ablation, components,
// importance, residuals). Unavailable sections print their reason instead of a table.
#include <string>

#include "carb/evaluate.hpp"
#include "carb/text_table.hpp"

namespace carb {
namespace {

using json = nlohmann::json;

// j[key], or null when j is no object or lacks the key (const json::operator[] must not miss).
const json& field(const json& j, const std::string& key) {
  static const json none;
  return j.is_object() && j.contains(key) ? j[key] : none;
}

std::string num(const json& j, const char* key, int digits = 4) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return "-";
  return fmt_num(j[key].get<double>(), digits);
}

std::vector<std::string> metric_cells(const json& m) {
  return {num(m, "r2", 5), num(m, "mae"), num(m, "rmse"), num(m, "mape", 3)};
}

std::vector<std::string> metric_cells(const FitMetrics& m) {
  return {fmt_num(m.r2, 5), fmt_num(m.mae, 4), fmt_num(m.rmse, 4), fmt_num(m.mape, 3)};
}

void render_header(const Evaluation& e, std::ostream& out) {
  const EvaluationSplit& s = e.split;
  out << "evaluation of the " << e.platform << " model on " << e.rows << " ok rows; ";
  if (s.external)
    out << "every row held out (--external)"
        << (s.rows_in_training ? ", " + std::to_string(*s.rows_in_training) + " of them trained the model" : "")
        << '\n';
  else
    out << "held-out split seed " << s.seed << ", test fraction " << json(s.test_fraction).dump() << " (" << s.source
        << "): " << s.train_rows << " train / " << s.test_rows << " test rows\n";
  for (const auto& w : e.warnings) out << "warning: " << w << '\n';
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
  if (e.drift_correction && e.drift_correction->contains("raw_latency")) {
    const json& d = *e.drift_correction;
    out << "latency is drift-corrected to the reference time " << num(d, "reference_ms") << " ms; against the raw "
        << "measured latency:\n";
    TextTable r({"prediction", "R2", "MAE", "RMSE", "MAPE %"});
    for (const auto& [name, m] : d["raw_latency"].items()) {
      std::vector<std::string> row = {name};
      for (auto& c : metric_cells(m)) row.push_back(c);
      r.add(row);
    }
    r.print(out);
  }
}

void render_baselines(const Evaluation& e, std::ostream& out) {
  out << "\n== baselines (fitted on the train split) ==\n";
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
  TextTable t({"target", "all features", "architecture only", "delta"});
  for (const auto& n : e.targets_predicted) {
    const auto d = a.delta_r2.find(n);
    t.add({n, r2_cell(a.all_features, n), r2_cell(a.architecture_only, n),
           d == a.delta_r2.end() ? "-" : fmt_num(d->second, 3)});
  }
  t.print(out);
}

// The learners first, then the blend and the blend + corrector.
std::vector<std::string> variants(const json& component) {
  std::vector<std::string> out, rest;
  for (const auto& [variant, m] : component["test"].items())
    (component["weights"].contains(variant) ? out : rest).push_back(variant);
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

void render_components(const Evaluation& e, std::ostream& out) {
  out << "\n== components (out-of-fold on train / held-out test) ==\n";
  TextTable t({"target", "variant", "weight", "OOF R2", "OOF MAE", "test R2", "test MAE"});
  for (const auto& target : e.targets_predicted) {
    const json& c = field(e.components, target);
    for (const auto& variant : variants(c)) {
      const json& m = c["test"][variant];
      t.add({target, variant, num(c["weights"], variant.c_str(), 3), num(field(c["oof"], variant), "r2", 5),
             num(field(c["oof"], variant), "mae"), num(m, "r2", 5), num(m, "mae")});
    }
    const json& nc = c["no_cascade"];
    t.add({target, "no_cascade", "-", "-", "-", nc.contains("available") ? "skipped" : num(nc, "r2", 5),
           num(nc, "mae")});
  }
  t.print(out);
}

void render_importance(const Evaluation& e, std::ostream& out, std::size_t top) {
  out << "\n== feature importance (top " << top << " by gain; permutation = test MAE increase) ==\n";
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

std::string cell(const std::optional<double>& v, int digits) { return v ? fmt_num(*v, digits) : "-"; }

void render_residuals(const Evaluation& e, std::ostream& out) {
  const ResidualStudy& r = e.residuals;
  if (!heading(out, "residuals vs SM utilization (held-out rows above the threshold)", r.high_util_available,
               r.high_util_reason)) {
    TextTable t({"target", "n", "Spearman rho"});
    for (const auto& name : e.targets_predicted) {
      const auto it = r.high_util.find(name);
      if (it == r.high_util.end()) continue;
      t.add({name, std::to_string(it->second.n), cell(it->second.rho, 3)});
    }
    t.print(out);
  }
  out << "\n== residual spread per batch regime (held-out rows) ==\n";
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

}  // namespace

void render_evaluation_table(const Evaluation& e, std::ostream& out) {
  render_header(e, out);
  render_baselines(e, out);
  render_lobto_ablation(e, out);
  render_components(e, out);
  render_importance(e, out, 6);
  render_residuals(e, out);
}

}  // namespace carb
