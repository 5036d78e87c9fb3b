// What a model knows of its device beyond the rows (carb/model.hpp, DeviceLimits).
#include <cmath>

#include "carb/error.hpp"
#include "carb/model.hpp"
#include "carb/text_table.hpp"

namespace carb {

void DeviceLimits::check() const {
  const auto positive = [](const std::optional<double>& v, const char* what) {
    if (v && !(*v > 0 && std::isfinite(*v)))
      throw InputError(std::string("the device's ") + what + " must be a positive number, not " + fmt_num(*v, 6));
  };
  positive(memory_mb, "memory (MB)");
  positive(power_limit_w, "power limit (W)");
}

void CarbModel::set_device_limits(const DeviceLimits& d) {
  d.check();
  device_ = d;
}

}  // namespace carb
