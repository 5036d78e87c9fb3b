// `carb screen` as a process: a signal while the models predict a large space stops it with exit
// 130 and a line saying so, nothing written (it ended by the signal's default action, without a word).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "analysis/synthetic_datasets.hpp"
#include "carb/dataset.hpp"
#include "cli/cli_run.hpp"
#include "cli/large_space.hpp"
#include "profile/carb_process.hpp"

namespace {

using namespace carb_cli_test;
namespace fs = std::filesystem;

TEST(ScreenCli, ASignalWhileTheModelPredictsTheSpaceStopsTheScreen) {
  const fs::path dir = scratch().dir();
  write_large_space(dir / "screened_space.csv");
  carb::testing::synthetic_source_model().save(dir / "screen_model", true);
  const fs::path out = dir / "screen.out", err = dir / "screen.err";
  const pid_t pid = carb::test::spawn_carb({"screen", "--configs", (dir / "screened_space.csv").string(),
                                            "--source-model", (dir / "screen_model").string(), "--latency-max", "50"},
                                           out, err);
  ASSERT_GT(pid, 0);
  const auto t0 = std::chrono::steady_clock::now();
  while (slurp(err).find("configurations predicted") == std::string::npos && !carb::test::has_ended(pid) &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_NE(slurp(err).find("carb screen: "), std::string::npos) << "no progress while predicting: " << slurp(err);
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  const int status = carb::test::wait_status(pid);
  ASSERT_TRUE(WIFEXITED(status)) << "screen died by the signal instead of stopping";
  EXPECT_EQ(WEXITSTATUS(status), 130) << slurp(err);
  EXPECT_NE(slurp(err).find("carb: screen interrupted by SIGINT; nothing was written\n"), std::string::npos) << slurp(err);
  EXPECT_EQ(slurp(out), "");  // no partial table
}

}  // namespace
