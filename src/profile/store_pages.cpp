// Page hashes of a store's file, and the check that a killed commit explains its content
// (store_pages.hpp). SQLite's file formats: https://www.sqlite.org/fileformat2.html
#include "store_pages.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "held_file.hpp"
#include "util/fnv.hpp"

namespace carb::detail {
namespace {

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// The page size a database header states (offset 16, big-endian; 1 means 65536), 0 when none.
std::uint32_t page_size_of(const unsigned char* head) {
  if (std::string(reinterpret_cast<const char*>(head), 16) != std::string("SQLite format 3\0", 16)) return 0;
  const std::uint32_t ps = (std::uint32_t{head[16]} << 8) | head[17];
  const std::uint32_t size = ps == 1 ? 65536 : ps;
  return size >= 512 && size <= 65536 && (size & (size - 1)) == 0 ? size : 0;
}

// n bytes at offset `at`, retrying short reads; false at the end of the file or on an error.
bool read_at(int fd, unsigned char* buf, std::size_t n, off_t at) {
  while (n > 0) {
    const ssize_t got = ::pread(fd, buf, n, at);
    if (got <= 0) return false;
    buf += got, n -= static_cast<std::size_t>(got), at += got;
  }
  return true;
}

// The WAL's frames under its header's salts: page number -> hashes of their contents, and the
// database sizes its commit frames state.
struct WalFrames {
  std::map<std::uint32_t, std::vector<std::uint64_t>> pages;
  std::vector<std::uint32_t> commit_sizes;
};

WalFrames read_wal(const std::filesystem::path& wal, std::uint32_t page_size) {
  WalFrames out;
  std::ifstream in(wal, std::ios::binary);
  unsigned char head[32] = {};
  if (!in.read(reinterpret_cast<char*>(head), sizeof head)) return out;
  const std::uint32_t magic = be32(head);
  if ((magic != 0x377f0682 && magic != 0x377f0683) || be32(head + 8) != page_size) return out;
  std::vector<unsigned char> frame(24 + std::size_t{page_size});
  while (in.read(reinterpret_cast<char*>(frame.data()), static_cast<std::streamsize>(frame.size()))) {
    // Frames left from an earlier generation of the log carry its salts, not the header's.
    if (!std::equal(frame.begin() + 8, frame.begin() + 16, head + 16)) continue;
    const std::uint32_t pgno = be32(frame.data());
    if (pgno == 0) continue;
    out.pages[pgno].push_back(fnv1a64(frame.data() + 24, page_size));
    if (const std::uint32_t commit = be32(frame.data() + 4)) out.commit_sizes.push_back(commit);
  }
  return out;
}

}  // namespace

std::optional<PageHashes> hash_pages(int fd) {
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  unsigned char head[100] = {};
  PageHashes p;
  if (!read_at(fd, head, sizeof head, 0) || !(p.page_size = page_size_of(head))) return std::nullopt;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size % p.page_size != 0) return std::nullopt;  // a torn last page: not a database's whole pages
  std::vector<unsigned char> page(p.page_size);
  for (std::uint64_t at = 0; at < size; at += p.page_size) {
    if (!read_at(fd, page.data(), page.size(), static_cast<off_t>(at))) return std::nullopt;
    p.hashes.push_back(fnv1a64(page.data(), page.size()));
  }
  return p;
}

std::optional<PageHashes> hash_pages(const std::filesystem::path& db) { return hash_pages(held_descriptor(db)); }

bool written_only_from_wal(const std::filesystem::path& db, const PageHashes& recorded) {
  const auto now = hash_pages(db);
  if (!now || now->page_size != recorded.page_size) return false;
  const WalFrames wal = read_wal(db.string() + "-wal", recorded.page_size);
  const auto n = now->hashes.size();
  // A commit may shrink the file only to the size one of its commit frames states.
  if (n < recorded.hashes.size() &&
      std::find(wal.commit_sizes.begin(), wal.commit_sizes.end(), n) == wal.commit_sizes.end())
    return false;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t h = now->hashes[i];
    if (i < recorded.hashes.size() && recorded.hashes[i] == h) continue;
    const auto it = wal.pages.find(static_cast<std::uint32_t>(i + 1));
    if (it == wal.pages.end() || std::find(it->second.begin(), it->second.end(), h) == it->second.end()) return false;
  }
  return true;
}

std::string to_text(const PageHashes& p) {
  std::string s = std::to_string(p.page_size) + " " + std::to_string(p.hashes.size());
  s.reserve(s.size() + 17 * p.hashes.size());
  for (const auto h : p.hashes) s += " " + hex64(h);
  return s;
}

std::optional<PageHashes> page_hashes_from_text(const std::string& line) {
  std::istringstream in(line);
  PageHashes p;
  std::size_t count = 0;
  if (!(in >> p.page_size >> count) || !p.page_size) return std::nullopt;
  std::string word;
  while (p.hashes.size() < count && in >> word) {
    if (word.size() != 16 || word.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
    p.hashes.push_back(std::stoull(word, nullptr, 16));
  }
  if (p.hashes.size() != count) return std::nullopt;
  return p;
}

}  // namespace carb::detail
