// What every carb fuzz target shares: a private scratch directory for the files the APIs
// under test insist on reading by path, and one way to report a broken invariant.
//
// The rule the targets enforce (issue 16): a carb entry point given any bytes either succeeds or
// throws carb::Error. The targets catch carb::Error only, so any other exception escapes
// LLVMFuzzerTestOneInput, terminates the process and libFuzzer saves the input as a crash; ASan
// and UBSan (which aborts on its first report) turn memory errors and undefined behaviour into
// crashes the same way.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace carb::fuzz {

/// A directory of this process's own, removed at exit. It lives on /dev/shm when there is one:
/// the store and bundle code sync files to disk, and a disk sync per execution would cut
/// throughput by orders of magnitude without testing anything more.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    const char* env = std::getenv("CARB_FUZZ_TMP");
    std::filesystem::path base =
        env ? env : (std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp");
    std::filesystem::path d = base / ("carb-fuzz-" + std::to_string(getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    std::atexit([] { std::filesystem::remove_all(scratch_dir()); });
    return d;
  }();
  return dir;
}

/// Replaces `file` with exactly these bytes (plain write, no sync: the file is scratch).
inline void write_bytes(const std::filesystem::path& file, std::string_view bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "carb fuzz harness: cannot write scratch file %s\n", file.c_str());
    std::abort();
  }
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// A contract the library documents was broken without any error: the silent data loss or silent
/// garbage the harness exists to find. Aborting makes libFuzzer save the input.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "carb fuzz finding: %s\n", what.c_str());
  std::abort();
}

}  // namespace carb::fuzz
