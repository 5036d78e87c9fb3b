// Costs that never fall as the batch, the input or the network grows, where the measurements never did.
//
// Peak memory on a CPU grows with batch and resolution: in data/cpu-2t.csv not one of 3,132
// adjacent steps of one network falls. The trees did not know it: models/cpu-2t answered less
// memory for the larger of two configurations in 59 steps of the `cpu` preset (up to 2.7%) and
// 1,008 of the `paper` preset (up to 13.5%), and a screen asking for the largest batch that fits
// could read that a larger batch needs less. The rule is the data's, per target and knob: latency and
// energy fall in measured steps (the H200's launch-bound configurations, cpu-2t's kernel choices
// along batch), and so does an H200's memory between resolutions 32 and 64 (cuDNN workspaces), so
// none of those is held; cpu-1t's latency never fell along resolution in its 653 rows, and is.
// Depth and width are knobs too: memory never fell in cpu-2t's 1,372 depth steps and 1,398 width
// steps, yet models/h200 answered 2.5% less memory for basic-50 than basic-18 at width 0.05, past
// its trained widths.
//
// Training records, per target, the knobs along which the training rows never fell beyond the
// meter's grain; predictions then hold each configuration at least at the answer of every smaller
// configuration at the trained levels (the lattice below it), and at its own: first along batch and
// resolution within a network, then along depth and width among the networks of one family and
// precision at the configuration's resolution and batch, each answered as held along the first two.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "carb/config.hpp"
#include "carb/dataset.hpp"
#include "carb/features.hpp"

namespace carb {

/// The knobs a cost can be held monotone along, in the order training writes them.
inline const std::vector<std::string> kMonotoneKnobCandidates = {"batch", "resolution", "depth", "width"};
/// A fall of at most this fraction between adjacent measured levels is the meter's grain (an H200's
/// allocator rounds peak memory to a few hundred kB: 4 batch steps fell by up to 0.2%).
inline constexpr double kMonotoneTolerance = 0.01;
/// The fewest adjacent steps along a knob that can show a cost never falls along it.
inline constexpr int kMinMonotoneSteps = 20;
/// The most trained configurations below one (the product of the held knobs' trained levels) for
/// which a cost is held along depth and width: each of them may be answered for one prediction,
/// once per distinct family, precision, resolution and batch asked. The shipped grids have 640
/// (cpu-2t, cpu-1t) and 135 (the H200). A tester's 26 depths x 151 widths x 129 resolutions x 64
/// batches kept `carb train --fast` running past 10 minutes (106 s before), and a 9,700-network
/// lattice under 10,000 made predict of 2,000 configurations at distinct batches 212 s (0.6 s).
inline constexpr std::size_t kMaxAcrossLattice = 1000;

/// The levels a model was trained at, per knob; depths per family (a basic network's depths are
/// no bottleneck's).
struct TrainedLevels {
  std::set<int> resolutions, batches;
  std::map<Family, std::set<int>> depths;
  std::set<double> widths;
  /// The depths trained in family f (none: an empty set).
  const std::set<int>& depths_of(Family f) const;
};

/// The knobs (of kMonotoneKnobCandidates, in that order) along which `target`'s value in d's ok
/// rows never falls by more than kMonotoneTolerance from one measured level to the next at the same
/// values of the other configuration fields, over at least kMinMonotoneSteps such steps. Repeated
/// configurations count by their median. Depth and width are left out where the trained lattice
/// along the knobs found is larger than kMaxAcrossLattice.
std::vector<std::string> monotone_knobs(const Dataset& d, const std::string& target);

/// The configurations below c along `knobs`, at the trained levels: c with each combination of, per
/// knob, its own value and every trained level below it (depths of c's family), c itself excepted.
std::vector<Config> configs_below(const Config& c, const std::vector<std::string>& knobs, const TrainedLevels& levels);

/// `value` and the trained levels below it, in that order (`value` alone when `held` is false).
template <class T>
std::vector<T> levels_below(T value, const std::set<T>& trained, bool held) {
  std::vector<T> v = {value};
  if (held)
    for (auto it = trained.begin(); it != trained.end() && *it < value; ++it) v.push_back(*it);
  return v;
}

/// Answers (target -> one value per configuration) for configurations and their readings.
using Answerer = std::function<std::map<std::string, std::vector<double>>(const std::vector<Config>&,
                                                                          const std::vector<Telemetry>&)>;

/// The most configurations below the asked ones that hold_monotone asks `answer` for in one call.
inline constexpr std::size_t kMonotoneAnsweredAtOnce = std::size_t{1} << 17;

/// Raises each held target's answer for configs[i] (values[target][i], > 0) to the largest finite
/// answer below it (configs_below): those among `configs` by their answers in `values` before any
/// is raised, the others answered by `answer`. In two steps: first along batch and resolution within
/// each network; then along depth and width among the networks of a family and precision at one
/// resolution and batch, each smaller network counting by the largest finite answer at or below it
/// within its own network (whatever its own answer). A configuration answering no positive cost is
/// never raised. Answers are asked for whole groups at a time, in calls of about `answered_at_once`
/// configurations (one group's may be more). `held` maps a target to its knobs. With `by_readings`,
/// a configuration's smaller ones are those at the same telemetry readings (tel[i]); without,
/// readings are ignored.
void hold_monotone(const std::vector<Config>& configs, const std::vector<Telemetry>& tel, bool by_readings,
                   const std::map<std::string, std::vector<std::string>>& held, const TrainedLevels& levels,
                   std::map<std::string, std::vector<double>>& values, const Answerer& answer,
                   std::size_t answered_at_once = kMonotoneAnsweredAtOnce);

/// True when each name is one of kMonotoneKnobCandidates, named once, in their order (as training writes them).
bool valid_monotone_knobs(const std::vector<std::string>& knobs);

}  // namespace carb
