// Feature construction from configurations (via their NetworkSpec) and telemetry.
// Trees are invariant to monotone transforms, but the linear baselines and the residual
// study are not, hence the log columns next to the raw ones.
#include "carb/features.hpp"

#include <cmath>
#include <map>
#include <tuple>

#include "carb/error.hpp"
#include "carb/network_spec.hpp"

namespace carb {

const std::vector<std::string>& analytic_feature_names() {
  static const std::vector<std::string> names = {
      "depth",          "width",           "resolution",      "batch",          "log_batch",
      "flops",          "flops_log",       "flops_per_image_log", "params_log",  "param_mb",
      "input_mb",       "total_act_mb",    "total_act_mb_log", "max_act_mb",    "compute_intensity",
      "flops_per_param_log", "conv_layers", "bytes_per_element", "weights_input_act_max_mb",
      "family_basic",   "family_bottleneck", "precision_fp32", "precision_fp16", "precision_bf16"};
  return names;
}

const std::vector<std::string>& telemetry_feature_names() {
  static const std::vector<std::string> names = {"avg_sm_util", "avg_mem_util", "batch_x_sm",
                                                 "flops_x_sm",  "act_x_mem",    "util_product"};
  return names;
}

FeatureSchema FeatureSchema::make(bool telemetry) {
  FeatureSchema s;
  s.telemetry = telemetry;
  s.names = analytic_feature_names();
  if (telemetry)
    for (const auto& n : telemetry_feature_names()) s.names.push_back(n);
  return s;
}

namespace {

// Walks of a network at batch 1 kept while building one matrix: enough for any order a preset or a
// hold asks in, bounded for a million configurations of a million networks.
constexpr std::size_t kWalksKept = 4096;

void analytic_row(const Config& c, const NetworkSpec& s, float* out) {
  const double flops = s.flops(), mb = 1e6;
  const double act_mb = s.activation_bytes_total() / mb, max_mb = s.activation_bytes_max() / mb;
  const double param_mb = s.param_bytes() / mb, input_mb = s.input_bytes() / mb;
  const double v[] = {static_cast<double>(c.depth),
                      c.width,
                      static_cast<double>(c.resolution),
                      static_cast<double>(c.batch),
                      std::log(static_cast<double>(c.batch)),
                      flops,
                      std::log1p(flops),
                      std::log1p(flops / c.batch),
                      std::log(static_cast<double>(s.params)),
                      param_mb,
                      input_mb,
                      act_mb,
                      std::log1p(act_mb),
                      max_mb,
                      flops / ((s.param_bytes() + s.activation_bytes_total()) + 1.0),
                      std::log(flops / s.params),
                      static_cast<double>(s.conv_layers),
                      static_cast<double>(element_bytes(c.precision)),
                      param_mb + input_mb + max_mb,
                      c.family == Family::basic ? 1.0 : 0.0,
                      c.family == Family::bottleneck ? 1.0 : 0.0,
                      c.precision == Precision::fp32 ? 1.0 : 0.0,
                      c.precision == Precision::fp16 ? 1.0 : 0.0,
                      c.precision == Precision::bf16 ? 1.0 : 0.0};
  static_assert(sizeof v / sizeof v[0] == 24);
  for (std::size_t i = 0; i < 24; ++i) out[i] = static_cast<float>(v[i]);
}

void telemetry_row(const Config& c, const NetworkSpec& s, const Telemetry& t, std::size_t row, float* out) {
  if (!t.avg_sm_util || !t.avg_mem_util)
    throw InputError("configuration " + std::to_string(row + 1) + " (" + config_key(c) +
                     ") has no avg_sm_util/avg_mem_util, but the model uses telemetry features");
  // Seventy-sixth hostile pass: NaN utilization made NaN features, and answers from them.
  for (const double u : {*t.avg_sm_util, *t.avg_mem_util})
    if (!std::isfinite(u) || u < 0 || u > 100)
      throw InputError("configuration " + std::to_string(row + 1) + " (" + config_key(c) +
                       ") has a utilization of " + std::to_string(u) + "; avg_sm_util and avg_mem_util are percentages, 0 to 100");
  const double sm = *t.avg_sm_util, mem = *t.avg_mem_util;
  const double v[] = {sm,  mem, c.batch * sm, std::log1p(s.flops()) * sm, std::log1p(s.activation_bytes_total() / 1e6) * mem,
                      sm * mem};
  for (std::size_t i = 0; i < 6; ++i) out[i] = static_cast<float>(v[i]);
}

}  // namespace

Matrix build_features(const FeatureSchema& schema, const std::vector<Config>& configs,
                      const std::vector<Telemetry>& telemetry) {
  if (schema.telemetry && telemetry.size() != configs.size())
    throw InputError("the model was trained with --telemetry: it predicts only from utilization measured for every "
                     "configuration (give `carb predict --configs` a CSV with avg_sm_util and avg_mem_util columns), "
                     "or use a model trained without --telemetry");
  const std::size_t na = analytic_feature_names().size();
  // Seventy-sixth hostile pass: an empty schema (a default-constructed one, or a model never trained)
  // was written past the end of its zero columns.
  if (schema.size() != na + (schema.telemetry ? telemetry_feature_names().size() : 0))
    throw InputError("a feature schema of " + std::to_string(schema.size()) +
                     " features is not one carb builds (FeatureSchema::make)");
  Matrix X(configs.size(), schema.size());
  // Configurations of one network at one resolution differ in batch alone, which scales every count
  // but the parameters: one walk per network and resolution (a preset has ten batches of each, a
  // monotone hold's smaller configurations tens), the few most recent kept.
  std::map<std::tuple<int, int, double, int, int>, NetworkSpec> at_batch_1;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    validate(c);  // the configuration's own first problem, whichever field it is in
    const auto key = std::make_tuple(static_cast<int>(c.family), c.depth, c.width, c.resolution, static_cast<int>(c.precision));
    auto it = at_batch_1.find(key);
    if (it == at_batch_1.end()) {
      if (at_batch_1.size() >= kWalksKept) at_batch_1.clear();
      Config one = c;
      one.batch = 1;
      it = at_batch_1.emplace(key, network_totals(one)).first;
    }
    const NetworkSpec s = totals_at_batch(it->second, c.batch);
    float* row = X.data.data() + i * X.cols;
    analytic_row(c, s, row);
    if (schema.telemetry) telemetry_row(c, s, telemetry[i], i, row + na);
  }
  return X;
}

std::vector<Config> configs_of(const Dataset& d) {
  std::vector<Config> out;
  out.reserve(d.rows.size());
  for (const auto& r : d.rows) out.push_back(r.config);
  return out;
}

std::vector<Telemetry> telemetry_of(const Dataset& d) {
  std::vector<Telemetry> out;
  out.reserve(d.rows.size());
  for (const auto& r : d.rows) out.push_back({r.avg_sm_util, r.avg_mem_util});
  return out;
}

}  // namespace carb
