// The profiler backends (cpu, cuda) live in a LibTorch plugin, libcarb_torch.so, loaded on demand
// so that everything else in carb starts without LibTorch. A program that profiles (the CLI's
// `carb profile`, or a C++ service calling run_profile) loads it first.
#pragma once
#include <filesystem>

namespace carb {

/// Loads the plugin once and registers its backends (make_backend("cpu"), "cuda"). Looks at
/// `plugin` when given (and only there); otherwise at $CARB_TORCH_PLUGIN, beside libcarb_core
/// (an installed carb), beside the running executable, then where the build put it. Throws
/// MeasureError with dlopen's reason when it cannot be loaded, when the file is not carb's plugin,
/// or when carb was built without LibTorch. Later calls return at once.
void load_profiler_backends(const std::filesystem::path& plugin = {});

}  // namespace carb
