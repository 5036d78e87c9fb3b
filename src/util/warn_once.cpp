#include "util/warn_once.hpp"

#include <cstdint>
#include <mutex>
#include <set>

#include "carb/warning.hpp"

namespace carb::detail {

void warn_once(const std::string& key, const std::string& text) {
  static std::mutex m;
  static std::uint64_t round = 0;
  static std::set<std::string> told;  // this round's: a new round says everything again
  {
    const std::lock_guard<std::mutex> g(m);
    if (const std::uint64_t now = warning_round(); now != round) told.clear(), round = now;
    if (!told.insert(key + '\n' + text).second) return;
  }
  warn(text);  // outside the lock: a handler may throw (Python's, with warnings made errors)
}

}  // namespace carb::detail
