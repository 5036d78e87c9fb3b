// Tests of carb's typed errors: a message keeps everything the user's input put in it.
#include "carb/error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace carb {
namespace {

// what() is a C string: a NUL from a CSV field once cut the message, and the file name after it.
TEST(Error, ANulInTheMessageIsEscapedNotATruncation) {
  const InputError e(std::string("family 'bas\0ic' unknown in d.csv", 32));
  EXPECT_EQ(std::string(e.what()), "family 'bas\\x00ic' unknown in d.csv");
  EXPECT_EQ(std::string(DataError(std::string("\0\0", 2)).what()), "\\x00\\x00");
  EXPECT_EQ(std::string(ModelError("plain").what()), "plain");
}

}  // namespace
}  // namespace carb
