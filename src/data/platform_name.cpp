#include "platform_name.hpp"

#include "util/utf8.hpp"

namespace carb::detail {
namespace {

// The code point of the well-formed UTF-8 sequence of `n` bytes at text[i].
char32_t code_point(std::string_view text, std::size_t i, std::size_t n) {
  const auto b = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(text[i + k])); };
  if (n == 1) return b(0);
  if (n == 2) return (b(0) & 0x1f) << 6 | (b(1) & 0x3f);
  if (n == 3) return (b(0) & 0x0f) << 12 | (b(1) & 0x3f) << 6 | (b(2) & 0x3f);
  return (b(0) & 0x07) << 18 | (b(1) & 0x3f) << 12 | (b(2) & 0x3f) << 6 | (b(3) & 0x3f);
}

// C0 and C1 controls and DEL: an ESC or a newline once reached the terminal and broke output lines.
bool control(char32_t c) { return c < 0x20 || (c >= 0x7f && c <= 0x9f); }

// What shows as nothing at either end of a name: Unicode's spaces, the line and paragraph
// separators, zero-width space and the byte-order mark (hundred-and-thirty-seventh hostile pass:
// "cpu\u3000" and "cpu\u200b" passed as platforms that look like cpu).
bool blank(char32_t c) {
  return c == 0x20 || c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200b) || c == 0x2028 || c == 0x2029 ||
         c == 0x202f || c == 0x205f || c == 0x3000 || c == 0xfeff;
}

}  // namespace

std::string platform_name_problem(std::string_view name) {
  if (name.empty()) return "is empty";
  char32_t first = 0, last = 0;
  bool utf8 = true;
  for (std::size_t i = 0; i < name.size();) {
    const std::size_t n = utf8_sequence_length(name, i);
    if (n == 0) {  // a byte that begins no sequence: no code point to judge
      utf8 = false;
      ++i;
      continue;
    }
    const char32_t c = code_point(name, i, n);
    if (control(c)) return "holds a control character";
    if (i == 0) first = c;
    last = c;
    i += n;
  }
  if (!utf8) return "is not UTF-8";
  if (blank(first) || blank(last)) return kSpacedPlatform;
  return "";
}

}  // namespace carb::detail
