// Tests of keeping what --force replaces (data/keep_earlier.hpp): a pair is kept whole or not at all.
#include "data/keep_earlier.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "carb/error.hpp"
#include "small_disk_test.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

// Hundred-and-twenty-first hostile pass: on a full disk the sidecar's copy failed after the CSV's was
// made, and that half of a pair was left behind, unsaid (the next run kept under "-1"). Needs root.
TEST(KeepEarlier, AFullDiskKeepsNoHalfOfAPair) {
  const fs::path dir = fs::temp_directory_path() / ("carb_keep_full_" + std::to_string(::getpid()));
  if (!testing::mount_small_disk(dir, "64k")) GTEST_SKIP() << "mounting a tmpfs needs root";
  std::ofstream(dir / "o.csv") << "family,depth\nbasic,18\n";
  std::ofstream(dir / "o.json") << std::string(24 * 1024, 'x');
  const auto fill = [&](const fs::path& f, int most_kb) {
    std::ofstream out(f, std::ios::binary);
    const std::string block(1024, '\0');
    for (int kb = 0; kb < most_kb && out.write(block.data(), block.size()); ++kb) out.flush();
  };
  fill(dir / "room", 8);  // room for the CSV's copy, not the sidecar's, once the rest is full
  fill(dir / "fill", 1 << 20);
  fs::remove(dir / "room");
  const auto names = [&](int n) {
    return std::make_pair(detail::earlier_name(dir / "o.csv", ".csv", n), detail::earlier_name(dir / "o.csv", ".json", n));
  };
  EXPECT_THROW(detail::keep_earlier_copies(dir / "o.csv", dir / "o.json", names), InputError);
  EXPECT_FALSE(fs::exists(dir / "o.earlier.csv"));
  EXPECT_FALSE(fs::exists(dir / "o.earlier.json"));
  EXPECT_EQ(fs::file_size(dir / "o.json"), 24u * 1024);  // the originals are untouched
  fs::remove(dir / "fill");
  const auto [kept, kept_side] = detail::keep_earlier_copies(dir / "o.csv", dir / "o.json", names);
  EXPECT_EQ(kept, dir / "o.earlier.csv");  // with room, the first names: nothing left took them
  EXPECT_EQ(fs::file_size(kept_side), 24u * 1024);
  EXPECT_EQ(std::system(("umount -l '" + dir.string() + "'").c_str()), 0);
  fs::remove_all(dir);
}

// Hundred-and-twenty-sixth hostile pass: a --force run killed while it copied the user's file left
// the copy under its hidden "keep-" name, and no later run removed it (one more per killed run).
TEST(KeepEarlier, AKilledRunsHiddenCopyIsRemovedByTheNext) {
  const fs::path dir = fs::temp_directory_path() / ("carb_keep_stale_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const pid_t child = ::fork();  // a pid whose process is gone
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const fs::path dead = dir / (".o.earlier.csv.carb-" + std::to_string(child) + "-keep-Ab12Cd");
  const fs::path live = dir / (".o.earlier.csv.carb-" + std::to_string(::getpid()) + "-keep-Ef34Gh");
  const fs::path other = dir / (".o.earlier.csv.carb-" + std::to_string(child) + "-keep-Ab12Cd.mine");  // not a temp's name
  for (const auto& f : {dead, live, other}) std::ofstream(f) << "the user's file\n";
  std::ofstream(dir / "o.csv") << "family,depth\nbasic,18\n";
  const auto names = [&](int n) {
    return std::make_pair(detail::earlier_name(dir / "o.csv", ".csv", n), detail::earlier_name(dir / "o.csv", ".json", n));
  };
  const auto [kept, side] = detail::keep_earlier_copies(dir / "o.csv", {}, names);
  EXPECT_EQ(kept, dir / "o.earlier.csv");
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));   // its owner may still be copying
  EXPECT_TRUE(fs::exists(other));  // nobody's temporary
  fs::remove_all(dir);
}

}  // namespace
}  // namespace carb
