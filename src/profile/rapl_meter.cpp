// RAPL (powercap) energy meter. energy_uj wraps at max_energy_range_uj; we accumulate
// deltas so a window spanning a wrap is still right (assuming under one wrap per read).
#include <fstream>

#include "energy_meter.hpp"

namespace carb {
namespace {

std::optional<double> read_number(const std::filesystem::path& f) {
  std::ifstream in(f);
  double v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

class RaplMeter final : public EnergyMeter {
 public:
  struct Zone {
    std::filesystem::path energy;
    double range_uj = 0, last_uj = 0;
  };
  explicit RaplMeter(std::vector<Zone> zones) : zones_(std::move(zones)) {}
  std::string name() const override { return "rapl"; }
  std::optional<double> joules() override {
    for (auto& z : zones_) {
      auto now = read_number(z.energy);
      if (!now) return std::nullopt;
      double d = *now - z.last_uj;
      if (d < 0) d += z.range_uj;  // the counter wrapped
      total_uj_ += d;
      z.last_uj = *now;
    }
    return total_uj_ / 1e6;
  }

 private:
  std::vector<Zone> zones_;
  double total_uj_ = 0;
};

}  // namespace

std::unique_ptr<EnergyMeter> make_rapl_meter(const std::filesystem::path& root) {
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) return nullptr;
  std::vector<RaplMeter::Zone> zones;
  for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
    const std::string n = e.path().filename().string();
    // Top-level package zones only ("intel-rapl:0", not "intel-rapl:0:0" sub-zones).
    if (n.rfind("intel-rapl:", 0) != 0 || n.find(':', 11) != std::string::npos) continue;
    auto now = read_number(e.path() / "energy_uj");
    auto range = read_number(e.path() / "max_energy_range_uj");
    if (!now || !range) continue;
    zones.push_back({e.path() / "energy_uj", *range, *now});
  }
  if (zones.empty()) return nullptr;
  return std::make_unique<RaplMeter>(std::move(zones));
}

}  // namespace carb
