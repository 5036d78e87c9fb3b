// Prediction through the CARB cascade, intervals, and importance.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <sstream>

#include "blend.hpp"
#include "carb/error.hpp"
#include "carb/model.hpp"
#include "carb/network_spec.hpp"
#include "checksum_file.hpp"
#include "conformal.hpp"
#include "distinct_configs.hpp"
#include "model_internal.hpp"
#include "memory_floor.hpp"
#include "monotone.hpp"
#include "remeasurement.hpp"
#include "learn/outside_as_asked.hpp"

namespace carb {

Matrix with_upstream(const Matrix& base, const std::vector<std::string>& upstream,
                     const std::map<std::string, std::vector<float>>& preds) {
  if (upstream.empty()) return base;
  Matrix extra(base.rows, upstream.size());
  for (std::size_t j = 0; j < upstream.size(); ++j) {
    const auto& p = preds.at(upstream[j]);
    for (std::size_t i = 0; i < base.rows; ++i) extra(i, j) = p[i];
  }
  return base.with_columns(extra);
}

std::unique_ptr<Learner> make_corrector(const TrainOptions& o) {
  LearnerParams p = o.params;
  p.n_trees = o.params.n_trees > 0 ? std::min(200, o.params.n_trees) : 200;  // small models stay small
  p.max_leaves = 15;
  p.max_depth = 0;
  p.learning_rate = 0.05;
  p.base_score = 0;  // residuals are centred on 0
  return make_learner("gbdt_leafwise", p);
}

std::string conformal_key(double level) {
  char b[16];
  std::snprintf(b, sizeof b, "%g", level);
  return b;
}

std::string dataset_hash(const Dataset& d) {
  uint64_t h = detail::kFnvOffsetBasis;
  auto mix = [&](const std::string& s) { h = detail::fnv1a64(s, h); };
  for (const auto& r : d.rows) {
    mix(r.platform + "|" + config_key(r.config) + "|" + to_string(r.status));
    for (const char* t : kTargets) {
      char b[40];
      auto v = r.value(t);
      std::snprintf(b, sizeof b, "|%.9g", v ? *v : -1.0);
      mix(b);
    }
  }
  return detail::hex64(h);
}

bool CarbModel::trained_on(const Config& c) const {
  // By the network, not the spelling: evaluate --external counted rows written with width 0.251 as
  // never trained on, though the model had trained on 0.25's network (thirteenth hostile pass).
  return std::binary_search(trained_networks_.begin(), trained_networks_.end(), network_key(c));
}

bool CarbModel::trained_architecture(const Config& c) const {
  return !knows_trained_ ||
         std::binary_search(trained_architectures_.begin(), trained_architectures_.end(), architecture_key(as_trained(c)));
}

bool CarbModel::calibrates_unseen_architectures() const {
  return !models_.empty() &&
         std::all_of(models_.begin(), models_.end(), [](const TargetModel& tm) { return !tm.conformal_unseen.empty(); });
}

int CarbModel::unseen_calibration_networks() const {
  return calibrates_unseen_architectures() ? models_.front().unseen_networks : 0;
}

void CarbModel::index_trained() {
  trained_networks_.clear();
  trained_architectures_.clear();
  trained_width_of_channels_.clear();
  trained_resolutions_.clear(), trained_batches_.clear(), trained_depths_.clear(), trained_widths_.clear();
  trained_precisions_.clear();
  std::vector<Config> parsed;
  for (const auto& k : trained_configs_)
    if (const auto c = parse_config_key(k)) {
      parsed.push_back(*c);
      trained_networks_.push_back(network_key(*c));
      trained_width_of_channels_.emplace(width_channels(c->width), c->width);  // the first in key order
      trained_resolutions_.insert(c->resolution), trained_batches_.insert(c->batch);
      trained_depths_[c->family].insert(c->depth);
      trained_precisions_.insert(c->precision);
    }
  for (const auto& [channels, width] : trained_width_of_channels_) trained_widths_.insert(width);
  // By the width as_trained answers with, so that a width spelled otherwise finds its architecture.
  for (const Config& c : parsed) trained_architectures_.push_back(architecture_key(as_trained(c)));
  std::sort(trained_networks_.begin(), trained_networks_.end());
  std::sort(trained_architectures_.begin(), trained_architectures_.end());
  trained_architectures_.erase(std::unique(trained_architectures_.begin(), trained_architectures_.end()),
                               trained_architectures_.end());
}

Config CarbModel::as_trained(const Config& c) const {
  const auto it = trained_width_of_channels_.find(width_channels(c.width));
  Config t = c;
  // A network the model trained on is asked at the width it trained with; any other at one width
  // for the network (forty-seventh hostile pass: widths 0.37 and 0.38 build the same network and
  // got disjoint 90% memory intervals, the trees splitting on the label, not the network).
  t.width = it != trained_width_of_channels_.end() ? it->second : canonical_width(c.width);
  return t;
}

Precision CarbModel::answered_precision(Precision p) const {
  if (p == Precision::fp32 || trained_precisions_.empty() || trained_precisions_.count(p)) return p;
  const Precision other = p == Precision::fp16 ? Precision::bf16 : Precision::fp16;
  return trained_precisions_.count(other) ? other : p;
}

std::vector<Config> CarbModel::answered_as(const std::vector<Config>& cs) const {
  std::vector<Config> out = as_trained(cs);
  for (Config& c : out) c.precision = answered_precision(c.precision);
  return out;
}

void CarbModel::require_trained() const {
  // Seventy-sixth hostile pass: a default-constructed or moved-from model crashed the process where
  // it should have said what it is; a hundred-and-twentieth: its save() and screen said it poorly.
  if (models_.empty())
    throw ModelError("this CarbModel holds no trained model (constructed empty, or moved from): load one "
                     "(CarbModel::load) or train one (CarbModel::train) first");
}

std::vector<Config> CarbModel::as_trained(const std::vector<Config>& cs) const {
  require_trained();  // every answer passes here
  std::vector<Config> out;
  out.reserve(cs.size());
  for (const Config& c : cs) out.push_back(as_trained(c));
  return out;
}

bool CarbModel::has_target(const std::string& t) const {
  return std::find(targets_.begin(), targets_.end(), t) != targets_.end();
}

std::vector<float> to_training_space(const std::vector<double>& raw, bool log_target) {
  std::vector<float> z(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) z[i] = static_cast<float>(log_target ? std::log(raw[i]) : raw[i]);
  return z;
}

std::vector<double> predict_target_model(const TargetModel& tm, const TrainOptions& opts_, const Matrix& X,
                                         const std::vector<Config>& configs, PredictParts parts) {
  if (X.rows != configs.size())
    throw InputError("the feature matrix has " + std::to_string(X.rows) + " rows for " +
                     std::to_string(configs.size()) + " configurations: give one row per configuration");
  if (parts.only_learner < -1 || parts.only_learner >= static_cast<int>(tm.learners.size()))
    throw InputError(tm.target + " has no learner " + std::to_string(parts.only_learner) +
                     " (0 to " + std::to_string(tm.learners.size() - 1) + ", or -1 for the blend)");
  std::vector<float> p;
  if (parts.only_learner >= 0) {
    p = tm.learners.at(static_cast<std::size_t>(parts.only_learner))->predict(X);
  } else {
    std::vector<std::vector<float>> each;
    for (const auto& l : tm.learners) each.push_back(l->predict(X));
    p = blend(each, tm.weights);
  }
  if (parts.corrector && tm.corrector) {
    std::vector<std::size_t> low;
    for (std::size_t i = 0; i < configs.size(); ++i)
      if (configs[i].batch <= opts_.corrector_max_batch) low.push_back(i);
    if (!low.empty()) {
      auto r = tm.corrector->predict(X.take_rows(low));
      for (std::size_t j = 0; j < low.size(); ++j) p[low[j]] += static_cast<float>(opts_.lambda * r[j]);
    }
  }
  std::vector<double> raw(p.size());
  const bool memory = tm.target == "peak_memory_mb";
  for (std::size_t i = 0; i < p.size(); ++i) {
    raw[i] = opts_.log_target ? std::exp(double(p[i])) : p[i];
    if (tm.estimate) raw[i] *= (*tm.estimate)(configs[i]);  // the learners predicted the ratio y / estimate
    // No pass peaks below its weights and input (fifteenth hostile pass: cpu-1t answered 46.57 MB
    // for basic-18 at 32 px, whose weights and input take 46.77 MB; 6 of the paper preset's 4,320).
    // A cost at or below zero (a raw-target model's) stays what it is, said as such downstream:
    // lifted to the floor it passed memory budgets as a bounded answer (thirty-seventh hostile pass).
    // Thirty-eighth: nor one between zero and the floor: a raw-target sum there is as impossible as
    // one below zero (6.45 MB, the weights and input exactly, passed a 10 MB budget while its
    // neighbour at -2.4 MB counted as unknown). It is 0, an impossible cost said as such everywhere.
    // A log-target model's answer just under the floor (46.57 for 46.77 MB) is lifted, as before.
    // The floor a model holds answers at may be higher than every pass's (the layer outputs alive
    // at once, learn/memory_floor.hpp): a raw-target answer between the two is lifted too, not
    // zeroed (a reviewer: 162 of cpu-2t's 1,958 configurations answered 0 MB, "impossible").
    if (memory && std::isfinite(raw[i]) && raw[i] > 0) {
      const NetworkSpec s = network_totals(configs[i]);
      raw[i] = raw[i] >= s.memory_floor_mb() || opts_.log_target ? std::max(raw[i], answer_floor_mb(tm, s)) : 0.0;
    }
  }
  return raw;
}

const TargetModel& CarbModel::target_model(const std::string& target) const {
  for (const auto& tm : models_)
    if (tm.target == target) return tm;
  throw InputError("the model has no target '" + target + "'");
}

std::vector<double> CarbModel::predict_target(const std::string& target, const Matrix& X,
                                              const std::vector<Config>& configs, PredictParts parts) const {
  return predict_target_model(target_model(target), opts_, X, configs, parts);
}

namespace {
std::string shown_number(double v) {  // "1.2e+300", not 301 digits
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}
}  // namespace

Matrix CarbModel::target_features(const std::string& target, const Matrix& base,
                                  const std::map<std::string, std::vector<double>>& predictions) const {
  const TargetModel& tm = target_model(target);
  std::map<std::string, std::vector<float>> z;  // upstream columns live in the training (log) space
  for (const auto& u : tm.upstream) {
    const auto it = predictions.find(u);
    if (it == predictions.end()) throw InputError(target + " needs the predictions of " + u + " as an input");
    if (it->second.size() != base.rows) throw InputError("the predictions of " + u + " and the features differ in rows");
    z[u] = to_training_space(it->second, opts_.log_target);
    for (std::size_t i = 0; i < z[u].size(); ++i)
      if (!std::isfinite(z[u][i]))
        throw InputError("the predictions of " + u + " hold " + shown_number(it->second[i]) + " at row " +
                         std::to_string(i) + ", which " + target + "'s learners cannot take" +
                         (opts_.log_target ? " in log space" : "") + ": pass cascade_inputs, what the cascade feeds");
  }
  return with_upstream(base, tm.upstream, z);
}

std::vector<TargetSummary> CarbModel::target_summaries() const {
  std::vector<TargetSummary> out;
  for (const auto& tm : models_) out.push_back(tm.summary());
  return out;
}

TargetSummary CarbModel::target_summary(const std::string& target) const { return target_model(target).summary(); }

namespace {

// The trained levels around `v` when it lies strictly between two of them; nothing otherwise (a
// trained level itself, or outside the trained range, which the envelope flags).
template <class T>
std::optional<std::pair<T, T>> levels_around(const std::set<T>& levels, T v) {
  const auto hi = levels.upper_bound(v);
  if (hi == levels.begin() || hi == levels.end()) return std::nullopt;
  const auto lo = std::prev(hi);
  if (*lo == v) return std::nullopt;
  return std::make_pair(*lo, *hi);
}

}  // namespace

std::map<std::string, std::vector<double>> CarbModel::predict_columns(const std::vector<Config>& asked,
                                                                      const std::vector<Telemetry>& tel) const {
  const std::vector<Config> configs = answered_as(asked);
  auto out = interpolated_columns(configs, tel);
  // A target whose measurements never fell along a knob is held at least at the answers below the
  // configuration along it (monotone.hpp), each answered as any configuration is: those
  // asked with it by their own answers, the others here, only as far down the cascade as the last
  // target held. A telemetry model answers at the configuration's readings.
  std::map<std::string, std::vector<std::string>> held;
  std::size_t leading = 0;
  for (std::size_t t = 0; t < models_.size(); ++t)
    if (!models_[t].monotone_in.empty()) held[models_[t].target] = models_[t].monotone_in, leading = t + 1;
  const TrainedLevels levels{trained_resolutions_, trained_batches_, trained_depths_, trained_widths_};
  hold_monotone(configs, tel, schema_.telemetry && !tel.empty(), held, levels, out,
                [&](const std::vector<Config>& cs, const std::vector<Telemetry>& t) {
                  return interpolated_columns(cs, t, leading);
                });
  return out;
}

std::map<std::string, std::vector<double>> CarbModel::cascade_inputs(const std::vector<Config>& configs,
                                                                     const std::vector<Telemetry>& tel) const {
  // As passed on: before an answer no device could measure is said as 0 (raw_columns), which the
  // cascade never sees (hundred-and-sixteenth hostile pass: evaluate fed such a 0 to log and stopped
  // on "the feature matrix contains NaN or infinite values").
  return cascade_columns(answered_as(configs), tel);
}

// One reading per configuration, or none (a hostile tester: predict took 3 for 1, predict_chunked refused).
static void check_telemetry_count(const std::vector<Telemetry>& tel, const std::vector<Config>& configs) {
  if (!tel.empty() && tel.size() != configs.size())
    throw InputError("telemetry for " + std::to_string(tel.size()) + " configurations, but " +
                     std::to_string(configs.size()) + " configurations: give one per configuration, or none");
}

// Nor is a latency or an energy that no device could measure an answer: one implying more than
// kMaxFlopsPerSecond or kMaxFlopsPerJoule (the bounds data validate holds every row to) is 0, an
// impossible cost said as such everywhere, like a raw-target answer below the memory floor
// (forty-fourth hostile pass: a model answered 9,260 TFLOP/s and 10.8 kW on an H200, exit 0).
// Only the rows `only` lists where given (the others were so answered already).
static void said_impossible(const std::vector<Config>& configs, std::map<std::string, std::vector<double>>& out,
                            const std::vector<std::size_t>* only = nullptr) {
  const auto latency = out.find("latency_ms"), energy = out.find("energy_j");
  if (latency == out.end() && energy == out.end()) return;
  for (std::size_t k = 0, n = only ? only->size() : configs.size(); k < n; ++k) {
    const std::size_t i = only ? (*only)[k] : k;
    const double flops = network_totals(configs[i]).flops();
    if (latency != out.end() && latency->second[i] > 0 && flops / (latency->second[i] * 1e-3) > kMaxFlopsPerSecond)
      latency->second[i] = 0.0;
    if (energy != out.end() && energy->second[i] > 0 && flops / energy->second[i] > kMaxFlopsPerJoule)
      energy->second[i] = 0.0;
  }
}

std::map<std::string, std::vector<double>> CarbModel::interpolated_columns(const std::vector<Config>& configs,
                                                                           const std::vector<Telemetry>& tel,
                                                                           std::size_t leading) const {
  check_telemetry_count(tel, configs);
  // The corners of the box of trained levels around each configuration between them, each with its
  // weight in a multilinear interpolation over the logarithms of the levels (a cost follows a power
  // of resolution, width and batch; trees answer there only what they learned at a level nearby).
  std::vector<Config> corners;
  std::vector<Telemetry> corner_tel;
  std::vector<double> weight;
  std::vector<std::pair<std::size_t, std::size_t>> span(configs.size(), {0, 0});  // [first, end) corners
  const auto axis = [](auto around, double v) {  // (level, weight) pairs along one knob
    if (!around) return std::vector<std::pair<double, double>>{{v, 1.0}};
    const double lo = around->first, hi = around->second;
    const double t = (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
    return std::vector<std::pair<double, double>>{{lo, 1 - t}, {hi, t}};
  };
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    const auto r = levels_around(trained_resolutions_, c.resolution);
    const auto w = levels_around(trained_widths_, c.width);
    const auto b = levels_around(trained_batches_, c.batch);
    if (!r && !w && !b) continue;
    span[i].first = corners.size();
    for (const auto& [rv, rw] : axis(r, c.resolution))
      for (const auto& [wv, ww] : axis(w, c.width))
        for (const auto& [bv, bw] : axis(b, c.batch)) {
          Config k = c;
          k.resolution = static_cast<int>(rv), k.width = wv, k.batch = static_cast<int>(bv);
          corners.push_back(k);
          weight.push_back(rw * ww * bw);
          if (!tel.empty()) corner_tel.push_back(tel.at(i));  // a corner is measured as its configuration
        }
    span[i].second = corners.size();
  }
  // A configuration between trained levels is answered by its corners; by itself only where a corner
  // has no positive answer (as the trees say there: no corner of it to interpolate between). Each
  // configuration is answered once (distinct_configs.hpp): corners are trained configurations, shared
  // by every configuration between the same levels, and holding costs monotone asks the smaller
  // networks at every resolution and batch asked (a tester's 5,000 configurations at untrained
  // resolutions and batches: 16 s where unheld they took 1.5 s, nearly all of it the trees' sums of
  // configurations answered twice or their own answers interpolated away).
  const auto answer_once = [&](const std::vector<Config>& cs, const std::vector<Telemetry>& ts) {
    const DistinctConfigs distinct = distinct_configs(cs, ts);
    const auto answered = raw_columns(distinct.configs, distinct.tel, leading);
    std::map<std::string, std::vector<double>> v;
    for (const auto& [target, values] : answered) {
      auto& column = v[target];
      column.reserve(cs.size());
      for (std::size_t i : distinct.index) column.push_back(values[i]);
    }
    return v;
  };
  std::vector<std::size_t> by_itself;  // rows answered by themselves: on trained levels
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (span[i].first == span[i].second) by_itself.push_back(i);
  std::vector<Config> asked = corners;
  std::vector<Telemetry> asked_tel = corner_tel;
  for (std::size_t i : by_itself) {
    asked.push_back(configs[i]);
    if (!tel.empty()) asked_tel.push_back(tel.at(i));
  }
  const auto at_corners = answer_once(asked, asked_tel);  // corners first, then the rows by themselves
  std::map<std::string, std::vector<double>> out;
  std::vector<std::size_t> without_corners;  // rows with a corner of no positive answer, for some target
  for (const auto& [target, around] : at_corners) {
    auto& values = out[target];
    values.assign(configs.size(), std::numeric_limits<double>::quiet_NaN());  // each row is answered below
    for (std::size_t k = 0; k < by_itself.size(); ++k) values[by_itself[k]] = around[corners.size() + k];
    const TargetModel* memory_model = nullptr;  // held at its floor between levels too
    if (target == "peak_memory_mb")
      for (const auto& tm : models_)
        if (tm.target == target) memory_model = &tm;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      const auto [first, end] = span[i];
      if (first == end) continue;
      double log_v = 0;
      bool all_positive = true;
      for (std::size_t k = first; k < end; ++k) {
        all_positive = all_positive && around[k] > 0;
        log_v += weight[k] * std::log(std::max(around[k], 1e-300));
      }
      if (!all_positive) {
        if (without_corners.empty() || without_corners.back() != i) without_corners.push_back(i);
        continue;
      }
      values[i] = std::exp(log_v);
      // No pass peaks below its weights and input, between levels either.
      if (memory_model) values[i] = std::max(values[i], answer_floor_mb(*memory_model, configs[i]));
    }
  }
  if (!without_corners.empty()) {
    std::sort(without_corners.begin(), without_corners.end());
    without_corners.erase(std::unique(without_corners.begin(), without_corners.end()), without_corners.end());
    std::vector<Config> own;
    std::vector<Telemetry> own_tel;
    for (std::size_t i : without_corners) {
      own.push_back(configs[i]);
      if (!tel.empty()) own_tel.push_back(tel.at(i));
    }
    const auto by_themselves = answer_once(own, own_tel);
    for (auto& [target, values] : out) {
      const auto& around = at_corners.at(target);
      const auto& theirs = by_themselves.at(target);
      for (std::size_t k = 0; k < without_corners.size(); ++k) {
        const std::size_t i = without_corners[k];
        const auto [first, end] = span[i];
        if (std::any_of(around.begin() + first, around.begin() + end, [](double v) { return !(v > 0); }))
          values[i] = theirs[k];
      }
    }
  }
  // An interpolated latency or energy no device could measure is no answer either; the rows answered
  // by themselves were checked by raw_columns (network_totals per row is a tenth of a preset's time).
  std::vector<std::size_t> between;
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (span[i].first != span[i].second) between.push_back(i);
  said_impossible(configs, out, &between);
  return out;
}

