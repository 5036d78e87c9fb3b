// Tests of the cpu profiler backend as a measurement harness: peak memory covers what
// must be live and grows with activations, fp16 is refused, and latency is repeatable
// within its own reported spread.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "carb/error.hpp"
#include "carb/network_spec.hpp"
#include "carb/profiler.hpp"
#include "data/provenance.hpp"
#include "profile/backends.hpp"

namespace carb {
namespace {

Protocol light_protocol() {
  Protocol p;
  p.warmup = 1;
  p.min_passes = 3;
  p.max_passes = 3;
  p.cooldown_s = 0;
  return p;
}

std::unique_ptr<Backend> cpu_backend() {
  register_cpu_backend();
  return make_backend("cpu", light_protocol());
}

Measurement measure_ok(Backend& b, const Config& c) {
  Measurement m = b.measure(c, light_protocol());
  EXPECT_EQ(m.status, Status::ok) << config_key(c) << ": " << m.error;
  EXPECT_TRUE(m.latency_ms.has_value()) << config_key(c);
  EXPECT_TRUE(m.peak_memory_mb.has_value()) << config_key(c);
  return m;
}

double mb(int64_t bytes) { return static_cast<double>(bytes) / 1e6; }

TEST(Harness, BackendIsRegisteredByName) {
  auto b = cpu_backend();
  EXPECT_EQ(b->name(), "cpu");
  EXPECT_THROW(make_backend("abacus", light_protocol()), InputError);
  const auto info = b->platform_info();
  EXPECT_EQ(info.at("backend"), "cpu");
  // The machine's memory is the cpu backend's device memory, which `carb train` records.
  ASSERT_TRUE(machine_memory_mb());
  EXPECT_EQ(info.at("device_memory_mb").get<double>(), *machine_memory_mb());
}

TEST(Harness, PeakMemoryCoversWeightsInputAndLargestActivation) {
  auto b = cpu_backend();
  for (const Config& c : {Config{Family::basic, 18, 0.5, 64, 1, Precision::fp32},
                          Config{Family::bottleneck, 50, 0.25, 96, 2, Precision::fp32},
                          Config{Family::basic, 10, 0.25, 32, 4, Precision::bf16}}) {
    const auto spec = build_network_spec(c);
    const Measurement m = measure_ok(*b, c);
    ASSERT_TRUE(m.peak_memory_mb);
    const double live = mb(spec.param_bytes() + spec.input_bytes());
    EXPECT_GE(*m.peak_memory_mb, live) << config_key(c);
    // The largest layer output exists at some point while weights and input are live.
    EXPECT_GE(*m.peak_memory_mb, 0.99 * (live + mb(spec.activation_bytes_max()))) << config_key(c);
    // ... and not everything at once: intermediates are released after their last use.
    EXPECT_LT(*m.peak_memory_mb, 4 * (live + mb(spec.activation_bytes_total()))) << config_key(c);
    // The outputs alive at once (NetworkSpec's liveness of this forward pass) are what the peak
    // holds beside the weights and the input: at least that, and not much more (3,047 measured rows
    // of the shipped data lie between 1.0001 and 1.43 times it, median 1.04 on the CPU).
    const double peak = live + mb(spec.activation_bytes_peak());
    EXPECT_GE(*m.peak_memory_mb, 0.999 * peak) << config_key(c);
    EXPECT_LT(*m.peak_memory_mb, 1.5 * peak) << config_key(c);
    EXPECT_GT(*m.latency_ms, 0) << config_key(c);
    EXPECT_FALSE(m.energy_j && *m.energy_j <= 0) << "energy is either measured (positive) or empty";
  }
}

// A network is built once per architecture and reused for its other resolutions and batches: the
// peak memory a configuration gets must not depend on whether its network was reused.
TEST(Harness, AReusedNetworkGivesTheSamePeakMemoryAsANewOne) {
  auto b = cpu_backend();
  const Config first{Family::basic, 18, 0.5, 64, 4, Precision::fp32};
  const Config second{Family::basic, 18, 0.5, 96, 2, Precision::fp32};
  const Config other{Family::bottleneck, 50, 0.25, 64, 2, Precision::fp32};
  Protocol rebuild = light_protocol();
  rebuild.rebuild_networks = true;
  const Measurement m1 = measure_ok(*b, first);
  const Measurement reused = b->measure(second, light_protocol());
  EXPECT_EQ(m1.extra.at("net_reused"), "0");
  EXPECT_EQ(reused.extra.at("net_reused"), "1");
  const Measurement fresh = b->measure(second, rebuild);
  EXPECT_EQ(fresh.extra.at("net_reused"), "0");
  ASSERT_TRUE(reused.peak_memory_mb && fresh.peak_memory_mb);
  EXPECT_NEAR(*reused.peak_memory_mb, *fresh.peak_memory_mb, 1e-6);
  // Another architecture gets its own network, and its weights count, not the previous one's.
  const Measurement o = measure_ok(*b, other);
  EXPECT_EQ(o.extra.at("net_reused"), "0");
  const Measurement o_fresh = b->measure(other, rebuild);
  ASSERT_TRUE(o.peak_memory_mb && o_fresh.peak_memory_mb);
  EXPECT_NEAR(*o.peak_memory_mb, *o_fresh.peak_memory_mb, 1e-6);
}

TEST(Harness, PeakMemoryGrowsWithActivations) {
  auto b = cpu_backend();
  const Config small{Family::basic, 18, 0.5, 32, 1, Precision::fp32};
  for (Config large : {Config{Family::basic, 18, 0.5, 160, 1, Precision::fp32},
                       Config{Family::basic, 18, 0.5, 32, 32, Precision::fp32}}) {
    const auto s_small = build_network_spec(small), s_large = build_network_spec(large);
    ASSERT_GT(s_large.activation_bytes_max(), 10 * s_small.activation_bytes_max());
    const double peak_small = *measure_ok(*b, small).peak_memory_mb;
    const double peak_large = *measure_ok(*b, large).peak_memory_mb;
    // Weights are the same; the extra peak must be at least the extra largest activation.
    EXPECT_GE(peak_large - peak_small,
              0.9 * mb(s_large.activation_bytes_max() - s_small.activation_bytes_max()))
        << config_key(large) << ": " << peak_large << " MB vs " << config_key(small) << ": " << peak_small
        << " MB";
  }
}

TEST(Harness, Fp16IsRefusedUpFront) {
  auto b = cpu_backend();
  const Config c{Family::basic, 18, 0.25, 32, 1, Precision::fp16};
  try {
    b->check(c);
    FAIL() << "fp16 on cpu should be an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fp16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(b->measure(c, light_protocol()), InputError);
  for (Precision p : {Precision::fp32, Precision::bf16}) {
    Config ok = c;
    ok.precision = p;
    EXPECT_NO_THROW(b->check(ok));
  }
}

TEST(Harness, RecordsTimingDetails) {
  auto b = cpu_backend();
  const Measurement m = measure_ok(*b, {Family::basic, 10, 0.25, 32, 1, Precision::fp32});
  for (const char* key :
       {"latency_std_ms", "latency_median_ms", "passes", "warmup", "threads", "load_avg_1m"})
    EXPECT_TRUE(m.extra.count(key)) << key;
  EXPECT_EQ(m.extra.at("passes"), "3");
  EXPECT_EQ(m.extra.at("warmup"), "1");
}

TEST(Harness, LatencyIsRepeatableWithinItsSpread) {
  auto b = cpu_backend();
  const Config c{Family::basic, 18, 0.5, 64, 2, Precision::fp32};
  Protocol p = light_protocol();
  p.warmup = 2;
  p.min_passes = p.max_passes = 10;  // a std over 3 passes says little on a loaded machine
  // Up to three pairs: a test running beside the suite's heaviest ones on two cores once saw one
  // pair 768 ms apart (a burst of load between the two). Latency that is repeatable at all agrees
  // in one of three; a harness whose passes drift never does.
  std::string tried;
  bool agreed = false;
  for (int attempt = 0; attempt < 3 && !agreed; ++attempt) {
    const Measurement a = b->measure(c, p), z = b->measure(c, p);
    ASSERT_EQ(a.status, Status::ok) << a.error;
    ASSERT_EQ(z.status, Status::ok) << z.error;
    EXPECT_EQ(*a.peak_memory_mb, *z.peak_memory_mb) << "peak memory is deterministic";
    const double std_a = std::stod(a.extra.at("latency_std_ms")),
                 std_z = std::stod(z.extra.at("latency_std_ms"));
    const double mean = (*a.latency_ms + *z.latency_ms) / 2;
    agreed = std::abs(*a.latency_ms - *z.latency_ms) <= 3 * (std_a + std_z) + 0.2 * mean;
    tried += std::to_string(*a.latency_ms) + " +- " + std::to_string(std_a) + " vs " + std::to_string(*z.latency_ms) +
             " +- " + std::to_string(std_z) + "; ";
  }
  EXPECT_TRUE(agreed) << tried;
}

}  // namespace
}  // namespace carb
