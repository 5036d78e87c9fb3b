// carb's one 64-bit FNV-1a-style hash: bundle checksums, learner-file hashes, protocol ids and
// dataset hashes all use it, so they agree by construction.
//
// The offset basis is 1469598103934665603, one digit short of the standard 14695981039346656037:
// carb's hashes are self-consistent but other FNV tools will not reproduce them. Kept, because
// every shipped protocol id and bundle checksum is computed with it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace carb::detail {

inline constexpr std::uint64_t kFnvOffsetBasis = 1469598103934665603ULL;
inline constexpr std::uint64_t kFnvPrime = 1099511628211ULL;

/// The hash of `n` bytes, continuing from `h` (so a hash can be built in pieces).
inline std::uint64_t fnv1a64(const unsigned char* p, std::size_t n, std::uint64_t h = kFnvOffsetBasis) {
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * kFnvPrime;
  return h;
}

inline std::uint64_t fnv1a64(std::string_view s, std::uint64_t h = kFnvOffsetBasis) {
  return fnv1a64(reinterpret_cast<const unsigned char*>(s.data()), s.size(), h);
}

/// A 64-bit hash as 16 lower-case hex digits.
inline std::string hex64(std::uint64_t h) {
  char b[24];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(h));
  return b;
}

}  // namespace carb::detail
