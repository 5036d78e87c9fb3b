#include "util/special_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>
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

// A mount point as /proc/self/mountinfo writes it: space, tab, newline and backslash as octal escapes.
std::string unescape_mount_path(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' &&
        s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

bool is_sqlite_file(const fs::path& f) {
  std::error_code ec;
  if (!fs::is_regular_file(f, ec)) return false;
  std::ifstream in(f, std::ios::binary);
  char head[16] = {};
  return in.read(head, sizeof head) && std::string(head, sizeof head) == std::string("SQLite format 3\0", 16);
}

namespace {

// The SQLite database `out` is, or whose companion file (-wal, -shm, -journal, or carb's .lock) it
// is; empty when neither.
fs::path sqlite_database_at(const fs::path& out) {
  if (is_sqlite_file(out)) return out;
  const std::string name = out.filename().string();
  for (const std::string suffix : {"-wal", "-shm", "-journal", ".lock"})
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const fs::path base = out.parent_path() / name.substr(0, name.size() - suffix.size());
      if (is_sqlite_file(base)) return base;
    }
  return {};
}

}  // namespace

bool is_mount_point(const fs::path& p, const std::string& mountinfo) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return false;
  const fs::path real = fs::canonical(p, ec);
  if (ec || real == "/") return false;  // "/" cannot be an output anyway (it has no directory to stage in)
  std::string table = mountinfo;
  if (table.empty()) {
    std::ifstream in("/proc/self/mountinfo");
    std::ostringstream text;
    text << in.rdbuf();
    table = text.str();
  }
  if (table.empty()) {  // no mount table: another device than the directory's is a mount
    struct stat mine {}, dir {};
    return ::stat(real.c_str(), &mine) == 0 && ::stat(real.parent_path().c_str(), &dir) == 0 &&
           mine.st_dev != dir.st_dev;
  }
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, point;
    if (fields >> id >> parent >> devno >> root >> point && fs::path(unescape_mount_path(point)) == real)
      return true;
  }
  return false;
}

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

void refuse_unprintable_name(const fs::path& out) {
  // A name carb would create with a newline or another control character in it breaks every line
  // that names it (provenance, errors, `ls`): a hostile tester's `--out $'a\nb.csv'` was written.
  const std::string name = out.filename().string();
  if (std::any_of(name.begin(), name.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; }))
    throw InputError(out.string() + ": the output's name holds a control character (a newline or a tab?); give a "
                     "printable name");
}

void refuse_special_file(const fs::path& out) {
  refuse_unprintable_name(out);
  std::error_code ec;
  const auto own = fs::symlink_status(out, ec).type();
  const auto target = own == fs::file_type::symlink ? fs::status(out, ec).type() : own;
  if (const char* kind = special_kind(target))
    throw InputError(out.string() + " is " + (own == fs::file_type::symlink ? "a link to " : "") + kind +
                     ", not a file carb can replace; give the path of a regular file (--force does not change this)");
  if (system_tree(out) || system_tree(out.has_parent_path() ? out.parent_path() : fs::path(".")))
    throw InputError(out.string() + " is in /dev, /proc or /sys (or links there), where carb writes no output; give "
                     "the path of a regular file (--force does not change this)");
  // Fiftieth hostile pass: `report`, `plan`, `data merge` and `train` replaced a measurement store
  // named as --out under --force, the advice their refusal gave; its rows were gone. A store (any
  // SQLite database) may be the only copy of its measurements, and a store's -wal, -shm, -journal
  // or lock file is part of it: no output replaces them.
  if (const fs::path db = sqlite_database_at(out); !db.empty())
    throw InputError(out.string() + (db == out ? std::string(" is an SQLite database (a measurement store?)")
                                               : " belongs to the SQLite database " + db.string() +
                                                     " (a measurement store?)") +
                     ", which no carb output replaces (--force does not change this); choose another --out");
  // Twenty-seventh hostile pass: `train --out` at a mount point trained for minutes and then failed
  // at the swap (rename cannot replace a mount point).
  if (is_mount_point(out))
    throw InputError(out.string() + " is a mount point, which carb cannot replace (it writes a new copy and renames "
                     "it over the old); give a path inside it (--force does not change this)");
}

}  // namespace carb::detail
