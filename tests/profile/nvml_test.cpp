// Tests of the NVML binding against a fake NVML: a symbol table of functions whose answers
// (energy counter, utilization, error codes) each test controls. No GPU needed.
#include "profile/nvml.hpp"

#include "profile/energy_window.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace carb {
namespace {

// ---- the fake GPU -----------------------------------------------------------------------

struct FakeGpu {
  int init_rc = NvmlCode::kSuccess;
  int init_calls = 0, shutdown_calls = 0;
  unsigned count = 1;
  int energy_rc = NvmlCode::kSuccess;
  unsigned long long energy_mj = 0;
  // When update_period_ms > 0 the counter is a clock: it advances every update_period_ms by what
  // `watts` gives over the period, as a GPU's total-energy counter does (energy_mj is ignored).
  double update_period_ms = 0, watts = 0;
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  // Utilization answers cycle through this list; an entry with gpu > 100 answers an error.
  std::vector<NvmlUtilization> util = {{80, 40}};
  std::size_t util_calls = 0, util_ok = 0;
  double util_sum_gpu = 0, util_sum_mem = 0;
  int temp_rc = NvmlCode::kSuccess;
  unsigned clocks[3] = {1980, 1755, 2619};
  int devices[4] = {};  // addresses serve as handles
};
FakeGpu g;

NvmlDevice handle_of(unsigned i) { return reinterpret_cast<NvmlDevice>(&g.devices[i]); }
bool valid(NvmlDevice h) {
  for (unsigned i = 0; i < g.count; ++i)
    if (h == handle_of(i)) return true;
  return false;
}

int fake_init() { return ++g.init_calls, g.init_rc; }
int fake_shutdown() { return ++g.shutdown_calls, NvmlCode::kSuccess; }
const char* fake_error_string(int rc) {
  switch (rc) {
    case NvmlCode::kNotSupported: return "Not Supported";
    case NvmlCode::kNoPermission: return "Insufficient Permissions";
    case 9: return "Driver Not Loaded";
  }
  return "Unknown Error";
}
int fake_count(unsigned* n) { return *n = g.count, NvmlCode::kSuccess; }
int fake_handle(unsigned i, NvmlDevice* h) {
  if (i >= g.count) return NvmlCode::kInvalidArgument;
  *h = handle_of(i);
  return NvmlCode::kSuccess;
}
int fake_handle_by_bus(const char* bus, NvmlDevice* h) {
  if (std::strcmp(bus, "00000000:19:00.0") != 0) return 6;  // NVML_ERROR_NOT_FOUND
  *h = handle_of(0);
  return NvmlCode::kSuccess;
}
int fake_index(NvmlDevice h, unsigned* i) {
  if (!valid(h)) return NvmlCode::kInvalidArgument;
  *i = static_cast<unsigned>(reinterpret_cast<int*>(h) - g.devices);
  return NvmlCode::kSuccess;
}
int fake_name(NvmlDevice h, char* buf, unsigned len) {
  if (!valid(h)) return NvmlCode::kInvalidArgument;
  std::snprintf(buf, len, "Fake H200");
  return NvmlCode::kSuccess;
}
int fake_driver(char* buf, unsigned len) { return std::snprintf(buf, len, "550.54.15"), NvmlCode::kSuccess; }
int fake_energy(NvmlDevice h, unsigned long long* mj) {
  if (!valid(h)) return NvmlCode::kInvalidArgument;
  if (g.energy_rc != NvmlCode::kSuccess) return g.energy_rc;
  *mj = g.energy_mj;
  if (g.update_period_ms > 0) {
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g.t0).count();
    *mj = static_cast<unsigned long long>(std::floor(ms / g.update_period_ms) * g.update_period_ms * g.watts);
  }
  return g.energy_rc;
}
int fake_util(NvmlDevice h, NvmlUtilization* u) {
  if (!valid(h)) return NvmlCode::kInvalidArgument;
  const NvmlUtilization v = g.util[g.util_calls++ % g.util.size()];
  if (v.gpu > 100) return NvmlCode::kNotSupported;
  *u = v;
  ++g.util_ok, g.util_sum_gpu += v.gpu, g.util_sum_mem += v.memory;
  return NvmlCode::kSuccess;
}
int fake_clock(NvmlDevice h, int type, unsigned* mhz) {
  if (!valid(h) || type < 0 || type > 2) return NvmlCode::kInvalidArgument;
  return *mhz = g.clocks[type], NvmlCode::kSuccess;
}
int fake_temperature(NvmlDevice h, int sensor, unsigned* c) {
  if (!valid(h) || sensor != 0) return NvmlCode::kInvalidArgument;
  if (g.temp_rc == NvmlCode::kSuccess) *c = 41;
  return g.temp_rc;
}
int fake_power_limit(NvmlDevice, unsigned* mw) { return *mw = 700000, NvmlCode::kSuccess; }
int fake_power_usage(NvmlDevice, unsigned* mw) { return *mw = 123456, NvmlCode::kSuccess; }
int fake_memory(NvmlDevice h, NvmlMemory* m) {
  if (!valid(h)) return NvmlCode::kInvalidArgument;
  m->total = 150754820096ull, m->used = 500000000ull, m->free = m->total - m->used;  // an H200's 143,771 MiB
  return NvmlCode::kSuccess;
}

