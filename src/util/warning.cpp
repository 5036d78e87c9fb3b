#include "carb/warning.hpp"

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

}  // namespace carb
