#include "carb/warning.hpp"

#include "util/held_warnings.hpp"

#include <atomic>
#include <iostream>
#include <mutex>
#include <utility>

namespace carb {
namespace {
std::mutex& lock() {
  static std::mutex m;
  return m;
}
WarningHandler& current() {
  static WarningHandler h;
  return h;
}
}  // namespace

WarningHandler set_warning_handler(WarningHandler handler) {
  const std::lock_guard<std::mutex> g(lock());
  return std::exchange(current(), std::move(handler));
}

namespace {
thread_local std::vector<std::string>* t_held = nullptr;  // the innermost HeldWarnings of this thread
}  // namespace

void warn(const std::string& text) {
  if (t_held) return t_held->push_back(text);
  // The handler is called with no lock of carb's held: Python's takes the GIL, which a thread
  // waiting here may hold (an eighty-ninth-pass deadlock: two Python threads warning at once hung
  // the process, each holding what the other waited for). A handler may be called from several
  // threads at once.
  WarningHandler handler;
  {
    const std::lock_guard<std::mutex> g(lock());
    handler = current();
  }
  if (handler) return handler(text);
  static std::mutex out;  // one whole line at a time
  const std::lock_guard<std::mutex> g(out);
  std::cerr << "carb: warning: " << text << '\n';
}

namespace detail {

HeldWarnings::HeldWarnings() : outer_(t_held) { t_held = &held_; }

void HeldWarnings::release() {
  if (released_) return;
  released_ = true;
  t_held = outer_;
  for (const std::string& w : held_) warn(w);  // to the outer holder, or said
}

HeldWarnings::~HeldWarnings() {
  if (released_) return;
  released_ = true;
  t_held = outer_;
  for (const std::string& w : held_) try {
      warn(w);
    } catch (...) {  // the failure in flight is the one to report
    }
}

}  // namespace detail

namespace {
std::atomic<std::uint64_t> g_round{0};
}  // namespace

void new_warning_round() { g_round.fetch_add(1); }
std::uint64_t warning_round() { return g_round.load(); }

}  // namespace carb