NvmlSymbols full_table() {
  NvmlSymbols s;
  s.init = fake_init, s.shutdown = fake_shutdown, s.error_string = fake_error_string;
  s.get_count = fake_count, s.get_handle_by_index = fake_handle;
  s.get_handle_by_pci_bus_id = fake_handle_by_bus, s.get_index = fake_index;
  s.get_name = fake_name, s.get_driver_version = fake_driver, s.get_total_energy = fake_energy;
  s.get_utilization = fake_util, s.get_clock = fake_clock, s.get_temperature = fake_temperature;
  s.get_power_limit = fake_power_limit, s.get_power_usage = fake_power_usage;
  s.get_memory_info = fake_memory;
  return s;
}

class NvmlFake : public ::testing::Test {
 protected:
  void SetUp() override { g = FakeGpu(); }
  std::unique_ptr<Nvml> open(const NvmlSymbols& s = full_table()) {
    std::string why;
    auto n = Nvml::from_symbols(s, &why);
    EXPECT_TRUE(n) << why;
    return n;
  }
};

// ---- loading ----------------------------------------------------------------------------

TEST_F(NvmlFake, OpensAndShutsDownOnce) {
  {
    auto n = open();
    EXPECT_EQ(g.init_calls, 1);
    EXPECT_EQ(n->source(), "injected");
  }
  EXPECT_EQ(g.shutdown_calls, 1);
}

TEST_F(NvmlFake, MissingRequiredFunctionsGiveAReason) {
  struct Case {
    void (*drop)(NvmlSymbols&);
    const char* named;
  };
  const Case cases[] = {{[](NvmlSymbols& s) { s.init = nullptr; }, "nvmlInit_v2"},
                        {[](NvmlSymbols& s) { s.get_handle_by_index = nullptr; }, "nvmlDeviceGetHandleByIndex_v2"}};
  for (const auto& c : cases) {
    NvmlSymbols s = full_table();
    c.drop(s);
    std::string why;
    EXPECT_EQ(Nvml::from_symbols(s, &why), nullptr);
    EXPECT_NE(why.find(c.named), std::string::npos) << why;
  }
  EXPECT_EQ(g.init_calls, 0);  // checked before anything is called
}

TEST_F(NvmlFake, FailedInitNamesTheErrorAndSkipsShutdown) {
  g.init_rc = 9;
  std::string why;
  EXPECT_EQ(Nvml::from_symbols(full_table(), &why), nullptr);
  EXPECT_NE(why.find("nvmlInit_v2 failed: Driver Not Loaded (code 9)"), std::string::npos) << why;
  EXPECT_EQ(g.shutdown_calls, 0);
}

TEST(NvmlOpen, NonexistentLibraryNamesThePath) {
  std::string why;
  EXPECT_EQ(Nvml::open(&why, "/nonexistent/dir/libnvidia-ml.so.1"), nullptr);
  EXPECT_NE(why.find("/nonexistent/dir/libnvidia-ml.so.1"), std::string::npos) << why;
}

