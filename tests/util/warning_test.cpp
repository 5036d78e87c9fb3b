// Warnings (src/util/warning.cpp): the handler is called with no lock of carb's held, so that a
// handler that waits on something another warning thread holds (Python's, the GIL) cannot
// deadlock. The eighty-ninth hostile pass hung a Python process with two threads that warned.
#include "carb/warning.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace carb {
namespace {

TEST(Warning, AHandlerRunsWithNoLockHeldSoAnotherThreadCanWarnMeanwhile) {
  std::mutex m;
  std::condition_variable cv;
  bool first_in_handler = false, second_done = false, second_seen_while_first_waited = false;
  std::vector<std::string> said;
  const WarningHandler before = set_warning_handler([&](const std::string& w) {
    std::unique_lock<std::mutex> g(m);
    said.push_back(w);
    if (w != "first") return;
    first_in_handler = true;
    cv.notify_all();
    // Waits for the other thread's warning to be handled: with carb's lock held across the call
    // it never could be, and this gives up after 10 s instead of hanging the test.
    second_seen_while_first_waited = cv.wait_for(g, std::chrono::seconds(10), [&] { return second_done; });
  });
  std::thread other([&] {
    {
      std::unique_lock<std::mutex> g(m);
      cv.wait(g, [&] { return first_in_handler; });
    }
    warn("second");
    const std::lock_guard<std::mutex> g(m);
    second_done = true;
    cv.notify_all();
  });
  warn("first");
  other.join();
  set_warning_handler(before);
  EXPECT_TRUE(second_seen_while_first_waited);
  EXPECT_EQ(said, (std::vector<std::string>{"first", "second"}));
}

TEST(Warning, ManyThreadsWarningAtOnceAreAllHandled) {
  std::atomic<int> n{0};
  const WarningHandler before = set_warning_handler([&](const std::string&) { ++n; });
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t)
    ts.emplace_back([] {
      for (int k = 0; k < 200; ++k) warn("w");
    });
  for (auto& t : ts) t.join();
  set_warning_handler(before);
  EXPECT_EQ(n.load(), 8 * 200);
}

}  // namespace
}  // namespace carb
