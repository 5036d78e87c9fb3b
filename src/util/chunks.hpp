// A long list worked through a chunk at a time, so that a caller can listen between chunks (a
// signal, progress) and work that holds per-item state holds one chunk's.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

namespace carb::detail {

/// Calls each(chunk, end) for the items [first, end) of `all`, `size` at a time, in order (none for
/// an empty list). `size` must be at least 1.
template <class T, class F>
void for_each_chunk(const std::vector<T>& all, std::size_t size, F&& each) {
  for (std::size_t first = 0; first < all.size(); first += size) {
    const std::size_t end = std::min(all.size(), first + size);
    each(std::vector<T>(all.begin() + static_cast<std::ptrdiff_t>(first), all.begin() + static_cast<std::ptrdiff_t>(end)),
         end);
  }
}

}  // namespace carb::detail
