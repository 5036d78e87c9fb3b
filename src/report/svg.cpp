// The SVG writer's primitives: escaping, palette, tick computation and labels, and the frame
// shared by every chart (title, legend, grid, ticks, axis labels). Charts are in svg_charts.cpp.
#include "svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "svg_frame.hpp"
#include "util/utf8.hpp"

namespace carb::svg {

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default: {
        // The page declares UTF-8: a byte that is no part of a character (a file name is bytes) is
        // shown as U+FFFD, not written raw (hundred-and-second hostile pass).
        const std::size_t n = detail::utf8_sequence_length(s, i);
        if (n == 0) {
          out += "\xEF\xBF\xBD";
          i += detail::utf8_invalid_length(s, i);
          continue;
        }
        out.append(s.substr(i, n));
        i += n;
        continue;
      }
    }
    ++i;
  }
  return out;
}

const std::string& palette(std::size_t i) {
  static const std::vector<std::string> colors = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                  "#D55E00", "#56B4E9", "#8C6D1F", "#4B5563"};
  return colors[i % colors.size()];
}

std::string tick_label(double v) {
  char buf[32];
  const double a = std::abs(v);
  if (a >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3gG", v / 1e9);
  else if (a >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3gM", v / 1e6);
  else if (a >= 1e4)
    std::snprintf(buf, sizeof buf, "%.3gk", v / 1e3);
  else if (a >= 100)
    std::snprintf(buf, sizeof buf, "%.0f", v);  // %g would write 1500 as 1.5e+03
  else if (a != 0 && a < 1e-3)
    std::snprintf(buf, sizeof buf, "%.1e", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::vector<double> linear_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> ticks;
  if (!(lo > 0) || !(hi >= lo)) return ticks;
  const int d0 = static_cast<int>(std::floor(std::log10(lo))),
            d1 = static_cast<int>(std::ceil(std::log10(hi)));
  const bool fine = std::log10(hi / lo) <= 2.5;  // short spans get 2 and 5 multiples too
  for (int d = d0; d <= d1; ++d)
    for (double m : {1.0, 2.0, 5.0}) {
      if (m != 1.0 && !fine) continue;
      const double t = m * std::pow(10.0, d);
      if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) ticks.push_back(t);
    }
  return ticks;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

Scale::Scale(double lo, double hi, bool log, double p0, double p1) : log_(log), p0_(p0), p1_(p1) {
  if (log) lo = std::log10(lo), hi = std::log10(hi);
  lo_ = lo;
  hi_ = hi > lo ? hi : lo + 1;
}

double Scale::operator()(double v) const {
  const double t = log_ ? std::log10(v) : v;
  return p0_ + (t - lo_) / (hi_ - lo_) * (p1_ - p0_);
}

Domain padded_domain(std::vector<double> v, bool log) {
  v.erase(std::remove_if(v.begin(), v.end(), [&](double x) { return !std::isfinite(x) || (log && x <= 0); }),
          v.end());
  if (v.empty()) return {log ? 1.0 : 0.0, log ? 10.0 : 1.0, false};
  auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  double lo = *mn, hi = *mx;
  if (log) {
    const double pad = std::max(0.04 * std::log10(hi / lo), 0.05);
    return {lo / std::pow(10.0, pad), hi * std::pow(10.0, pad), true};
  }
  if (hi == lo)
    return {lo - (lo == 0 ? 1 : std::abs(lo) * 0.1), hi + (hi == 0 ? 1 : std::abs(hi) * 0.1), true};
  const double pad = 0.05 * (hi - lo);
  return {lo - pad, hi + pad, true};
}

Frame::Frame(std::string title, bool draw_title, int w, int h, const std::vector<LegendItem>& legend)
    : w_(w), h_(h), title_(std::move(title)), draw_title_(draw_title) {
  // Lay the legend out in rows under the title so it never covers data.
  const double first = draw_title ? 44 : 16;
  double x = kLeft, y = first;
  for (const auto& item : legend) {
    const double iw = 24 + 6.8 * static_cast<double>(item.name.size()) + 14;
    if (x + iw > w - kRight && x > kLeft) x = kLeft, y += 18;
    std::string swatch;
    if (item.line)
      swatch = "<line x1=\"" + num(x) + "\" x2=\"" + num(x + 18) + "\" y1=\"" + num(y - 4) + "\" y2=\"" +
               num(y - 4) + "\" stroke=\"" + escape(item.color) + "\" stroke-width=\"2.5\"" +
               (item.dashed ? " stroke-dasharray=\"5 3\"" : "") + "/>";
    else
      swatch = "<rect x=\"" + num(x + 4) + "\" y=\"" + num(y - 9) +
               "\" width=\"11\" height=\"11\" rx=\"2\" fill=\"" + escape(item.color) + "\"/>";
    legend_ += "<g class=\"legend\">" + swatch + "<text x=\"" + num(x + 23) + "\" y=\"" + num(y) +
               "\" font-size=\"12\" fill=\"#374151\">" + escape(item.name) + "</text></g>";
    x += iw;
  }
  top_ = legend.empty() ? first : y + 14;
}

std::string Frame::open() const {
  return "<svg class=\"chart\" viewBox=\"0 0 " + std::to_string(w_) + " " + std::to_string(h_) +
         "\" width=\"" + std::to_string(w_) + "\" height=\"" + std::to_string(h_) +
         "\" role=\"img\" aria-label=\"" + escape(title_) +
         "\" font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif\"><title>" +
         escape(title_) + "</title><rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>" +
         (draw_title_ ? "<text x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"600\" fill=\"#111827\">" +
                            escape(title_) + "</text>"
                      : std::string()) +
         legend_;
}

std::string Frame::y_axis(const Scale& s, const std::vector<double>& ticks, const std::string& label) const {
  std::string out;
  for (double t : ticks) {
    const std::string y = num(s(t));
    out += "<line x1=\"" + num(left()) + "\" x2=\"" + num(right()) + "\" y1=\"" + y + "\" y2=\"" + y +
           "\" stroke=\"#e5e7eb\"/><text x=\"" + num(left() - 6) + "\" y=\"" + y +
           "\" dy=\"4\" text-anchor=\"end\" font-size=\"11\" fill=\"#4b5563\">" + escape(tick_label(t)) +
           "</text>";
  }
  const std::string cy = num((top() + bottom()) / 2);
  out += "<text transform=\"translate(16," + cy + ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" " +
         "fill=\"#374151\">" + escape(label) + "</text>";
  return out;
}

std::string Frame::x_axis(const std::vector<std::pair<double, std::string>>& ticks, const std::string& label,
                          bool grid) const {
  std::string out;
  for (const auto& [x, text] : ticks) {
    if (grid)
      out += "<line x1=\"" + num(x) + "\" x2=\"" + num(x) + "\" y1=\"" + num(top()) + "\" y2=\"" +
             num(bottom()) + "\" stroke=\"#e5e7eb\"/>";
    out += "<text x=\"" + num(x) + "\" y=\"" + num(bottom() + 16) +
           "\" text-anchor=\"middle\" font-size=\"11\" " + "fill=\"#4b5563\">" + escape(text) + "</text>";
  }
  out += "<line x1=\"" + num(left()) + "\" x2=\"" + num(right()) + "\" y1=\"" + num(bottom()) + "\" y2=\"" +
         num(bottom()) + "\" stroke=\"#9ca3af\"/>";
  out += "<text x=\"" + num((left() + right()) / 2) + "\" y=\"" + std::to_string(h_ - 10) +
         "\" text-anchor=\"middle\" font-size=\"12\" fill=\"#374151\">" + escape(label) + "</text>";
  return out;
}

std::string Frame::note(const std::string& text) const {
  return "<text x=\"" + num((left() + right()) / 2) + "\" y=\"" + num((top() + bottom()) / 2) +
         "\" text-anchor=\"middle\" font-size=\"13\" fill=\"#6b7280\">" + escape(text) + "</text>";
}

}  // namespace carb::svg
