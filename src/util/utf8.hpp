// UTF-8 well-formedness, for text carb reads from files (a CSV) and prints (error lines).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace carb::detail {

/// The UTF-8 sequence text[i] begins: `length`, the bytes its lead byte announces (1 for ASCII, 0
/// for a byte that begins none), and `formed`, how many of them from text[i] are well-formed (each
/// continuation byte in its range: Unicode's table 3-7, where the second byte's range depends on
/// the lead to rule out overlong forms, surrogates and code points past U+10FFFF).
struct Utf8Prefix {
  std::size_t length = 0, formed = 0;
};
inline Utf8Prefix utf8_prefix(std::string_view text, std::size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  const std::size_t n = c < 0x80 ? 1 : c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  std::size_t k = 1;
  for (; k < n && i + k < text.size(); ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    unsigned char lo = 0x80, hi = 0xbf;
    if (k == 1) {
      if (c == 0xe0) lo = 0xa0;  // overlong
      if (c == 0xed) hi = 0x9f;  // surrogates
      if (c == 0xf0) lo = 0x90;  // overlong
      if (c == 0xf4) hi = 0x8f;  // past U+10FFFF
    }
    if (b < lo || b > hi) break;
  }
  return {n, k};
}

/// Length of the well-formed UTF-8 sequence starting at text[i] (1 for ASCII), or 0 when the bytes
/// there are not UTF-8 (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF,
/// or a sequence cut short).
inline std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const Utf8Prefix p = utf8_prefix(text, i);
  return p.length > 0 && p.formed == p.length ? p.length : 0;
}

/// Where utf8_sequence_length is 0: how many bytes from text[i] one U+FFFD stands for, the maximal
/// subpart of a well-formed sequence (Unicode's recommended practice, as browsers and Python decode):
/// a sequence cut short ("\xE2\x82" before a comma) is one replacement, not one per byte; a byte
/// that can begin no sequence, or a second byte out of its lead's range, is one on its own.
inline std::size_t utf8_invalid_length(std::string_view text, std::size_t i) { return utf8_prefix(text, i).formed; }

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
