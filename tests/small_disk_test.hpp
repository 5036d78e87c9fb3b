// A small file system of its own (a tmpfs) for tests of what a full disk does. Mounting one needs
// root; without it the caller skips.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace carb::testing {

/// Makes `dir` and mounts a tmpfs of `size` ("256k") on it; false (and `dir` removed) where that
/// is not allowed.
inline bool mount_small_disk(const std::filesystem::path& dir, const std::string& size) {
  std::filesystem::create_directories(dir);
  if (::geteuid() == 0 &&
      std::system(("mount -t tmpfs -o size=" + size + " tmpfs '" + dir.string() + "' 2>/dev/null").c_str()) == 0)
    return true;
  std::filesystem::remove_all(dir);
  return false;
}

}  // namespace carb::testing
