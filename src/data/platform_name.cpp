#include "platform_name.hpp"

#include <algorithm>
#include <cctype>

#include "util/utf8.hpp"

namespace carb::detail {

std::string platform_name_problem(std::string_view name) {
  if (name.empty()) return "is empty";
  if (std::any_of(name.begin(), name.end(), [](char ch) {
        const auto u = static_cast<unsigned char>(ch);
        return u < 0x20 || u == 0x7f;
      }))
    return "holds a control character";
  for (std::size_t i = 0; i < name.size(); i += utf8_sequence_length(name, i))
    if (utf8_sequence_length(name, i) == 0) return "is not UTF-8";
  if (std::isspace(static_cast<unsigned char>(name.front())) || std::isspace(static_cast<unsigned char>(name.back())))
    return kSpacedPlatform;
  return "";
}

}  // namespace carb::detail
