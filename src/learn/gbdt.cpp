// carb's histogram gradient boosting (gbdt.hpp): quantile binning, the per-node histogram with
// its bin masks, split finding, the two growth policies, prediction and the model file.
#include "learn/gbdt.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <queue>
#include <string>
#include <utility>

#include "carb/error.hpp"
#include "learn/checksum_file.hpp"
#include "util/stop_signal.hpp"

namespace carb {
namespace {

using detail::Tree;
using detail::TreeNode;

constexpr char kMagic[8] = {'C', 'A', 'R', 'B', 'G', 'B', 'T', '1'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kMaskWords = Gbdt::kMaxBins / 64;
constexpr double kMinGain = 1e-6;  // XGBoost's kRtEps: a split must gain more than this

// The features as bin indices (row-major, one byte each) and, per feature, the thresholds that
// separate its bins: bin(x) <= b exactly when x <= cut[b].
struct Binned {
  std::size_t rows = 0, cols = 0;
  std::vector<std::uint8_t> bin;
  std::vector<std::vector<float>> cut;
};

// A threshold strictly between two neighbouring values lo < hi (lo itself when no float lies between).
float between(float lo, float hi) {
  const auto mid = static_cast<float>(0.5 * (static_cast<double>(lo) + hi));
  return mid >= lo && mid < hi ? mid : lo;
}

// Equal-count bins over the distinct values: each distinct value its own bin when there are at most
// kMaxBins of them, else consecutive values grouped so that each bin holds about rows / kMaxBins.
std::vector<float> feature_cuts(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::pair<float, std::size_t>> distinct;  // value, count
  for (float x : v) {
    if (distinct.empty() || distinct.back().first != x) distinct.emplace_back(x, 0);
    ++distinct.back().second;
  }
  std::vector<float> cuts;
  if (distinct.size() <= Gbdt::kMaxBins) {
    for (std::size_t i = 0; i + 1 < distinct.size(); ++i) cuts.push_back(between(distinct[i].first, distinct[i + 1].first));
    return cuts;
  }
  const double per_bin = static_cast<double>(v.size()) / Gbdt::kMaxBins;
  std::size_t filled = 0;
  for (std::size_t i = 0; i + 1 < distinct.size() && cuts.size() + 1 < Gbdt::kMaxBins; ++i) {
    filled += distinct[i].second;
    if (static_cast<double>(filled) >= per_bin * static_cast<double>(cuts.size() + 1))
      cuts.push_back(between(distinct[i].first, distinct[i + 1].first));
  }
  return cuts;
}

Binned bin_features(const Matrix& X) {
  Binned b;
  b.rows = X.rows, b.cols = X.cols;
  b.bin.resize(X.rows * X.cols);
  b.cut.resize(X.cols);
  std::vector<float> col(X.rows);
  for (std::size_t f = 0; f < X.cols; ++f) {
    for (std::size_t r = 0; r < X.rows; ++r) col[r] = X(r, f);
    b.cut[f] = feature_cuts(col);
    const auto& c = b.cut[f];
    for (std::size_t r = 0; r < X.rows; ++r)
      b.bin[r * X.cols + f] = static_cast<std::uint8_t>(std::lower_bound(c.begin(), c.end(), col[r]) - c.begin());
  }
  return b;
}

struct Split {
  int feature = -1;
  int bin = 0;
  double gain = 0, g_left = 0, h_left = 0;
};

// A node being grown: its rows idx[begin, end), their gradient and hessian sums, and its best split.
struct Candidate {
  std::int32_t node = 0;
  std::uint32_t begin = 0, end = 0;
  int depth = 0;
  double g = 0, h = 0;
  Split best;
};

double score(double g, double h) { return g * g / (h + Gbdt::kLambda); }

// Grows one tree on the gradients (squared error: hessian 1 per row) and adds eta × its leaf
// weights to `pred`. Scratch buffers live across trees.
class TreeGrower {
 public:
  TreeGrower(const Binned& b, double min_child, int max_depth, int max_leaves, double eta)
      : b_(b),
        min_child_(min_child),
        max_depth_(max_depth),
        max_leaves_(max_leaves),
        eta_(eta),
        hist_g_(b.cols * Gbdt::kMaxBins, 0.0),
        hist_n_(b.cols * Gbdt::kMaxBins, 0),
        mask_(b.cols * kMaskWords, 0),
        idx_(b.rows),
        spill_(b.rows) {}

  Tree grow(Gbdt::Growth growth, const std::vector<double>& grad, std::vector<double>& pred,
            std::vector<double>& gain_per_feature) {
    grad_ = &grad;
    pred_ = &pred;
    gain_ = &gain_per_feature;
    tree_.assign(1, TreeNode{-1, 0, 0.0f});
    for (std::uint32_t i = 0; i < b_.rows; ++i) idx_[i] = i;
    Candidate root{0, 0, static_cast<std::uint32_t>(b_.rows), 0, 0, static_cast<double>(b_.rows), {}};
    for (double g : grad) root.g += g;
    find_split(root);
    if (growth == Gbdt::Growth::depthwise)
      grow_depthwise(root);
    else
      grow_leafwise(root);
    return std::move(tree_);
  }

 private:
  bool may_split(const Candidate& c, std::size_t leaves) const {
    return c.best.feature >= 0 && (max_depth_ <= 0 || c.depth < max_depth_) &&
           (max_leaves_ <= 0 || leaves < static_cast<std::size_t>(max_leaves_));
  }

  void grow_depthwise(Candidate root) {
    std::vector<Candidate> level = {root}, next;
    std::size_t leaves = 1;
    while (!level.empty()) {
      next.clear();
      for (Candidate& c : level) {
        if (!may_split(c, leaves)) {
          make_leaf(c);
          continue;
        }
        auto [l, r] = split(c);
        ++leaves;
        next.push_back(l), next.push_back(r);
      }
      std::swap(level, next);
    }
  }

  void grow_leafwise(Candidate root) {
    // Best gain first; ties by node index, so growth does not depend on the heap's internals.
    auto worse = [](const Candidate& a, const Candidate& b) {
      return a.best.gain != b.best.gain ? a.best.gain < b.best.gain : a.node > b.node;
    };
    std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> open(worse);
    open.push(root);
    std::size_t leaves = 1;
    while (!open.empty()) {
      Candidate c = open.top();
      open.pop();
      if (!may_split(c, leaves)) {
        make_leaf(c);
        continue;
      }
      auto [l, r] = split(c);
      ++leaves;
      open.push(l), open.push(r);
    }
  }

  void make_leaf(const Candidate& c) {
    const double w = -eta_ * c.g / (c.h + Gbdt::kLambda);
    tree_[static_cast<std::size_t>(c.node)] = TreeNode{-1, 0, static_cast<float>(w)};
    for (std::uint32_t i = c.begin; i < c.end; ++i) (*pred_)[idx_[i]] += static_cast<float>(w);
  }

  // Partitions the node's rows (stably, so rows stay in memory order) and makes its children.
  std::pair<Candidate, Candidate> split(const Candidate& c) {
    const auto f = static_cast<std::size_t>(c.best.feature);
    const auto cols = b_.cols;
    std::uint32_t left_end = c.begin, spilled = 0;
    for (std::uint32_t i = c.begin; i < c.end; ++i) {
      const std::uint32_t r = idx_[i];
      if (b_.bin[r * cols + f] <= c.best.bin)
        idx_[left_end++] = r;
      else
        spill_[spilled++] = r;
    }
    std::copy(spill_.begin(), spill_.begin() + spilled, idx_.begin() + left_end);
    const auto first = static_cast<std::int32_t>(tree_.size());
    tree_[static_cast<std::size_t>(c.node)] = TreeNode{c.best.feature, first, b_.cut[f][static_cast<std::size_t>(c.best.bin)]};
    tree_.push_back(TreeNode{-1, 0, 0.0f});
    tree_.push_back(TreeNode{-1, 0, 0.0f});
    (*gain_)[f] += c.best.gain;
    Candidate l{first, c.begin, left_end, c.depth + 1, c.best.g_left, c.best.h_left, {}};
    Candidate r{first + 1, left_end, c.end, c.depth + 1, c.g - c.best.g_left, c.h - c.best.h_left, {}};
    find_split(l);
    find_split(r);
    return {l, r};
  }

  // The node's histogram, then each feature's filled bins in order: the best split by gain.
  void find_split(Candidate& c) {
    c.best = Split{};
    if (c.h < 2 * min_child_) return;  // no split could leave both children their minimum weight
    const std::size_t cols = b_.cols;
    const std::vector<double>& grad = *grad_;
    for (std::uint32_t i = c.begin; i < c.end; ++i) {
      const std::uint32_t r = idx_[i];
      const std::uint8_t* bins = &b_.bin[r * cols];
      const double g = grad[r];
      for (std::size_t f = 0; f < cols; ++f) {
        const std::size_t k = f * Gbdt::kMaxBins + bins[f];
        hist_g_[k] += g;
        ++hist_n_[k];
        mask_[f * kMaskWords + (bins[f] >> 6)] |= std::uint64_t{1} << (bins[f] & 63);
      }
    }
    const double parent = score(c.g, c.h);
    for (std::size_t f = 0; f < cols; ++f) {
      double gl = 0, hl = 0;
      for (std::size_t w = 0; w < kMaskWords; ++w) {
        std::uint64_t bits = mask_[f * kMaskWords + w];
        mask_[f * kMaskWords + w] = 0;
        while (bits) {
          const auto bin = static_cast<int>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits)));
          bits &= bits - 1;
          const std::size_t k = f * Gbdt::kMaxBins + static_cast<std::size_t>(bin);
          gl += hist_g_[k], hl += hist_n_[k];
          hist_g_[k] = 0, hist_n_[k] = 0;
          const double hr = c.h - hl;
          if (hl < min_child_ || hr < min_child_) continue;
          const double gain = score(gl, hl) + score(c.g - gl, hr) - parent;
          if (gain > kMinGain && gain > c.best.gain) c.best = Split{static_cast<int>(f), bin, gain, gl, hl};
        }
      }
    }
  }

