// A tiny NVML binding loaded with dlopen at run time, so one carb binary runs on machines
// with and without an NVIDIA driver, and builds without the NVML header. Only reads:
// nothing here changes a GPU setting (no clocks, no power limits, no persistence mode).
// Tests inject a table of fake functions instead of a real library (Nvml::from_symbols).
#pragma once
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "energy_meter.hpp"

namespace carb {

/// NVML's opaque device handle (nvmlDevice_t).
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;

/// nvmlUtilization_t: percent of the last sample period the SMs / memory were busy.
struct NvmlUtilization {
  unsigned gpu = 0, memory = 0;
};

/// nvmlMemory_t (version 1): the device's memory in bytes.
struct NvmlMemory {
  unsigned long long total = 0, free = 0, used = 0;
};

/// NVML return codes we name (nvmlReturn_t is a C enum, int-sized on every ABI carb targets).
struct NvmlCode {
  static constexpr int kSuccess = 0;
  static constexpr int kUninitialized = 1;
  static constexpr int kInvalidArgument = 2;
  static constexpr int kNotSupported = 3;
  static constexpr int kNoPermission = 4;
};

/// nvmlClockType_t values.
enum class NvmlClock : int { graphics = 0, sm = 1, mem = 2 };

/// What dlsym fills: one pointer per NVML entry point; nullptr = not exported by this driver.
/// Required: init, get_handle_by_index. Everything else only makes its quantity unavailable.
struct NvmlSymbols {
  int (*init)() = nullptr;                                      // nvmlInit_v2
  int (*shutdown)() = nullptr;                                  // nvmlShutdown
  const char* (*error_string)(int) = nullptr;                   // nvmlErrorString
  int (*get_count)(unsigned*) = nullptr;                        // nvmlDeviceGetCount_v2
  int (*get_handle_by_index)(unsigned, NvmlDevice*) = nullptr;  // nvmlDeviceGetHandleByIndex_v2
  int (*get_handle_by_pci_bus_id)(const char*, NvmlDevice*) = nullptr;  // ..ByPciBusId_v2
  int (*get_index)(NvmlDevice, unsigned*) = nullptr;                    // nvmlDeviceGetIndex
  int (*get_name)(NvmlDevice, char*, unsigned) = nullptr;               // nvmlDeviceGetName
  int (*get_driver_version)(char*, unsigned) = nullptr;      // nvmlSystemGetDriverVersion
  int (*get_total_energy)(NvmlDevice, unsigned long long*) = nullptr;  // ..TotalEnergyConsumption, mJ
  int (*get_utilization)(NvmlDevice, NvmlUtilization*) = nullptr;      // ..UtilizationRates
  int (*get_clock)(NvmlDevice, int, unsigned*) = nullptr;              // ..ClockInfo, MHz
  int (*get_temperature)(NvmlDevice, int, unsigned*) = nullptr;        // ..Temperature, C
  int (*get_power_limit)(NvmlDevice, unsigned*) = nullptr;  // ..PowerManagementLimit, mW
  int (*get_power_usage)(NvmlDevice, unsigned*) = nullptr;  // ..PowerUsage, mW
  int (*get_memory_info)(NvmlDevice, NvmlMemory*) = nullptr;  // nvmlDeviceGetMemoryInfo, bytes
};

/// Default library name; the environment variable CARB_NVML_LIB overrides it.
inline constexpr const char* kNvmlDefaultLib = "libnvidia-ml.so.1";

class Nvml {
 public:
  /// Loads NVML from `lib` (empty: $CARB_NVML_LIB, else libnvidia-ml.so.1) and initialises it.
  /// nullptr when unavailable; then *why_not (if given) says why in one line.
  static std::unique_ptr<Nvml> open(std::string* why_not = nullptr, const std::string& lib = "");
  /// Same from an already-filled symbol table (tests; no library is loaded or closed).
  static std::unique_ptr<Nvml> from_symbols(const NvmlSymbols& s, std::string* why_not = nullptr);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  /// Where the functions came from ("libnvidia-ml.so.1", or "injected").
  const std::string& source() const;
  /// NVML's text for a return code ("code N" when nvmlErrorString is missing).
  std::string error_string(int code) const;

  std::optional<unsigned> device_count() const;
  /// NVML index of the GPU at a PCI bus id such as "00000000:19:00.0" (as CUDA reports it):
  /// NVML enumerates in PCI order, CUDA by default fastest-first and after CUDA_VISIBLE_DEVICES.
  std::optional<int> index_by_pci_bus_id(const std::string& bus_id) const;
  std::optional<std::string> driver_version() const;
  std::optional<std::string> device_name(int device) const;
  std::optional<unsigned long long> total_energy_mj(int device, int* code = nullptr) const;
  std::optional<NvmlUtilization> utilization(int device) const;
  std::optional<unsigned> clock_mhz(int device, NvmlClock which) const;
  std::optional<unsigned> temperature_c(int device) const;
  std::optional<double> power_limit_w(int device) const;
  std::optional<double> power_usage_w(int device) const;
  /// The device's total memory in MB of 10^6 bytes (nvmlDeviceGetMemoryInfo's total; nvidia-smi's
  /// "memory.total"), the unit of every peak_memory_mb.
  std::optional<double> memory_total_mb(int device) const;

  /// The GPU's total-energy counter as an EnergyMeter (joules); nullptr when the GPU has
  /// no such counter (pre-Volta: NOT_SUPPORTED) or it cannot be read, so energy stays empty.
  /// The meter shares ownership of the library: it may outlive this object.
  std::unique_ptr<EnergyMeter> energy_meter(int device, std::string* why_not = nullptr) const;

  struct Lib;  // the loaded library and its symbols (shared with meters and samplers)

 private:
  explicit Nvml(std::shared_ptr<Lib> lib) : lib_(std::move(lib)) {}
  std::shared_ptr<Lib> lib_;
  friend class UtilSampler;
};

/// Averages NVML's SM and memory utilization over a window, sampled on a background thread.
/// NVML itself reports busy-percent over its last sample period (1/6 s to 1 s by GPU),
/// so sampling every ~20 ms sees every update it makes.
class UtilSampler {
 public:
  struct Result {
    std::optional<double> sm, mem;  // percent; nullopt when no sample succeeded
    int samples = 0;
  };
  UtilSampler(const Nvml& nvml, int device, std::chrono::milliseconds period = std::chrono::milliseconds(20));
  ~UtilSampler();  // stops the thread if still running
  UtilSampler(const UtilSampler&) = delete;
  UtilSampler& operator=(const UtilSampler&) = delete;

  void start();
  /// Stops sampling and returns the averages over everything sampled since start().
  Result stop();

 private:
  void loop();
  std::shared_ptr<Nvml::Lib> lib_;
  NvmlDevice handle_ = nullptr;
  std::chrono::milliseconds period_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  double sum_sm_ = 0, sum_mem_ = 0;
  int samples_ = 0;
};

}  // namespace carb
