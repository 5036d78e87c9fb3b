// The dominance search of `carb data validate`: a bound per configuration from a sweep with a
// Fenwick tree of maxima, and for the rows it does not pass a k-d tree over the group's
// configurations, each node holding the largest value under it, searched branch and bound.
#include "data/dominance.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "carb/config.hpp"

namespace carb {
namespace {

// Each row's index among the distinct values of one dimension, ascending; `count` how many there are.
template <class T>
std::vector<std::uint32_t> ranks(const std::vector<T>& values, std::uint32_t& count) {
  std::vector<T> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  count = static_cast<std::uint32_t>(sorted.size());
  std::vector<std::uint32_t> out;
  out.reserve(values.size());
  for (const T& v : values)
    out.push_back(static_cast<std::uint32_t>(std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin()));
  return out;
}

using Point = std::array<std::uint32_t, 4>;  // depth, width, resolution, batch ranks

bool below(const Point& c, const Point& a) { return c[0] <= a[0] && c[1] <= a[1] && c[2] <= a[2] && c[3] <= a[3]; }

// One occupied cell: one configuration (the group fixes family and precision), so one FLOPs count,
// and the best row in it for the target.
struct Cell {
  Point at;
  std::size_t network;  // widths that build the same channels are one network
  double flops = 0;
  double best = 0;  // the largest positive value in the cell, 0 when none
  std::size_t best_i = 0;
};

// A k-d tree over the cells: each node its cells' bounding box and largest value.
class Tree {
 public:
  explicit Tree(const std::vector<Cell>& cells) : cells_(cells), order_(cells.size()) {
    for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    if (!order_.empty()) build(0, order_.size());
  }

  // Calls `visit` on every cell at or below `a` in every dimension under a node whose largest value
  // is above `floor` and not under `*at_least` (the best found so far, which `visit` may raise).
  template <class Visit>
  void search(const Point& a, double floor, const double* at_least, Visit visit) const {
    if (nodes_.empty()) return;
    stack_.assign(1, 0);
    while (!stack_.empty()) {
      const Node& n = nodes_[stack_.back()];
      stack_.pop_back();
      if (!(n.max > floor) || n.max < *at_least || !below(n.lo, a)) continue;
      if (!n.left) {
        for (std::size_t k = n.begin; k < n.end; ++k)
          if (below(cells_[order_[k]].at, a)) visit(cells_[order_[k]]);
      } else {
        stack_.push_back(n.left);
        stack_.push_back(n.right);
      }
    }
  }

 private:
  struct Node {
    Point lo, hi;
    double max = 0;
    std::size_t begin = 0, end = 0;
    std::size_t left = 0, right = 0;  // 0 for a leaf (the root is no one's child)
  };
  static constexpr std::size_t kLeaf = 8;

  std::size_t build(std::size_t begin, std::size_t end) {
    Node n;
    n.begin = begin, n.end = end;
    n.lo.fill(UINT32_MAX);
    for (std::size_t k = begin; k < end; ++k) {
      const Cell& c = cells_[order_[k]];
      for (std::size_t d = 0; d < 4; ++d) n.lo[d] = std::min(n.lo[d], c.at[d]), n.hi[d] = std::max(n.hi[d], c.at[d]);
      n.max = std::max(n.max, c.best);
    }
    const std::size_t id = nodes_.size();
    nodes_.push_back(n);
    std::size_t axis = 0;  // split the widest dimension at its median
    for (std::size_t d = 1; d < 4; ++d)
      if (n.hi[d] - n.lo[d] > n.hi[axis] - n.lo[axis]) axis = d;
    if (end - begin > kLeaf && n.hi[axis] > n.lo[axis]) {
      const std::size_t mid = begin + (end - begin) / 2;
      const auto at = [&](std::size_t k) { return order_.begin() + static_cast<std::ptrdiff_t>(k); };
      std::nth_element(at(begin), at(mid), at(end),
                       [&](std::size_t x, std::size_t y) { return cells_[x].at[axis] < cells_[y].at[axis]; });
      const std::size_t left = build(begin, mid), right = build(mid, end);
      nodes_[id].left = left, nodes_[id].right = right;
    }
    return id;
  }