std::map<std::string, std::vector<double>> CarbModel::cascade_columns(const std::vector<Config>& configs,
                                                                      const std::vector<Telemetry>& tel,
                                                                      std::size_t leading) const {
  check_telemetry_count(tel, configs);
  const Matrix base = build_features(schema_, configs, tel);
  std::map<std::string, std::vector<float>> z;  // upstream predictions in the training (log) space
  std::map<std::string, std::vector<double>> out;
  for (const auto& tm : models_) {
    if (out.size() == leading) break;
    const Matrix X = with_upstream(base, tm.upstream, z);
    auto& raw = out[tm.target];
    raw = predict_target_model(tm, opts_, X, configs);
    // No learner carb trains answers infinity or NaN for a valid configuration: such an answer is
    // a damaged or forged bundle (an estimate coefficient of 1.7e308), never a prediction to print.
    // Nor, in the target's own units, a cost beyond any a platform has (kPlausibleBounds: 1e7 ms
    // is 2.8 hours per batch): a forged learner answered 8.3e10 ms, flagged only as "a guess".
    const ColumnBounds* b = plausible_bounds(tm.target);
    // Inside the trained ranges only: far past them (bottleneck-302 at resolution 1024 and batch
    // 4096 on a CPU) a cost of weeks per batch is what the analytic estimate says, flagged a guess.
    // Inside them, a log-target answer below the smallest plausible cost is garbage too.
    for (std::size_t i = 0; i < raw.size(); ++i)
      if (!std::isfinite(raw[i]) || (b && (raw[i] > b->hi || (opts_.log_target && raw[i] < b->lo)) &&
                                      envelope_.outside(configs[i]).empty()))
        throw ModelError("the " + platform_ + " model predicts " +
                         (std::isfinite(raw[i]) ? shown_number(raw[i]) + " " + b->unit : "a non-finite value") +
                         " of " + tm.target + " for " + config_key(configs[i]) +
                         ", beyond any plausible cost: the bundle is damaged; retrain it");
    z[tm.target] = to_training_space(raw, opts_.log_target);
  }
  return out;
}

