// The process's held descriptors of store files (held_file.hpp).
#include "held_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <utility>

namespace carb::detail {
namespace {

struct Held {
  int fd = -1;
  int pins = 0;  // open Stores using this descriptor: never let go while one is
};

std::mutex g_guard;
std::map<std::pair<dev_t, ino_t>, Held> g_held;

}  // namespace

int held_descriptor(const std::filesystem::path& path, bool pin) {
  const std::lock_guard<std::mutex> lock(g_guard);
  // Files deleted since (a test's or a fuzzer's temporary store) are let go when no Store uses
  // them: nothing can open them by name any more, and keeping them would hold their space.
  for (auto it = g_held.begin(); it != g_held.end();) {
    struct stat st {};
    if (it->second.pins == 0 && ::fstat(it->second.fd, &st) == 0 && st.st_nlink == 0) {
      ::close(it->second.fd);
      it = g_held.erase(it);
    } else {
      ++it;
    }
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  if (const auto it = g_held.find({st.st_dev, st.st_ino}); it != g_held.end()) {
    it->second.pins += pin;
    return it->second.fd;
  }
  // NONBLOCK: a FIFO planted at a side file's name must not hang the open. Read-write where the user
  // may write, so that a writer can take its open-file-description lock through it (store.cpp).
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat opened {};
  if (::fstat(fd, &opened) != 0) return fd;  // never closed: see the header
  // A file swapped in between the stat and the open is held under its own key; a second descriptor
  // of a file already held (a race) is left open too, never closed.
  const auto it = g_held.emplace(std::make_pair(opened.st_dev, opened.st_ino), Held{fd, 0}).first;
  it->second.pins += pin;
  return it->second.fd;
}

void unpin_descriptor(int fd) {
  const std::lock_guard<std::mutex> lock(g_guard);
  for (auto& [key, h] : g_held)
    if (h.fd == fd && h.pins > 0) --h.pins;
}

}  // namespace carb::detail
