// The dominance search of `carb data validate` on the grid of a group's distinct dimensions.
#include "data/dominance.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>

namespace carb {
namespace {

// The distinct values of one dimension, ascending, and each row's index among them.
template <class T>
std::vector<std::size_t> ranks(const std::vector<T>& values, std::size_t& count) {
  std::vector<T> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  count = sorted.size();
  std::vector<std::size_t> out;
  out.reserve(values.size());
  for (const T& v : values) out.push_back(std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin());
  return out;
}

// One occupied cell: one configuration (the group fixes family and precision), so one FLOPs count,
// and the best row in it for the target.
struct Cell {
  std::array<std::size_t, 4> at;  // depth, width, resolution, batch ranks
  double flops = 0;
  double best = 0;  // the largest positive value in the cell, 0 when none
  std::size_t best_i = 0;
};

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
  std::array<std::size_t, 4> dims{};
  const std::array<std::vector<std::size_t>, 4> rank{ranks(depth, dims[0]), ranks(width, dims[1]), ranks(res, dims[2]),
                                                     ranks(batch, dims[3])};
  // The occupied cells, and each row's.
  std::vector<Cell> cells;
  std::vector<std::size_t> cell_of(n);
  std::map<std::array<std::size_t, 4>, std::size_t> index;
  for (std::size_t k = 0; k < n; ++k) {
    const std::array<std::size_t, 4> at{rank[0][k], rank[1][k], rank[2][k], rank[3][k]};
    const auto [it, fresh] = index.emplace(at, cells.size());
    if (fresh) cells.push_back({at, rows[k].flops});
    cell_of[k] = it->second;
    Cell& c = cells[it->second];
    const auto v = d.rows[rows[k].i].value(target);
    if (v && *v > c.best) c.best = *v, c.best_i = rows[k].i;  // rows come in dataset order: the earliest of equals
  }
  // A dense map of the grid to its occupied cells, where the grid is not much larger than the rows
  // (2M cells, 24 MB, hold the paper preset's grid 2,000 times over), and on it the largest value at
  // or below each cell in every dimension: a bound on what any row there is held to, so a row at
  // least `least` times that bound is passed without a search (nearly every row of sound data).
  const double grid_size = static_cast<double>(dims[0]) * dims[1] * dims[2] * dims[3];
  const bool dense = how != DominanceSearch::cells && grid_size <= std::max(8.0 * static_cast<double>(n), 2097152.0);
  std::vector<std::int32_t> dense_cell;
  std::vector<double> bound;
  const auto flat = [&](std::size_t i0, std::size_t i1, std::size_t i2, std::size_t i3) {
    return ((i0 * dims[1] + i1) * dims[2] + i2) * dims[3] + i3;
  };
  if (dense) {
    dense_cell.assign(static_cast<std::size_t>(grid_size), -1);
    bound.assign(static_cast<std::size_t>(grid_size), 0.0);
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const auto& a = cells[c].at;
      dense_cell[flat(a[0], a[1], a[2], a[3])] = static_cast<std::int32_t>(c);
      bound[flat(a[0], a[1], a[2], a[3])] = cells[c].best;
    }
    // A running maximum along each dimension in turn makes each cell the maximum of its whole corner.
    const std::array<std::size_t, 4> stride{dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
    for (std::size_t axis = 0; axis < 4; ++axis)
      for (std::size_t f = 0; f < bound.size(); ++f)
        if ((f / stride[axis]) % dims[axis] > 0) bound[f] = std::max(bound[f], bound[f - stride[axis]]);
  }

  std::vector<std::optional<std::size_t>> out(n);
  for (std::size_t k = 0; k < n; ++k) {
    const auto va = d.rows[rows[k].i].value(target);
    if (!va || !(*va > 0) || (memory && !rows[k].cpu)) continue;
    const Cell& own = cells[cell_of[k]];
    const auto& a = own.at;
    if (dense && how == DominanceSearch::automatic && *va >= least * bound[flat(a[0], a[1], a[2], a[3])]) continue;
    double worst = 0;
    std::optional<std::size_t> worst_i;
    const auto consider = [&](const Cell& c) {
      if (!(c.best > 0)) return;
      const bool same_network = c.at[0] == own.at[0] && c.at[1] == own.at[1] && c.at[2] == own.at[2];
      if (same_network ? !memory || c.at[3] == own.at[3] : !memory && rows[k].flops < kMinFlopsOverDominated * c.flops)
        return;
      if (c.best > worst || (c.best == worst && worst_i && c.best_i < *worst_i)) worst = c.best, worst_i = c.best_i;
    };
    const double below = static_cast<double>(a[0] + 1) * (a[1] + 1) * (a[2] + 1) * (a[3] + 1);
    if (dense && (how == DominanceSearch::grid || below <= static_cast<double>(cells.size()))) {
      for (std::size_t i0 = 0; i0 <= a[0]; ++i0)
        for (std::size_t i1 = 0; i1 <= a[1]; ++i1)
          for (std::size_t i2 = 0; i2 <= a[2]; ++i2) {
            const std::size_t base = flat(i0, i1, i2, 0);
            for (std::size_t i3 = 0; i3 <= a[3]; ++i3)
              if (const std::int32_t c = dense_cell[base + i3]; c >= 0) consider(cells[static_cast<std::size_t>(c)]);
          }
    } else {
      for (const Cell& c : cells)
        if (c.at[0] <= a[0] && c.at[1] <= a[1] && c.at[2] <= a[2] && c.at[3] <= a[3]) consider(c);
    }
    if (worst_i && *va < least * worst) out[k] = worst_i;
  }
  return out;
}

}  // namespace carb
