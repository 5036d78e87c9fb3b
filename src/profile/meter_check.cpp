// The meter check: watch the energy counter (and the instant power reading, where there is one)
// with the machine idle, and report how often each changes and what the idle power is.
#include <algorithm>
#include <chrono>
#include <thread>

#include "carb/meter.hpp"

namespace carb {
namespace {

std::optional<double> quantile(std::vector<double> v, double q) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

std::vector<double> gaps_ms(const std::vector<double>& t_s) {
  std::vector<double> g;
  for (std::size_t i = 1; i < t_s.size(); ++i) g.push_back((t_s[i] - t_s[i - 1]) * 1e3);
  return g;
}

template <class T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

}  // namespace

MeterCheck check_meter(const std::function<std::optional<double>()>& joules,
                       const std::function<std::optional<double>()>& power_w, double max_s, int updates) {
  MeterCheck m;
  const auto t0 = std::chrono::steady_clock::now();
  auto now = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  std::optional<double> last_j = joules ? joules() : std::nullopt, last_p = power_w ? power_w() : std::nullopt;
  if (!last_j) {
    m.note = "the energy counter could not be read";
    return m;
  }
  std::vector<double> change_t, change_j, power_t;
  double power_sum = 0;
  int power_reads = 0;
  if (last_p) power_sum += *last_p, ++power_reads;
  while (now() < max_s && static_cast<int>(change_t.size()) < updates) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    const double t = now();
    if (auto v = joules(); v && *v != *last_j) {
      change_t.push_back(t), change_j.push_back(*v);
      last_j = v;
    }
    if (!power_w) continue;
    if (auto p = power_w()) {
      power_sum += *p, ++power_reads;
      if (last_p && *p != *last_p) power_t.push_back(t), ++m.power_changes;
      last_p = p;
    }
  }
  m.observed_s = now();
  m.updates = static_cast<int>(change_t.size());
  // The first change ends a period that began before we looked: only gaps between changes count.
  const auto g = gaps_ms(change_t);
  m.period_ms = quantile(g, 0.5), m.period_p10_ms = quantile(g, 0.1), m.period_p90_ms = quantile(g, 0.9);
  if (change_t.size() >= 2 && change_t.back() > change_t.front())
    m.idle_power_w = (change_j.back() - change_j.front()) / (change_t.back() - change_t.front());
  if (m.updates < 2)
    m.note = "the counter changed " + std::to_string(m.updates) + " times in " + std::to_string(max_s) +
             " s: no update period measured";
  if (power_reads > 0) {
    m.power_mean_w = power_sum / power_reads;
    m.power_period_ms = quantile(gaps_ms(power_t), 0.5);
  }
  return m;
}

nlohmann::json MeterCheck::to_json() const {
  nlohmann::json j = {{"meter", meter}, {"observed_s", observed_s}, {"updates", updates}};
  if (!note.empty()) j["note"] = note;
  put(j, "period_ms", period_ms);
  put(j, "period_p10_ms", period_p10_ms);
  put(j, "period_p90_ms", period_p90_ms);
  if (period_p10_ms && period_p90_ms) j["jitter_ms"] = *period_p90_ms - *period_p10_ms;
  put(j, "idle_power_w", idle_power_w);
  j["power_reading"] = power_reading;
  if (power_reading != "none") {
    j["power_changes"] = power_changes;
    put(j, "power_period_ms", power_period_ms);
    put(j, "power_mean_w", power_mean_w);
  }
  return j;
}

}  // namespace carb
