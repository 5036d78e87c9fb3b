// SIGINT/SIGTERM as a request to stop (src/util/stop_signal.*).
#include "util/stop_signal.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <memory>
#include <thread>

namespace carb::detail {
namespace {

TEST(StopSignal, AFirstSignalIsRecordedNotDelivered) {
  StopOnSignals signals;
  EXPECT_EQ(stop_signal(), 0);
  ASSERT_EQ(std::raise(SIGTERM), 0);
  EXPECT_EQ(stop_signal(), SIGTERM);
}

// The public scope says what was recorded, for a caller whose work finished after its last check
// (the Python module delivers it again once Python's handlers are back); an inner scope sees the
// outer one's record.
TEST(StopSignal, AScopeSaysTheSignalRecordedSinceTheOutermostOpened) {
  const StopOnSignalsScope outer;
  EXPECT_EQ(outer.signal(), 0);
  ASSERT_EQ(std::raise(SIGINT), 0);
  const StopOnSignalsScope inner;
  EXPECT_EQ(inner.signal(), SIGINT);
  EXPECT_EQ(outer.signal(), SIGINT);
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

// A review: two scopes closed out of the order they were opened in (two threads, e.g. two
// carb.profile calls from Python) left carb's handler installed for good. The last one closed puts
// back what was there before the first.
TEST(StopSignal, ScopesClosedOutOfOrderPutBackTheHandlerThatWasThere) {
  static volatile std::sig_atomic_t seen = 0;
  struct sigaction mine {}, before {}, after {};
  mine.sa_handler = [](int) { seen = 1; };
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(sigaction(SIGTERM, &mine, &before), 0);
  {
    auto a = std::make_unique<StopOnSignals>();
    auto b = std::make_unique<StopOnSignals>();
    a.reset();  // the first opened closes first
    ASSERT_EQ(std::raise(SIGTERM), 0);
    EXPECT_EQ(stop_signal(), SIGTERM) << "still inside b: recorded";
    b.reset();
  }
  ASSERT_EQ(sigaction(SIGTERM, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, mine.sa_handler);
  seen = 0;
  ASSERT_EQ(std::raise(SIGTERM), 0);
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(stop_signal(), 0);
  ASSERT_EQ(sigaction(SIGTERM, &before, nullptr), 0);
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
