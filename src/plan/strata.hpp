// Stratified selection: how over-represented a candidate's levels already are among the rows
// measured or planned, per dimension and per pair of dimensions, relative to their share of the
// candidates. Picking the least over-represented candidate each time gives a sample whose
// marginals and pairwise mixes follow the candidates' own (a Latin-hypercube-like start), where
// maximin distance picks the corners first.
#pragma once
#include <array>
#include <cstddef>
#include <vector>

#include "carb/config.hpp"

namespace carb::plan_detail {

class Strata {
 public:
  /// Levels are the distinct values of each of the six dimensions over `pool` (numeric ones with
  /// more than kMaxLevels values fall into kMaxLevels bins by rank); `measured` rows count as taken.
  Strata(const std::vector<Config>& pool, const std::vector<Config>& measured);
  /// Sum over dimensions and pairs of (taken at the candidate's level + 1) / (its share of the pool):
  /// lower is better.
  double penalty(std::size_t candidate) const;
  /// Counts pool[candidate] as taken.
  void take(std::size_t candidate);

  static constexpr std::size_t kMaxLevels = 10;

 private:
  using Levels = std::array<std::size_t, 6>;
  Levels levels_of(const Config& c) const;
  std::size_t pair_index(std::size_t d, std::size_t e, const Levels& l) const;
  void count(const Levels& l, double w);

  std::array<std::vector<double>, 6> values_;  // sorted level boundaries (lower edges) per dimension
  std::array<std::size_t, 6> n_levels_{};
  std::vector<Levels> pool_levels_;
  std::array<std::vector<double>, 6> share_, taken_;
  std::vector<std::size_t> pair_offset_;  // per pair (d < e), into pair_share_/pair_taken_
  std::vector<double> pair_share_, pair_taken_;
};

}  // namespace carb::plan_detail
