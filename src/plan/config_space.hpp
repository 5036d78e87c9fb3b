// The normalised configuration space plans measure distances in: family and precision are
// categories (1 apart when they differ), depth, width, resolution and batch are log-scaled to
// [0, 1] over the configurations the space is built from.
#pragma once
#include <array>
#include <vector>

#include "carb/config.hpp"

namespace carb::plan_detail {

using Point = std::array<double, 6>;

class ConfigSpace {
 public:
  /// Scales from the ranges of `all` (candidates and measured rows together).
  explicit ConfigSpace(const std::vector<Config>& all);
  Point point(const Config& c) const;
  /// Euclidean over the six dimensions (each contributes at most 1).
  static double distance(const Point& a, const Point& b);

 private:
  std::array<double, 4> lo_{}, span_{};
};

/// The median distance from a candidate to its nearest other candidate, on an evenly spaced sample
/// of at most `sample` of them: the space's typical spacing (0 for fewer than two points).
double typical_spacing(const std::vector<Point>& points, std::size_t sample = 400);

}  // namespace carb::plan_detail