TEST(NvmlOpen, EnvironmentVariableChoosesTheLibrary) {
  ::setenv("CARB_NVML_LIB", "/nonexistent/from-env/libnvml.so", 1);
  std::string why;
  EXPECT_EQ(Nvml::open(&why), nullptr);
  ::unsetenv("CARB_NVML_LIB");
  EXPECT_NE(why.find("/nonexistent/from-env/libnvml.so"), std::string::npos) << why;
}

TEST(NvmlOpen, LibraryWithoutNvmlSymbolsIsRejected) {
  std::string why;
  EXPECT_EQ(Nvml::open(&why, "libm.so.6"), nullptr);  // loads fine, exports no NVML
  EXPECT_NE(why.find("libm.so.6"), std::string::npos) << why;
  EXPECT_NE(why.find("nvmlInit_v2"), std::string::npos) << why;
}

// ---- per-device queries -----------------------------------------------------------------

TEST_F(NvmlFake, ReadsDeviceQuantitiesInSiUnits) {
  auto n = open();
  EXPECT_EQ(n->device_count(), 1u);
  EXPECT_EQ(n->device_name(0), "Fake H200");
  EXPECT_EQ(n->driver_version(), "550.54.15");
  EXPECT_EQ(n->clock_mhz(0, NvmlClock::sm), 1755u);
  EXPECT_EQ(n->clock_mhz(0, NvmlClock::mem), 2619u);
  EXPECT_EQ(n->clock_mhz(0, NvmlClock::graphics), 1980u);
  EXPECT_EQ(n->temperature_c(0), 41u);
  EXPECT_DOUBLE_EQ(n->power_limit_w(0).value(), 700.0);
  EXPECT_DOUBLE_EQ(n->power_usage_w(0).value(), 123.456);
  EXPECT_DOUBLE_EQ(n->memory_total_mb(0).value(), 150754.820096);  // MB of 1e6 bytes, as peak_memory_mb
}

TEST_F(NvmlFake, UnknownDeviceGivesNothing) {
  auto n = open();
  EXPECT_FALSE(n->device_name(1));
  EXPECT_FALSE(n->device_name(-1));
  EXPECT_FALSE(n->total_energy_mj(1));
  EXPECT_FALSE(n->utilization(3));
  EXPECT_FALSE(n->memory_total_mb(1));
  EXPECT_EQ(n->energy_meter(1), nullptr);
}

TEST_F(NvmlFake, ErrorCodesGiveNullopt) {
  auto n = open();
  g.temp_rc = NvmlCode::kNoPermission;
  EXPECT_FALSE(n->temperature_c(0));
  g.energy_rc = NvmlCode::kNotSupported;
  int rc = 0;
  EXPECT_FALSE(n->total_energy_mj(0, &rc));
  EXPECT_EQ(rc, NvmlCode::kNotSupported);
}

TEST_F(NvmlFake, MissingOptionalFunctionsMakeOnlyThatQuantityUnavailable) {
  NvmlSymbols s = full_table();
  s.get_clock = nullptr, s.get_temperature = nullptr, s.get_power_limit = nullptr, s.get_memory_info = nullptr;
  s.get_name = nullptr, s.get_driver_version = nullptr, s.error_string = nullptr, s.get_count = nullptr;
  auto n = open(s);
  EXPECT_FALSE(n->clock_mhz(0, NvmlClock::sm));
  EXPECT_FALSE(n->temperature_c(0));
  EXPECT_FALSE(n->power_limit_w(0));
  EXPECT_FALSE(n->memory_total_mb(0));
  EXPECT_FALSE(n->device_name(0));
  EXPECT_FALSE(n->driver_version());
  EXPECT_FALSE(n->device_count());
  EXPECT_EQ(n->error_string(3), "code 3");
  EXPECT_TRUE(n->power_usage_w(0));  // still there
  EXPECT_TRUE(n->energy_meter(0));
}

TEST_F(NvmlFake, FindsTheNvmlIndexOfACudaPciBusId) {
  g.count = 2;
  auto n = open();
  EXPECT_EQ(n->index_by_pci_bus_id("00000000:19:00.0"), 0);
  EXPECT_FALSE(n->index_by_pci_bus_id("00000000:ff:00.0"));
}

