// SIGINT/SIGTERM as a request to stop (src/util/stop_signal.*).
#include "util/stop_signal.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

namespace carb::detail {
namespace {

TEST(StopSignal, AFirstSignalIsRecordedNotDelivered) {
  StopOnSignals signals;
  EXPECT_EQ(stop_signal(), 0);
  ASSERT_EQ(std::raise(SIGTERM), 0);
  EXPECT_EQ(stop_signal(), SIGTERM);
}

// The H200 campaign of 2026-12-04: `timeout` signals the command and its process group, the
// profiler took the second SIGTERM as "end now" and printed no summary.
TEST(StopSignal, TheSameSignalTwiceAtOnceIsOneRequest) {
  StopOnSignals signals;
  ASSERT_EQ(std::raise(SIGTERM), 0);
  ASSERT_EQ(std::raise(SIGTERM), 0);  // would end the test program before the fix
  ASSERT_EQ(std::raise(SIGINT), 0);
  EXPECT_EQ(stop_signal(), SIGTERM);
}

TEST(StopSignalDeathTest, ASecondSignalLaterEndsTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        StopOnSignals signals;  // SIGTERM: a shell's background job may start with SIGINT ignored
        std::raise(SIGTERM);
        std::this_thread::sleep_for(std::chrono::duration<double>(kSameStopRequestS + 0.2));
        std::raise(SIGTERM);
        std::exit(0);  // not reached: the second SIGTERM ends the process
      },
      testing::KilledBySignal(SIGTERM), "");
}

}  // namespace
}  // namespace carb::detail
