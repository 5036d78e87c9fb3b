// SIGINT/SIGTERM recorded as a request to stop (see stop_signal.hpp).
#include "util/stop_signal.hpp"

#include <atomic>
#include <cstdint>
#include <ctime>
#include <mutex>
#include <string>

#include "carb/error.hpp"

namespace carb::detail {
namespace {

volatile std::sig_atomic_t g_signal = 0;
std::atomic<int> g_scopes{0};
// When the first signal came (CLOCK_MONOTONIC, ns); 0 while none has. Lock-free, so that a signal
// delivered to another thread (LibTorch's) reads it whole.
std::atomic<int64_t> g_first_ns{0};
static_assert(std::atomic<int64_t>::is_always_lock_free);

int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// Only async-signal-safe calls here (clock_gettime, sigaction, raise).
void on_signal(int sig) {
  const int64_t now = now_ns();
  int64_t expected = 0;
  if (g_first_ns.compare_exchange_strong(expected, now)) {
    g_signal = sig;
    return;
  }
  // coreutils `timeout` sends its signal to the command and to its process group, so the command
  // gets it twice at once (the H200 campaign of 2026-12-04 ended that way with no summary): a
  // second signal within kSameStopRequestS of the first is the same request.
  if (static_cast<double>(now - expected) < kSameStopRequestS * 1e9) return;
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);  // delivered once this handler returns
}

// Installs on_signal for `sig` (both signals blocked while it runs, and it stays installed after a
// delivery), unless the process was started ignoring `sig`; returns what was there.
struct sigaction catch_signal(int sig) {
  struct sigaction old {};
  sigaction(sig, nullptr, &old);
  if (old.sa_handler == SIG_IGN) return old;
  struct sigaction act {};
  act.sa_handler = on_signal;
  sigemptyset(&act.sa_mask);
  sigaddset(&act.sa_mask, SIGINT);
  sigaddset(&act.sa_mask, SIGTERM);
  act.sa_flags = SA_RESTART;
  sigaction(sig, &act, nullptr);
  return old;
}

}  // namespace

// Only the outermost scope installs the handler and puts back what was there: scopes opened and
// closed out of order by two threads (two carb.profile calls from Python) left carb's handler in
// place for good, each restoring what the other had installed.
static std::mutex g_scope_mutex;
static struct sigaction g_old_int {}, g_old_term {};

std::string signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal " + std::to_string(sig);
}

int stop_signal() { return g_scopes.load() > 0 ? static_cast<int>(g_signal) : 0; }

void throw_if_stopped(const char* what, const char* kept) {
  const int sig = stop_signal();
  if (sig == 0) return;
  throw Interrupted(sig, std::string(what) + " interrupted by " + signal_name(sig) + "; " + kept);
}

}  // namespace carb::detail

namespace carb {

StopOnSignalsScope::StopOnSignalsScope() {
  using namespace detail;
  const std::lock_guard<std::mutex> lock(g_scope_mutex);
  if (g_scopes.load() == 0) {
    g_signal = 0, g_first_ns = 0;
    g_old_int = catch_signal(SIGINT);
    g_old_term = catch_signal(SIGTERM);
  }
  g_scopes.fetch_add(1);
}

int StopOnSignalsScope::signal() const { return detail::stop_signal(); }

StopOnSignalsScope::~StopOnSignalsScope() {
  using namespace detail;
  const std::lock_guard<std::mutex> lock(g_scope_mutex);
  if (g_scopes.fetch_sub(1) == 1) {
    sigaction(SIGINT, &g_old_int, nullptr);
    sigaction(SIGTERM, &g_old_term, nullptr);
  }
}

}  // namespace carb
