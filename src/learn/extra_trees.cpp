// Extra trees: the per-tree builder (random thresholds, in-place partitioning of
// one reused index buffer), the thread pool over trees, prediction and the
// checksummed binary model file.
#include "learn/extra_trees.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <thread>
#include <utility>

#include "carb/error.hpp"
#include "learn/checksum_file.hpp"
#include "util/stop_signal.hpp"

namespace carb {
namespace {

using detail::Tree;
constexpr char kMagic[8] = {'C', 'A', 'R', 'B', 'X', 'T', 'R', '1'};
constexpr std::uint32_t kVersion = 1;

// xoshiro256** seeded by splitmix64: fast, and (unlike std distributions) gives
// the same stream on every standard library, so a seed means the same forest.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ULL;
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      s = z ^ (z >> 31);
    }
  }
  std::uint64_t next() {
    const std::uint64_t r = rotl(s_[1] * 5, 7) * 9, t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(((next() >> 32) * n) >> 32); }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

// The two hot loops of training, written as 8 independent lanes so that the
// compiler vectorizes them (SSE2 is enough) without -ffast-math; lane order is
// fixed, so results stay deterministic.
constexpr std::uint32_t kLanes = 8;

// Copies one feature's values for the node's rows into out and returns their
// range. out has kLanes slots of padding past cnt, which end up +inf: such values
// are never <= a threshold, so left_stats can run whole vectors with no scalar tail
// (most nodes of a deep tree are small, so tails would dominate).
std::pair<float, float> gather_range(const float* col, const std::uint32_t* idx, std::uint32_t cnt,
                                     float* out) {
  for (std::uint32_t i = 0; i < cnt; ++i) out[i] = col[idx[i]];
  for (std::uint32_t k = 0; k < kLanes; ++k) out[cnt + k] = out[0];
  float lo[kLanes], hi[kLanes];
  for (std::uint32_t k = 0; k < kLanes; ++k) lo[k] = hi[k] = out[0];
  for (std::uint32_t i = 0; i < cnt; i += kLanes)
    for (std::uint32_t k = 0; k < kLanes; ++k) {
      lo[k] = std::min(lo[k], out[i + k]);
      hi[k] = std::max(hi[k], out[i + k]);
    }
  for (std::uint32_t k = 1; k < kLanes; ++k) {
    lo[0] = std::min(lo[0], lo[k]);
    hi[0] = std::max(hi[0], hi[k]);
  }
  for (std::uint32_t k = 0; k < kLanes; ++k) out[cnt + k] = std::numeric_limits<float>::infinity();
  return {lo[0], hi[0]};
}

// Sum of the (node-centered) targets of rows with value <= thr, and their count.
// Uses GCC/Clang vector extensions (plain SSE2) with masks instead of branches;
// float lanes are flushed into a double every block, which bounds rounding error.
using F4 = float __attribute__((vector_size(16)));
using I4 = std::int32_t __attribute__((vector_size(16)));

std::pair<double, std::uint32_t> left_stats(const float* vals, const float* yc, std::uint32_t cnt,
                                            float thr) {
  constexpr std::uint32_t kBlock = 256;
  const F4 t = {thr, thr, thr, thr};
  double sum = 0;
  I4 neg_n = {0, 0, 0, 0};               // a true comparison is -1 in every lane
  for (std::uint32_t i = 0; i < cnt;) {  // reads up to 7 padding slots past cnt (see gather_range)
    F4 a = {0, 0, 0, 0}, b = {0, 0, 0, 0};
    for (const std::uint32_t stop = std::min(cnt, i + kBlock); i < stop; i += 8) {
      F4 v0, v1, y0, y1;
      std::memcpy(&v0, vals + i, sizeof v0);
      std::memcpy(&v1, vals + i + 4, sizeof v1);
      std::memcpy(&y0, yc + i, sizeof y0);
      std::memcpy(&y1, yc + i + 4, sizeof y1);
      const I4 m0 = v0 <= t, m1 = v1 <= t;
      a += reinterpret_cast<F4>(reinterpret_cast<I4>(y0) & m0);
      b += reinterpret_cast<F4>(reinterpret_cast<I4>(y1) & m1);
      neg_n += m0 + m1;
    }
    const F4 ab = a + b;
    sum += (static_cast<double>(ab[0]) + ab[1]) + (static_cast<double>(ab[2]) + ab[3]);
  }
  return {sum, static_cast<std::uint32_t>(-(neg_n[0] + neg_n[1] + neg_n[2] + neg_n[3]))};
}

struct Split {
  int feature = -1;
  float threshold = 0;
  double gain = 0;  // weighted variance reduction (SSE of the node minus SSE of the children)
};

// Builds one tree. Buffers are sized once and reused by every node; a node owns
// the slice [begin, end) of idx_, which splitting partitions in place.
class TreeBuilder {
 public:
  TreeBuilder(const std::vector<float>& xcol, const std::vector<float>& y, std::size_t p,
              const LearnerParams& lp)
      : xcol_(xcol),
        y_(y),
        n_(y.size()),
        p_(p),
        msl_(static_cast<std::size_t>(lp.min_samples_leaf)),
        max_depth_(lp.max_depth),
        max_features_(
            std::max<std::size_t>(1, static_cast<std::size_t>(lp.max_features * static_cast<double>(p)))),
        idx_(n_),
        vals_(n_ + kLanes),
        best_vals_(n_ + kLanes),
        ybuf_(n_ + kLanes),
        feats_(p) {}

