#include "util/temp_owner.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace carb::detail {

namespace fs = std::filesystem;

namespace {

fs::path parent_of(const fs::path& p) { return p.has_parent_path() ? p.parent_path() : fs::path("."); }

std::string prefix_of(const fs::path& target, const std::string& tag) {
  return "." + target.filename().string() + tag;
}

bool owner_gone(const std::string& name, const std::string& prefix) {
  const char* digits = name.c_str() + prefix.size();
  char* end = nullptr;
  const long pid = std::strtol(digits, &end, 10);
  if (end == digits || *end != '-' || pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

std::string owned_temp_template(const fs::path& target, const std::string& tag, const std::string& kind) {
  return (parent_of(target) / (prefix_of(target, tag) + std::to_string(::getpid()) + "-" + kind + "XXXXXX")).string();
}

void remove_stale_temps(const fs::path& target, const std::string& tag) {
  std::error_code ec;
  const std::string prefix = prefix_of(target, tag);
  for (const auto& e : fs::directory_iterator(parent_of(target), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && owner_gone(name, prefix)) fs::remove_all(e.path(), ec);
  }
}

}  // namespace carb::detail
