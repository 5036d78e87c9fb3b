// Registration of the LibTorch profiler backends (defined in *_torch.cpp files).
#pragma once

namespace carb {

void register_cpu_backend();
void register_cuda_backend();

}  // namespace carb