  std::vector<ExtraTrees::Node> build(std::uint64_t seed, std::vector<double>& gain);

 private:
  struct Task {
    std::uint32_t node, begin, end;
    int depth;
  };
  Split best_split(std::uint32_t begin, std::uint32_t end, Rng& rng);
  std::uint32_t partition(std::uint32_t begin, std::uint32_t end, float threshold);

  const std::vector<float>& xcol_;  // column-major copy of X: a feature's values are contiguous
  const std::vector<float>& y_;
  std::size_t n_, p_, msl_;
  int max_depth_;
  std::size_t max_features_;
  std::vector<std::uint32_t> idx_;
  std::vector<float> vals_, best_vals_, ybuf_;  // node-local copies, indexed from 0; ybuf_ centered
  std::vector<std::uint32_t> feats_;
};

std::vector<ExtraTrees::Node> TreeBuilder::build(std::uint64_t seed, std::vector<double>& gain) {
  Rng rng(seed);
  for (std::uint32_t i = 0; i < n_; ++i) idx_[i] = i;
  for (std::uint32_t f = 0; f < p_; ++f) feats_[f] = f;
  std::vector<ExtraTrees::Node> nodes{{-1, 0, 0.0f}};
  std::vector<Task> stack{{0, 0, static_cast<std::uint32_t>(n_), 0}};
  while (!stack.empty()) {
    const Task t = stack.back();
    stack.pop_back();
    const std::uint32_t cnt = t.end - t.begin;
    double sum = 0;
    float ymin = std::numeric_limits<float>::infinity(), ymax = -ymin;
    for (std::uint32_t i = 0; i < cnt; ++i) {
      const float v = ybuf_[i] = y_[idx_[t.begin + i]];
      sum += v;
      ymin = std::min(ymin, v);
      ymax = std::max(ymax, v);
    }
    const double mean = sum / cnt;
    nodes[t.node].value = static_cast<float>(mean);
    if (cnt < 2 * msl_ || ymin == ymax || (max_depth_ > 0 && t.depth >= max_depth_)) continue;
    // Centered targets keep the float sums in left_stats small and the gain free of cancellation.
    for (std::uint32_t i = 0; i < cnt; ++i) ybuf_[i] = static_cast<float>(ybuf_[i] - mean);
    std::fill_n(ybuf_.begin() + cnt, kLanes, 0.0f);
    const Split s = best_split(t.begin, t.end, rng);
    if (s.feature < 0) continue;  // no valid split: stays a leaf
    gain[static_cast<std::size_t>(s.feature)] += s.gain;
    const std::uint32_t mid = partition(t.begin, t.end, s.threshold);
    const auto left = static_cast<std::uint32_t>(nodes.size());
    nodes[t.node] = {s.feature, static_cast<std::int32_t>(left), s.threshold};
    nodes.push_back({-1, 0, 0.0f});
    nodes.push_back({-1, 0, 0.0f});
    stack.push_back({left + 1, mid, t.end, t.depth + 1});
    stack.push_back({left, t.begin, mid, t.depth + 1});
  }
  return nodes;
}

// Draws features without replacement until max_features non-constant ones were
// tried (constant ones do not count, as in scikit-learn), one random threshold each.
Split TreeBuilder::best_split(std::uint32_t begin, std::uint32_t end, Rng& rng) {
  const std::uint32_t cnt = end - begin;
  Split best;
  std::size_t tried = 0;
  for (auto remaining = static_cast<std::uint32_t>(p_); remaining > 0 && tried < max_features_; --remaining) {
    std::swap(feats_[rng.below(remaining)], feats_[remaining - 1]);
    const std::uint32_t f = feats_[remaining - 1];
    const auto [lo, hi] = gather_range(xcol_.data() + f * n_, idx_.data() + begin, cnt, vals_.data());
    if (!(hi > lo)) continue;
    ++tried;
    auto thr = static_cast<float>(lo + (static_cast<double>(hi) - lo) * rng.uniform());
    if (thr >= hi) thr = lo;  // float rounding could send every row left
    const auto [suml, nl] = left_stats(vals_.data(), ybuf_.data(), cnt, thr);
    const std::uint32_t nr = cnt - nl;
    if (nl < msl_ || nr < msl_) continue;
    // With centered targets the right sum is -suml, and the SSE reduction is
    // suml^2/nl + suml^2/nr.
    const double gain = suml * suml * (1.0 / nl + 1.0 / nr);
    if (best.feature < 0 || gain > best.gain) {
      best = {static_cast<int>(f), thr, gain};
      std::swap(vals_, best_vals_);  // keep the winner's values for partitioning
    }
  }
  return best;
}

