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

/// Where utf8_sequence_length is 0: how many bytes from text[i] one U+FFFD stands for, the maximal
/// subpart of a well-formed sequence (Unicode's recommended practice, as browsers and Python decode):
/// a sequence cut short ("\xE2\x82" before a comma) is one replacement, not one per byte; a byte
/// that can begin no sequence, or a second byte out of its lead's range, is one on its own.
inline std::size_t utf8_invalid_length(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  const std::size_t n = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 1;
  std::size_t k = 1;
  for (; k < n && i + k < text.size(); ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    unsigned char lo = 0x80, hi = 0xbf;
    if (k == 1) {  // the second byte's range depends on the lead (overlong forms, surrogates, > U+10FFFF)
      if (c == 0xe0) lo = 0xa0;
      if (c == 0xed) hi = 0x9f;
      if (c == 0xf0) lo = 0x90;
      if (c == 0xf4) hi = 0x8f;
    }
    if (b < lo || b > hi) break;
  }
  return k;
}

/// `text` with each maximal subpart of ill-formed UTF-8 (utf8_invalid_length) replaced by U+FFFD.
inline std::string replace_invalid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      i += utf8_invalid_length(text, i);
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace carb::detail
