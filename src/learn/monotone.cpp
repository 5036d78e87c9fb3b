#include "monotone.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace carb {

namespace {

int knob_value(const Config& c, const std::string& knob) { return knob == "batch" ? c.batch : c.resolution; }

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::vector<std::string> monotone_knobs(const Dataset& d, const std::string& target) {
  std::vector<std::string> out;
  for (const auto& knob : kMonotoneKnobCandidates) {
    const std::string other = knob == "batch" ? "resolution" : "batch";
    // (architecture, the other knob's value) -> this knob's value -> the values measured there
    std::map<std::pair<std::string, int>, std::map<int, std::vector<double>>> lines;
    for (const Record& r : d.rows) {
      const auto v = r.value(target);
      if (r.status != Status::ok || !v) continue;
      lines[{architecture_key(r.config), knob_value(r.config, other)}][knob_value(r.config, knob)].push_back(*v);
    }
    int steps = 0;
    bool falls = false;
    for (const auto& [line, levels] : lines) {
      double before = 0;
      bool first = true;
      for (const auto& [level, values] : levels) {
        const double v = median_of(values);
        if (!first) {
          ++steps;
          falls = falls || v < before * (1 - kMonotoneTolerance);
        }
        before = v, first = false;
      }
    }
    if (!falls && steps >= kMinMonotoneSteps) out.push_back(knob);
  }
  return out;
}

std::vector<Config> configs_below(const Config& c, const std::vector<std::string>& knobs,
                                  const std::set<int>& trained_resolutions, const std::set<int>& trained_batches) {
  const auto values = [&](const std::string& knob) {  // c's own value and the trained levels below it
    std::vector<int> v = {knob_value(c, knob)};
    if (std::find(knobs.begin(), knobs.end(), knob) == knobs.end()) return v;
    const std::set<int>& levels = knob == "batch" ? trained_batches : trained_resolutions;
    for (auto it = levels.begin(); it != levels.end() && *it < v.front(); ++it) v.push_back(*it);
    return v;
  };
  std::vector<Config> out;
  for (int r : values("resolution"))
    for (int b : values("batch")) {
      if (r == c.resolution && b == c.batch) continue;
      Config k = c;
      k.resolution = r, k.batch = b;
      out.push_back(k);
    }
  return out;
}

bool valid_monotone_knobs(const std::vector<std::string>& knobs) {
  std::size_t next = 0;  // each candidate at most once, in order
  for (const auto& k : knobs) {
    while (next < kMonotoneKnobCandidates.size() && kMonotoneKnobCandidates[next] != k) ++next;
    if (next == kMonotoneKnobCandidates.size()) return false;
    ++next;
  }
  return true;
}

}  // namespace carb
