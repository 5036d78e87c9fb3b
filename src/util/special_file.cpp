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

// Under /dev, /proc or /sys, where a name (/dev/stdout -> /proc/self/fd/1) may stand for whatever
// the process has open, a regular file included.
bool system_tree(const fs::path& p) {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(p, ec), ec);
  if (ec) return false;
  const auto first = ++real.begin();
  return first != real.end() && (*first == "dev" || *first == "proc" || *first == "sys");
}

}  // namespace

void refuse_special_file(const fs::path& out) {
  std::error_code ec;
  const auto own = fs::symlink_status(out, ec).type();
  const auto target = own == fs::file_type::symlink ? fs::status(out, ec).type() : own;
  if (const char* kind = special_kind(target))
    throw InputError(out.string() + " is " + (own == fs::file_type::symlink ? "a link to " : "") + kind +
                     ", not a file carb can replace; give the path of a regular file (--force does not change this)");
  if (system_tree(out) || system_tree(out.has_parent_path() ? out.parent_path() : fs::path(".")))
    throw InputError(out.string() + " is in /dev, /proc or /sys, where carb writes no output; give the path of a "
                     "regular file (--force does not change this)");
}

}  // namespace carb::detail