std::map<std::string, std::vector<double>> CarbModel::raw_columns(const std::vector<Config>& configs,
                                                                  const std::vector<Telemetry>& tel,
                                                                  std::size_t leading) const {
  auto out = cascade_columns(configs, tel, leading);
  said_impossible(configs, out);
  return out;
}

void check_confidence_level(double confidence) {
  for (double level : kConfidenceLevels)
    if (confidence == level) return;
  std::string levels;
  for (double level : kConfidenceLevels) levels += (levels.empty() ? "" : ", ") + conformal_key(level);
  // Written as it reads back (seventy-sixth hostile pass: 0.9000000001 was said as "0.9 is not a level").
  throw InputError("confidence " + (std::isfinite(confidence) ? format_width(confidence) : std::string("nan/inf")) +
                   " is not a level carb calibrates intervals at; use one of " + levels);
}

std::size_t CarbModel::predict_chunked(const std::vector<Config>& configs, const std::vector<Telemetry>& tel,
                                       std::optional<double> confidence,
                                       const std::function<bool(std::vector<Prediction>&&, std::size_t)>& each,
                                       std::size_t chunk) const {
  if (chunk == 0) throw InputError("a chunk of predictions must hold at least one configuration");
  // A carb::Error, as every bad input (a hostile tester: an empty function threw std::bad_function_call).
  if (!each) throw InputError("predict_chunked was given no function to hand the answers to");
  check_telemetry_count(tel, configs);
  if (confidence) check_confidence_level(*confidence);
  for (std::size_t at = 0; at < configs.size(); at += chunk) {
    const std::size_t end = std::min(configs.size(), at + chunk);
    const auto first = configs.begin() + static_cast<std::ptrdiff_t>(at);
    const std::vector<Config> part(first, configs.begin() + static_cast<std::ptrdiff_t>(end));
    const std::vector<Telemetry> part_tel =
        tel.empty() ? std::vector<Telemetry>{}
                    : std::vector<Telemetry>(tel.begin() + static_cast<std::ptrdiff_t>(at),
                                             tel.begin() + static_cast<std::ptrdiff_t>(end));
    if (!each(predict(part, part_tel, confidence), at)) return end;
  }
  return configs.size();
}

