// Least squares through the normal equations on standardized columns, solved by
// a small hand-written Cholesky (no Eigen dependency). Standardizing makes the
// Gram matrix a correlation matrix, so one tiny ridge (1e-8) keeps it positive
// definite for collinear or constant columns without biasing the coefficients.
#include "learn/linear.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "carb/error.hpp"
#include "checksum_file.hpp"
#include "util/json_error.hpp"

namespace carb {
namespace {

constexpr double kRidge = 1e-8;
constexpr int kVersion = 1;

// In-place Cholesky solve of A x = b for a symmetric positive definite p x p A.
std::vector<double> cholesky_solve(std::vector<double> A, std::vector<double> b, std::size_t p) {
  for (std::size_t j = 0; j < p; ++j) {
    double d = A[j * p + j];
    for (std::size_t k = 0; k < j; ++k) d -= A[j * p + k] * A[j * p + k];
    if (!(d > 0)) throw ModelError("linear: normal equations are not positive definite");
    const double l = std::sqrt(d);
    A[j * p + j] = l;
    for (std::size_t i = j + 1; i < p; ++i) {
      double s = A[i * p + j];
      for (std::size_t k = 0; k < j; ++k) s -= A[i * p + k] * A[j * p + k];
      A[i * p + j] = s / l;
    }
  }
  for (std::size_t i = 0; i < p; ++i) {  // forward: L z = b
    for (std::size_t k = 0; k < i; ++k) b[i] -= A[i * p + k] * b[k];
    b[i] /= A[i * p + i];
  }
  for (std::size_t i = p; i-- > 0;) {  // backward: L^T x = z
    for (std::size_t k = i + 1; k < p; ++k) b[i] -= A[k * p + i] * b[k];
    b[i] /= A[i * p + i];
  }
  return b;
}

}  // namespace

LinearLearner::LinearLearner(const LearnerParams& p) { check_learner_params(p); }

void LinearLearner::fit(const Matrix& X, const std::vector<float>& y) {
  check_fit_input(X, y, kind());
  for (float v : X.data)
    if (!std::isfinite(v)) throw InputError("linear: feature matrix contains NaN or infinite values");
  const std::size_t n = X.rows, p = X.cols;
  std::vector<double> mean(p, 0.0), sd(p, 0.0);
  double ymean = 0.0;
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < p; ++c) mean[c] += X(r, c);
    ymean += y[r];
  }
  for (double& m : mean) m /= static_cast<double>(n);
  ymean /= static_cast<double>(n);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < p; ++c) sd[c] += (X(r, c) - mean[c]) * (X(r, c) - mean[c]);
  for (double& s : sd) s = std::sqrt(s / static_cast<double>(n));

  // Gram matrix and right-hand side of the standardized problem; constant columns
  // (sd 0) stay all-zero and get coefficient 0 through the ridge.
  std::vector<double> A(p * p, 0.0), b(p, 0.0), z(p);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < p; ++c) z[c] = sd[c] > 0 ? (X(r, c) - mean[c]) / sd[c] : 0.0;
    const double yc = y[r] - ymean;
    for (std::size_t i = 0; i < p; ++i) {
      b[i] += z[i] * yc;
      for (std::size_t j = 0; j <= i; ++j) A[i * p + j] += z[i] * z[j];
    }
  }
  for (std::size_t i = 0; i < p; ++i) {
    for (std::size_t j = 0; j <= i; ++j) A[j * p + i] = A[i * p + j] /= static_cast<double>(n);
    b[i] /= static_cast<double>(n);
    A[i * p + i] += kRidge;
  }
  const std::vector<double> beta = cholesky_solve(std::move(A), std::move(b), p);
  coef_.assign(p, 0.0);
  intercept_ = ymean;
  for (std::size_t c = 0; c < p; ++c) {
    coef_[c] = sd[c] > 0 ? beta[c] / sd[c] : 0.0;
    intercept_ -= coef_[c] * mean[c];
  }
  std_ = sd;
  fitted_ = true;
}

void LinearLearner::require_fitted(const char* what) const {
  if (!fitted_) throw ModelError(std::string("linear: ") + what + " called before fit or load");
}

std::vector<float> LinearLearner::predict(const Matrix& X) const {
  require_fitted("predict");
  check_predict_input(X, coef_.size(), "linear");
  std::vector<float> out(X.rows);
  for (std::size_t r = 0; r < X.rows; ++r) {
    double s = intercept_;
    for (std::size_t c = 0; c < X.cols; ++c) s += coef_[c] * X(r, c);
    out[r] = static_cast<float>(s);
  }
  return out;
}

std::vector<double> LinearLearner::importance() const {
  require_fitted("importance");
  // |coef| * std is the effect of a one-standard-deviation change: comparable across units.
  std::vector<double> imp(coef_.size());
  double total = 0.0;
  for (std::size_t c = 0; c < coef_.size(); ++c) total += imp[c] = std::abs(coef_[c]) * std_[c];
  if (total > 0)
    for (double& v : imp) v /= total;
  return imp;
}

void LinearLearner::save(const std::filesystem::path& file) const {
  require_fitted("save");
  const nlohmann::json j = {{"format", "carb-linear"},
                            {"version", kVersion},
                            {"intercept", intercept_},
                            {"coef", coef_},
                            {"std", std_}};
  std::ofstream out(file, std::ios::trunc);
  out << j.dump() << '\n';
  if (!out) throw ModelError("cannot write model file " + file.string());
}

void LinearLearner::load(const std::filesystem::path& file) {
  detail::require_bundle_file(file);
  std::ifstream in(file);
  if (!in) throw ModelError("cannot open model file " + file.string());
  const std::string bad = "model file " + file.string() + " ";
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    if (j.at("format") != "carb-linear") throw ModelError(bad + "is not a carb linear model");
    if (j.at("version") != kVersion)
      throw ModelError(bad + "has unsupported version " + j.at("version").dump());
    auto coef = j.at("coef").get<std::vector<double>>();
    auto sd = j.at("std").get<std::vector<double>>();
    const double intercept = j.at("intercept").get<double>();
    if (coef.size() != sd.size() || coef.empty())
      throw ModelError(bad + "has inconsistent coefficient arrays");
    coef_ = std::move(coef);
    std_ = std::move(sd);
    intercept_ = intercept;
    fitted_ = true;
  } catch (const nlohmann::json::exception& e) {
    throw ModelError(bad + "is corrupted: " + detail::json_error_text(e.what()));
  }
}

}  // namespace carb
