// Whole-file byte I/O with an FNV-1a 64 checksum trailer, shared by the learners
// whose model files are binary (extra trees, the XGBoost wrapper). A checksum is
// what lets a truncated or bit-flipped model file fail loudly with ModelError
// instead of loading as a silently different model.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "carb/error.hpp"
#include "util/fnv.hpp"

namespace carb::detail {

/// A file of a model bundle, before it is opened: missing, or not a regular file (a directory
/// read as an internal error; a FIFO hung the reader for ever), is a damaged bundle.
inline void require_bundle_file(const std::filesystem::path& f) {
  std::error_code ec;
  const auto st = std::filesystem::status(f, ec);
  if (!std::filesystem::exists(st)) throw ModelError("model bundle file " + f.string() + " is missing");
  if (!std::filesystem::is_regular_file(st))
    throw ModelError("model bundle file " + f.string() + " is not a regular file (a directory, pipe or device): the "
                     "bundle was altered");
}


/// Writes a bundle file and flushes it to disk before it returns: the bundle is swapped in and the
/// old one removed right after, so a power cut must not find empty files where a bundle was
/// (seventeenth hostile pass). Throws ModelError naming the file and the cause ("No space left").
inline void write_durably(const std::filesystem::path& file, const void* data, std::size_t size) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  const auto fail = [&](const char* what) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    throw ModelError(std::string("cannot write model file ") + file.string() + ": " + what + ": " + std::strerror(err));
  };
  if (fd < 0) fail("open");
  const auto* p = static_cast<const char*>(data);
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, p + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("write");
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail("fsync");
  if (::close(fd) != 0) {
    const int err = errno;
    throw ModelError("cannot write model file " + file.string() + ": close: " + std::strerror(err));
  }
}

/// Appends the checksum of `bytes` and writes them durably; throws ModelError when the file cannot be written.
inline void write_checksummed(const std::filesystem::path& file, std::vector<unsigned char> bytes) {
  const std::uint64_t h = fnv1a64(bytes.data(), bytes.size());
  const auto* hp = reinterpret_cast<const unsigned char*>(&h);
  bytes.insert(bytes.end(), hp, hp + sizeof h);
  write_durably(file, bytes.data(), bytes.size());
}

/// Reads the file, verifies and strips the checksum trailer; throws ModelError when missing or corrupted.
inline std::vector<unsigned char> read_checksummed(const std::filesystem::path& file) {
  require_bundle_file(file);
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ModelError("cannot open model file " + file.string());
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof(std::uint64_t)) throw ModelError("model file " + file.string() + " is truncated");
  std::uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + bytes.size() - sizeof stored, sizeof stored);
  bytes.resize(bytes.size() - sizeof stored);
  if (fnv1a64(bytes.data(), bytes.size()) != stored)
    throw ModelError("model file " + file.string() + " is corrupted or truncated (checksum mismatch)");
  return bytes;
}

/// Appends n raw bytes (resize + memcpy: GCC 12 at -O3 warns falsely about vector::insert here).
inline void put_bytes(std::vector<unsigned char>& out, const void* p, std::size_t n) {
  const std::size_t at = out.size();
  out.resize(at + n);
  if (n) std::memcpy(out.data() + at, p, n);
}

/// Appends the raw bytes of a trivially copyable value (host byte order; carb targets little-endian hosts).
template <class T>
void put(std::vector<unsigned char>& out, const T& v) {
  put_bytes(out, &v, sizeof v);
}

/// Sequential reader over a verified byte buffer; running past the end is a ModelError.
class ByteReader {
 public:
  ByteReader(const std::vector<unsigned char>& b, std::string what) : b_(b), what_(std::move(what)) {}
  template <class T>
  T get() {
    T v{};
    read(&v, sizeof v);
    return v;
  }
  void read(void* dst, std::size_t n) {
    if (n > b_.size() - pos_) throw ModelError(what_ + ": unexpected end of data");
    std::memcpy(dst, b_.data() + pos_, n);
    pos_ += n;
  }
  std::size_t remaining() const { return b_.size() - pos_; }

 private:
  const std::vector<unsigned char>& b_;
  std::string what_;
  std::size_t pos_ = 0;
};

}  // namespace carb::detail