// Hoare-style partition of idx_[begin, end) by the winning feature's values; returns the first right row.
std::uint32_t TreeBuilder::partition(std::uint32_t begin, std::uint32_t end, float threshold) {
  std::uint32_t i = 0, j = end - begin;
  float* v = best_vals_.data();
  std::uint32_t* idx = idx_.data() + begin;
  while (i < j) {
    if (v[i] <= threshold) {
      ++i;
    } else {
      --j;
      std::swap(v[i], v[j]);
      std::swap(idx[i], idx[j]);
    }
  }
  return begin + i;
}

void check_finite(const Matrix& X, const char* what) {
  for (float v : X.data)
    if (!std::isfinite(v))
      throw InputError(std::string("extra_trees: ") + what + " contains NaN or infinite values");
}

}  // namespace

ExtraTrees::ExtraTrees(const LearnerParams& p) : p_(p) { check_learner_params(p); }

void ExtraTrees::fit(const Matrix& X, const std::vector<float>& y) {
  check_fit_input(X, y, kind());
  check_finite(X, "feature matrix");
  if (X.rows >= std::numeric_limits<std::uint32_t>::max() / 2)
    throw InputError("extra_trees: too many rows (" + std::to_string(X.rows) + ")");
  std::vector<float> xcol(X.rows * X.cols);
  for (std::size_t r = 0; r < X.rows; ++r)
    for (std::size_t c = 0; c < X.cols; ++c) xcol[c * X.rows + r] = X(r, c);

  const std::size_t n_trees = p_.n_trees > 0 ? static_cast<std::size_t>(p_.n_trees) : 400;
  std::vector<std::vector<Node>> trees(n_trees);
  std::vector<std::vector<double>> gains(n_trees, std::vector<double>(X.cols, 0.0));
  std::atomic<std::size_t> next{0};
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(p_.threads));
  // Tree t depends only on seed + t, so the forest is the same for any thread count.
  auto work = [&](std::size_t w) {
    try {
      TreeBuilder builder(xcol, y, X.cols, p_);
      // A signal stops the fit between trees (hundred-and-ninth hostile pass: one fit on 40,000 rows
      // heard SIGTERM 144 s late); nothing half-fitted is kept, as the exception says.
      for (std::size_t t; (t = next.fetch_add(1)) < n_trees;) {
        detail::throw_if_stopped("training", "no model was made, and nothing was written");
        trees[t] = builder.build(p_.seed + t, gains[t]);
      }
    } catch (...) {
      errors[w] = std::current_exception();  // rethrown on the calling thread below
    }
  };
  std::vector<std::thread> pool;
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(p_.threads), n_trees);
  for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work, w);
  work(0);
  for (auto& th : pool) th.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);

  importance_.assign(X.cols, 0.0);
  double total = 0;
  for (const auto& g : gains)
    for (std::size_t c = 0; c < X.cols; ++c) importance_[c] += g[c];
  for (double v : importance_) total += v;
  if (total > 0)
    for (double& v : importance_) v /= total;
  trees_ = std::move(trees);
  n_features_ = X.cols;
}

void ExtraTrees::require_fitted(const char* what) const {
  if (trees_.empty()) throw ModelError(std::string("extra_trees: ") + what + " called before fit or load");
}

std::vector<float> ExtraTrees::predict(const Matrix& X) const {
  require_fitted("predict");
  check_predict_input(X, n_features_, "extra_trees");
  check_finite(X, "prediction matrix");
  const std::vector<double> sum = detail::sum_of_trees(trees_, X, p_.threads);
  std::vector<float> out(X.rows);
  for (std::size_t r = 0; r < X.rows; ++r) out[r] = static_cast<float>(sum[r] / trees_.size());
  return out;
}

std::vector<double> ExtraTrees::importance() const {
  require_fitted("importance");
  return importance_;
}

void ExtraTrees::save(const std::filesystem::path& file) const {
  require_fitted("save");
  std::vector<unsigned char> bytes;
  detail::put(bytes, kMagic);
  detail::put(bytes, kVersion);
  detail::put_trees(bytes, n_features_, trees_, importance_);
  detail::write_checksummed(file, std::move(bytes));
}

void ExtraTrees::load(const std::filesystem::path& file) {
  const std::string where = "model file " + file.string();
  const std::vector<unsigned char> bytes = detail::read_checksummed(file);
  detail::ByteReader r(bytes, where);
  char magic[sizeof kMagic];
  r.read(magic, sizeof magic);
  if (std::memcmp(magic, kMagic, sizeof kMagic) != 0)
    throw ModelError(where + " is not a carb extra_trees model");
  if (const auto v = r.get<std::uint32_t>(); v != kVersion)
    throw ModelError(where + " has unsupported version " + std::to_string(v));
  std::size_t n_features = 0;
  std::vector<Tree> trees;
  std::vector<double> imp;
  detail::get_trees(r, where, n_features, trees, imp);
  if (r.remaining() != 0) throw ModelError(where + " has trailing data");
  trees_ = std::move(trees);
  importance_ = std::move(imp);
  n_features_ = n_features;
}

}  // namespace carb
