// NVML through dlopen: loading, the read-only per-device queries, the total-energy meter
// and the background utilization sampler. Every call's return code is checked; a failure
// makes that one quantity unavailable (nullopt) instead of guessing a value.
#include "nvml.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace carb {

struct Nvml::Lib {
  NvmlSymbols sym;
  std::string source;
  // The dlopen handle is deliberately never closed: unloading a driver library while other
  // code in the process (LibTorch, the CUDA runtime) may hold it buys nothing and risks a crash.
  void* handle = nullptr;
  ~Lib() {
    if (sym.shutdown) sym.shutdown();  // balances our nvmlInit_v2 (NVML counts them)
  }
  std::optional<NvmlDevice> device(int index) const {
    NvmlDevice h = nullptr;
    if (index < 0 || sym.get_handle_by_index(static_cast<unsigned>(index), &h) != NvmlCode::kSuccess)
      return std::nullopt;
    return h;
  }
};

namespace {

// dlsym returns an object pointer; copying its bits avoids the pedantic-mode warning about
// casting object pointers to function pointers (POSIX guarantees they have the same size).
template <class F>
void bind(void* handle, const char* name, F& out) {
  void* p = dlsym(handle, name);
  static_assert(sizeof p == sizeof out);
  std::memcpy(&out, &p, sizeof p);
}

NvmlSymbols resolve(void* h) {
  NvmlSymbols s;
  bind(h, "nvmlInit_v2", s.init);
  bind(h, "nvmlShutdown", s.shutdown);
  bind(h, "nvmlErrorString", s.error_string);
  bind(h, "nvmlDeviceGetCount_v2", s.get_count);
  bind(h, "nvmlDeviceGetHandleByIndex_v2", s.get_handle_by_index);
  bind(h, "nvmlDeviceGetHandleByPciBusId_v2", s.get_handle_by_pci_bus_id);
  bind(h, "nvmlDeviceGetIndex", s.get_index);
  bind(h, "nvmlDeviceGetName", s.get_name);
  bind(h, "nvmlSystemGetDriverVersion", s.get_driver_version);
  bind(h, "nvmlDeviceGetTotalEnergyConsumption", s.get_total_energy);
  bind(h, "nvmlDeviceGetUtilizationRates", s.get_utilization);
  bind(h, "nvmlDeviceGetClockInfo", s.get_clock);
  bind(h, "nvmlDeviceGetTemperature", s.get_temperature);
  bind(h, "nvmlDeviceGetPowerManagementLimit", s.get_power_limit);
  bind(h, "nvmlDeviceGetPowerUsage", s.get_power_usage);
  bind(h, "nvmlDeviceGetMemoryInfo", s.get_memory_info);
  return s;
}

void set_reason(std::string* why_not, const std::string& reason) {
  if (why_not) *why_not = reason;
}

// Reads one unsigned quantity of a device; nullopt when the function is missing or fails.
std::optional<unsigned> read_unsigned(const Nvml::Lib& lib, int device, int (*fn)(NvmlDevice, unsigned*)) {
  if (!fn) return std::nullopt;
  auto h = lib.device(device);
  unsigned v = 0;
  if (!h || fn(*h, &v) != NvmlCode::kSuccess) return std::nullopt;
  return v;
}

class NvmlEnergyMeter final : public EnergyMeter {
 public:
  NvmlEnergyMeter(std::shared_ptr<Nvml::Lib> lib, NvmlDevice h) : lib_(std::move(lib)), h_(h) {}
  std::string name() const override { return "nvml"; }
  // The counter is 64-bit millijoules since the driver loaded: it never wraps in practice.
  std::optional<double> joules() override {
    unsigned long long mj = 0;
    if (lib_->sym.get_total_energy(h_, &mj) != NvmlCode::kSuccess) return std::nullopt;
    return static_cast<double>(mj) / 1e3;
  }

 private:
  std::shared_ptr<Nvml::Lib> lib_;
  NvmlDevice h_;
};

}  // namespace

