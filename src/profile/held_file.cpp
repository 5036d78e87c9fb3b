// The process's held descriptors of store files (held_file.hpp).
#include "held_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <utility>

namespace carb::detail {

int held_descriptor(const std::filesystem::path& path) {
  static std::mutex guard;
  static std::map<std::pair<dev_t, ino_t>, int> held;
  const std::lock_guard<std::mutex> lock(guard);
  // Files deleted since (a test's or a fuzzer's temporary store) are let go: nothing can open them
  // by name any more, and keeping them would hold their space and a descriptor each.
  for (auto it = held.begin(); it != held.end();) {
    struct stat st {};
    if (::fstat(it->second, &st) == 0 && st.st_nlink == 0) {
      ::close(it->second);
      it = held.erase(it);
    } else {
      ++it;
    }
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  if (const auto it = held.find({st.st_dev, st.st_ino}); it != held.end()) return it->second;
  // NONBLOCK: a FIFO planted at a side file's name must not hang the open. Read-write where the user
  // may write, so that a writer can take its open-file-description lock through it (store.cpp).
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat opened {};
  if (::fstat(fd, &opened) != 0) return fd;  // never closed: see the header
  // A file swapped in between the stat and the open is held under its own key; a second descriptor
  // of a file already held (a race) is left open too, never closed.
  held.emplace(std::make_pair(opened.st_dev, opened.st_ino), fd);
  return fd;
}

}  // namespace carb::detail
