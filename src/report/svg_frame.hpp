// Internals of the SVG writer shared by the chart renderers: coordinate scales, padded data
// domains and the chart frame (title, legend rows, plot area, axes).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace carb::svg {

/// Fixed-precision coordinate text (one decimal keeps files small and diffs stable).
std::string num(double v);

/// Maps data values (log10 of them on a log axis) linearly onto pixels [p0, p1].
class Scale {
 public:
  Scale(double lo, double hi, bool log, double p0, double p1);
  double operator()(double v) const;

 private:
  bool log_;
  double lo_, hi_, p0_, p1_;
};

struct Domain {
  double lo, hi;
  bool any;  // false: no drawable value (the domain is a placeholder)
};
/// The finite (and, on a log axis, positive) values' range, padded by a few percent.
Domain padded_domain(std::vector<double> values, bool log);

struct LegendItem {
  std::string name, color;
  bool line = false, dashed = false;  // swatch drawn as a (dashed) line segment, not a square
};

/// A chart's frame: the margins, a title, legend rows under it, the plot rectangle and axes.
class Frame {
 public:
  static constexpr double kLeft = 70, kRight = 20, kBottom = 50;
  Frame(std::string title, bool draw_title, int width, int height, const std::vector<LegendItem>& legend);

  double left() const { return kLeft; }
  double right() const { return w_ - kRight; }
  double top() const { return top_; }
  double bottom() const { return h_ - kBottom; }

  /// "<svg ...>" with the background, title and legend; close with "</svg>".
  std::string open() const;
  std::string y_axis(const Scale& s, const std::vector<double>& ticks, const std::string& label) const;
  /// Ticks given as (pixel x, label); grid adds vertical grid lines.
  std::string x_axis(const std::vector<std::pair<double, std::string>>& ticks, const std::string& label,
                     bool grid) const;
  /// A centered message in the plot area (e.g. "no data").
  std::string note(const std::string& text) const;

 private:
  int w_, h_;
  std::string title_, legend_;
  bool draw_title_;
  double top_;
};

}  // namespace carb::svg