std::unique_ptr<Nvml> Nvml::open(std::string* why_not, const std::string& lib) {
  std::string path = lib;
  if (path.empty()) {
    const char* env = std::getenv("CARB_NVML_LIB");
    path = env && *env ? env : kNvmlDefaultLib;
  }
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* err = dlerror();
    set_reason(why_not, "cannot load NVML library '" + path + "': " + (err ? err : "unknown dlopen error"));
    return nullptr;
  }
  auto nvml = from_symbols(resolve(h), why_not);
  if (!nvml) {
    if (why_not) *why_not = "NVML library '" + path + "': " + *why_not;
    return nullptr;
  }
  nvml->lib_->source = path;
  nvml->lib_->handle = h;
  return nvml;
}

std::unique_ptr<Nvml> Nvml::from_symbols(const NvmlSymbols& s, std::string* why_not) {
  if (!s.init) {
    set_reason(why_not, "lacks nvmlInit_v2 (driver too old?)");
    return nullptr;
  }
  if (!s.get_handle_by_index) {
    set_reason(why_not, "lacks nvmlDeviceGetHandleByIndex_v2 (driver too old?)");
    return nullptr;
  }
  if (const int rc = s.init(); rc != NvmlCode::kSuccess) {
    const char* text = s.error_string ? s.error_string(rc) : nullptr;
    set_reason(why_not, std::string("nvmlInit_v2 failed: ") + (text ? text : "error") + " (code " +
                            std::to_string(rc) + ")");
    return nullptr;
  }
  auto lib = std::make_shared<Lib>();  // from here on, its destructor owes NVML one shutdown
  lib->sym = s;
  lib->source = "injected";
  return std::unique_ptr<Nvml>(new Nvml(std::move(lib)));
}

Nvml::~Nvml() = default;

const std::string& Nvml::source() const { return lib_->source; }

std::string Nvml::error_string(int code) const {
  const char* s = lib_->sym.error_string ? lib_->sym.error_string(code) : nullptr;
  return s ? s : "code " + std::to_string(code);
}

std::optional<unsigned> Nvml::device_count() const {
  unsigned n = 0;
  if (!lib_->sym.get_count || lib_->sym.get_count(&n) != NvmlCode::kSuccess) return std::nullopt;
  return n;
}

std::optional<int> Nvml::index_by_pci_bus_id(const std::string& bus_id) const {
  const auto& s = lib_->sym;
  if (!s.get_handle_by_pci_bus_id || !s.get_index) return std::nullopt;
  NvmlDevice h = nullptr;
  unsigned index = 0;
  if (s.get_handle_by_pci_bus_id(bus_id.c_str(), &h) != NvmlCode::kSuccess) return std::nullopt;
  if (s.get_index(h, &index) != NvmlCode::kSuccess) return std::nullopt;
  return static_cast<int>(index);
}

std::optional<std::string> Nvml::driver_version() const {
  char buf[96] = {};  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80
  if (!lib_->sym.get_driver_version || lib_->sym.get_driver_version(buf, sizeof buf) != NvmlCode::kSuccess)
    return std::nullopt;
  buf[sizeof buf - 1] = '\0';
  return std::string(buf);
}

std::optional<std::string> Nvml::device_name(int device) const {
  char buf[128] = {};  // NVML_DEVICE_NAME_V2_BUFFER_SIZE is 96
  auto h = lib_->device(device);
  if (!lib_->sym.get_name || !h || lib_->sym.get_name(*h, buf, sizeof buf) != NvmlCode::kSuccess)
    return std::nullopt;
  buf[sizeof buf - 1] = '\0';
  return std::string(buf);
}

std::optional<unsigned long long> Nvml::total_energy_mj(int device, int* code) const {
  if (code) *code = NvmlCode::kNotSupported;
  auto h = lib_->device(device);
  if (!lib_->sym.get_total_energy || !h) return std::nullopt;
  unsigned long long mj = 0;
  const int rc = lib_->sym.get_total_energy(*h, &mj);
  if (code) *code = rc;
  if (rc != NvmlCode::kSuccess) return std::nullopt;
  return mj;
}

std::optional<NvmlUtilization> Nvml::utilization(int device) const {
  auto h = lib_->device(device);
  NvmlUtilization u;
  if (!lib_->sym.get_utilization || !h || lib_->sym.get_utilization(*h, &u) != NvmlCode::kSuccess)
    return std::nullopt;
  return u;
}