std::vector<Prediction> CarbModel::predict(const std::vector<Config>& configs, const std::vector<Telemetry>& tel,
                                           std::optional<double> confidence) const {
  if (confidence) check_confidence_level(*confidence);
  auto cols = predict_columns(configs, tel);
  std::vector<Prediction> out(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    out[i].config = configs[i];
    out[i].outside = outside_as_asked(*this, configs[i]);
    if (i < tel.size()) {
      auto t = envelope_.outside_telemetry(tel[i].avg_sm_util, tel[i].avg_mem_util);
      out[i].outside.insert(out[i].outside.end(), t.begin(), t.end());
    }
    // Past the trained ranges the conformal width (measured inside them) is not enough: widen by the
    // distance past the data, in log space; unbounded for a family or precision never trained.
    const double widen = extrapolation_widening(out[i].outside);
    const bool seen = trained_architecture(configs[i]);
    out[i].trained_architecture = seen;
    for (const auto& tm : models_) {
      const double v = cols[tm.target][i];
      out[i].value[tm.target] = v;
      if (!confidence) continue;
      const double h = interval_half_width(tm, configs[i], opts_.corrector_max_batch, *confidence, seen,
                                           opts_.log_target ? std::log(v) : v);
      auto& iv = out[i].interval[tm.target];
      // How fast this target's error grows with the distance: calibrated in training (1 in older bundles).
      const auto rate = tm.extrapolation_rate.find(conformal_key(*confidence));
      // Past the data at all, the distance it multiplies is at least kMinExtrapolationDistance, as
      // calibrated. A rate no widening reaches (infinite) leaves the interval unbounded there.
      const double wide =
          widen > 0 && rate != tm.extrapolation_rate.end() ? rate->second * extrapolation_distance(widen) : widen;
      if (!std::isfinite(wide) || !std::isfinite(h))  // never trained, or too few rows for this level
        iv = {0.0, std::numeric_limits<double>::infinity()};
      else
        iv = widened_interval(v, h, wide, opts_.log_target);
      // And where a new measurement lands from the campaign's, when training measured it.
      if (const auto q = tm.remeasured_spread.find(conformal_key(*confidence)); q != tm.remeasured_spread.end())
        iv = with_remeasured_spread(v, iv, q->second);
      // Nor can its interval reach below, bounded or not: below the least peak a measurement may
      // have (validation's tolerance under the floor), so every row training accepts can be held.
      if (tm.target == "peak_memory_mb" && v > 0)
        iv.first = std::max(iv.first, kMinMemoryOverNetwork * answer_floor_mb(tm, configs[i]));
      // No cost is below zero: a raw-target interval (a fixed width around the point) reached -27 ms
      // for a 0.5 ms network (twenty-sixth hostile pass). Clamping keeps the coverage: no measured
      // value lies below.
      iv.first = std::max(iv.first, 0.0);
      // Nor is a cost at or below zero an answer an interval can be drawn around: a raw-target
      // linear model's -1,600 ms past its data had the interval [0, -1593], which passed every
      // budget on its upper end (thirty-fifth hostile pass). An interval that holds no cost, or
      // lies below its own floor, bounds nothing.
      if (!(v > 0) || iv.second < iv.first) iv.second = std::numeric_limits<double>::infinity();
    }
  }
  return out;
}

std::vector<std::string> CarbModel::feature_names(const std::string& target) const {
  auto names = schema_.names;
  for (const auto& u : target_model(target).upstream) names.push_back(upstream_feature(u));
  return names;
}

std::vector<std::pair<std::string, double>> CarbModel::importance(const std::string& target) const {
  const auto names = feature_names(target);
  std::vector<double> total(names.size(), 0.0);
  const TargetModel& tm = target_model(target);
  for (std::size_t l = 0; l < tm.learners.size(); ++l) {
    auto imp = tm.learners[l]->importance();
    for (std::size_t j = 0; j < imp.size() && j < total.size(); ++j) total[j] += tm.weights[l] * imp[j];
  }
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t j = 0; j < names.size(); ++j) out.emplace_back(names[j], total[j]);
  std::stable_sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace carb
