// Peak-memory tracking for CPU tensors: an allocator installed in place of LibTorch's
// CPU allocator that counts live bytes and the peak. Torch-free interface.
#pragma once
#include <cstdint>

namespace carb::cpu_memory {

/// Installs the tracking allocator (idempotent). Must run before any tensor exists.
void install();
bool installed();
int64_t current_bytes();
int64_t peak_bytes();
/// Sets the peak to the current live bytes, so the next peak covers only what follows.
void reset_peak();

}  // namespace carb::cpu_memory
