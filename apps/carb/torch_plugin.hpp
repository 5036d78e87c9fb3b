// Loading of the LibTorch plugin (libcarb_torch.so), which holds the profiler backends. Only
// `carb profile` needs it; every other subcommand starts without LibTorch.
#pragma once

namespace carb::cli {

/// Loads the plugin once and registers its backends. Looks at $CARB_TORCH_PLUGIN, then next to
/// the carb executable, then where the build put it. Throws carb::Error with dlopen's reason when
/// it cannot be loaded, or when carb was built without LibTorch.
void load_torch_backends();

}  // namespace carb::cli
