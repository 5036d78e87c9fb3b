// What a platform name may be: printed in tables, stored in bundles and read back by every data
// command, which compare platforms byte for byte.
#pragma once
#include <string>
#include <string_view>

namespace carb::detail {

/// Why `name` cannot be a platform name ("is empty", "holds a control character" (C0, DEL or C1),
/// "is not UTF-8", "begins or ends with a space" (any of Unicode's blanks, U+3000, U+200B, U+FEFF
/// included)); empty when it can. An ESC or a newline once reached the
/// terminal and broke output lines; a byte that is not UTF-8 could not be recorded in JSON
/// provenance; " cpu-2t" passed for a platform of its own that `data merge` then refused beside
/// cpu-2t (hundred-and-thirty-first hostile pass).
std::string platform_name_problem(std::string_view name);
/// platform_name_problem's answer for spaces around a name: dataset readers warn of it (stores made
/// before 2026-12-07 may hold such names), the profiler refuses it.
inline constexpr const char* kSpacedPlatform = "begins or ends with a space";

}  // namespace carb::detail
