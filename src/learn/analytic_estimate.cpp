// The fitted analytic estimate of a cost (see carb/analytic_estimate.hpp) and the NNLS solver.
#include "carb/analytic_estimate.hpp"

#include <algorithm>
#include <cmath>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/network_spec.hpp"

namespace carb {
namespace {

constexpr Precision kPrecisions[] = {Precision::fp32, Precision::fp16, Precision::bf16};

bool is_memory(const std::string& target) { return target == "peak_memory_mb"; }

void check_target(const std::string& target) {
  if (std::find_if(kTargets.begin(), kTargets.end(), [&](const char* t) { return target == t; }) == kTargets.end())
    throw InputError("no analytic estimate for '" + target + "'");
}

// Per-precision copies of a term let a platform's fp16 FLOPs cost what they cost there; the shared
// term keeps a precision that few rows have from falling back on the constant alone.
void by_precision(std::vector<std::string>& names, const std::string& term) {
  names.push_back(term);
  for (Precision p : kPrecisions) names.push_back(term + "*" + to_string(p));
}

}  // namespace

std::vector<std::string> AnalyticEstimate::term_names(const std::string& target) {
  check_target(target);
  std::vector<std::string> n;
  if (is_memory(target)) {
    // What inference holds at its peak: the weights, the input and the layer outputs alive at once
    // (NetworkSpec::act_elements_peak). The largest output and the sum of all outputs, the terms
    // before it, fitted the grid as well but extrapolated worse: on the H200's deploy rows (160-224
    // px) the estimate's MAPE was 13.0% with them and 5.8% with the peak (README, "Predicting past
    // the measured grid").
    for (const char* t : {"params_mb", "input_mb", "peak_activation_mb"}) by_precision(n, t);
  } else {
    by_precision(n, "gflops");
    for (const char* t : {"activation_mb", "params_mb", "conv_layers", "batch"}) n.push_back(t);
  }
  n.push_back("constant");
  return n;
}

namespace {

// The term lists a bundle may hold, whole: this carb's, and the memory estimate's before the peak
// (weights, input, largest and total activations), so that a bundle trained then still loads and
// predicts as it did. A list is one of these exactly: a term repeated, dropped or mixed in from the
// other list would load and answer something no training wrote.
bool known_terms(const std::string& target, const std::vector<std::string>& terms) {
  if (terms == AnalyticEstimate::term_names(target)) return true;
  if (!is_memory(target)) return false;
  std::vector<std::string> earlier;
  for (const char* t : {"params_mb", "input_mb", "max_activation_mb", "activation_mb"}) by_precision(earlier, t);
  earlier.push_back("constant");
  return terms == earlier;
}

using Q = AnalyticEstimate::Term::Quantity;

AnalyticEstimate::Term parse_term(const std::string& name) {
  static const std::pair<const char*, Q> kQuantities[] = {
      {"constant", Q::constant},       {"params_mb", Q::params},
      {"input_mb", Q::input},          {"peak_activation_mb", Q::peak_activation},
      {"max_activation_mb", Q::max_activation}, {"activation_mb", Q::activation},
      {"gflops", Q::gflops},           {"conv_layers", Q::conv_layers},
      {"batch", Q::batch}};
  const auto star = name.find('*');
  const std::string q = name.substr(0, star);
  AnalyticEstimate::Term t;
  const auto* hit = std::find_if(std::begin(kQuantities), std::end(kQuantities), [&](const auto& k) { return q == k.first; });
  if (hit == std::end(kQuantities)) throw ModelError("analytic estimate: unknown term '" + name + "'");
  t.quantity = hit->second;
  if (star != std::string::npos) t.only = parse_precision(name.substr(star + 1));
  return t;
}

double term_value(const AnalyticEstimate::Term& t, const Config& c, const NetworkSpec& s) {
  if (t.only && *t.only != c.precision) return 0.0;
  switch (t.quantity) {
    case Q::constant: return 1.0;
    case Q::params: return static_cast<double>(s.param_bytes()) / 1e6;
    case Q::input: return static_cast<double>(s.input_bytes()) / 1e6;
    case Q::peak_activation: return static_cast<double>(s.activation_bytes_peak()) / 1e6;
    case Q::max_activation: return static_cast<double>(s.activation_bytes_max()) / 1e6;
    case Q::activation: return s.activation_bytes_total() / 1e6;
    case Q::gflops: return s.flops() / 1e9;
    case Q::conv_layers: return static_cast<double>(s.conv_layers);
    case Q::batch: return static_cast<double>(c.batch);
  }
  return 0.0;
}

std::vector<AnalyticEstimate::Term> parse_terms(const std::vector<std::string>& names) {
  std::vector<AnalyticEstimate::Term> out;
  for (const auto& n : names) out.push_back(parse_term(n));
  return out;
}

std::vector<double> values_of(const std::vector<AnalyticEstimate::Term>& terms, const Config& c) {
  const NetworkSpec s = network_totals(c);
  std::vector<double> v;
  v.reserve(terms.size());
  for (const auto& t : terms) v.push_back(term_value(t, c, s));
  return v;
}

}  // namespace

std::vector<double> AnalyticEstimate::term_values(const std::string& target, const Config& c) {
  return values_of(parse_terms(term_names(target)), c);
}

std::vector<double> nnls(const std::vector<std::vector<double>>& rows, const std::vector<double>& b) {
  if (rows.empty()) return {};
  const std::size_t k = rows.front().size();
  // Normal equations on columns scaled to unit norm (conditioning); zero columns stay at 0.
  std::vector<double> scale(k, 0.0);
  for (const auto& r : rows)
    for (std::size_t j = 0; j < k; ++j) scale[j] += r[j] * r[j];
  for (double& s : scale) s = s > 0 ? 1.0 / std::sqrt(s) : 0.0;
  std::vector<double> H(k * k, 0.0), g(k, 0.0);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t a = 0; a < k; ++a) {
      const double ra = rows[i][a] * scale[a];
      g[a] += ra * b[i];
      for (std::size_t c = 0; c < k; ++c) H[a * k + c] += ra * rows[i][c] * scale[c];
    }
  std::vector<double> x(k, 0.0);
  for (int sweep = 0; sweep < 5000; ++sweep) {
    double moved = 0;
    for (std::size_t j = 0; j < k; ++j) {
      if (H[j * k + j] <= 0) continue;
      double grad = -g[j];
      for (std::size_t c = 0; c < k; ++c) grad += H[j * k + c] * x[c];
      const double next = std::max(0.0, x[j] - grad / H[j * k + j]);
      moved = std::max(moved, std::abs(next - x[j]));
      x[j] = next;
    }
    if (moved < 1e-12) break;
  }
  for (std::size_t j = 0; j < k; ++j) x[j] *= scale[j];
  return x;
}

