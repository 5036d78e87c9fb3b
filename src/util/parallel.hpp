// Coarse-grained parallelism: n independent tasks on a few threads, each taking the next task
// when it finishes one. Used where the work is whole model fits (the folds and learners of
// training), which keep a thread busy for seconds; fine-grained regions inside a small fit spent
// most of their time parking and waking threads (futex) instead.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

namespace carb {

/// Calls task(i) for every i in [0, n) on min(threads, n) threads (the calling thread is one of
/// them). Tasks start in index order. The first exception thrown by a task is rethrown here after
/// every thread has stopped; tasks not yet started are then skipped.
inline void parallel_tasks(std::size_t n, int threads, const std::function<void(std::size_t)>& task) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::atomic_flag error_set = ATOMIC_FLAG_INIT;
  auto worker = [&] {
    for (std::size_t i; !failed && (i = next++) < n;) {
      try {
        task(i);
      } catch (...) {
        if (!error_set.test_and_set()) error = std::current_exception();
        failed = true;
      }
    }
  };
  const std::size_t workers = std::min<std::size_t>(n, static_cast<std::size_t>(std::max(threads, 1)));
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace carb
