// Energy meters: a monotonic joule counter read before and after a timed window.
// Kinds: RAPL (Linux powercap, CPU package) and NVML (GPU total-energy counter).
#pragma once
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace carb {

class EnergyMeter {
 public:
  virtual ~EnergyMeter() = default;
  virtual std::string name() const = 0;
  /// Cumulative joules since an arbitrary origin, wrap-around already handled.
  /// nullopt when the counter cannot be read now.
  virtual std::optional<double> joules() = 0;
};

/// RAPL package-energy meter over every intel-rapl:N (or amd) package zone under `root`;
/// nullptr when none is readable (then energy stays empty, never estimated).
std::unique_ptr<EnergyMeter> make_rapl_meter(const std::filesystem::path& root = "/sys/class/powercap");

}  // namespace carb
