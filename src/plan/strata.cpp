// Level counts per dimension and per pair of dimensions, for the stratified strategy.
#include "plan/strata.hpp"

#include <algorithm>
#include <cmath>

namespace carb::plan_detail {
namespace {

constexpr std::size_t kDims = 6;

std::array<double, kDims> coords(const Config& c) {
  return {c.family == Family::basic ? 0.0 : 1.0, double(c.depth), c.width, double(c.resolution), double(c.batch),
          double(static_cast<int>(c.precision))};
}

}  // namespace

Strata::Strata(const std::vector<Config>& pool, const std::vector<Config>& measured) {
  for (std::size_t d = 0; d < kDims; ++d) {
    std::vector<double> v;
    for (const Config& c : pool) v.push_back(coords(c)[d]);
    std::sort(v.begin(), v.end());
    std::vector<double> distinct = v;
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    if (distinct.size() <= kMaxLevels) {
      values_[d] = distinct;
    } else {  // bins of equal counts by rank: their lower edges
      for (std::size_t b = 0; b < kMaxLevels; ++b) values_[d].push_back(v[b * v.size() / kMaxLevels]);
      values_[d].erase(std::unique(values_[d].begin(), values_[d].end()), values_[d].end());
    }
    n_levels_[d] = std::max<std::size_t>(1, values_[d].size());
    share_[d].assign(n_levels_[d], 0.0);
    taken_[d].assign(n_levels_[d], 0.0);
  }
  std::size_t off = 0;
  for (std::size_t d = 0; d < kDims; ++d)
    for (std::size_t e = d + 1; e < kDims; ++e) pair_offset_.push_back(off), off += n_levels_[d] * n_levels_[e];
  pair_share_.assign(off, 0.0);
  pair_taken_.assign(off, 0.0);
  for (const Config& c : pool) pool_levels_.push_back(levels_of(c));
  // Shares of the pool, then the measured rows as taken.
  const double w = pool.empty() ? 0.0 : 1.0 / double(pool.size());
  for (const Levels& l : pool_levels_) {
    for (std::size_t d = 0; d < kDims; ++d) share_[d][l[d]] += w;
    for (std::size_t d = 0; d < kDims; ++d)
      for (std::size_t e = d + 1; e < kDims; ++e) pair_share_[pair_index(d, e, l)] += w;
  }
  for (const Config& c : measured) count(levels_of(c), 1.0);
}

Strata::Levels Strata::levels_of(const Config& c) const {
  Levels l{};
  const auto x = coords(c);
  for (std::size_t d = 0; d < kDims; ++d) {
    const auto& v = values_[d];
    // The last level whose lower edge is at or below x (a measured row outside the pool's range
    // falls into the nearest end level).
    const auto it = std::upper_bound(v.begin(), v.end(), x[d]);
    l[d] = it == v.begin() ? 0 : std::size_t(it - v.begin()) - 1;
  }
  return l;
}

std::size_t Strata::pair_index(std::size_t d, std::size_t e, const Levels& l) const {
  // Pairs are numbered d-major over d < e.
  std::size_t k = 0;
  for (std::size_t a = 0; a < d; ++a) k += kDims - 1 - a;
  k += e - d - 1;
  return pair_offset_[k] + l[d] * n_levels_[e] + l[e];
}

void Strata::count(const Levels& l, double w) {
  for (std::size_t d = 0; d < kDims; ++d) taken_[d][l[d]] += w;
  for (std::size_t d = 0; d < kDims; ++d)
    for (std::size_t e = d + 1; e < kDims; ++e) pair_taken_[pair_index(d, e, l)] += w;
}

double Strata::penalty(std::size_t candidate) const {
  const Levels& l = pool_levels_[candidate];
  double s = 0;
  for (std::size_t d = 0; d < kDims; ++d) s += (taken_[d][l[d]] + 1) / share_[d][l[d]];
  for (std::size_t d = 0; d < kDims; ++d)
    for (std::size_t e = d + 1; e < kDims; ++e) {
      const std::size_t i = pair_index(d, e, l);
      s += (pair_taken_[i] + 1) / pair_share_[i];
    }
  return s;
}

void Strata::take(std::size_t candidate) { count(pool_levels_[candidate], 1.0); }

}  // namespace carb::plan_detail