  const std::vector<Cell>& cells_;
  std::vector<std::size_t> order_;
  std::vector<Node> nodes_;
  mutable std::vector<std::size_t> stack_;
};

// The largest value at or below a point of a 3-D grid, as values are raised (a Fenwick tree of maxima).
class MaxFenwick3 {
 public:
  MaxFenwick3(std::size_t a, std::size_t b, std::size_t c) : n_{a, b, c}, t_(a * b * c, 0.0) {}
  void raise(std::size_t i, std::size_t j, std::size_t k, double v) {
    for (std::size_t x = i + 1; x <= n_[0]; x += x & (~x + 1))
      for (std::size_t y = j + 1; y <= n_[1]; y += y & (~y + 1))
        for (std::size_t z = k + 1; z <= n_[2]; z += z & (~z + 1)) {
          double& cell = t_[((x - 1) * n_[1] + (y - 1)) * n_[2] + (z - 1)];
          cell = std::max(cell, v);
        }
  }
  double max_upto(std::size_t i, std::size_t j, std::size_t k) const {
    double m = 0;
    for (std::size_t x = i + 1; x > 0; x -= x & (~x + 1))
      for (std::size_t y = j + 1; y > 0; y -= y & (~y + 1))
        for (std::size_t z = k + 1; z > 0; z -= z & (~z + 1)) m = std::max(m, t_[((x - 1) * n_[1] + (y - 1)) * n_[2] + (z - 1)]);
    return m;
  }

 private:
  std::array<std::size_t, 3> n_;
  std::vector<double> t_;
};

// For each cell, the largest value of any cell at or below it in every dimension: a bound on what a
// row there can be held to. Sweeps the dimension of the most distinct values and keeps the other
// three in a Fenwick tree; empty when that tree would take over `max_cells` (then nothing is bounded).
std::vector<double> corner_maxima(const std::vector<Cell>& cells, const Point& distinct, std::size_t max_cells) {
  std::size_t sweep = 0;
  for (std::size_t d = 1; d < 4; ++d)
    if (distinct[d] > distinct[sweep]) sweep = d;
  std::array<std::size_t, 3> rest{};
  for (std::size_t d = 0, k = 0; d < 4; ++d)
    if (d != sweep) rest[k++] = d;
  if (static_cast<double>(distinct[rest[0]]) * distinct[rest[1]] * distinct[rest[2]] > static_cast<double>(max_cells))
    return {};
  MaxFenwick3 tree(distinct[rest[0]], distinct[rest[1]], distinct[rest[2]]);
  std::vector<std::size_t> order(cells.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return cells[x].at[sweep] < cells[y].at[sweep]; });
  std::vector<double> out(cells.size());
  for (std::size_t from = 0; from < order.size();) {
    std::size_t to = from;  // cells [from, to) share the swept value: each is at or below the others there
    while (to < order.size() && cells[order[to]].at[sweep] == cells[order[from]].at[sweep]) ++to;
    for (std::size_t k = from; k < to; ++k) {
      const Point& p = cells[order[k]].at;
      tree.raise(p[rest[0]], p[rest[1]], p[rest[2]], cells[order[k]].best);
    }
    for (std::size_t k = from; k < to; ++k) {
      const Point& p = cells[order[k]].at;
      out[order[k]] = tree.max_upto(p[rest[0]], p[rest[1]], p[rest[2]]);
    }
    from = to;
  }
  return out;
}

}  // namespace

