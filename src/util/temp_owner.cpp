#include "util/temp_owner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>

#include "carb/error.hpp"

namespace carb::detail {

namespace fs = std::filesystem;

namespace {


std::string prefix_of(const fs::path& target, const std::string& tag) {
  return "." + target.filename().string() + tag;
}

// True when some process holds an flock on the temporary: its owner is alive, though its pid may
// name no process here (another PID namespace, another node of a shared file system).
bool held_by_a_live_owner(const fs::path& temp) {
  const int fd = ::open(temp.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // releases our lock, if we took it
  return held;
}

// The kinds of temporary a name may hold after its PID (owned_temp_template's `kind`): a staging
// name, "old-" (what a bundle's swap moved aside) and "keep-" (keep_earlier's copy of a user's file:
// a killed run's was never taken for stale, and every later run left it hidden beside the kept file).
constexpr const char* kKinds[] = {"old-", "keep-"};

// The name is exactly prefix + PID + "-" + ("" or one of kKinds) + six characters of mkstemp's
// alphabet, that process is gone and nobody holds the temporary. `kind`, when given, is what the
// name holds after the PID: "", "old-" or "keep-".
bool owner_gone(const fs::path& temp, const std::string& prefix, const std::string* kind = nullptr) {
  const std::string name = temp.filename().string();
  const char* digits = name.c_str() + prefix.size();
  char* end = nullptr;
  const long pid = std::strtol(digits, &end, 10);
  if (end == digits || *end != '-' || pid <= 0 || !std::isdigit(static_cast<unsigned char>(*digits))) return false;
  std::string rest(end + 1);
  std::string found;
  for (const std::string k : kKinds)
    if (rest.rfind(k, 0) == 0) found = k;
  if (kind && found != *kind) return false;
  rest.erase(0, found.size());
  if (rest.size() != 6 || !std::all_of(rest.begin(), rest.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); }))
    return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH && !held_by_a_live_owner(temp);
}

}  // namespace

fs::path parent_of(const fs::path& p) { return p.has_parent_path() ? p.parent_path() : fs::path("."); }

int hold_temp(const fs::path& temp) {
  const int fd = ::open(temp.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) (void)::flock(fd, LOCK_EX | LOCK_NB);
  return fd;
}

std::string owned_temp_template(const fs::path& target, const std::string& tag, const std::string& kind) {
  return (parent_of(target) / (prefix_of(target, tag) + std::to_string(::getpid()) + "-" + kind + "XXXXXX")).string();
}

void check_temp_name_fits(const fs::path& target, const std::string& tag, const std::string& kind) {
  long name_max = ::pathconf(parent_of(target).c_str(), _PC_NAME_MAX);
  if (name_max <= 0) name_max = 255;
  // The longest pid Linux hands out has 7 digits (pid_max is at most 4194304).
  const std::size_t longest = prefix_of(target, tag).size() + 7 + 1 + kind.size() + 6;
  if (longest > static_cast<std::size_t>(name_max))
    throw InputError(target.string() + ": the name is too long for carb to write safely (it writes through a "
                     "temporary name " + std::to_string(longest - target.filename().string().size()) +
                     " characters longer, and names here hold at most " + std::to_string(name_max) + ")");
}

void remove_stale_temps(const fs::path& target, const std::string& tag, const std::function<bool(const fs::path&)>& ours) {
  std::error_code ec;
  const std::string prefix = prefix_of(target, tag);
  for (const auto& e : fs::directory_iterator(parent_of(target), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && owner_gone(e.path(), prefix) && ours(e.path())) fs::remove_all(e.path(), ec);
  }
}

std::vector<fs::path> dead_owners_temps(const fs::path& target, const std::string& tag, const std::string& kind) {
  std::error_code ec;
  const std::string prefix = prefix_of(target, tag);
  std::vector<std::pair<fs::file_time_type, fs::path>> found;
  for (const auto& e : fs::directory_iterator(parent_of(target), ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && owner_gone(e.path(), prefix, &kind))
      found.emplace_back(fs::last_write_time(e.path(), ec), e.path());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<fs::path> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

}  // namespace carb::detail
