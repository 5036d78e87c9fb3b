// Trees as flat node arrays, shared by carb's own tree learners (extra_trees, gbdt_*): the node
// layout, the walk from root to leaf, and the byte format of a list of trees with per-feature
// importance inside a checksummed model file (checksum_file.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "carb/matrix.hpp"
#include "learn/checksum_file.hpp"

namespace carb::detail {

/// One tree node. Split: rows with x[feature] <= value go to `left`, the others to left + 1
/// (children are allocated as a pair). Leaf: feature < 0 and value is the leaf's output.
struct TreeNode {
  std::int32_t feature;
  std::int32_t left;
  float value;
};
static_assert(sizeof(TreeNode) == 12, "TreeNode is written to model files byte for byte");

using Tree = std::vector<TreeNode>;

/// The leaf value a feature row reaches.
inline float walk(const Tree& t, const float* x) {
  std::int32_t i = 0;
  while (t[static_cast<std::size_t>(i)].feature >= 0) {
    const TreeNode& nd = t[static_cast<std::size_t>(i)];
    i = x[nd.feature] <= nd.value ? nd.left : nd.left + 1;
  }
  return t[static_cast<std::size_t>(i)].value;
}

/// Per row of X, the sum over trees of the leaf it reaches, in a fixed tree order (so the result
/// does not depend on how rows are split over up to `threads` threads).
std::vector<double> sum_of_trees(const std::vector<Tree>& trees, const Matrix& X, int threads);

/// Appends: feature count, tree count, each tree (node count, nodes), one importance per feature.
void put_trees(std::vector<unsigned char>& out, std::size_t n_features, const std::vector<Tree>& trees,
               const std::vector<double>& importance);

/// Reads what put_trees wrote, checking every count against the bytes that are there before
/// anything is sized by it, and every split's feature and children (a traversal always ends).
/// Throws ModelError naming `where`.
void get_trees(ByteReader& r, const std::string& where, std::size_t& n_features, std::vector<Tree>& trees,
               std::vector<double>& importance);

}  // namespace carb::detail
