// What a model knows of its device beyond the rows (carb/model.hpp): DeviceLimits, the drift reference.
#include <cmath>

#include "carb/error.hpp"
#include "carb/model.hpp"
#include "carb/text_table.hpp"

namespace carb {

void DeviceLimits::check() const {
  // The CLI's range for --device-memory-mb; a power limit of any device there is (a hostile tester:
  // a hand-sealed manifest's 1e-300 W was "the device's 1e-300 W limit").
  const auto within = [](const std::optional<double>& v, const char* what, double lo, double hi) {
    if (v && !(*v >= lo && *v <= hi))
      throw InputError(std::string("the device's ") + what + " must be between " + fmt_num(lo) + " and " + fmt_num(hi) +
                       ", not " + fmt_num(*v, 6));
  };
  within(memory_mb, "memory (MB)", kMinDeviceMemoryMb, kMaxDeviceMemoryMb);
  within(power_limit_w, "power limit (W)", kMinDevicePowerW, kMaxDevicePowerW);
}

void CarbModel::set_device_limits(const DeviceLimits& d) {
  d.check();
  device_ = d;
}

// A hostile tester: NaN was taken, and save() failed later on a staging directory's manifest.
void CarbModel::set_drift_reference_ms(double r) {
  if (!(r > 0 && std::isfinite(r)))
    throw InputError("a drift reference must be a positive number of milliseconds, not " + fmt_num(r, 6));
  drift_reference_ms_ = r;
}

}  // namespace carb