  const Binned& b_;
  double min_child_;
  int max_depth_, max_leaves_;
  double eta_;
  std::vector<double> hist_g_;
  std::vector<std::uint32_t> hist_n_;
  std::vector<std::uint64_t> mask_;
  std::vector<std::uint32_t> idx_, spill_;
  Tree tree_;
  const std::vector<double>* grad_ = nullptr;
  std::vector<double>* pred_ = nullptr;
  std::vector<double>* gain_ = nullptr;
};

void check_finite(const Matrix& X, const std::string& who) {
  for (float v : X.data)
    if (!std::isfinite(v)) throw InputError(who + ": the feature matrix contains NaN or infinite values");
}

}  // namespace

Gbdt::Gbdt(Growth g, const LearnerParams& p) : growth_(g), p_(p) { check_learner_params(p); }

int Gbdt::rounds() const { return p_.n_trees > 0 ? p_.n_trees : 800; }

void Gbdt::fit(const Matrix& X, const std::vector<float>& y) {
  check_fit_input(X, y, kind());
  check_finite(X, kind());
  if (X.rows >= std::numeric_limits<std::uint32_t>::max() / 2)
    throw InputError(kind() + ": too many rows (" + std::to_string(X.rows) + ")");
  const Binned b = bin_features(X);
  const bool depthwise = growth_ == Growth::depthwise;
  TreeGrower grower(b, p_.min_samples_leaf, p_.max_depth > 0 ? p_.max_depth : (depthwise ? 9 : 0),
                    p_.max_leaves > 0 ? p_.max_leaves : (depthwise ? 0 : 127), p_.learning_rate);
  base_ = p_.base_score;
  std::vector<double> pred(y.size(), base_), grad(y.size());
  std::vector<double> gain(X.cols, 0.0);
  trees_.clear();
  trees_.reserve(static_cast<std::size_t>(rounds()));
  for (int t = 0; t < rounds(); ++t) {
    detail::throw_if_stopped("training", "no model was made, and nothing was written");  // between rounds
    for (std::size_t i = 0; i < y.size(); ++i) grad[i] = pred[i] - y[i];
    trees_.push_back(grower.grow(growth_, grad, pred, gain));
  }
  double total = 0;
  for (double g : gain) total += g;
  if (total > 0)
    for (double& g : gain) g /= total;
  importance_ = std::move(gain);
  n_features_ = X.cols;
}

