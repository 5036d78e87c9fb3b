// "extra_trees": carb's own Extremely Randomized Trees regressor (Geurts, Ernst &
// Wehenkel 2006). Trees are stored as compact flat node arrays.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "carb/learner.hpp"
#include "learn/flat_tree.hpp"

namespace carb {

class ExtraTrees : public Learner {
 public:
  /// One tree node (flat_tree.hpp); a leaf's value is that tree's prediction.
  using Node = detail::TreeNode;

  explicit ExtraTrees(const LearnerParams& p = {});

  std::string kind() const override { return "extra_trees"; }
  void fit(const Matrix& X, const std::vector<float>& y) override;
  std::vector<float> predict(const Matrix& X) const override;
  std::vector<double> importance() const override;
  void set_threads(int threads) override { p_.threads = std::max(threads, 1); }
  void save(const std::filesystem::path& file) const override;
  void load(const std::filesystem::path& file) override;

  /// Number of trees in the fitted forest, and the nodes of one of them.
  std::size_t tree_count() const { return trees_.size(); }
  const std::vector<Node>& tree(std::size_t i) const { return trees_.at(i); }

 private:
  void require_fitted(const char* what) const;

  LearnerParams p_;
  std::vector<std::vector<Node>> trees_;
  std::vector<double> importance_;
  std::size_t n_features_ = 0;
};

}  // namespace carb
