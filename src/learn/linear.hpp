// "linear": ordinary least squares with an intercept, the simple baseline learner.
#pragma once
#include <string>
#include <vector>

#include "carb/learner.hpp"

namespace carb {

class LinearLearner : public Learner {
 public:
  explicit LinearLearner(const LearnerParams& p = {});

  std::string kind() const override { return "linear"; }
  void fit(const Matrix& X, const std::vector<float>& y) override;
  std::vector<float> predict(const Matrix& X) const override;
  std::vector<double> importance() const override;
  void set_threads(int) override {}  // one thread always
  void save(const std::filesystem::path& file) const override;
  void load(const std::filesystem::path& file) override;

  /// Fitted coefficients per feature column (in the original units) and intercept.
  const std::vector<double>& coefficients() const { return coef_; }
  double intercept() const { return intercept_; }

 private:
  void require_fitted(const char* what) const;

  std::vector<double> coef_;
  std::vector<double> std_;  // feature standard deviations on the training data (for importance)
  double intercept_ = 0.0;
  bool fitted_ = false;
};

}  // namespace carb
