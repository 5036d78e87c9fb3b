// Targets normalised by physics: a per-platform analytic estimate of each cost, fitted on the
// training rows from the exact counts of carb arch, that the learners correct as a ratio. Trees
// cannot predict past the largest value they saw; estimate × learned ratio can, because the
// estimate carries the scaling (FLOPs, bytes) and the trees only the shape of the residual.
//   memory:            weights + input + the peak of live activations, by precision, + a constant
//   latency, energy:   FLOPs by precision (an effective peak), activations and weights (bytes moved,
//                      an effective bandwidth), convolution layers (launch cost), batch, a constant
// Coefficients are non-negative least squares on relative error, so every term adds cost.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "carb/config.hpp"

namespace carb {

class AnalyticEstimate {
 public:
  /// Fits the estimate of `target` (a kTargets name) to measured values y (all > 0).
  static AnalyticEstimate fit(const std::string& target, const std::vector<Config>& configs,
                              const std::vector<double>& y);
  /// The estimate for one configuration; always > 0 (a floor keeps log(y / e) finite).
  double operator()(const Config& c) const;
  std::vector<double> operator()(const std::vector<Config>& cs) const;

  const std::string& target() const { return target_; }
  const std::vector<std::string>& terms() const { return terms_; }
  const std::vector<double>& coefficients() const { return coef_; }

  nlohmann::json to_json() const;
  /// Throws ModelError when the document does not match this carb's terms for the target.
  static AnalyticEstimate from_json(const nlohmann::json& j);

  /// The term names and values for a target (the columns of the fit).
  static std::vector<std::string> term_names(const std::string& target);
  static std::vector<double> term_values(const std::string& target, const Config& c);

  /// A term name parsed: "<quantity>" or "<quantity>*<precision>" (that precision's rows only).
  struct Term {
    enum class Quantity { constant, params, input, peak_activation, max_activation, activation, gflops, conv_layers, batch };
    Quantity quantity = Quantity::constant;
    std::optional<Precision> only;
  };

 private:
  std::string target_;
  std::vector<std::string> terms_;
  std::vector<Term> parsed_;  // terms_, parsed once
  std::vector<double> coef_;
  double floor_ = 1e-9;
};

/// Non-negative least squares: x >= 0 minimising ||A x - b||², A given by rows. Cyclic coordinate
/// descent on the normal equations with scaled columns; exact enough for the dozen terms here.
std::vector<double> nnls(const std::vector<std::vector<double>>& rows, const std::vector<double>& b);

}  // namespace carb
