// The one way carb lists things in a message or a table cell: "a, b, c".
#pragma once
#include <string>
#include <string_view>

namespace carb {

struct AsText {
  template <class T>
  std::string operator()(const T& x) const {
    return std::string(x);
  }
};

/// The items, each shown by `show` (by default as itself), separated by `sep`.
template <class Range, class Show = AsText>
std::string join(const Range& items, Show show = {}, std::string_view sep = ", ") {
  std::string out;
  for (const auto& x : items) {
    if (!out.empty()) out += sep;
    out += show(x);
  }
  return out;
}

}  // namespace carb
