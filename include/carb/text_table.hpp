// A small aligned text table for the CLI's human-readable output.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace carb {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

/// Formats a number with `digits` significant digits (no trailing zeros); NaN (carb::kUndefined) as
/// "undefined". For tables a person reads, not for data files.
std::string fmt_num(double v, int digits = 4);

}  // namespace carb
