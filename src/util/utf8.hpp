// UTF-8 well-formedness, for text carb reads from files (a CSV) and prints (error lines).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace carb::detail {

/// Length of the well-formed UTF-8 sequence starting at text[i] (1 for ASCII), or 0 when the bytes
/// there are not UTF-8 (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF,
/// or a sequence cut short).
inline std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  const std::size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(k) & 0xc0) != 0x80) return 0;
  if (n == 3 && ((c == 0xe0 && b(1) < 0xa0) || (c == 0xed && b(1) >= 0xa0))) return 0;  // overlong, surrogates
  if (n == 4 && ((c == 0xf0 && b(1) < 0x90) || (c == 0xf4 && b(1) >= 0x90))) return 0;  // overlong, > U+10FFFF
  return n;
}

/// `text` with each byte that is not part of well-formed UTF-8 replaced by U+FFFD.
inline std::string replace_invalid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace carb::detail
