// A small SVG chart writer of carb's own (no dependencies, no scripts, no external references):
// XY charts (scatter, lines, reference lines) and grouped bar charts, with axes, "nice" ticks,
// optional log axes, labels and a legend. Output is an inline <svg> element for HTML5 (no
// xmlns attribute, so the report contains no URL at all). All text is escaped.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace carb::svg {

/// Escapes &, <, >, " and ' for use in SVG/HTML text and attribute values.
std::string escape(std::string_view s);

/// The report's categorical palette (color-blind-safe, Okabe-Ito based); cycles past the end.
const std::string& palette(std::size_t i);

/// Compact tick label: 3 significant digits, k/M/G suffixes for large magnitudes.
std::string tick_label(double v);
/// About `target` evenly spaced "nice" ticks (1, 2, 5 x 10^k steps) covering [lo, hi].
std::vector<double> linear_ticks(double lo, double hi, int target = 5);
/// Ticks of a log axis over [lo, hi] (lo > 0): decades, plus 2 and 5 multiples on short spans.
std::vector<double> log_ticks(double lo, double hi);

struct Axis {
  std::string label;
  bool log = false;  // points with a value <= 0 cannot be drawn on a log axis and are skipped
};

struct Series {
  enum class Style { points, line, line_points };
  std::string name;
  std::vector<double> x, y;
  Style style = Style::points;
  std::string color;    // empty: palette(series index)
  bool dashed = false;  // lines only: tells apart two series of one color (e.g. two families)
};

/// A straight reference line in data coordinates (e.g. y = x, a fitted line).
struct RefLine {
  double x0, y0, x1, y1;
  std::string label;
  std::string color = "#6b7280";
  bool dashed = true;
};

struct XYChart {
  std::string title;
  bool draw_title = true;  // false: title only in <title>/aria-label (the page shows it already)
  Axis x, y;
  std::vector<Series> series;
  std::vector<RefLine> lines;
  int width = 520, height = 360;
};

struct BarGroup {
  std::string name;
  std::vector<double> values;  // one per category; NaN = no value (drawn as "n/a")
  std::string color;
};

struct BarChart {
  std::string title;
  bool draw_title = true;
  std::vector<std::string> categories;
  std::vector<BarGroup> groups;
  Axis y;
  std::string x_label;
  int width = 520, height = 360;
};

/// Renders the chart as one <svg> element. Non-finite values are skipped; a chart with nothing
/// drawable renders its frame and a "no data" note rather than failing.
std::string render(const XYChart& c);
std::string render(const BarChart& c);

}  // namespace carb::svg
