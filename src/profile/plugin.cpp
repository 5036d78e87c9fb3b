// dlopen of the LibTorch plugin: see carb/plugin.hpp. In the library, not the CLI, so that any
// program linking carb can profile.
#include "carb/plugin.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "carb/error.hpp"

namespace carb {

#ifdef CARB_WITH_TORCH

namespace {

std::vector<std::string> candidates(const std::filesystem::path& plugin) {
  if (!plugin.empty()) return {plugin.string()};
  std::vector<std::string> out;
  if (const char* env = std::getenv("CARB_TORCH_PLUGIN"); env && *env) out.emplace_back(env);
  Dl_info self{};  // where this library is: an installed carb keeps the plugin beside it
  if (dladdr(reinterpret_cast<void*>(&load_profiler_backends), &self) && self.dli_fname)
    out.push_back((std::filesystem::path(self.dli_fname).parent_path() / CARB_TORCH_PLUGIN_NAME).string());
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((exe.parent_path() / CARB_TORCH_PLUGIN_NAME).string());
  out.emplace_back(CARB_TORCH_PLUGIN_BUILT);
  return out;
}

}  // namespace

void load_profiler_backends(const std::filesystem::path& plugin) {
  static std::mutex m;
  static bool loaded = false;
  const std::lock_guard<std::mutex> lock(m);
  if (loaded) return;
  std::string why;
  for (const auto& path : candidates(plugin)) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      why += (why.empty() ? "" : "; ") + path + ": not found";
      continue;
    }
    // Never closed: LibTorch does not support being unloaded.
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) throw MeasureError("cannot load the LibTorch profiler plugin " + path + ": " + dlerror());
    using Register = void (*)();
    auto reg = reinterpret_cast<Register>(dlsym(h, "carb_torch_register_backends"));
    if (!reg) throw MeasureError(path + " is not carb's LibTorch plugin (no carb_torch_register_backends)");
    reg();
    loaded = true;
    return;
  }
  throw MeasureError("the LibTorch profiler plugin is missing (" + why + "); rebuild carb, or set CARB_TORCH_PLUGIN");
}

#else

void load_profiler_backends(const std::filesystem::path&) {
  throw MeasureError("this carb was built without LibTorch (CARB_WITH_TORCH=OFF): it cannot profile");
}

#endif

}  // namespace carb
