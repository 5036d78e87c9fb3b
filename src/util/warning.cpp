#include "carb/warning.hpp"

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

void warn(const std::string& text) {
  const std::lock_guard<std::mutex> g(lock());
  if (current())
    current()(text);
  else
    std::cerr << "carb: warning: " << text << '\n';
}

namespace {
std::atomic<std::uint64_t> g_round{0};
}  // namespace

void new_warning_round() { g_round.fetch_add(1); }
std::uint64_t warning_round() { return g_round.load(); }

}  // namespace carb
