// XGBoost wrapper: parameter mapping, fit/predict through the C API, gain
// importance, and a checksummed model file. Every C call's return code is checked
// because XGBoost reports all failures (bad parameters, corrupt models) that way.
#include "learn/xgb_learner.hpp"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "carb/error.hpp"
#include "learn/checksum_file.hpp"
#include "util/stop_signal.hpp"

namespace carb {
namespace {

constexpr char kMagic[8] = {'C', 'A', 'R', 'B', 'X', 'G', 'B', '1'};
constexpr std::uint32_t kVersion = 1;

void check(int rc, const char* call) {
  if (rc != 0) throw ModelError(std::string("XGBoost ") + call + " failed: " + XGBGetLastError());
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

struct DMatrixDeleter {
  void operator()(void* h) const { XGDMatrixFree(h); }
};
using DMatrixPtr = std::unique_ptr<void, DMatrixDeleter>;

}  // namespace

namespace {
// XGBoosterFree looks its booster up in a thread_local map of XGBoost's. At exit, thread_locals
// are destroyed before objects of static storage duration, so a model held in a static (a C++
// service's cached model) crashed in XGBoosterFree after main returned. This thread's sentinel
// is touched with every booster; once its destructor has run, so have XGBoost's thread_locals,
// and the booster is left to the exiting process instead of freed.
thread_local bool tls_gone = false;  // trivial: still readable after the thread's destructors
struct TlsSentinel {
  ~TlsSentinel() { tls_gone = true; }
};
thread_local TlsSentinel tls_sentinel;
void touch_sentinel() { (void)&tls_sentinel; }
}  // namespace

void XgbLearner::BoosterDeleter::operator()(void* h) const {
  if (!tls_gone) XGBoosterFree(h);
}

XgbLearner::XgbLearner(Growth growth, const LearnerParams& p) : growth_(growth), p_(p) {
  check_learner_params(p);
}

std::string XgbLearner::kind() const {
  return growth_ == Growth::depthwise ? "xgb_depthwise" : "xgb_lossguide";
}

int XgbLearner::rounds() const { return p_.n_trees > 0 ? p_.n_trees : 800; }

XgbLearner::BoosterPtr XgbLearner::new_booster(void* const* dmats, std::size_t n) const {
  BoosterHandle h = nullptr;
  touch_sentinel();
  check(XGBoosterCreate(dmats, static_cast<bst_ulong>(n), &h), "XGBoosterCreate");
  BoosterPtr b(h);
  apply_runtime_params(h);
  return b;
}

// Thread count and verbosity are not part of a saved model, so they are set on
// every booster, including a freshly loaded one.
void XgbLearner::apply_runtime_params(void* h) const {
  check(XGBoosterSetParam(h, "nthread", std::to_string(p_.threads).c_str()), "XGBoosterSetParam(nthread)");
  check(XGBoosterSetParam(h, "verbosity", "0"), "XGBoosterSetParam(verbosity)");
}

void XgbLearner::fit(const Matrix& X, const std::vector<float>& y) {
  check_fit_input(X, y, kind());
  DMatrixHandle dm = nullptr;
  check(XGDMatrixCreateFromMat_omp(X.data.data(), X.rows, X.cols, std::numeric_limits<float>::quiet_NaN(),
                                   &dm, p_.threads),
        "XGDMatrixCreateFromMat");
  DMatrixPtr dmat(dm);
  check(XGDMatrixSetFloatInfo(dm, "label", y.data(), y.size()), "XGDMatrixSetFloatInfo(label)");

  BoosterPtr b = new_booster(&dm, 1);
  const bool lossguide = growth_ == Growth::lossguide;
  const int depth = p_.max_depth > 0 ? p_.max_depth : (lossguide ? 0 : 9);
  const std::vector<std::pair<std::string, std::string>> params = {
      {"objective", "reg:squarederror"},
      {"tree_method", "hist"},
      {"grow_policy", lossguide ? "lossguide" : "depthwise"},
      {"max_depth", std::to_string(depth)},
      {"max_leaves", std::to_string(p_.max_leaves > 0 ? p_.max_leaves : (lossguide ? 127 : 0))},
      {"eta", num(p_.learning_rate)},
      {"base_score", num(p_.base_score)},
      // With squared error every row has hessian 1, so this is a minimum leaf size.
      {"min_child_weight", std::to_string(p_.min_samples_leaf)},
      {"seed", std::to_string(p_.seed)},
      {"validate_parameters", "1"},
  };
  for (const auto& [k, v] : params)
    check(XGBoosterSetParam(b.get(), k.c_str(), v.c_str()), ("XGBoosterSetParam(" + k + ")").c_str());
  for (int it = 0; it < rounds(); ++it) {
    detail::throw_if_stopped("training", "no model was made, and nothing was written");  // between rounds
    check(XGBoosterUpdateOneIter(b.get(), it, dm), "XGBoosterUpdateOneIter");
  }
  booster_ = std::move(b);
  n_features_ = X.cols;
}

void XgbLearner::set_threads(int threads) {
  p_.threads = std::max(threads, 1);
  if (booster_) apply_runtime_params(booster_.get());
}

void XgbLearner::require_fitted(const char* what) const {
  if (!booster_) throw ModelError(kind() + ": " + what + " called before fit or load");
}

std::vector<float> XgbLearner::predict(const Matrix& X) const {
  require_fitted("predict");
  check_predict_input(X, n_features_, kind());
  if (X.rows == 0) return {};
  const std::string array = "{\"data\":[" + std::to_string(reinterpret_cast<std::uintptr_t>(X.data.data())) +
                            ",true],\"shape\":[" + std::to_string(X.rows) + "," + std::to_string(X.cols) +
                            "],\"typestr\":\"<f4\",\"version\":3}";
  const char* config =
      "{\"type\":0,\"training\":false,\"iteration_begin\":0,\"iteration_end\":0,"
      "\"strict_shape\":false,\"cache_id\":0,\"missing\":NaN}";
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* out = nullptr;
  check(XGBoosterPredictFromDense(booster_.get(), array.c_str(), config, nullptr, &shape, &dim, &out),
        "XGBoosterPredictFromDense");
  return std::vector<float>(out, out + X.rows);
}

std::vector<double> XgbLearner::importance() const {
  require_fitted("importance");
  bst_ulong n = 0, dim = 0;
  const char** names = nullptr;
  const bst_ulong* shape = nullptr;
  const float* scores = nullptr;
  check(XGBoosterFeatureScore(booster_.get(), "{\"importance_type\":\"total_gain\"}", &n, &names, &dim,
                              &shape, &scores),
        "XGBoosterFeatureScore");
  std::vector<double> imp(n_features_, 0.0);
  double total = 0.0;
  for (bst_ulong i = 0; i < n; ++i) {
    // Without feature names set, XGBoost names column j "f<j>".
    const std::string name = names[i];
    if (name.size() < 2 || name[0] != 'f') throw ModelError(kind() + ": unexpected feature name " + name);
    const std::size_t col = std::stoul(name.substr(1));
    if (col >= n_features_) throw ModelError(kind() + ": feature score for unknown column " + name);
    imp[col] += scores[i];
    total += scores[i];
  }
  if (total > 0)
    for (double& v : imp) v /= total;
  return imp;
}

void XgbLearner::save(const std::filesystem::path& file) const {
  require_fitted("save");
  bst_ulong len = 0;
  const char* raw = nullptr;
  check(XGBoosterSaveModelToBuffer(booster_.get(), "{\"format\":\"ubj\"}", &len, &raw),
        "XGBoosterSaveModelToBuffer");
  std::vector<unsigned char> bytes(kMagic, kMagic + sizeof kMagic);
  detail::put(bytes, kVersion);
  detail::put(bytes, static_cast<std::uint32_t>(growth_));
  detail::put(bytes, static_cast<std::uint64_t>(n_features_));
  detail::put(bytes, static_cast<std::uint64_t>(len));
  bytes.insert(bytes.end(), raw, raw + len);
  detail::write_checksummed(file, std::move(bytes));
}

void XgbLearner::load(const std::filesystem::path& file) {
  const std::vector<unsigned char> bytes = detail::read_checksummed(file);
  detail::ByteReader r(bytes, "model file " + file.string());
  char magic[sizeof kMagic];
  r.read(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0)
    throw ModelError("model file " + file.string() + " is not a carb XGBoost model");
  if (const auto v = r.get<std::uint32_t>(); v != kVersion)
    throw ModelError("model file " + file.string() + " has unsupported version " + std::to_string(v));
  if (r.get<std::uint32_t>() != static_cast<std::uint32_t>(growth_))
    throw ModelError("model file " + file.string() + " holds another XGBoost kind than " + kind());
  const auto n_features = r.get<std::uint64_t>();
  const auto len = r.get<std::uint64_t>();
  if (len != r.remaining()) throw ModelError("model file " + file.string() + " has a bad payload length");
  std::vector<unsigned char> payload(len);
  r.read(payload.data(), len);
  BoosterPtr b = new_booster(nullptr, 0);
  if (XGBoosterLoadModelFromBuffer(b.get(), payload.data(), len) != 0)
    throw ModelError("model file " + file.string() + ": XGBoost could not load it: " + XGBGetLastError());
  apply_runtime_params(b.get());
  booster_ = std::move(b);
  n_features_ = static_cast<std::size_t>(n_features);
}

}  // namespace carb
