// The CPU tracking allocator. It sees ATen storage (weights, inputs, activations,
// workspace tensors) but not oneDNN's private scratch buffers; recorded as such.
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>
#include <torch/version.h>

#include <atomic>

#include "tracking_allocator.hpp"

namespace carb::cpu_memory {
namespace {

std::atomic<int64_t> g_current{0}, g_peak{0};
std::atomic<bool> g_installed{false};

// LibTorch's raw_allocate() requires the data pointer to be its own context, so the size
// lives in a 64-byte header just before the data (64 keeps alloc_cpu's alignment).
constexpr std::size_t kHeader = 64;

// LibTorch 2.3 made Allocator::allocate non-const and added the pure virtual copy_data.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define CARB_ALLOCATE_CONST
#define CARB_ALLOCATOR_COPY_DATA 1
#else
#define CARB_ALLOCATE_CONST const
#define CARB_ALLOCATOR_COPY_DATA 0
#endif

void release(void* data) {
  char* base = static_cast<char*>(data) - kHeader;
  g_current.fetch_sub(*reinterpret_cast<int64_t*>(base));
  c10::free_cpu(base);
}

class TrackingAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t n) CARB_ALLOCATE_CONST override {
    char* base = static_cast<char*>(c10::alloc_cpu(n + kHeader));
    const auto bytes = static_cast<int64_t>(n);
    *reinterpret_cast<int64_t*>(base) = bytes;
    void* data = base + kHeader;
    int64_t now = g_current.fetch_add(bytes) + bytes;
    int64_t peak = g_peak.load();
    while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
    }
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
#if CARB_ALLOCATOR_COPY_DATA
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
#endif
};

TrackingAllocator g_allocator;

}  // namespace

void install() {
  if (g_installed.exchange(true)) return;
  c10::SetCPUAllocator(&g_allocator, /*priority=*/100);
}
bool installed() { return g_installed.load(); }
int64_t current_bytes() { return g_current.load(); }
int64_t peak_bytes() { return g_peak.load(); }
void reset_peak() { g_peak.store(g_current.load()); }

}  // namespace carb::cpu_memory