std::optional<unsigned> Nvml::clock_mhz(int device, NvmlClock which) const {
  auto h = lib_->device(device);
  unsigned v = 0;
  if (!lib_->sym.get_clock || !h || lib_->sym.get_clock(*h, static_cast<int>(which), &v) != NvmlCode::kSuccess)
    return std::nullopt;
  return v;
}

std::optional<unsigned> Nvml::temperature_c(int device) const {
  auto h = lib_->device(device);
  unsigned v = 0;
  constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
  if (!lib_->sym.get_temperature || !h || lib_->sym.get_temperature(*h, kTemperatureGpu, &v) != NvmlCode::kSuccess)
    return std::nullopt;
  return v;
}

std::optional<double> Nvml::power_limit_w(int device) const {
  auto mw = read_unsigned(*lib_, device, lib_->sym.get_power_limit);
  return mw ? std::optional<double>(*mw / 1e3) : std::nullopt;
}

std::optional<double> Nvml::power_usage_w(int device) const {
  auto mw = read_unsigned(*lib_, device, lib_->sym.get_power_usage);
  return mw ? std::optional<double>(*mw / 1e3) : std::nullopt;
}

std::optional<double> Nvml::memory_total_mb(int device) const {
  auto h = lib_->device(device);
  NvmlMemory m;
  if (!lib_->sym.get_memory_info || !h || lib_->sym.get_memory_info(*h, &m) != NvmlCode::kSuccess || m.total == 0)
    return std::nullopt;
  return static_cast<double>(m.total) / 1e6;
}

std::unique_ptr<EnergyMeter> Nvml::energy_meter(int device, std::string* why_not) const {
  if (!lib_->sym.get_total_energy) {
    set_reason(why_not, "NVML lacks nvmlDeviceGetTotalEnergyConsumption");
    return nullptr;
  }
  auto h = lib_->device(device);
  if (!h) {
    set_reason(why_not, "NVML has no device " + std::to_string(device));
    return nullptr;
  }
  // One trial read: a GPU without the counter (pre-Volta) answers NOT_SUPPORTED; then the
  // energy column stays empty rather than zero.
  int rc = 0;
  if (!total_energy_mj(device, &rc)) {
    const std::string what = rc == NvmlCode::kNotSupported ? "this GPU has no total-energy counter"
                                                           : "cannot read the total-energy counter";
    set_reason(why_not, what + " (" + error_string(rc) + ")");
    return nullptr;
  }
  return std::make_unique<NvmlEnergyMeter>(lib_, *h);
}

// ---- UtilSampler ------------------------------------------------------------------------

UtilSampler::UtilSampler(const Nvml& nvml, int device, std::chrono::milliseconds period)
    : lib_(nvml.lib_), period_(period) {
  if (auto h = lib_->device(device); h && lib_->sym.get_utilization) handle_ = *h;
}

UtilSampler::~UtilSampler() {
  if (thread_.joinable()) stop();
}

void UtilSampler::start() {
  if (thread_.joinable()) stop();
  sum_sm_ = sum_mem_ = 0;
  samples_ = 0;
  if (!handle_) return;  // nothing to sample: stop() reports no samples
  running_ = true;
  thread_ = std::thread([this] { loop(); });
}

void UtilSampler::loop() {
  // At least one sample, even when stop() came before this thread first ran (a window shorter than
  // the scheduler's delay on a loaded machine had none; NVML's utilization covers its own recent
  // past, so a sample taken as the window ends still describes it).
  do {
    NvmlUtilization u;
    if (lib_->sym.get_utilization(handle_, &u) == NvmlCode::kSuccess) {
      sum_sm_ += u.gpu;
      sum_mem_ += u.memory;
      ++samples_;
    }
    if (!running_) break;
    std::this_thread::sleep_for(period_);
  } while (running_);
}

UtilSampler::Result UtilSampler::stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();  // the join makes the thread's sums visible here
  Result r;
  r.samples = samples_;
  if (samples_ > 0) {
    r.sm = sum_sm_ / samples_;
    r.mem = sum_mem_ / samples_;
  }
  return r;
}

}  // namespace carb
