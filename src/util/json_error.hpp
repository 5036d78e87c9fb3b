// What a JSON library error says, for a one-line message: nlohmann's "[json.exception.parse_error.101]"
// prefix dropped, and a token quoted from the file shortened (a forged manifest's 400-digit number was
// quoted whole: a hostile tester's finding).
#pragma once
#include <string>
#include <string_view>

namespace carb::detail {

/// `what` without its "[json.exception.<kind>.<id>] " prefix, each run of more than 40 characters
/// without a space or quote cut to its first 24 and "... (N characters)", never inside a UTF-8
/// sequence.
std::string json_error_text(std::string_view what);

}  // namespace carb::detail
