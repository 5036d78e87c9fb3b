// Seventeenth hostile pass: as root, `report --out /dev/null --force` made the machine's /dev/null an
// HTML file, and FIFOs, device nodes and /dev/stdout-style links were replaced by every writer.
// No output path that is, or links to, something other than a regular file is ever replaced.
#include "util/special_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <fstream>
#include <vector>

#include "carb/bundle_destination.hpp"
#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "data/csv.hpp"
#include "temp_dir_test.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

class SpecialFileTest : public TempDirTest {
 protected:
  SpecialFileTest() : TempDirTest("carb_special_") {}
};

TEST_F(SpecialFileTest, AFifoIsNeverReplacedEvenWithForce) {
  const fs::path fifo = dir_ / "pipe.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(detail::refuse_special_file(fifo), InputError);
  EXPECT_THROW(csv::write_text_atomic(fifo, "x\n"), InputError);
  EXPECT_THROW(check_not_a_link(fifo, true), InputError);
  EXPECT_THROW(check_dataset_output(fifo, true, kMergedKind), InputError);
  EXPECT_THROW(BundleDestination(fifo, true), InputError);
  EXPECT_EQ(fs::symlink_status(fifo).type(), fs::file_type::fifo);
  const fs::path link = dir_ / "to_pipe.csv";
  fs::create_symlink(fifo, link);
  EXPECT_THROW(check_not_a_link(link, true), InputError);
  EXPECT_EQ(fs::symlink_status(link).type(), fs::file_type::symlink);
}

TEST_F(SpecialFileTest, PathsThroughDevOrProcAreRefused) {
  const fs::path out = dir_ / "stdout";
  fs::create_symlink("/proc/self/fd/1", out);  // what /dev/stdout is
  EXPECT_THROW(check_not_a_link(out, true), InputError);
  EXPECT_THROW(csv::write_text_atomic(out, "x\n"), InputError);
  EXPECT_EQ(fs::symlink_status(out).type(), fs::file_type::symlink);
  EXPECT_THROW(detail::refuse_special_file("/dev/null"), InputError);
  EXPECT_THROW(detail::refuse_special_file("/dev/carb-new-file.csv"), InputError);
  // With stdout a regular file, the link resolves to that file: the link itself points into /proc.
  const fs::path to_file = dir_ / "to_fd";
  fs::create_symlink("/proc/self/fd/0", to_file);
  EXPECT_THROW(detail::refuse_special_file(to_file), InputError);
  if (fs::is_directory("/dev/shm")) {
    EXPECT_NO_THROW(detail::refuse_special_file("/dev/shm/carb-x/bundle"));
  }
}

TEST_F(SpecialFileTest, RegularFilesDirectoriesAndNewNamesPass) {
  std::ofstream(dir_ / "a.csv") << "x\n";
  fs::create_symlink(dir_ / "a.csv", dir_ / "link.csv");
  for (const fs::path& p : {dir_ / "a.csv", dir_ / "new.csv", dir_, dir_ / "link.csv", dir_ / "dangling"})
    EXPECT_NO_THROW(detail::refuse_special_file(p)) << p;
}

// A hostile tester: `--out $'a\nb.csv'` was written, a name that breaks every line naming it. No
// output gets a name with a control character; a directory above it is the user's own.
TEST_F(SpecialFileTest, AnOutputNameWithAControlCharacterIsRefused) {
  for (const std::string& bad : std::vector<std::string>{"a\nb.csv", "tab\there.csv", "del\x7f.csv", "bundle\r"}) {
    EXPECT_THROW(detail::refuse_special_file(dir_ / bad), InputError) << bad;
    EXPECT_THROW(csv::write_text_atomic(dir_ / bad, "x\n"), InputError) << bad;
    EXPECT_THROW(BundleDestination(dir_ / bad, false), InputError) << bad;
    EXPECT_FALSE(fs::exists(dir_ / bad)) << bad;
  }
  fs::create_directories(dir_ / "odd\ndir");
  EXPECT_NO_THROW(detail::refuse_special_file(dir_ / "odd\ndir" / "plain.csv"));
  EXPECT_NO_THROW(detail::refuse_special_file(dir_ / "caf\xc3\xa9.csv"));  // UTF-8 is printable
}

// Twenty-seventh hostile pass: `train --out` at a mount point trained and then failed at the swap
// (rename cannot replace a mount point). A mount point is refused before any work, by the mount table.
TEST_F(SpecialFileTest, AMountPointIsRecognisedFromTheMountTable) {
  const fs::path with_space = dir_ / "my models";
  fs::create_directories(with_space);
  fs::create_directories(dir_ / "plain");
  std::string escaped = with_space.string();
  escaped.replace(escaped.find(' '), 1, "\\040");
  const std::string table = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
                            "40 22 0:45 / " + escaped + " rw,relatime shared:9 - tmpfs tmpfs rw\n";
  EXPECT_TRUE(detail::is_mount_point(with_space, table));
  EXPECT_FALSE(detail::is_mount_point(dir_ / "plain", table));
  EXPECT_FALSE(detail::is_mount_point(dir_ / "absent", table));
  // Through a link to it, too.
  fs::create_symlink(with_space, dir_ / "link");
  EXPECT_TRUE(detail::is_mount_point(dir_ / "link", table));
}

TEST_F(SpecialFileTest, ARealMountPointIsRefusedBeforeAnyWork) {
  // Every Linux here has /proc mounted; a path inside a mount is not its mount point.
  ASSERT_TRUE(detail::is_mount_point("/proc"));
  EXPECT_FALSE(detail::is_mount_point(dir_));
  const fs::path mnt = dir_ / "mnt";
  fs::create_directories(mnt);
  const std::string mount = "mount -t tmpfs -o size=1m carbtest '" + mnt.string() + "' 2>/dev/null";
  if (std::system(mount.c_str()) != 0) GTEST_SKIP() << "cannot mount a tmpfs here (not root, or no CAP_SYS_ADMIN)";
  EXPECT_TRUE(detail::is_mount_point(mnt));
  EXPECT_THROW(BundleDestination(mnt, true), InputError);
  EXPECT_THROW(check_dataset_output(mnt, true, kMergedKind), InputError);
  EXPECT_NO_THROW(BundleDestination(mnt / "bundle"));  // inside it is fine
  EXPECT_EQ(std::system(("umount '" + mnt.string() + "'").c_str()), 0);
}

}  // namespace
}  // namespace carb
