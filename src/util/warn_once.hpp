// A warning about an input, said once per warning round (carb/warning.hpp): commands read an input
// more than once, and each reading would say it again.
#pragma once
#include <string>

namespace carb::detail {

/// warn(text), unless the same `key` (what the input is: its path, and its contents' hash where
/// they matter) and `text` were said already in this warning round. Thread-safe.
void warn_once(const std::string& key, const std::string& text);

}  // namespace carb::detail
