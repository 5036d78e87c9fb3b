// Tests of tick-aligned energy windows, the meter check and the window study, against counters
// whose truth is known: made-up traces (exact arithmetic) and a fake meter on the real clock
// (the poller's thread). No GPU needed.
#include "profile/energy_window.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "carb/meter.hpp"

namespace carb {
namespace {

// A counter that advances every `period_s` by the energy of that period at `watts(t)`: the value
// at t is the energy up to the last update at or before t, as NVML's total-energy counter behaves.
std::vector<CounterChange> trace_of(double period_s, double until_s, const std::function<double(double)>& watts) {
  std::vector<CounterChange> tr = {{0.0, 0.0}};
  const double dt = period_s / 100;
  double e = 0, t = 0;
  for (int k = 1; k * period_s <= until_s + 1e-12; ++k) {
    for (; t < k * period_s - 1e-12; t += dt) e += watts(t + dt / 2) * dt;
    tr.push_back({k * period_s, e});
  }
  return tr;
}

TEST(EnergyWindow, TickAlignedIsExactWhereTwoReadsAreNot) {
  // 100 ms updates at a constant 250 W: windows of 0.15-0.6 s at 10 ms offsets.
  const auto tr = trace_of(0.1, 3.0, [](double) { return 250.0; });
  double worst_reads = 0, worst_ticks = 0;
  for (double from = 0.01; from < 1.0; from += 0.01)
    for (double len : {0.15, 0.35, 0.5, 0.6}) {
      const double truth = 250.0 * len;
      const auto r = read_between(tr, from, from + len);
      const auto k = tick_aligned(tr, from, from + len);
      ASSERT_TRUE(r);
      worst_reads = std::max(worst_reads, std::abs(r->joules - truth) / truth);
      if (len < 0.2 && !k) continue;  // a 0.15 s window may hold a single update: no whole period
      ASSERT_TRUE(k) << from << " + " << len;
      worst_ticks = std::max(worst_ticks, std::abs(k->watts() * len - truth) / truth);
    }
  EXPECT_LT(worst_ticks, 1e-9);
  EXPECT_GT(worst_reads, 0.3);  // two reads 0.15 s apart see one update or two: 0.1 or 0.2 s of energy
}

TEST(EnergyWindow, TickAlignedMeasuresOnlyThePowerInsideTheWindow) {
  // Idle at 80 W, then 300 W from t = 1.0 on; passes from 1.03 to 1.48 s.
  const auto tr = trace_of(0.1, 2.0, [](double t) { return t < 1.0 ? 80.0 : 300.0; });
  const auto k = tick_aligned(tr, 1.03, 1.48);
  ASSERT_TRUE(k);
  EXPECT_NEAR(k->watts(), 300.0, 1e-6);
  EXPECT_EQ(k->ticks, 3);
  EXPECT_NEAR(k->seconds, 0.3, 1e-9);
  const auto r = read_between(tr, 1.03, 1.48);
  ASSERT_TRUE(r);
  EXPECT_LT(r->watts(), 280.0);  // two reads see 120 J over 0.45 s
}

TEST(EnergyWindow, NoWholePeriodMeansNoTickAlignedAnswer) {
  const auto tr = trace_of(0.1, 1.0, [](double) { return 100.0; });
  EXPECT_FALSE(tick_aligned(tr, 0.31, 0.39));  // no update inside
  EXPECT_FALSE(tick_aligned(tr, 0.31, 0.45));  // one update: no whole period
  EXPECT_TRUE(tick_aligned(tr, 0.31, 0.51));
  EXPECT_FALSE(tick_aligned({{0, 0}}, 0, 1));
}

// A meter on the real clock: advances every period_ms at `watts`.
class ClockMeter final : public EnergyMeter {
 public:
  ClockMeter(double period_ms, double watts) : period_s_(period_ms / 1e3), watts_(watts) {}
  std::string name() const override { return "clock"; }
  std::optional<double> joules() override {
    if (frozen_) return 42.0;
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    return watts_ * std::floor(t / period_s_) * period_s_;
  }
  bool frozen_ = false;

