// SIGINT/SIGTERM recorded as a request to stop (see stop_signal.hpp).
#include "util/stop_signal.hpp"

#include <atomic>
#include <ctime>
#include <string>

#include "carb/error.hpp"

namespace carb::detail {
namespace {

volatile std::sig_atomic_t g_signal = 0;
std::atomic<int> g_scopes{0};
timespec g_first{};  // when the first signal came (CLOCK_MONOTONIC)

double seconds_between(const timespec& a, const timespec& b) {
  return static_cast<double>(b.tv_sec - a.tv_sec) + 1e-9 * static_cast<double>(b.tv_nsec - a.tv_nsec);
}

// Only async-signal-safe calls here (clock_gettime, signal, raise).
void on_signal(int sig) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (g_signal == 0) {
    g_signal = sig;
    g_first = now;
    return;
  }
  // coreutils `timeout` sends its signal to the command and to its process group, so the command
  // gets it twice at once (the H200 campaign of 2026-12-04 ended that way with no summary): a
  // second signal within a second of the first is the same request.
  if (seconds_between(g_first, now) < kSameStopRequestS) return;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

using Handler = void (*)(int);
Handler catch_signal(int sig) {
  const Handler old = std::signal(sig, on_signal);
  if (old == SIG_IGN) std::signal(sig, SIG_IGN);
  return old;
}

}  // namespace

StopOnSignals::StopOnSignals() : outer_(g_scopes.fetch_add(1) == 0) {
  if (outer_) g_signal = 0;
  old_int_ = catch_signal(SIGINT);
  old_term_ = catch_signal(SIGTERM);
}

StopOnSignals::~StopOnSignals() {
  std::signal(SIGINT, old_int_);
  std::signal(SIGTERM, old_term_);
  g_scopes.fetch_sub(1);
}

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
