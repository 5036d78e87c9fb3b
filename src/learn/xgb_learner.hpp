// The XGBoost-backed learners: "xgb_depthwise" (hist, depth-wise growth) and
// "xgb_lossguide" (hist, leaf-wise growth: the LightGBM-role booster), both a thin
// RAII wrapper over XGBoost 1.7's C API.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "carb/learner.hpp"

namespace carb {

class XgbLearner : public Learner {
 public:
  enum class Growth { depthwise, lossguide };
  XgbLearner(Growth growth, const LearnerParams& p);

  std::string kind() const override;
  void fit(const Matrix& X, const std::vector<float>& y) override;
  std::vector<float> predict(const Matrix& X) const override;
  std::vector<double> importance() const override;
  void set_threads(int threads) override;
  void save(const std::filesystem::path& file) const override;
  void load(const std::filesystem::path& file) override;

  /// Boosting rounds and tree size actually used (defaults resolved).
  int rounds() const;

 private:
  struct BoosterDeleter {
    void operator()(void* h) const;
  };
  using BoosterPtr = std::unique_ptr<void, BoosterDeleter>;

  BoosterPtr new_booster(void* const* dmats, std::size_t n) const;
  void apply_runtime_params(void* booster) const;
  void require_fitted(const char* what) const;

  Growth growth_;
  LearnerParams p_;
  BoosterPtr booster_;
  std::size_t n_features_ = 0;
};

}  // namespace carb
