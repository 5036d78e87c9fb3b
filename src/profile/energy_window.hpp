// Energy windows aligned to the meter's own updates. NVML's total-energy counter (and RAPL's,
// more finely) advances in steps: on recent NVIDIA GPUs every ~20-100 ms. A window read at two
// arbitrary moments is off by up to one step at each end; a window that starts right after one
// update and stops right at another covers whole update periods, and its energy over its length
// is the power the GPU drew while the passes ran. A background poller records when the counter
// changes; the arithmetic on that trace is pure, so tests check it on made-up traces.
#pragma once
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "carb/profiler.hpp"
#include "energy_meter.hpp"
#include "timing.hpp"

namespace carb {

/// One reading of the counter: seconds since the poller started, joules. A trace holds the first
/// reading and then one entry per change.
struct CounterChange {
  double t_s = 0;
  double joules = 0;
};

/// Energy over a span of the trace: joules and seconds between two readings, and how many
/// counter updates (ticks) lie between them.
struct SpanEnergy {
  double joules = 0, seconds = 0;
  int ticks = 0;
  double watts() const { return seconds > 0 ? joules / seconds : 0; }
};

/// Tick-aligned: from the first change at or after from_s to the last change at or before to_s.
/// nullopt when fewer than two changes fall inside (no whole update period).
std::optional<SpanEnergy> tick_aligned(const std::vector<CounterChange>& trace, double from_s, double to_s);

/// What two plain reads at from_s and to_s give (the counter's last value at each moment):
/// the old way, kept to show what alignment changes. nullopt when from_s precedes the trace.
std::optional<SpanEnergy> read_between(const std::vector<CounterChange>& trace, double from_s, double to_s);

/// Polls an energy meter on a background thread and records every change of its value.
class CounterPoller {
 public:
  /// A 1 ms poll sees 20-100 ms updates to within 1-5% of a period, without a reader so busy that
  /// it slows launch-bound passes.
  explicit CounterPoller(EnergyMeter& meter, std::chrono::microseconds period = std::chrono::microseconds(1000));
  ~CounterPoller();  // stops the thread if still running
  CounterPoller(const CounterPoller&) = delete;
  CounterPoller& operator=(const CounterPoller&) = delete;

  /// Takes the first reading (false when the meter cannot be read) and starts polling.
  bool start();
  /// Seconds since start() on the poller's clock (use it to mark windows).
  double now_s() const;
  /// Counter changes recorded strictly after t_s so far.
  int changes_after(double t_s) const;
  /// Stops polling and returns the trace.
  std::vector<CounterChange> stop();

 private:
  void loop();
  EnergyMeter& meter_;
  std::chrono::microseconds period_;
  std::chrono::steady_clock::time_point t0_;
  std::atomic<bool> running_{false};
  std::thread thread_;
  mutable std::mutex mu_;
  std::vector<CounterChange> trace_;
};

/// Timing and energy from one window of back-to-back passes.
struct WindowResult {
  TimingStats timing;            // the protocol's timed passes (latency)
  int passes = 0;                // all passes in the energy window (timed + extension)
  double window_s = 0;           // wall time of those passes
  int ticks = 0;                 // whole counter periods inside (tick-aligned method)
  double tick_window_s = 0;      // length of those periods
  std::optional<double> energy_per_pass_j, power_w;
  std::string method;            // "ticks" | "reads" | "" (no meter)
  std::string error;             // why energy is empty although a meter exists
};

/// Runs the protocol's timed passes (timed_passes) and extends them with more passes of the same
/// kind until the energy window is long enough, all in one window:
///  - p.energy_ticks > 0: until it holds that many whole counter periods (and min_energy_window_s);
///    energy per pass = power over those periods x wall time per pass ("ticks");
///  - otherwise until it lasts min_energy_window_s; energy per pass = (read after - read before) /
///    passes ("reads", the earlier protocol).
/// A counter that never advances ends the window after max_tick_wait_s with energy empty and `error`
/// saying so (max_tick_wait_s). `meter` may be null: then only timing (and the seconds floor) is done.
inline constexpr double kMaxTickWaitS = 30.0;
WindowResult measure_window(EnergyMeter* meter, const Protocol& p, const std::function<double()>& pass,
                            double max_tick_wait_s = kMaxTickWaitS);

/// Writes the window's fields into a measurement's extra columns.
void record_window(const WindowResult& w, std::map<std::string, std::string>& extra);

}  // namespace carb