AnalyticEstimate AnalyticEstimate::fit(const std::string& target, const std::vector<Config>& configs,
                                       const std::vector<double>& y) {
  if (configs.size() != y.size() || configs.empty())
    throw InputError("analytic estimate of " + target + ": need one measured value per configuration");
  AnalyticEstimate e;
  e.target_ = target;
  e.terms_ = term_names(target);
  e.parsed_ = parse_terms(e.terms_);
  // Relative error: each row divided by its measured value, so small and large costs weigh alike.
  std::vector<std::vector<double>> rows;
  std::vector<double> ones(y.size(), 1.0);
  double smallest = y.front();
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!(y[i] > 0) || !std::isfinite(y[i]))
      throw InputError("analytic estimate of " + target + ": measured values must be positive");
    auto v = values_of(e.parsed_, configs[i]);
    for (double& x : v) x /= y[i];
    rows.push_back(std::move(v));
    smallest = std::min(smallest, y[i]);
  }
  e.coef_ = nnls(rows, ones);
  e.floor_ = smallest * 1e-3;
  return e;
}

double AnalyticEstimate::operator()(const Config& c) const {
  const auto v = values_of(parsed_, c);
  double sum = 0;
  for (std::size_t j = 0; j < v.size(); ++j) sum += coef_[j] * v[j];
  return std::max(sum, floor_);
}

std::vector<double> AnalyticEstimate::operator()(const std::vector<Config>& cs) const {
  std::vector<double> out;
  out.reserve(cs.size());
  for (const Config& c : cs) out.push_back((*this)(c));
  return out;
}

nlohmann::json AnalyticEstimate::to_json() const {
  return {{"target", target_}, {"terms", terms_}, {"coefficients", coef_}, {"floor", floor_}};
}

AnalyticEstimate AnalyticEstimate::from_json(const nlohmann::json& j) {
  AnalyticEstimate e;
  e.target_ = j.at("target").get<std::string>();
  e.terms_ = j.at("terms").get<std::vector<std::string>>();
  e.coef_ = j.at("coefficients").get<std::vector<double>>();
  e.floor_ = j.at("floor").get<double>();
  check_target(e.target_);
  if (e.coef_.size() != e.terms_.size() || !known_terms(e.target_, e.terms_))
    throw ModelError("the analytic estimate of " + e.target_ + " has other terms than this carb computes: retrain");
  for (double c : e.coef_)
    if (!(c >= 0) || !std::isfinite(c)) throw ModelError("the analytic estimate of " + e.target_ + " has a coefficient " + std::to_string(c));
  if (!(e.floor_ > 0)) throw ModelError("the analytic estimate of " + e.target_ + " has a non-positive floor");
  e.parsed_ = parse_terms(e.terms_);
  if (std::none_of(e.coef_.begin(), e.coef_.end(), [](double c) { return c > 0; }))
    throw ModelError("the analytic estimate of " + e.target_ + " has no positive coefficient");
  return e;
}

}  // namespace carb
