// Tick-aligned energy windows: the trace arithmetic, the poller, and the one window in which
// latency and energy are measured together.
#include "energy_window.hpp"

#include <algorithm>

#include "carb/dataset.hpp"

namespace carb {
namespace {

// Index of the last reading at or before t (the value a read at t returns); -1 when none.
long value_index_at(const std::vector<CounterChange>& trace, double t) {
  auto it = std::upper_bound(trace.begin(), trace.end(), t,
                             [](double v, const CounterChange& c) { return v < c.t_s; });
  return static_cast<long>(it - trace.begin()) - 1;
}

}  // namespace

std::optional<SpanEnergy> tick_aligned(const std::vector<CounterChange>& trace, double from_s, double to_s) {
  // trace[0] is the first reading, not a change: it says nothing about when an update happened.
  if (trace.size() < 3 || to_s <= from_s) return std::nullopt;
  auto first = std::lower_bound(trace.begin() + 1, trace.end(), from_s,
                                [](const CounterChange& c, double v) { return c.t_s < v; });
  const long last = value_index_at(trace, to_s);
  const long a = static_cast<long>(first - trace.begin());
  if (a >= static_cast<long>(trace.size()) || last <= a) return std::nullopt;
  return SpanEnergy{trace[last].joules - trace[a].joules, trace[last].t_s - trace[a].t_s, static_cast<int>(last - a)};
}

std::optional<SpanEnergy> read_between(const std::vector<CounterChange>& trace, double from_s, double to_s) {
  const long a = value_index_at(trace, from_s), b = value_index_at(trace, to_s);
  if (a < 0 || b < a || to_s <= from_s) return std::nullopt;
  return SpanEnergy{trace[b].joules - trace[a].joules, to_s - from_s, static_cast<int>(b - a)};
}

CounterPoller::CounterPoller(EnergyMeter& meter, std::chrono::microseconds period)
    : meter_(meter), period_(period) {}

CounterPoller::~CounterPoller() {
  if (thread_.joinable()) stop();
}

bool CounterPoller::start() {
  t0_ = std::chrono::steady_clock::now();
  const auto first = meter_.joules();
  if (!first) return false;
  trace_ = {{0.0, *first}};
  running_ = true;
  thread_ = std::thread([this] { loop(); });
  return true;
}

double CounterPoller::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

int CounterPoller::changes_after(double t_s) const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (auto it = trace_.rbegin(); it != trace_.rend() - 1 && it->t_s > t_s; ++it) ++n;
  return n;
}

std::vector<CounterChange> CounterPoller::stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  return trace_;
}

void CounterPoller::loop() {
  double last = trace_.front().joules;
  while (running_) {
    std::this_thread::sleep_for(period_);
    const auto v = meter_.joules();
    if (!v || *v == last) continue;  // a failed read is not a change
    const double t = now_s();
    last = *v;
    std::lock_guard<std::mutex> lock(mu_);
    trace_.push_back({t, *v});
  }
}

WindowResult measure_window(EnergyMeter* meter, const Protocol& p, const std::function<double()>& pass,
                            double max_tick_wait_s) {
  WindowResult w;
  std::optional<CounterPoller> poller;
  if (meter) poller.emplace(*meter);
  const bool polling = poller && poller->start();
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const double from = polling ? poller->now_s() : 0;
  w.timing = timed_passes(p, pass);
  w.passes = w.timing.passes;
  const bool ticks = polling && p.energy_ticks > 0;
  auto long_enough = [&] {
    if (elapsed() < p.min_energy_window_s) return false;
    // energy_ticks whole periods need energy_ticks + 1 changes after the window opened.
    return !ticks || poller->changes_after(from) > p.energy_ticks || elapsed() >= max_tick_wait_s;
  };
  while (!long_enough()) {
    pass();
    ++w.passes;
  }
  w.window_s = elapsed();
  if (!polling) {
    if (meter) w.error = "the energy counter could not be read";
    return w;
  }
  const double to = poller->now_s();
  const auto trace = poller->stop();
  if (ticks) {
    w.method = "ticks";
    const auto span = tick_aligned(trace, from, to);
    if (!span || span->ticks < p.energy_ticks) {
      w.error = "the energy counter advanced " + std::to_string(trace.size() - 1) + " times in " +
                extra_number(w.window_s) + " s; fewer than --energy-ticks " + std::to_string(p.energy_ticks) +
                " whole periods";
      return w;
    }
    w.ticks = span->ticks;
    w.tick_window_s = span->seconds;
    w.power_w = span->watts();
    w.energy_per_pass_j = *w.power_w * w.window_s / w.passes;
    return w;
  }
  w.method = "reads";
  const auto span = read_between(trace, from, to);
  if (span && span->joules >= 0 && w.passes > 0) {
    w.ticks = span->ticks;
    w.energy_per_pass_j = span->joules / w.passes;
    w.power_w = span->joules / w.window_s;
  }
  return w;
}

void record_window(const WindowResult& w, std::map<std::string, std::string>& extra) {
  extra["energy_passes"] = std::to_string(w.passes);
  extra["energy_window_s"] = extra_number(w.window_s);
  if (!w.error.empty()) extra["energy_error"] = w.error;
  if (w.method.empty()) return;
  extra["energy_method"] = w.method;
  extra["energy_ticks"] = std::to_string(w.ticks);
  if (w.method == "ticks" && w.tick_window_s > 0) extra["energy_tick_window_s"] = extra_number(w.tick_window_s);
  if (w.power_w) extra["avg_power_w"] = extra_number(*w.power_w);
}

}  // namespace carb