void Gbdt::require_fitted(const char* what) const {
  if (trees_.empty()) throw ModelError(kind() + ": " + what + " called before fit or load");
}

std::vector<float> Gbdt::predict(const Matrix& X) const {
  require_fitted("predict");
  check_predict_input(X, n_features_, kind());
  check_finite(X, kind());
  const std::vector<double> sum = detail::sum_of_trees(trees_, X, p_.threads);
  std::vector<float> out(X.rows);
  for (std::size_t r = 0; r < X.rows; ++r) out[r] = static_cast<float>(base_ + sum[r]);
  return out;
}

std::vector<double> Gbdt::importance() const {
  require_fitted("importance");
  return importance_;
}

void Gbdt::save(const std::filesystem::path& file) const {
  require_fitted("save");
  std::vector<unsigned char> bytes;
  detail::put(bytes, kMagic);
  detail::put(bytes, kVersion);
  detail::put(bytes, static_cast<std::uint32_t>(growth_));
  detail::put(bytes, base_);
  detail::put_trees(bytes, n_features_, trees_, importance_);
  detail::write_checksummed(file, std::move(bytes));
}

void Gbdt::load(const std::filesystem::path& file) {
  const std::string where = "model file " + file.string();
  const std::vector<unsigned char> bytes = detail::read_checksummed(file);
  detail::ByteReader r(bytes, where);
  char magic[sizeof kMagic];
  r.read(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0) throw ModelError(where + " is not a carb " + kind() + " model");
  if (const auto v = r.get<std::uint32_t>(); v != kVersion)
    throw ModelError(where + " has unsupported version " + std::to_string(v));
  if (r.get<std::uint32_t>() != static_cast<std::uint32_t>(growth_))
    throw ModelError(where + " is a gradient-boosted model of the other growth policy, not " + kind());
  const auto base = r.get<double>();
  if (!std::isfinite(base)) throw ModelError(where + " has a base score of " + std::to_string(base));
  std::size_t n_features = 0;
  std::vector<Tree> trees;
  std::vector<double> imp;
  detail::get_trees(r, where, n_features, trees, imp);
  if (r.remaining() != 0) throw ModelError(where + " has trailing data");
  base_ = base;
  trees_ = std::move(trees);
  importance_ = std::move(imp);
  n_features_ = n_features;
}

}  // namespace carb
