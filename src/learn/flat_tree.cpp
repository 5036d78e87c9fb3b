// The byte format of a list of flat trees (flat_tree.hpp).
#include "learn/flat_tree.hpp"

#include <algorithm>
#include <thread>

#include "carb/error.hpp"

namespace carb::detail {

std::vector<double> sum_of_trees(const std::vector<Tree>& trees, const Matrix& X, int threads) {
  std::vector<double> out(X.rows, 0.0);
  // Trees outer, rows inner keeps one tree hot in cache.
  auto work = [&](std::size_t r0, std::size_t r1) {
    for (const auto& tree : trees)
      for (std::size_t r = r0; r < r1; ++r) out[r] += walk(tree, X.row(r));
  };
  const std::size_t workers = std::clamp<std::size_t>(X.rows / 256, 1, static_cast<std::size_t>(std::max(threads, 1)));
  const std::size_t chunk = (X.rows + workers - 1) / workers;
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w)
    pool.emplace_back(work, std::min(X.rows, w * chunk), std::min(X.rows, (w + 1) * chunk));
  work(0, std::min(X.rows, chunk));
  for (auto& th : pool) th.join();
  return out;
}

void put_trees(std::vector<unsigned char>& out, std::size_t n_features, const std::vector<Tree>& trees,
               const std::vector<double>& importance) {
  put(out, static_cast<std::uint64_t>(n_features));
  put(out, static_cast<std::uint64_t>(trees.size()));
  for (const auto& tree : trees) {
    put(out, static_cast<std::uint64_t>(tree.size()));
    put_bytes(out, tree.data(), tree.size() * sizeof(TreeNode));
  }
  for (double v : importance) put(out, v);
}

void get_trees(ByteReader& r, const std::string& where, std::size_t& n_features, std::vector<Tree>& trees,
               std::vector<double>& importance) {
  const auto nf = r.get<std::uint64_t>(), n_trees = r.get<std::uint64_t>();
  // A resealed file claiming 2^30 features once made carb allocate 8 GB (found by fuzz_bundle).
  if (nf == 0 || nf > r.remaining() / sizeof(double) || n_trees == 0 || n_trees > r.remaining())
    throw ModelError(where + " has an implausible header");
  std::vector<Tree> out(n_trees);
  for (auto& tree : out) {
    const auto n_nodes = r.get<std::uint64_t>();
    if (n_nodes == 0 || n_nodes > r.remaining() / sizeof(TreeNode)) throw ModelError(where + " has a bad node count");
    tree.resize(n_nodes);
    r.read(tree.data(), n_nodes * sizeof(TreeNode));
    // Children must lie after their parent and inside the tree: traversal then always ends.
    for (std::size_t i = 0; i < tree.size(); ++i) {
      const TreeNode& nd = tree[i];
      if (nd.feature >= 0 &&
          (static_cast<std::uint64_t>(nd.feature) >= nf || nd.left <= 0 || static_cast<std::size_t>(nd.left) <= i ||
           static_cast<std::size_t>(nd.left) + 1 >= n_nodes))
        throw ModelError(where + " has an invalid tree node");
    }
  }
  std::vector<double> imp(nf);
  for (double& v : imp) v = r.get<double>();
  n_features = nf;
  trees = std::move(out);
  importance = std::move(imp);
}

}  // namespace carb::detail
