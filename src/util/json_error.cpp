#include "util/json_error.hpp"

#include <cstddef>

namespace carb::detail {

std::string json_error_text(std::string_view what) {
  constexpr std::string_view kPrefix = "[json.exception.";
  if (what.substr(0, kPrefix.size()) == kPrefix)
    if (const auto end = what.find("] "); end != std::string_view::npos) what.remove_prefix(end + 2);
  constexpr std::size_t kLongest = 40, kKept = 24;
  std::string out;
  for (std::size_t i = 0; i < what.size();) {
    const auto is_break = [](char c) { return c == ' ' || c == '\'' || c == '"'; };
    if (is_break(what[i])) {
      out += what[i++];
      continue;
    }
    std::size_t j = i;
    while (j < what.size() && !is_break(what[j])) ++j;
    const std::string_view token = what.substr(i, j - i);
    if (token.size() <= kLongest) {
      out += token;
    } else {
      std::size_t cut = kKept;
      while (cut > 0 && (static_cast<unsigned char>(token[cut]) & 0xc0) == 0x80) --cut;  // not inside a character
      out += std::string(token.substr(0, cut)) + "... (" + std::to_string(token.size()) + " characters)";
    }
    i = j;
  }
  return out;
}

}  // namespace carb::detail
