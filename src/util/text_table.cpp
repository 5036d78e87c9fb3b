// Aligned text tables and compact number formatting for the CLI.
#include "carb/text_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace carb {

void TextTable::print(std::ostream& out) const {
  std::vector<std::size_t> w(header_.size(), 0);
  auto widen = [&](const std::vector<std::string>& r) {
    for (std::size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  };
  widen(header_);
  for (const auto& r : rows_) widen(r);
  auto line = [&](const std::vector<std::string>& r) {
    for (std::size_t i = 0; i < w.size(); ++i) {
      std::string cell = i < r.size() ? r[i] : "";
      out << cell << (i + 1 < w.size() ? std::string(w[i] - cell.size() + 2, ' ') : "");
    }
    out << '\n';
  };
  line(header_);
  std::size_t total = 0;
  for (auto x : w) total += x + 2;
  out << std::string(total > 2 ? total - 2 : 0, '-') << '\n';
  for (const auto& r : rows_) line(r);
}

std::string fmt_num(double v, int digits) {
  if (std::isnan(v)) return "undefined";  // a statistic the data cannot define (carb::kUndefined)
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

}  // namespace carb