std::vector<std::optional<std::size_t>> costliest_outdone(const Dataset& d, const std::vector<DominanceRow>& rows,
                                                          std::string_view target, double least, DominanceSearch how) {
  const bool memory = target == "peak_memory_mb";
  const std::size_t n = rows.size();
  std::vector<int> depth(n), res(n), batch(n);
  std::vector<double> width(n);
  for (std::size_t k = 0; k < n; ++k) {
    const Config& c = d.rows[rows[k].i].config;
    depth[k] = c.depth, width[k] = c.width, res[k] = c.resolution, batch[k] = c.batch;
  }
  Point distinct{};
  const std::array<std::vector<std::uint32_t>, 4> rank{ranks(depth, distinct[0]), ranks(width, distinct[1]),
                                                       ranks(res, distinct[2]), ranks(batch, distinct[3])};
  // The occupied cells, and each row's.
  std::vector<Cell> cells;
  std::vector<std::size_t> cell_of(n);
  std::map<Point, std::size_t> index;
  std::map<std::string, std::size_t> networks;  // by network_key at batch 1: widths of the same channels are one
  for (std::size_t k = 0; k < n; ++k) {
    const Point at{rank[0][k], rank[1][k], rank[2][k], rank[3][k]};
    const auto [it, fresh] = index.emplace(at, cells.size());
    if (fresh) {
      Config one = d.rows[rows[k].i].config;
      one.batch = 1;
      const auto net = networks.emplace(network_key(one), networks.size());
      cells.push_back({at, net.first->second, rows[k].flops});
    }
    cell_of[k] = it->second;
    Cell& c = cells[it->second];
    const auto v = d.rows[rows[k].i].value(target);
    if (v && *v > c.best) c.best = *v, c.best_i = rows[k].i;  // rows come in dataset order: the earliest of equals
  }
  // A target no row has a value of holds no row to anything.
  if (std::none_of(cells.begin(), cells.end(), [](const Cell& c) { return c.best > 0; })) return std::vector<std::optional<std::size_t>>(n);
  // A bound per cell passes nearly every row of sound data without a search. Its Fenwick tree takes
  // at most 64 entries a row (and 8M, 64 MB, in all): past that the rows search the k-d tree alone
  // (hundred-and-eleventh hostile pass: 100 groups of 300 rows each zero-filled 62 MB per target).
  const std::size_t max_cells = std::min<std::size_t>(std::size_t{1} << 23, 64 * n + 4096);
  const std::vector<double> bound =
      how == DominanceSearch::automatic ? corner_maxima(cells, distinct, max_cells) : std::vector<double>{};
  std::optional<Tree> tree;  // built when a row needs it

  std::vector<std::optional<std::size_t>> out(n);
  for (std::size_t k = 0; k < n; ++k) {
    const auto va = d.rows[rows[k].i].value(target);
    if (!va || !(*va > 0) || (memory && !rows[k].cpu)) continue;
    const Cell& own = cells[cell_of[k]];
    if (!bound.empty() && *va >= least * bound[cell_of[k]]) continue;
    double worst = 0;
    std::optional<std::size_t> worst_i;
    const auto consider = [&](const Cell& c) {
      if (!(c.best > 0)) return;
      if (c.network == own.network ? !memory || c.at[3] == own.at[3]
                                   : !memory && rows[k].flops < kMinFlopsOverDominated * c.flops)
        return;
      if (c.best > worst || (c.best == worst && worst_i && c.best_i < *worst_i)) worst = c.best, worst_i = c.best_i;
    };
    if (how == DominanceSearch::cells) {
      for (const Cell& c : cells)
        if (below(c.at, own.at)) consider(c);
    } else {
      // Only a value v with *va < least * v can make this row a problem: nodes of none are passed.
      // The floor is that bound moved down a little, so that rounding in the division passes no node
      // the exact test would keep; the test itself is the exact one, below.
      if (!tree) tree.emplace(cells);
      tree->search(own.at, *va / least * (1 - 1e-12), &worst, consider);
    }
    if (worst_i && *va < least * worst) out[k] = worst_i;
  }
  return out;
}

}  // namespace carb
