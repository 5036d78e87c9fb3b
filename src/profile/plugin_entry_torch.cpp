// The entry point `carb` calls after loading the LibTorch plugin (libcarb_torch.so) with dlopen:
// registers the LibTorch profiler backends into carb_core's backend registry.
#include "backends.hpp"

extern "C" __attribute__((visibility("default"))) void carb_torch_register_backends() {
  carb::register_cpu_backend();
  carb::register_cuda_backend();
}
