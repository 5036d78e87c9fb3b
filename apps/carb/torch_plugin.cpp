// dlopen of the LibTorch plugin: see torch_plugin.hpp.
#include "torch_plugin.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "carb/error.hpp"

namespace carb::cli {

#ifdef CARB_WITH_TORCH

namespace {

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("CARB_TORCH_PLUGIN"); env && *env) out.emplace_back(env);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back((exe.parent_path() / CARB_TORCH_PLUGIN_NAME).string());
  out.emplace_back(CARB_TORCH_PLUGIN_BUILT);
  return out;
}

}  // namespace

void load_torch_backends() {
  static bool loaded = false;
  if (loaded) return;
  std::string why;
  for (const auto& path : candidates()) {
    if (!std::filesystem::exists(path)) {
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

void load_torch_backends() {
  throw MeasureError("this carb was built without LibTorch (CARB_WITH_TORCH=OFF): it cannot profile");
}

#endif

}  // namespace carb::cli
