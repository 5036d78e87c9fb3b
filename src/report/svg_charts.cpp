// The chart renderers of the SVG writer: XY charts (points, lines, reference lines) and grouped
// bar charts, drawn inside the shared frame of svg_frame.hpp.
#include <cmath>

#include "svg.hpp"
#include "svg_frame.hpp"

namespace carb::svg {
namespace {

bool drawable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

std::vector<double> axis_ticks(const Domain& d, bool log) {
  if (!log) return linear_ticks(d.lo, d.hi);
  // A narrow log range (e.g. 1.2-1.5) holds no 1-2-5 tick: label it with linear steps instead.
  auto t = log_ticks(d.lo, d.hi);
  return t.size() >= 2 ? t : linear_ticks(d.lo, d.hi, 4);
}

std::string series_svg(const Series& s, const std::string& color, const Scale& sx, const Scale& sy, bool lx,
                       bool ly) {
  std::string out, path;
  for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
    if (!drawable(s.x[i], lx) || !drawable(s.y[i], ly)) continue;
    const std::string px = num(sx(s.x[i])), py = num(sy(s.y[i]));
    path += (path.empty() ? "M" : " L") + px + " " + py;
    if (s.style != Series::Style::line)
      out += "<circle cx=\"" + px + "\" cy=\"" + py + "\" r=\"3.5\" fill=\"" + escape(color) +
             "\" fill-opacity=\"0.75\" stroke=\"#ffffff\" stroke-width=\"0.6\"/>";
  }
  if (s.style != Series::Style::points && !path.empty())
    out = "<path d=\"" + path + "\" fill=\"none\" stroke=\"" + escape(color) + "\" stroke-width=\"2\"" +
          (s.dashed ? " stroke-dasharray=\"6 3\"" : "") + "/>" + out;
  return out;
}

std::vector<LegendItem> legend_of(const std::vector<Series>& ss, const std::vector<RefLine>& ls) {
  std::vector<LegendItem> items;
  for (std::size_t i = 0; i < ss.size(); ++i)
    if (!ss[i].name.empty())
      items.push_back({ss[i].name, ss[i].color.empty() ? palette(i) : ss[i].color,
                       ss[i].style != Series::Style::points, ss[i].dashed});
  for (const auto& l : ls)
    if (!l.label.empty()) items.push_back({l.label, l.color, true, l.dashed});
  // A single unnamed series needs no legend; a single named one still says what it is.
  return items;
}

}  // namespace

std::string render(const XYChart& c) {
  std::vector<double> xs, ys;
  for (const auto& s : c.series)
    xs.insert(xs.end(), s.x.begin(), s.x.end()), ys.insert(ys.end(), s.y.begin(), s.y.end());
  for (const auto& l : c.lines) xs.insert(xs.end(), {l.x0, l.x1}), ys.insert(ys.end(), {l.y0, l.y1});
  const Domain dx = padded_domain(xs, c.x.log), dy = padded_domain(ys, c.y.log);
  Frame f(c.title, c.draw_title, c.width, c.height, legend_of(c.series, c.lines));
  const Scale sx(dx.lo, dx.hi, c.x.log, f.left(), f.right()), sy(dy.lo, dy.hi, c.y.log, f.bottom(), f.top());
  std::string out = f.open() + f.y_axis(sy, axis_ticks(dy, c.y.log), c.y.label);
  std::vector<std::pair<double, std::string>> xt;
  for (double t : axis_ticks(dx, c.x.log)) xt.emplace_back(sx(t), tick_label(t));
  out += f.x_axis(xt, c.x.label, true);
  if (!dx.any || !dy.any) return out + f.note("no data") + "</svg>";
  for (const auto& l : c.lines) {
    if (!drawable(l.x0, c.x.log) || !drawable(l.x1, c.x.log) || !drawable(l.y0, c.y.log) ||
        !drawable(l.y1, c.y.log))
      continue;
    out += "<line x1=\"" + num(sx(l.x0)) + "\" y1=\"" + num(sy(l.y0)) + "\" x2=\"" + num(sx(l.x1)) +
           "\" y2=\"" + num(sy(l.y1)) + "\" stroke=\"" + escape(l.color) + "\" stroke-width=\"1.5\"" +
           (l.dashed ? " stroke-dasharray=\"6 4\"" : "") + "/>";
  }
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const auto& s = c.series[i];
    out += series_svg(s, s.color.empty() ? palette(i) : s.color, sx, sy, c.x.log, c.y.log);
  }
  return out + "</svg>";
}

std::string render(const BarChart& c) {
  std::vector<double> vals;
  std::vector<LegendItem> legend;
  for (std::size_t g = 0; g < c.groups.size(); ++g) {
    vals.insert(vals.end(), c.groups[g].values.begin(), c.groups[g].values.end());
    if (!c.groups[g].name.empty())
      legend.push_back(
          {c.groups[g].name, c.groups[g].color.empty() ? palette(g) : c.groups[g].color, false, false});
  }
  Domain d = padded_domain(vals, c.y.log);
  if (!c.y.log) d.lo = std::min(0.0, d.lo);  // bars grow from zero on a linear axis
  Frame f(c.title, c.draw_title, c.width, c.height, legend);
  const Scale sy(d.lo, d.hi, c.y.log, f.bottom(), f.top());
  std::string out = f.open() + f.y_axis(sy, axis_ticks(d, c.y.log), c.y.label);
  const double band =
      (f.right() - f.left()) / static_cast<double>(std::max<std::size_t>(1, c.categories.size()));
  std::vector<std::pair<double, std::string>> xt;
  for (std::size_t k = 0; k < c.categories.size(); ++k)
    xt.emplace_back(f.left() + band * (k + 0.5), c.categories[k]);
  out += f.x_axis(xt, c.x_label, false);
  if (!d.any) return out + f.note("no data") + "</svg>";
  const double bw = band * 0.76 / static_cast<double>(std::max<std::size_t>(1, c.groups.size()));
  const double base = c.y.log ? d.lo : 0.0;
  const bool labels = c.groups.size() * c.categories.size() <= 16;
  for (std::size_t g = 0; g < c.groups.size(); ++g)
    for (std::size_t k = 0; k < c.categories.size() && k < c.groups[g].values.size(); ++k) {
      const double v = c.groups[g].values[k];
      const double x = f.left() + band * k + band * 0.12 + bw * g;
      if (!drawable(v, c.y.log)) {
        out += "<text x=\"" + num(x + bw / 2) + "\" y=\"" + num(f.bottom() - 4) +
               "\" text-anchor=\"middle\" font-size=\"10\" fill=\"#9ca3af\">n/a</text>";
        continue;
      }
      const double y0 = sy(base), y1 = sy(v);
      const std::string color = c.groups[g].color.empty() ? palette(g) : c.groups[g].color;
      out += "<rect x=\"" + num(x) + "\" y=\"" + num(std::min(y0, y1)) + "\" width=\"" + num(bw * 0.92) +
             "\" height=\"" + num(std::abs(y0 - y1)) + "\" rx=\"2\" fill=\"" + escape(color) + "\"><title>" +
             escape(c.groups[g].name + " " + c.categories[k] + ": " + tick_label(v)) + "</title></rect>";
      if (labels)
        out += "<text x=\"" + num(x + bw * 0.46) + "\" y=\"" + num(std::min(y0, y1) - 4) +
               "\" text-anchor=\"middle\" font-size=\"10\" fill=\"#374151\">" + escape(tick_label(v)) +
               "</text>";
    }
  return out + "</svg>";
}

}  // namespace carb::svg