 private:
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  double period_s_, watts_;
};

double sleep_pass() {
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

TEST(EnergyWindow, MeasureWindowCoversTheTicksAskedFor) {
  ClockMeter meter(20, 150.0);
  Protocol p;
  p.min_passes = p.max_passes = 5;
  p.min_energy_window_s = 0;
  p.energy_ticks = 15;
  const WindowResult w = measure_window(&meter, p, sleep_pass);
  EXPECT_EQ(w.method, "ticks");
  EXPECT_TRUE(w.error.empty()) << w.error;
  EXPECT_GE(w.ticks, 15);
  EXPECT_EQ(w.timing.passes, 5);
  EXPECT_GT(w.passes, 5);  // 5 passes of 2 ms cannot hold 15 periods of 20 ms
  ASSERT_TRUE(w.power_w);
  EXPECT_NEAR(*w.power_w, 150.0, 150.0 * 0.06);  // the poller sees updates within a few ms
  ASSERT_TRUE(w.energy_per_pass_j);
  EXPECT_NEAR(*w.energy_per_pass_j, *w.power_w * w.window_s / w.passes, 1e-9);
  std::map<std::string, std::string> extra;
  record_window(w, extra);
  EXPECT_EQ(extra["energy_method"], "ticks");
  EXPECT_EQ(extra["energy_ticks"], std::to_string(w.ticks));
  EXPECT_TRUE(extra.count("energy_tick_window_s"));
}

TEST(EnergyWindow, ACounterThatNeverAdvancesLeavesEnergyEmptyAndSaysWhy) {
  ClockMeter meter(20, 150.0);
  meter.frozen_ = true;
  Protocol p;
  p.min_passes = p.max_passes = 3;
  p.min_energy_window_s = 0;
  p.energy_ticks = 5;
  const WindowResult w = measure_window(&meter, p, sleep_pass, 0.1);
  EXPECT_FALSE(w.energy_per_pass_j);
  EXPECT_NE(w.error.find("fewer than --energy-ticks 5"), std::string::npos) << w.error;
  EXPECT_LT(w.window_s, 1.0);
}

TEST(EnergyWindow, SecondsWindowsUsePlainReadsAsBefore) {
  ClockMeter meter(10, 100.0);
  Protocol p;
  p.min_passes = p.max_passes = 3;
  p.min_energy_window_s = 0.15;
  const WindowResult w = measure_window(&meter, p, sleep_pass);
  EXPECT_EQ(w.method, "reads");
  EXPECT_GE(w.window_s, 0.15);
  ASSERT_TRUE(w.energy_per_pass_j);
  EXPECT_GT(*w.energy_per_pass_j, 0);
  // Without a meter: timing only, no energy and no complaint.
  const WindowResult none = measure_window(nullptr, p, sleep_pass);
  EXPECT_TRUE(none.method.empty());
  EXPECT_FALSE(none.energy_per_pass_j);
  EXPECT_TRUE(none.error.empty());
}

class Unreadable final : public EnergyMeter {
 public:
  std::string name() const override { return "unreadable"; }
  std::optional<double> joules() override { return std::nullopt; }
};

TEST(EnergyWindow, AnUnreadableMeterIsRecordedAsSuch) {
  Unreadable meter;
  Protocol p;
  p.min_passes = p.max_passes = 2;
  p.min_energy_window_s = 0;
  p.energy_ticks = 3;
  const WindowResult w = measure_window(&meter, p, sleep_pass);
  EXPECT_FALSE(w.energy_per_pass_j);
  std::map<std::string, std::string> extra;
  record_window(w, extra);
  EXPECT_EQ(extra["energy_error"], "the energy counter could not be read");
}

TEST(MeterCheck, FindsTheUpdatePeriodIdlePowerAndPowerReadings) {
  ClockMeter meter(10, 100.0);
  ClockMeter power_steps(50, 1.0);  // an instant power reading that changes every 50 ms
  const MeterCheck m = check_meter([&] { return meter.joules(); },
                                   [&] { return power_steps.joules().value() + 60.0; }, 3.0, 30);
  EXPECT_EQ(m.updates, 30);
  ASSERT_TRUE(m.period_ms && m.period_p10_ms && m.period_p90_ms);
  EXPECT_NEAR(*m.period_ms, 10.0, 3.0);
  EXPECT_LE(*m.period_p10_ms, *m.period_ms);
  EXPECT_GE(*m.period_p90_ms, *m.period_ms);
  ASSERT_TRUE(m.idle_power_w);
  EXPECT_NEAR(*m.idle_power_w, 100.0, 10.0);
  EXPECT_GE(m.power_changes, 3);
  ASSERT_TRUE(m.power_period_ms);
  EXPECT_NEAR(*m.power_period_ms, 50.0, 15.0);
  const auto j = m.to_json();
  EXPECT_TRUE(j.contains("jitter_ms"));
}

TEST(MeterCheck, AnUnreadableOrStillCounterIsReportedNotGuessed) {
  const MeterCheck none = check_meter([] { return std::optional<double>(); }, {}, 0.1, 10);
  EXPECT_EQ(none.updates, 0);
  EXPECT_FALSE(none.period_ms);
  EXPECT_FALSE(none.note.empty());
  const MeterCheck still = check_meter([] { return std::optional<double>(5.0); }, {}, 0.1, 10);
  EXPECT_EQ(still.updates, 0);
  EXPECT_FALSE(still.idle_power_w);
  EXPECT_NE(still.note.find("no update period"), std::string::npos);
}

EnergyTrace synthetic_trace(double period_s, double pass_s, double seconds, double watts) {
  EnergyTrace t;
  t.config = Config{Family::basic, 18, 1.0, 64, 8, Precision::fp16};
  t.start_s = 0.013;  // out of phase with the counter
  for (double e = t.start_s + pass_s; e <= t.start_s + seconds + 1e-12; e += pass_s) t.pass_end_s.push_back(e);
  for (const auto& c : trace_of(period_s, seconds + 1, [&](double) { return watts; }))
    t.counter_t_s.push_back(c.t_s), t.counter_j.push_back(c.joules);
  return t;
}

TEST(WindowStudy, WindowsOfEachLengthAgainstTheWholeTrace) {
  const EnergyTrace t = synthetic_trace(0.1, 0.01, 4.5, 200.0);
  const auto rows = study_windows(t, 2, {0.25, 1.0});
  ASSERT_FALSE(rows.empty());
  const WindowStudyRow& ref = rows.front();
  EXPECT_TRUE(ref.reference);
  EXPECT_EQ(ref.method, "ticks");
  EXPECT_NEAR(ref.energy_per_pass_j, 2.0, 1e-6);  // 200 W x 10 ms
  int reads_1s = 0, ticks_1s = 0;
  double worst_reads = 0, worst_ticks = 0;
  for (const auto& r : rows) {
    EXPECT_EQ(r.repeat, 2);
    if (r.reference) continue;
    const double dev = std::abs(r.energy_per_pass_j - 2.0) / 2.0;
    if (r.window_s == 1.0) (r.method == "reads" ? reads_1s : ticks_1s)++;
    (r.method == "reads" ? worst_reads : worst_ticks) = std::max(r.method == "reads" ? worst_reads : worst_ticks, dev);
    EXPECT_GE(r.seconds, r.window_s - 1e-9);
  }
  EXPECT_EQ(reads_1s, 4);  // 4.5 s of passes: four whole 1 s windows and a part
  EXPECT_EQ(ticks_1s, 4);
  EXPECT_LT(worst_ticks, 1e-6);
  EXPECT_GT(worst_reads, 0.1);
}

TEST(WindowStudy, AFailedTraceGivesNoRows) {
  EnergyTrace t = synthetic_trace(0.1, 0.01, 1.0, 200.0);
  t.status = Status::oom;
  EXPECT_TRUE(study_windows(t, 1, {0.25}).empty());
}

}  // namespace
}  // namespace carb
