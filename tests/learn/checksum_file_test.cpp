// Tests of bundle file writing: a failed write names its cause, and a written file reads back.
#include "learn/checksum_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace carb {
namespace {

// Seventeenth hostile pass: on a full disk train said only "cannot write model file X".
TEST(ChecksumFile, AFailedWriteNamesItsCause) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  try {
    detail::write_checksummed("/dev/full", std::vector<unsigned char>(100, 7));
    ADD_FAILURE() << "a write to /dev/full succeeded";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
  }
}

TEST(ChecksumFile, WrittenBytesReadBackAndADamagedFileIsRefused) {
  const auto f = std::filesystem::temp_directory_path() / ("carb_checksum_" + std::to_string(::getpid()));
  detail::write_checksummed(f, {1, 2, 3});
  EXPECT_EQ(detail::read_checksummed(f), (std::vector<unsigned char>{1, 2, 3}));
  std::filesystem::resize_file(f, 9);
  EXPECT_THROW(detail::read_checksummed(f), ModelError);
  std::filesystem::remove(f);
}

}  // namespace
}  // namespace carb