// ---- energy -----------------------------------------------------------------------------

TEST_F(NvmlFake, EnergyMeterTurnsMillijouleDifferencesIntoJoules) {
  auto n = open();
  g.energy_mj = 1'000'000'000'123ull;  // a counter far from zero, as after weeks of uptime
  auto m = n->energy_meter(0);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->name(), "nvml");
  const double e0 = m->joules().value();
  g.energy_mj += 2'500;  // 2.5 J over a window of 10 passes
  const double e1 = m->joules().value();
  EXPECT_NEAR(e1 - e0, 2.5, 1e-6);
  EXPECT_NEAR((e1 - e0) / 10, 0.25, 1e-7);
}

TEST_F(NvmlFake, GpuWithoutEnergyCounterGivesNoMeter) {
  auto n = open();
  g.energy_rc = NvmlCode::kNotSupported;
  std::string why;
  EXPECT_EQ(n->energy_meter(0, &why), nullptr);  // so energy_j stays empty, never zero
  EXPECT_NE(why.find("no total-energy counter"), std::string::npos) << why;
  EXPECT_NE(why.find("Not Supported"), std::string::npos) << why;
}

TEST_F(NvmlFake, UnreadableOrMissingEnergyCounterGivesNoMeter) {
  auto n = open();
  g.energy_rc = NvmlCode::kNoPermission;
  std::string why;
  EXPECT_EQ(n->energy_meter(0, &why), nullptr);
  EXPECT_NE(why.find("cannot read"), std::string::npos) << why;

  g.energy_rc = NvmlCode::kSuccess;
  NvmlSymbols s = full_table();
  s.get_total_energy = nullptr;
  auto n2 = open(s);
  EXPECT_EQ(n2->energy_meter(0, &why), nullptr);
  EXPECT_NE(why.find("nvmlDeviceGetTotalEnergyConsumption"), std::string::npos) << why;
}

TEST_F(NvmlFake, EnergyMeterReadFailureIsNulloptNotZero) {
  auto n = open();
  auto m = n->energy_meter(0);
  ASSERT_TRUE(m);
  g.energy_rc = NvmlCode::kNoPermission;
  EXPECT_FALSE(m->joules());
}

TEST_F(NvmlFake, MeterKeepsNvmlInitialisedUntilItIsGone) {
  auto n = open();
  auto m = n->energy_meter(0);
  n.reset();
  EXPECT_EQ(g.shutdown_calls, 0);
  g.energy_mj = 7'000;
  EXPECT_DOUBLE_EQ(m->joules().value(), 7.0);
  m.reset();
  EXPECT_EQ(g.shutdown_calls, 1);
}

// ---- utilization sampler ----------------------------------------------------------------

using std::chrono::milliseconds;

TEST_F(NvmlFake, SamplerAveragesConstantUtilization) {
  auto n = open();
  UtilSampler s(*n, 0, milliseconds(2));
  s.start();
  std::this_thread::sleep_for(milliseconds(40));
  const auto r = s.stop();
  ASSERT_GT(r.samples, 0);
  EXPECT_DOUBLE_EQ(r.sm.value(), 80.0);
  EXPECT_DOUBLE_EQ(r.mem.value(), 40.0);
}

TEST_F(NvmlFake, SamplerAveragesOnlySuccessfulSamples) {
  g.util = {{50, 10}, {70, 30}, {999, 0}, {90, 50}};  // the third answers an error
  auto n = open();
  UtilSampler s(*n, 0, milliseconds(1));
  s.start();
  std::this_thread::sleep_for(milliseconds(200));  // a loaded machine may run the sampler late
  const auto r = s.stop();
  ASSERT_GE(g.util_calls, 4u);  // at least one error was met
  EXPECT_EQ(static_cast<std::size_t>(r.samples), g.util_ok);
  EXPECT_LT(g.util_ok, g.util_calls);
  EXPECT_DOUBLE_EQ(r.sm.value(), g.util_sum_gpu / g.util_ok);
  EXPECT_DOUBLE_EQ(r.mem.value(), g.util_sum_mem / g.util_ok);
  EXPECT_GE(*r.sm, 50.0);
  EXPECT_LE(*r.sm, 90.0);
}

