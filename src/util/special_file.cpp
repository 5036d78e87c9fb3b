#include "util/special_file.hpp"

#include <string>

#include "carb/error.hpp"

namespace carb::detail {

namespace fs = std::filesystem;

namespace {

const char* special_kind(fs::file_type t) {
  switch (t) {
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::unknown: return "a special file";
    default: return nullptr;
  }
}

bool under_proc_or_sys(const fs::path& abs) {
  const auto first = ++abs.begin();
  return first != abs.end() && (*first == "proc" || *first == "sys");
}

// In /proc or /sys, or directly in /dev (not /dev/shm's tmpfs), by the path as written, by where its
// directory resolves, or by where a link at it points: there a name (/dev/stdout -> /proc/self/fd/1)
// may stand for whatever the process has open, a regular file included.
bool system_tree(const fs::path& p) {
  std::error_code ec;
  const fs::path abs = fs::absolute(p, ec).lexically_normal();
  if (ec) return false;
  if (under_proc_or_sys(abs)) return true;
  const fs::path dir = fs::weakly_canonical(abs.parent_path(), ec);
  if (!ec && (under_proc_or_sys(dir) || dir == "/dev")) return true;
  for (const fs::path& at : link_chain(abs))
    if (under_proc_or_sys(at)) return true;
  return false;
}

}  // namespace

std::vector<fs::path> link_chain(const fs::path& p) {
  std::vector<fs::path> out;
  std::error_code ec;
  fs::path at = p;
  for (int hops = 0; hops < 16 && fs::is_symlink(at, ec); ++hops) {
    const fs::path to = fs::read_symlink(at, ec);
    if (ec) break;
    at = (to.is_absolute() ? to : at.parent_path() / to).lexically_normal();
    out.push_back(at);
  }
  return out;
}

void refuse_special_file(const fs::path& out) {
  std::error_code ec;
  const auto own = fs::symlink_status(out, ec).type();
  const auto target = own == fs::file_type::symlink ? fs::status(out, ec).type() : own;
  if (const char* kind = special_kind(target))
    throw InputError(out.string() + " is " + (own == fs::file_type::symlink ? "a link to " : "") + kind +
                     ", not a file carb can replace; give the path of a regular file (--force does not change this)");
  if (system_tree(out) || system_tree(out.has_parent_path() ? out.parent_path() : fs::path(".")))
    throw InputError(out.string() + " is in /dev, /proc or /sys (or links there), where carb writes no output; give "
                     "the path of a regular file (--force does not change this)");
}

}  // namespace carb::detail
