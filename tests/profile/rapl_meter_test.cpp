// Tests of the RAPL energy meter against a temporary directory laid out like
// /sys/class/powercap: intel-rapl:N/{energy_uj,max_energy_range_uj}.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "profile/energy_meter.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

class RaplMeter : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            ("carb_rapl_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void zone(const std::string& name, double energy_uj, double range_uj) {
    fs::create_directories(root_ / name);
    set(name, energy_uj);
    std::ofstream(root_ / name / "max_energy_range_uj") << static_cast<long long>(range_uj) << "\n";
  }
  void set(const std::string& name, double energy_uj) {
    std::ofstream(root_ / name / "energy_uj") << static_cast<long long>(energy_uj) << "\n";
  }

  fs::path root_;
};

constexpr double kRange = 262143328850;  // a real package zone's max_energy_range_uj

TEST_F(RaplMeter, ReadsJoulesSinceCreation) {
  zone("intel-rapl:0", 5'000'000, kRange);
  auto m = make_rapl_meter(root_);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name(), "rapl");
  const double e0 = m->joules().value();
  set("intel-rapl:0", 6'500'000);
  EXPECT_NEAR(m->joules().value() - e0, 1.5, 1e-9);
  set("intel-rapl:0", 6'750'000);
  EXPECT_NEAR(m->joules().value() - e0, 1.75, 1e-9);
}

TEST_F(RaplMeter, SumsPackagesAndIgnoresSubZones) {
  zone("intel-rapl:0", 1'000'000, kRange);
  zone("intel-rapl:1", 2'000'000, kRange);
  zone("intel-rapl:0:0", 3'000'000, kRange);  // core sub-zone: already inside package 0
  zone("intel-rapl-mmio:0", 3'000'000, kRange);
  auto m = make_rapl_meter(root_);
  ASSERT_TRUE(m);
  const double e0 = m->joules().value();
  set("intel-rapl:0", 2'000'000);
  set("intel-rapl:1", 4'000'000);
  set("intel-rapl:0:0", 9'000'000);
  set("intel-rapl-mmio:0", 9'000'000);
  EXPECT_NEAR(m->joules().value() - e0, 3.0, 1e-9);
}

TEST_F(RaplMeter, HandlesWrapAround) {
  zone("intel-rapl:0", kRange - 1'000'000, kRange);
  auto m = make_rapl_meter(root_);
  ASSERT_TRUE(m);
  const double e0 = m->joules().value();
  set("intel-rapl:0", 500'000);  // wrapped: 1 J before the wrap + 0.5 J after
  EXPECT_NEAR(m->joules().value() - e0, 1.5, 1e-9);
  set("intel-rapl:0", 2'500'000);  // and keeps accumulating after it
  EXPECT_NEAR(m->joules().value() - e0, 3.5, 1e-9);
}

TEST_F(RaplMeter, NoZonesGiveNoMeter) {
  EXPECT_EQ(make_rapl_meter(root_), nullptr);  // empty directory
  EXPECT_EQ(make_rapl_meter(root_ / "missing"), nullptr);
  zone("intel-rapl:0:0", 1'000'000, kRange);  // only a sub-zone
  EXPECT_EQ(make_rapl_meter(root_), nullptr);
}

TEST_F(RaplMeter, UnreadableZonesAreSkipped) {
  fs::create_directories(root_ / "intel-rapl:0");
  set("intel-rapl:0", 1'000'000);  // no max_energy_range_uj
  EXPECT_EQ(make_rapl_meter(root_), nullptr);
  zone("intel-rapl:1", 1'000'000, kRange);
  auto m = make_rapl_meter(root_);
  ASSERT_TRUE(m);
  const double e0 = m->joules().value();
  set("intel-rapl:1", 3'000'000);
  set("intel-rapl:0", 9'000'000);  // not a zone of this meter
  EXPECT_NEAR(m->joules().value() - e0, 2.0, 1e-9);
}

TEST_F(RaplMeter, CounterVanishingMidRunGivesNullopt) {
  zone("intel-rapl:0", 1'000'000, kRange);
  auto m = make_rapl_meter(root_);
  ASSERT_TRUE(m);
  fs::remove(root_ / "intel-rapl:0" / "energy_uj");
  EXPECT_FALSE(m->joules());
}

}  // namespace
}  // namespace carb