TEST_F(NvmlFake, SamplerSamplesAboutEveryPeriod) {
  auto n = open();
  UtilSampler s(*n, 0);  // default ~20 ms
  const auto t0 = std::chrono::steady_clock::now();
  s.start();
  std::this_thread::sleep_for(milliseconds(200));
  const auto r = s.stop();
  // Bounded by the time that passed, not the time asked for: a loaded machine oversleeps (a test
  // audit: a 260 ms sleep would have read as spinning).
  const double elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(r.samples, 3);  // loose: a loaded CI machine may run the sampler late
  EXPECT_LE(r.samples, elapsed_ms / 20.0 + 3) << elapsed_ms << " ms";  // but never spins
}

TEST_F(NvmlFake, SamplerWithNoSuccessfulSampleGivesNullopt) {
  g.util = {{999, 0}};
  auto n = open();
  UtilSampler s(*n, 0, milliseconds(1));
  s.start();
  std::this_thread::sleep_for(milliseconds(10));
  const auto r = s.stop();
  EXPECT_GT(g.util_calls, 0u);
  EXPECT_EQ(r.samples, 0);
  EXPECT_FALSE(r.sm);
  EXPECT_FALSE(r.mem);
}

TEST_F(NvmlFake, SamplerWithoutUtilizationFunctionOrDeviceGivesNullopt) {
  NvmlSymbols t = full_table();
  t.get_utilization = nullptr;
  auto n = open(t);
  UtilSampler a(*n, 0, milliseconds(1));
  a.start();
  EXPECT_FALSE(a.stop().sm);
  auto n2 = open();
  UtilSampler b(*n2, 5, milliseconds(1));  // no such device
  b.start();
  std::this_thread::sleep_for(milliseconds(5));
  EXPECT_FALSE(b.stop().sm);
  EXPECT_EQ(g.util_calls, 0u);
}

TEST_F(NvmlFake, SamplerRestartsFromZeroAndStopsInDestructor) {
  auto n = open();
  UtilSampler s(*n, 0, milliseconds(1));
  s.start();
  std::this_thread::sleep_for(milliseconds(5));
  s.stop();
  g.util = {{10, 5}};
  s.start();  // the 80/40 samples of the first window must not leak into the second
  std::this_thread::sleep_for(milliseconds(5));
  const auto r = s.stop();
  EXPECT_DOUBLE_EQ(r.sm.value(), 10.0);
  s.start();  // left running: the destructor must join, not terminate
}

// ---- energy windows through NVML --------------------------------------------------------

double sleep_3ms() {
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The check: a counter that updates every 25 ms at 200 W. A window of whole update periods
// gives the power exactly (to the poller's few milliseconds); a 60 ms window read at its two ends
// holds two or three updates' worth of energy, 50 or 75 ms, never the 60 ms it lasted.
TEST_F(NvmlFake, TickAlignedWindowIsExactWhereTwoReadsAreNot) {
  g.update_period_ms = 25, g.watts = 200, g.t0 = std::chrono::steady_clock::now();
  auto n = open();
  auto meter = n->energy_meter(0);
  ASSERT_TRUE(meter);
  Protocol ticks;
  ticks.min_passes = ticks.max_passes = 3;
  ticks.min_energy_window_s = 0;
  ticks.energy_ticks = 12;
  const WindowResult t = measure_window(meter.get(), ticks, sleep_3ms);
  ASSERT_TRUE(t.power_w) << t.error;
  EXPECT_GE(t.ticks, 12);
  EXPECT_NEAR(*t.power_w, 200.0, 200.0 * 0.05);
  Protocol reads = ticks;
  reads.energy_ticks = 0;
  reads.min_energy_window_s = 0.06;
  double worst = 0;
  for (int k = 0; k < 3; ++k) {
    const WindowResult r = measure_window(meter.get(), reads, sleep_3ms);
    ASSERT_EQ(r.method, "reads");
    ASSERT_TRUE(r.energy_per_pass_j);
    const double watts = *r.energy_per_pass_j * r.passes / r.window_s;
    worst = std::max(worst, std::abs(watts - 200.0) / 200.0);
  }
  EXPECT_GT(worst, 0.08);
}

}  // namespace
}  // namespace carb
