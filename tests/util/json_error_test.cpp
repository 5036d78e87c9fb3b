// A JSON library error as carb quotes it: no library prefix, no 400-digit number quoted whole.
#include "util/json_error.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace carb::detail {
namespace {

std::string parse_error_of(const std::string& text) {
  try {
    const auto parsed = nlohmann::json::parse(text);
    return parsed.dump();
  } catch (const nlohmann::json::exception& e) {
    return json_error_text(e.what());
  }
  return "";
}

TEST(JsonErrorText, DropsTheLibraryPrefixAndShortensLongTokens) {
  const std::string huge = "{\"schema_version\": 1" + std::string(400, '0') + "}";
  const std::string said = parse_error_of(huge);
  EXPECT_EQ(said.find("[json.exception"), std::string::npos) << said;
  EXPECT_NE(said.find("number overflow"), std::string::npos) << said;
  EXPECT_NE(said.find("... (401 characters)"), std::string::npos) << said;
  EXPECT_LT(said.size(), 160u) << said;
  // Short messages are kept as they are, without the prefix.
  EXPECT_EQ(json_error_text("[json.exception.type_error.302] type must be number, but is string"),
            "type must be number, but is string");
  EXPECT_EQ(json_error_text("no prefix here"), "no prefix here");
}

TEST(JsonErrorText, NeverCutsInsideAUtf8Character) {
  std::string token;
  for (int k = 0; k < 30; ++k) token += "\xc3\xa9";  // é, two bytes each: 60 bytes
  const std::string said = json_error_text("bad '" + token + "'");
  const std::size_t at = said.find("...");
  ASSERT_NE(at, std::string::npos) << said;
  EXPECT_EQ(at % 2, 1u) << said;  // "bad '" is 5 bytes: whole characters after it end at an odd offset
  EXPECT_NE(said.find("(60 characters)"), std::string::npos) << said;
}

}  // namespace
}  // namespace carb::detail
