// Distances between configurations, for the diversity of a plan and for space-filling.
#include "plan/config_space.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "carb/metrics.hpp"

namespace carb::plan_detail {
namespace {

std::array<double, 4> numeric(const Config& c) {
  return {std::log(double(c.depth)), std::log(c.width), std::log(double(c.resolution)), std::log(double(c.batch))};
}

}  // namespace

ConfigSpace::ConfigSpace(const std::vector<Config>& all) {
  std::array<double, 4> hi{};
  lo_.fill(std::numeric_limits<double>::infinity());
  hi.fill(-std::numeric_limits<double>::infinity());
  for (const Config& c : all) {
    const auto v = numeric(c);
    for (std::size_t k = 0; k < 4; ++k) lo_[k] = std::min(lo_[k], v[k]), hi[k] = std::max(hi[k], v[k]);
  }
  for (std::size_t k = 0; k < 4; ++k) {
    if (all.empty()) lo_[k] = 0, hi[k] = 0;
    span_[k] = hi[k] > lo_[k] ? hi[k] - lo_[k] : 1.0;
  }
}

Point ConfigSpace::point(const Config& c) const {
  const auto v = numeric(c);
  Point p{};
  p[0] = c.family == Family::basic ? 0.0 : 1.0;
  for (std::size_t k = 0; k < 4; ++k) p[k + 1] = (v[k] - lo_[k]) / span_[k];
  p[5] = static_cast<double>(static_cast<int>(c.precision));
  return p;
}

double ConfigSpace::distance(const Point& a, const Point& b) {
  double s = (a[0] != b[0]) + (a[5] != b[5]);
  for (std::size_t k = 1; k < 5; ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
  return std::sqrt(s);
}

double typical_spacing(const std::vector<Point>& points, std::size_t sample) {
  if (points.size() < 2) return 0;
  const std::size_t n = std::min(sample, points.size());
  std::vector<double> nearest;
  for (std::size_t s = 0; s < n; ++s) {
    const std::size_t i = s * points.size() / n;
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < points.size(); ++j)
      if (j != i) best = std::min(best, ConfigSpace::distance(points[i], points[j]));
    nearest.push_back(best);
  }
  return median(nearest);
}

}  // namespace carb::plan_detail
