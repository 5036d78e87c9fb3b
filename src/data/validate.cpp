// Dataset-level checks: rows that parse on their own but break the contract together
// (duplicates, mixed platforms or protocols, partly measured targets), by their status, or by
// implausible values. `carb data validate` lists them all; every other reader of a dataset
// (train, evaluate, screen --validate, characterize, transfer, report, combine, merge) goes
// through read_dataset_csv / read_dataset_csvs here and refuses the file on the first one.
#include "data/validate.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <regex>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "carb/config.hpp"
#include "carb/error.hpp"
#include "carb/drift.hpp"
#include "carb/network_spec.hpp"
#include "data/csv.hpp"
#include "data/dominance.hpp"
#include "data/provenance.hpp"
#include "util/warn_once.hpp"

namespace carb {
namespace {

std::string at(const std::string& where) { return where + ": "; }

// The line a "file:line: ..." message points at; 0 for messages about the whole file.
std::size_t line_of(const std::string& msg, const std::string& file) {
  if (msg.size() <= file.size() || msg.compare(0, file.size(), file) != 0 || msg[file.size()] != ':')
    return 0;
  std::size_t line = 0;
  std::from_chars(msg.data() + file.size() + 1, msg.data() + msg.size(), line);
  return line;
}

// Problems in file order: by the line each names, those of the whole file first.
void sort_by_line(std::vector<std::string>& problems, const std::string& file) {
  std::stable_sort(problems.begin(), problems.end(), [&](const std::string& a, const std::string& b) {
    return line_of(a, file) < line_of(b, file);
  });
}

// How `here`'s message names the row at `there`: "line N" within one file, else the whole place.
std::string refer(const std::string& here, const std::string& there) {
  const auto a = here.rfind(':'), b = there.rfind(':');
  if (a != std::string::npos && b != std::string::npos && here.compare(0, a, there, 0, b) == 0)
    return "line " + there.substr(b + 1);
  return there;
}

// One platform+network must appear once: two rows would weigh it twice in training and could land
// on both sides of a held-out split. Two widths that build the same channels are the same network.
void check_duplicates(const Dataset& d, const std::vector<std::string>& where, std::vector<std::string>& problems) {
  std::map<std::pair<std::string, std::string>, std::size_t> first;
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const Record& r = d.rows[i];
    const auto [it, fresh] = first.emplace(std::make_pair(r.platform, network_key(r.config)), i);
    if (fresh) continue;
    const Config& earlier = d.rows[it->second].config;
    const std::string key = config_key(r.config), earlier_key = config_key(earlier);
    problems.push_back(at(where[i]) + "duplicate of " + refer(where[i], where[it->second]) + " (platform '" + r.platform +
                       "', " + earlier_key +
                       (key == earlier_key ? std::string()
                                           : "; width " + format_width(r.config.width) + " builds the same channels as " +
                                                 format_width(earlier.width)) +
                       ")");
  }
}

// An extra column's text as a finite number, the whole text; nullopt for anything else.
std::optional<double> extra_number(const std::string& text) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// An extra column of `r` as a finite number; nullopt when absent or not one.
std::optional<double> extra_value(const Record& r, const char* col) {
  const auto it = r.extra.find(col);
  return it == r.extra.end() ? std::nullopt : extra_number(it->second);
}

// The same, only when positive: a cell out of its bounds is check_bounds's to name.
std::optional<double> positive_extra(const Record& r, const char* col) {
  const auto v = extra_value(r, col);
  return v && *v > 0 ? v : std::nullopt;
}

// A row's figures that one measurement made together must agree (constants in carb/dataset.hpp).
// Only where each is a plausible number: a broken one is check_bounds's to name.
void check_consistency(const Record& r, const std::string& where, std::vector<std::string>& problems) {
  const auto number = [&](const char* col) { return extra_value(r, col); };
  const auto extra = [&](const char* col) { return positive_extra(r, col); };
  const auto fmt = [](double v) { return csv::format_number(std::optional<double>(v)); };
  // One measurement, or a median of each column over rounds (forty-second hostile pass: any
  // `rounds` column, even of 1, switched the energy identity off).
  const bool combined = number("rounds").value_or(0) > 1;
  const auto disagrees = [&](double value, double implied) {
    return combined ? value / implied > kMaxEnergyPassOverLatency || implied / value > kMaxEnergyPassOverLatency
                    : std::fabs(value / implied - 1) > kEnergyIdentityTolerance;
  };
  const char* within = combined ? " by more than 3x (a row combined over rounds)" : "";
  const bool lat = r.latency_ms && plausible_bounds("latency_ms")->contains(*r.latency_ms);
  const bool energy = r.energy_j && plausible_bounds("energy_j")->contains(*r.energy_j);
  const auto power = extra("avg_power_w"), window = extra("energy_window_s"), passes = extra("energy_passes");
  if (energy && power && window && passes) {
    const double implied = *power * *window / *passes;
    if (disagrees(*r.energy_j, implied))
      problems.push_back(at(where) + "energy_j " + fmt(*r.energy_j) + " J disagrees with its own window" + within +
                         ": avg_power_w " + fmt(*power) + " W x energy_window_s " + fmt(*window) +
                         " s / energy_passes " + fmt(*passes) + " is " + fmt(implied) + " J");
  }
  // The average power lies near what the device read before and after the row.
  const auto start = extra("gpu_power_w_start"), end = extra("gpu_power_w_end");
  if (energy && lat && start && end) {
    const double watts = *r.energy_j / (*r.latency_ms / 1000.0);
    const double hi = std::max(*start, *end) * kMaxPowerOverInstant * (combined ? kMaxEnergyPassOverLatency : 1);
    const double lo = std::min(*start, *end) * kMinPowerOverInstant / (combined ? kMaxEnergyPassOverLatency : 1);
    if (watts > hi || watts < lo)
      problems.push_back(at(where) + "energy_j " + fmt(*r.energy_j) + " J in latency_ms " + fmt(*r.latency_ms) +
                         " ms is an average power of " + fmt(watts) + " W, " + (watts > hi ? "above " : "below ") +
                         fmt(watts > hi ? hi : lo) + " W, " +
                         (watts > hi ? fmt(kMaxPowerOverInstant) + "x the higher" : fmt(kMinPowerOverInstant) + "x the lower") +
                         " of the device's readings before and after it (gpu_power_w_start " + fmt(*start) +
                         " W, gpu_power_w_end " + fmt(*end) + " W)" + within);
  }
  if (lat && window && passes) {
    const double pass_ms = *window / *passes * 1000.0, ratio = pass_ms / *r.latency_ms;
    if (ratio > kMaxEnergyPassOverLatency || ratio < 1 / kMaxEnergyPassOverLatency)
      problems.push_back(at(where) + "latency_ms " + fmt(*r.latency_ms) + " ms disagrees with the energy window, " +
                         fmt(pass_ms) + " ms a pass (energy_window_s / energy_passes), by more than " +
                         fmt(kMaxEnergyPassOverLatency) + "x");
  }
  if (const auto timed = extra("timed_s"), n = extra("passes"); lat && timed && n) {
    const double pass_ms = *timed * 1000.0 / *n;
    if (disagrees(*r.latency_ms, pass_ms))
      problems.push_back(at(where) + "latency_ms " + fmt(*r.latency_ms) + " ms disagrees with its timed window" + within +
                         ": timed_s " + fmt(*timed) + " s / passes " + fmt(*n) + " is " + fmt(pass_ms) + " ms a pass");
  }
  const auto median = extra("latency_median_ms");
  if (lat && median && *r.latency_ms < kMinMeanOverMedianLatency * *median)
    problems.push_back(at(where) + "latency_ms " + fmt(*r.latency_ms) + " ms, a mean of passes, is below half their "
                       "median, latency_median_ms " + fmt(*median) + " ms, which no mean of positive times can be");
  // The allocator's peak of what was allocated lies within what it reserved (shipped: at most 0.98).
  if (const auto reserved = extra("peak_reserved_mb");
      !combined && reserved && r.peak_memory_mb && *r.peak_memory_mb > *reserved * (1 + 1e-3))
    problems.push_back(at(where) + "peak_memory_mb " + fmt(*r.peak_memory_mb) + " MB is above peak_reserved_mb " +
                       fmt(*reserved) + " MB, the memory its allocator held, which the allocated peak lies within");
  if (combined || !lat) return;
  const auto sd = number("latency_std_ms");
  if (median && sd && *sd >= 0 && std::fabs(*r.latency_ms - *median) > *sd * (1 + kEnergyIdentityTolerance) + 1e-6 * *median)
    problems.push_back(at(where) + "latency_ms " + fmt(*r.latency_ms) + " ms, a mean of passes, is " +
                       fmt(std::fabs(*r.latency_ms - *median)) + " ms from their median, latency_median_ms " + fmt(*median) +
                       " ms, more than their standard deviation, latency_std_ms " + fmt(*sd) +
                       " ms, which no sample's mean can be");
  const auto cv = number("latency_cv");
  if (sd && cv && *sd >= 0 && *cv >= 0 && std::fabs(*sd / *r.latency_ms - *cv) > kEnergyIdentityTolerance * *cv + 1e-9)
    problems.push_back(at(where) + "latency_cv " + fmt(*cv) + " disagrees with latency_std_ms " + fmt(*sd) +
                       " ms / latency_ms " + fmt(*r.latency_ms) + " ms, which is " + fmt(*sd / *r.latency_ms));
}

// A value outside its column's plausibility bounds is a broken meter or a damaged file, never data.
void check_bounds(const Record& r, const std::string& where, std::vector<std::string>& problems) {
  for (const ColumnBounds& b : kPlausibleBounds) {
    const auto v = r.value(b.column);
    if (v && !b.contains(*v))
      problems.push_back(at(where) + b.column + " is " + csv::format_number(v) + ", outside the plausible range " +
                         b.describe());
  }
  // Energy per batch over latency per batch is the average power: no device one configuration
  // runs on draws 100 kW (an H200 draws up to 0.7 kW). Twelfth hostile pass: 1000 J per ms (1 MW)
  // passed every column's own bound and trained; nor under kMinAveragePowerW (forty-first: 0.01 W
  // on an H200). (Only where latency itself is plausible, and energy too for the floor.)
  if (r.energy_j && r.latency_ms && plausible_bounds("latency_ms")->contains(*r.latency_ms)) {
    const double watts = *r.energy_j / (*r.latency_ms / 1000.0);
    const bool above = watts > kMaxAveragePowerW;
    if (above || (plausible_bounds("energy_j")->contains(*r.energy_j) && watts < kMinAveragePowerW))
      problems.push_back(at(where) + "energy_j " + csv::format_number(r.energy_j) + " J in latency_ms " +
                         csv::format_number(r.latency_ms) + " ms is an average power of " + csv::format_number(watts) +
                         " W, " + (above ? "above" : "below") + " the plausible " +
                         csv::format_number(above ? kMaxAveragePowerW : kMinAveragePowerW) + " W");
  }
  check_consistency(r, where, problems);
  for (const ColumnBounds& b : kExtraColumnBounds) {
    const auto it = r.extra.find(b.column);
    if (it == r.extra.end() || it->second.empty()) continue;
    const std::string& text = it->second;
    const auto v = extra_number(text);
    if (!v)
      problems.push_back(at(where) + b.column + " is '" + text + "', not a number");
    else if (!b.contains(*v))
      problems.push_back(at(where) + b.column + " is " + csv::format_number(v) + ", outside the plausible range " +
                         b.describe());
  }
}

// Peak memory is the allocator's peak over the forward pass with the network and its input
// already in memory: it cannot be below the weights plus the input plus the largest layer output,
// made beside them (every shipped row is at least 1.002x that). Twelfth hostile pass: a peak below
// the weights trained without a word; forty-third: the floor without the largest output let a model
// answer 379.7 MB for a network whose weights, input and largest output take 714.7 MB.
void check_memory_holds_the_network(const Record& r, const NetworkSpec& s, const ProtocolFacts* facts, const std::string& where,
                                    std::vector<std::string>& problems) {
  // A run that ran out of memory may have failed while its weights were still loading.
  if (r.status != Status::ok || !r.peak_memory_mb || !plausible_bounds("peak_memory_mb")->contains(*r.peak_memory_mb))
    return;
  const double floor_mb = s.memory_floor_mb();
  if (*r.peak_memory_mb < kMinMemoryOverNetwork * floor_mb)
    problems.push_back(at(where) + "peak_memory_mb " + csv::format_number(r.peak_memory_mb) +
                       " MB is below the " + csv::format_number(floor_mb) + " MB that the weights, input and largest layer output of " +
                       config_key(r.config) + " take");
  // Nor far above every tensor the pass makes, all held at once (constants in carb/dataset.hpp).
  const double tensors_mb = static_cast<double>(s.param_bytes() + s.input_bytes() + s.activation_bytes_total()) / 1e6;
  const bool cpu = r.extra.count("threads") > 0 || (facts && facts->cpu);
  const double ceiling_mb = kMaxMemoryOverTensors * tensors_mb + (cpu ? kCpuMemoryAllowanceMb : kDeviceMemoryAllowanceMb);
  if (*r.peak_memory_mb > ceiling_mb)
    problems.push_back(at(where) + "peak_memory_mb " + csv::format_number(r.peak_memory_mb) + " MB is above the " +
                       csv::format_number(ceiling_mb) + " MB a forward pass of " + config_key(r.config) +
                       " can hold: " + csv::format_number(kMaxMemoryOverTensors) + "x its weights, input and every layer output (" +
                       csv::format_number(tensors_mb) + " MB) and " +
                       csv::format_number(cpu ? kCpuMemoryAllowanceMb : kDeviceMemoryAllowanceMb) + " MB of " +
                       (cpu ? "the CPU" : "a device") + " library's buffers");
}

// A latency is the time the batch's FLOPs took: no device computes them faster than
// kMaxFlopsPerSecond, so a shorter one is a unit slip or a damaged file, whatever else agrees.
// A CPU row (it says how many threads computed it) is held to kMaxCpuFlopsPerThread per thread
// (kMaxCpuFp32FlopsPerThread in fp32),
// and where it timed the reference network beside it, to kMaxRateOverReference times the rate
// the host showed on that network at the same moment (forty-third hostile pass: a cpu-1t row made
// 1000x faster, with its median, std and timed window to match, implied 81 TFLOP/s on one thread).
void check_compute_rate(const Record& r, const NetworkSpec& s, const ProtocolFacts* facts, const std::string& where,
                        std::vector<std::string>& problems) {
  if (!r.latency_ms || !plausible_bounds("latency_ms")->contains(*r.latency_ms)) return;
  const double rate = s.flops() / (*r.latency_ms / 1000.0);
  const auto say = [&](const std::string& what) {
    problems.push_back(at(where) + "latency_ms " + csv::format_number(r.latency_ms) + " ms for the " +
                       csv::format_number(s.flops() / 1e9) + " GFLOPs of " + config_key(r.config) + " is " +
                       csv::format_number(rate / 1e12) + " TFLOP/s, " + what);
  };
  if (rate > kMaxFlopsPerSecond) {
    say("above the plausible " + csv::format_number(kMaxFlopsPerSecond / 1e12) + " TFLOP/s of any device");
    return;
  }
  if (r.energy_j && plausible_bounds("energy_j")->contains(*r.energy_j) &&
      s.flops() / *r.energy_j > kMaxFlopsPerJoule) {
    problems.push_back(at(where) + "energy_j " + csv::format_number(r.energy_j) + " J for the " +
                       csv::format_number(s.flops() / 1e9) + " GFLOPs of " + config_key(r.config) + " is " +
                       csv::format_number(s.flops() / *r.energy_j / 1e12) + " TFLOP/J, above the plausible " +
                       csv::format_number(kMaxFlopsPerJoule / 1e12) + " TFLOP/J of any device");
    return;
  }
  // The row's own count, or its protocol's on a CPU whose rows do not carry one.
  const auto own = positive_extra(r, "threads");
  const auto threads = own ? own : facts && facts->cpu ? facts->threads : std::nullopt;
  const bool fp32 = r.config.precision == Precision::fp32;
  const double per_thread = fp32 ? kMaxCpuFp32FlopsPerThread : kMaxCpuFlopsPerThread;
  if (threads && rate > per_thread * *threads) {
    say("above the plausible " + csv::format_number(per_thread * *threads / 1e12) + " TFLOP/s of " +
        csv::format_number(threads) + " CPU thread(s)" + (fp32 ? " in fp32" : ""));
    return;
  }
  if (const auto ref_ms = positive_extra(r, kReferenceColumn)) {
    static const double reference_flops = network_totals(kReferenceConfig).flops();
    const double host_rate = reference_flops / (*ref_ms / 1000.0);
    if (rate > kMaxRateOverReference * host_rate)
      say(csv::format_number(rate / host_rate) + "x the " + csv::format_number(host_rate / 1e12) +
          " TFLOP/s the host showed on the reference network beside it (at most " +
          csv::format_number(kMaxRateOverReference) + "x is plausible)");
  }
}

// A row's values must fit its status: a failed run has no latency or energy to report.
void check_row(const Record& r, const ProtocolFacts* facts, const std::string& where, std::vector<std::string>& problems) {
  // A configuration carb cannot build (bottleneck depth 8, batch 0) was never measured: a reader
  // that accepted it would train on, or export, something no profile produced.
  try {
    validate(r.config);
    const NetworkSpec s = network_totals(r.config);
    check_memory_holds_the_network(r, s, facts, where, problems);
    check_compute_rate(r, s, facts, where, problems);
  } catch (const InputError& e) {
    problems.push_back(at(where) + e.what());
  }
  if (r.status == Status::ok && !r.latency_ms) problems.push_back(at(where) + "status ok but latency_ms is empty");
  // A row's thread count is its protocol's (fifty-fourth hostile pass: threads 64 in every row let
  // timings 500x too fast pass as 64 threads' beside a provenance that ran them on 2).
  if (const auto own = positive_extra(r, "threads"); own && facts && facts->cpu && facts->threads && *own != *facts->threads)
    problems.push_back(at(where) + "threads " + csv::format_number(own) + " is not the " +
                       csv::format_number(facts->threads) + " its protocol " + r.extra.at("protocol_id") +
                       " ran with, as its provenance records");
  // `rounds` counts the ok rounds a combined row is the median of: an ok row of none is no median.
  // (By value: "0.0" and "-0" are 0 rounds too; a text that is no number is check_bounds's.)
  if (const auto it = r.extra.find("rounds"); r.status == Status::ok && it != r.extra.end() && extra_number(it->second) == 0.0)
    problems.push_back(at(where) + "status ok but rounds is 0 (no ok round to take the median of)");
  if (r.status != Status::ok)
    for (const char* col : {"latency_ms", "energy_j"})
      if (r.value(col)) problems.push_back(at(where) + "status " + to_string(r.status) + " but " + col + " has a value");
  check_bounds(r, where, problems);
}

// One dataset is one platform measured under one protocol: rows of another platform or protocol
// are other measurements, and a model or a median over them would mean nothing.
void check_one_platform_and_protocol(const Dataset& d, const std::vector<std::string>& where,
                                     std::vector<std::string>& problems) {
  std::map<std::string, std::size_t> platform_seen;
  std::map<std::string, std::pair<std::string, std::size_t>> protocol_seen;  // platform -> its first (id, row)
  std::set<std::pair<std::string, std::string>> protocol_said;              // (platform, other id) reported
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const Record& r = d.rows[i];
    if (platform_seen.emplace(r.platform, i).second && platform_seen.size() > 1) {
      const auto& [p0, i0] = *std::find_if(platform_seen.begin(), platform_seen.end(),
                                           [&](const auto& e) { return e.first != r.platform; });
      problems.push_back(at(where[i]) + "platform '" + r.platform + "', but " + refer(where[i], where[i0]) + " is platform '" + p0 +
                         "': one dataset holds one platform");
    }
    const std::string id = protocol_of(r);
    const auto [it, fresh] = protocol_seen.emplace(r.platform, std::make_pair(id, i));
    // Each other protocol once, at its first row, against the platform's first: compared with the
    // row before, one odd row among rows of p1 blamed the p1 row after it too (hundred-and-third
    // hostile pass), as if the file held two problems.
    if (!fresh && it->second.first != id && protocol_said.emplace(r.platform, id).second) {
      const auto name = [](const std::string& p) { return p.empty() ? std::string("no protocol") : "protocol " + p; };
      problems.push_back(at(where[i]) + name(id) + ", but " + refer(where[i], where[it->second.second]) + " has " +
                         name(it->second.first) + ": one dataset holds one protocol per platform");
    }
  }
}

// Rows of one network at several batches, under one platform and protocol, must not say that a
// larger batch costs much less than a smaller one (kMinCostOverSmallerBatch): each row can be
// consistent on its own while the two contradict each other. Each row is held to the costliest
// smaller batch of its network, so one damaged row is reported once per target. A row refused on
// its own (`refused`) judges no other.
void check_batch_order(const Dataset& d, const std::vector<std::string>& where, const std::vector<bool>& refused,
                       std::vector<std::string>& problems) {
  std::map<std::string, std::vector<std::size_t>> networks;  // platform, protocol, network at batch 1
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const Record& r = d.rows[i];
    if (r.status != Status::ok || refused[i]) continue;
    Config c = r.config;
    c.batch = 1;
    networks[r.platform + '\n' + protocol_of(r) + '\n' + network_key(c)].push_back(i);
  }
  for (auto& [key, rows] : networks) {
    if (rows.size() < 2) continue;
    std::stable_sort(rows.begin(), rows.end(),
                     [&](std::size_t a, std::size_t b) { return d.rows[a].config.batch < d.rows[b].config.batch; });
    for (const char* target : {"latency_ms", "energy_j"}) {
      std::optional<std::size_t> costliest;  // among the smaller batches seen so far
      for (std::size_t k = 0; k < rows.size();) {
        std::size_t end = k;  // rows [k, end) share a batch (duplicates are reported elsewhere)
        while (end < rows.size() && d.rows[rows[end]].config.batch == d.rows[rows[k]].config.batch) ++end;
        for (std::size_t m = k; m < end; ++m) {
          const std::size_t i = rows[m];
          const auto v = d.rows[i].value(target);
          const auto c = costliest ? d.rows[*costliest].value(target) : std::nullopt;
          if (!v || !c || !(*v > 0) || *v >= kMinCostOverSmallerBatch * *c) continue;
          problems.push_back(at(where[i]) + target + " " + csv::format_number(v) + " at batch " +
                             std::to_string(d.rows[i].config.batch) + " is " + csv::format_number(std::round(*v / *c * 1000) / 1000) + "x the " +
                             csv::format_number(c) + " of batch " + std::to_string(d.rows[*costliest].config.batch) +
                             " at " + refer(where[i], where[*costliest]) +
                             ", the same network: a larger batch cannot cost under " +
                             csv::format_number(kMinCostOverSmallerBatch) +
                             "x a smaller one (a damaged or swapped cell, or a measurement disturbed that much; "
                             "re-measure both)");
        }
        for (std::size_t m = k; m < end; ++m) {
          const auto v = d.rows[rows[m]].value(target);
          if (v && (!costliest || !d.rows[*costliest].value(target) || *v > *d.rows[*costliest].value(target)))
            costliest = rows[m];
        }
        k = end;
      }
    }
  }
}

// The most one precision's latency or energy may differ from another's for the same network and
// batch (one platform and protocol): 50x either way (shipped: at most 5.7x, bf16 against fp32 on a
// busy 2-thread host in data/extra).
constexpr double kMaxPrecisionCostRatio = 50;

// Rows of one network and batch at two precisions, under one platform and protocol, must not differ
// in latency or energy by more than kMaxPrecisionCostRatio either way: a precision changes the
// arithmetic, not the units (ninetieth hostile pass: every fp32 latency in microseconds validated).
// Each row is held to the first precision's row of its group, so one damaged precision is reported
// once per row and target. A row refused on its own judges no other.
void check_precision_ratio(const Dataset& d, const std::vector<std::string>& where, const std::vector<bool>& refused,
                           std::vector<std::string>& problems) {
  std::map<std::string, std::vector<std::size_t>> groups;  // platform, protocol, network at fp32
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const Record& r = d.rows[i];
    if (r.status != Status::ok || refused[i]) continue;
    Config c = r.config;
    c.precision = Precision::fp32;
    groups[r.platform + '\n' + protocol_of(r) + '\n' + network_key(c)].push_back(i);
  }
  for (const auto& [key, rows] : groups) {
    if (rows.size() < 2) continue;
    for (const char* target : {"latency_ms", "energy_j"}) {
      const auto first = std::find_if(rows.begin(), rows.end(), [&](std::size_t i) {
        const auto v = d.rows[i].value(target);
        return v && *v > 0;
      });
      if (first == rows.end()) continue;
      const double base = *d.rows[*first].value(target);
      for (auto it = std::next(first); it != rows.end(); ++it) {
        const Record& r = d.rows[*it];
        const auto v = r.value(target);
        if (!v || !(*v > 0) || r.config.precision == d.rows[*first].config.precision) continue;
        const double ratio = *v / base;
        if (ratio <= kMaxPrecisionCostRatio && ratio >= 1 / kMaxPrecisionCostRatio) continue;
        problems.push_back(at(where[*it]) + target + " " + csv::format_number(v) + " at " + to_string(r.config.precision) +
                           " is " + csv::format_number(std::round(ratio * 1000) / 1000) + "x the " +
                           csv::format_number(base) + " at " + to_string(d.rows[*first].config.precision) + " at " +
                           refer(where[*it], where[*first]) + ", the same network and batch: precisions do not differ "
                           "by over " + csv::format_number(kMaxPrecisionCostRatio) +
                           "x (one of them in another unit, or damaged; re-measure both)");
      }
    }
  }
}

// Rows of different networks under one platform and protocol, where one outdoes the other in every
// dimension (kMinFlopsOverDominated, kMinCostOverDominated, kMinCpuMemoryOverDominated): each row is
// held to the costliest row it outdoes, so one damaged row is reported once per target. Pairs of one
// network at two batches are check_batch_order's (latency, energy); a CPU peak is held here for them too.
void check_dominance(const Dataset& d, const std::vector<std::string>& where, const std::vector<bool>& refused,
                     const ProtocolFactsById& facts, std::vector<std::string>& problems) {
  std::map<std::string, std::vector<DominanceRow>> groups;  // platform, protocol, family, precision
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const Record& r = d.rows[i];
    if (r.status != Status::ok || refused[i]) continue;
    const std::string id = protocol_of(r);
    const auto f = facts.find(id);
    const bool cpu = r.extra.count("threads") > 0 || (f != facts.end() && f->second.cpu);
    groups[r.platform + '\n' + id + '\n' + to_string(r.config.family) + '\n' + to_string(r.config.precision)].push_back(
        {i, network_totals(r.config).flops(), cpu});
  }
  for (const auto& [key, rows] : groups)
    for (const char* target : {"latency_ms", "energy_j", "peak_memory_mb"}) {
      const bool memory = std::string_view(target) == "peak_memory_mb";
      const double least = memory ? kMinCpuMemoryOverDominated : kMinCostOverDominated;
      const auto held_to = costliest_outdone(d, rows, target, least);
      for (std::size_t k = 0; k < rows.size(); ++k) {
        const DominanceRow& a = rows[k];
        const auto& worst = held_to[k];
        if (!worst) continue;
        const Record& ra = d.rows[a.i];
        const Record& rb = d.rows[*worst];
        const double va = *ra.value(target), worst_value = *rb.value(target);
        problems.push_back(at(where[a.i]) + target + " " + csv::format_number(va) + " for " + config_key(ra.config) +
                           " is " + csv::format_number(std::round(va / worst_value * 1000) / 1000) + "x the " + csv::format_number(worst_value) +
                           " of " + config_key(rb.config) + " at " + refer(where[a.i], where[*worst]) +
                           ", which it outdoes in every dimension" +
                           (memory ? std::string(" on a CPU")
                                   : " with " + csv::format_number(std::round(a.flops / network_totals(rb.config).flops() * 10) / 10) +
                                         "x its FLOPs") +
                           ": it cannot cost under " + csv::format_number(least) +
                           "x that (a damaged or swapped cell, or a disturbed measurement; re-measure both)");
      }
    }
}

// A target measured on some ok rows of a platform but not others means a meter failed
// part-way: learners would silently train on a biased subset.
void check_partial_targets(const Dataset& d, const std::vector<std::string>& where,
                           std::vector<std::string>& problems) {
  struct Count {
    std::size_t ok = 0, have = 0, first_missing = 0;
    bool missing = false;
  };
  std::map<std::pair<std::string, std::string>, Count> counts;  // (platform, target)
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const Record& r = d.rows[i];
    if (r.status != Status::ok) continue;
    for (const char* t : {"peak_memory_mb", "energy_j"}) {  // empty latency is reported per row
      Count& c = counts[{r.platform, t}];
      ++c.ok;
      if (r.value(t))
        ++c.have;
      else if (!c.missing)
        c.first_missing = i, c.missing = true;
    }
  }
  for (const auto& [key, c] : counts)
    if (c.have > 0 && c.have < c.ok)
      problems.push_back(at(where[c.first_missing]) + "platform '" + key.first + "' has " + key.second + " on " +
                         std::to_string(c.have) + " of " + std::to_string(c.ok) +
                         " ok rows (empty here first); measure all or none");
}

std::vector<std::string> row_places(const std::string& file, const std::vector<std::size_t>& lines) {
  std::vector<std::string> where;
  where.reserve(lines.size());
  for (std::size_t line : lines) where.push_back(file + ":" + std::to_string(line));
  return where;
}

}  // namespace

void throw_dataset_problems(const std::vector<std::string>& problems, const std::string& file) {
  if (problems.empty()) return;
  std::string msg = problems.front();
  if (problems.size() > 1)
    msg += " (and " + std::to_string(problems.size() - 1) + " more problem" + (problems.size() > 2 ? "s" : "") +
           (file.empty() ? ")" : "; `carb data validate " + file + "` lists them all)");
  throw DataError(msg);
}

std::string ColumnBounds::describe() const {
  return std::string(whole ? "whole numbers in " : "") + (lo_inclusive ? "[" : "(") + csv::format_number(lo) + ", " +
         csv::format_number(hi) + "] " + unit;
}

ProtocolFactsById protocol_facts_of(const nlohmann::json& protocols) {
  ProtocolFactsById out;
  if (!protocols.is_object()) return out;
  const auto positive = [](const nlohmann::json& j, const char* key) -> std::optional<double> {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
    const double v = j[key].get<double>();
    return std::isfinite(v) && v > 0 ? std::optional<double>(v) : std::nullopt;
  };
  static const std::regex made_id("p[0-9a-f]{12}");
  for (const auto& [id, settings] : protocols.items()) {
    if (!settings.is_object()) continue;
    // Settings that do not make their own id were edited after carb recorded them (fifty-fourth
    // hostile pass: threads 2 -> 64 in cpu-2t's sidecar let rows 500x too fast pass as 64 threads').
    // Ids of another form were not made by carb's profiler (hand-written provenances).
    if (std::regex_match(id, made_id) && protocol_id_of(settings) != id)
      throw DataError("protocol " + id + "'s recorded settings are not the ones its id was made from (it would be " +
                      protocol_id_of(settings) + "): they were edited since carb recorded them, and its rows " +
                      "cannot be checked against them");
    ProtocolFacts f;
    const nlohmann::json info = settings.contains("platform_info") ? settings["platform_info"] : nlohmann::json();
    f.power_limit_w = positive(info, "power_limit_w");
    f.memory_mb = positive(info, "device_memory_mb");
    // Recorded, but no number carb can use (hundred-and-thirty-seventh hostile pass: "700" as text
    // left a model without its power limit, judged against 5 kW, without a word).
    const auto shown = [](const nlohmann::json& v) {
      const std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      return text.size() <= 40 ? text : text.substr(0, 24) + "... (" + std::to_string(text.size()) + " characters)";
    };
    if (settings.contains("platform_info") && !info.is_object())
      f.unusable.push_back("platform_info is " + shown(info) + ", not an object");
    for (const char* key : {"power_limit_w", "device_memory_mb"})
      if (info.is_object() && info.contains(key) && !positive(info, key))
        f.unusable.push_back(std::string("platform_info.") + key + " is " + shown(info[key]) + ", not a positive number");
    for (const nlohmann::json* j : {&settings, &info})
      if (j->is_object() && j->contains("backend") && (*j)["backend"] == "cpu") f.cpu = true;
    if (f.cpu) f.threads = positive(settings, "threads");
    f.max_timed_s = positive(settings, "max_timed_s");
    f.min_passes = positive(settings, "min_passes");
    f.max_passes = positive(settings, "max_passes");
    out[id] = f;
  }
  return out;
}

ProtocolFactsById recorded_protocol_facts(const std::filesystem::path& csv) {
  // A measurement store given as a dataset is refused by the reader, in one line; its X.json may be
  // an export's sidecar, and was said not to match it (a hostile tester).
  if (csv::starts_as_sqlite(csv)) return {};
  // A damaged sidecar (not JSON, not a file) is refused, not read as "no facts" (forty-ninth hostile
  // pass: a sidecar of "{" switched the power-limit check off and a 3,000 W H200 row trained).
  // Without any sidecar a row is checked by its own columns.
  const nlohmann::json prov = read_provenance(csv);
  // Each said once per file and content: commands read a dataset more than once.
  const auto warn_once = [](const std::filesystem::path& file, const std::string& text) {
    detail::warn_once(file.string() + '\n' + file_fnv1a64(file).value_or(""), text);
  };
  // A sidecar edited since carb wrote it (notes added, which is allowed) is read, but not without a
  // word: the power limit it records is part of no id (fifty-fourth hostile pass: 700 -> 3000 W let
  // an H200 file with every energy x4 validate at 2.8 kW).
  if (sidecar_edited(prov))
    warn_once(provenance_path(csv), provenance_path(csv).string() + " was edited since carb wrote it (its own hash "
              "differs): the device facts " + csv.string() + "'s rows are checked against (power limit, threads, "
              "timing loop) are read as edited");
  // A CSV that is no longer the one its sidecar was written with is read, as an edited dataset may
  // be, but not without a word (fifty-fourth hostile pass: a merge killed between its two renames
  // left a new CSV beside the old sidecar, and every reader took the pair).
  if (auto mismatch = provenance_mismatch(csv, prov)) warn_once(csv, *mismatch);
  // Sixtieth hostile pass: killed after the CSV's rename and before the sidecar's, a first write
  // left the CSV with no provenance at all, read without a word.
  if (std::error_code ec; !std::filesystem::exists(provenance_path(csv), ec))
    if (const auto staged = staged_provenance_of(csv); !staged.empty())
      warn_once(csv, csv.string() + " has no provenance beside it: a run writing both was killed between them; the "
                "provenance it wrote for it is " + staged.string() + " (move it to " + provenance_path(csv).string() +
                " to pair them again)");
  try {
    return prov.is_object() && prov.contains("protocols") ? protocol_facts_of(prov["protocols"]) : ProtocolFactsById{};
  } catch (const DataError& e) {
    throw DataError(provenance_path(csv).string() + ": " + e.what());
  }
}

// A row's average power within its device's power limit, and above a twentieth of it, where the
// provenance records one.
void check_power_limit(const Record& r, const ProtocolFacts* facts, const std::string& where,
                       std::vector<std::string>& problems) {
  if (!facts || !facts->power_limit_w || !r.energy_j || !r.latency_ms || !(*r.latency_ms > 0)) return;
  const double watts = average_power_w(*r.energy_j, *r.latency_ms);
  if (watts > kMaxPowerOverLimit * *facts->power_limit_w)
    problems.push_back(at(where) + "energy_j " + csv::format_number(r.energy_j) + " J in latency_ms " +
                       csv::format_number(r.latency_ms) + " ms is an average power of " + csv::format_number(watts) +
                       " W, above " + csv::format_number(kMaxPowerOverLimit) + "x the " +
                       csv::format_number(facts->power_limit_w) + " W power limit its provenance records for protocol " +
                       r.extra.at("protocol_id"));
  if (watts < kMinPowerOverLimit * *facts->power_limit_w)
    problems.push_back(at(where) + "energy_j " + csv::format_number(r.energy_j) + " J in latency_ms " +
                       csv::format_number(r.latency_ms) + " ms is an average power of " + csv::format_number(watts) +
                       " W, below " + csv::format_number(kMinPowerOverLimit) + "x the " +
                       csv::format_number(facts->power_limit_w) + " W power limit its provenance records for protocol " +
                       r.extra.at("protocol_id") + ", less than such a device draws idle (an energy in another unit?)");
}

// A row's passes and timed window as its protocol's timing loop makes them (profile/timing.cpp):
// at most max(max_passes, min_passes) passes, and past max(min_passes, 2) passes the loop stops at
// the first pass that ends after max_timed_s, so every pass before the last ended within it. The
// last pass is at most the mean plus sqrt(passes - 1) standard deviations. Shipped rows: the passes
// before the last took at most 0.997x max_timed_s. Fifty-first hostile pass: cpu-1t with every time
// x1000 (a unit slip, microseconds read as milliseconds) validated beside a sidecar whose protocol
// stops timing at 2 s, its rows claiming 2,275 s.
void check_timing_loop(const Record& r, const ProtocolFacts* facts, const std::string& where,
                       std::vector<std::string>& problems) {
  const auto passes = extra_value(r, "passes"), timed_s = extra_value(r, "timed_s");
  if (!facts || r.status != Status::ok || !passes || !timed_s || !r.latency_ms) return;
  const double least = facts->min_passes.value_or(0);
  if (facts->max_passes && *passes > std::max(*facts->max_passes, least))
    problems.push_back(at(where) + "passes " + csv::format_number(passes) + " is more than the " +
                       csv::format_number(std::max(*facts->max_passes, least)) +
                       " its protocol's timing loop runs (max_passes " + csv::format_number(facts->max_passes) + ")");
  if (!facts->max_timed_s || *passes <= std::max(least, 2.0)) return;
  const double last_s = (*r.latency_ms + std::sqrt(*passes - 1) * extra_value(r, "latency_std_ms").value_or(0)) / 1000;
  if (*timed_s - last_s > kMaxTimedOverProtocol * *facts->max_timed_s)
    problems.push_back(at(where) + "timed_s " + csv::format_number(timed_s) + " s over " + csv::format_number(passes) +
                       " passes of latency_ms " + csv::format_number(r.latency_ms) +
                       " ms: its protocol stops timing at the first pass that ends after max_timed_s " +
                       csv::format_number(facts->max_timed_s) +
                       " s, so the passes before the last cannot take longer (a time in another unit?)");
}

// Every row of one platform and protocol timed the same reference network on the same host: a
// reference far from the others' is a damaged cell (forty-fifth hostile pass: a row 40x too fast
// with its reference 40x too fast to match kept its rate over the host's, and trained; only
// --drift-correct refused it).
void check_references(const Dataset& d, const std::vector<std::string>& where, std::vector<std::string>& problems,
                      std::vector<bool>& refused) {
  std::map<std::string, std::vector<double>> refs;
  const auto key = [](const Record& r) {
    const auto id = r.extra.find("protocol_id");
    return r.platform + '\n' + (id == r.extra.end() ? std::string() : id->second);
  };
  const auto reference = [](const Record& r) {
    return r.status == Status::ok ? positive_extra(r, kReferenceColumn) : std::nullopt;
  };
  for (const Record& r : d.rows)
    if (const auto v = reference(r)) refs[key(r)].push_back(*v);
  std::map<std::string, double> typical;
  for (auto& [k, v] : refs) {
    if (v.size() < 3) continue;  // too few to say which one is off
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    typical[k] = v[v.size() / 2];
  }
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const auto v = reference(d.rows[i]);
    const auto t = typical.find(key(d.rows[i]));
    if (!v || t == typical.end()) continue;
    const double ratio = std::max(*v / t->second, t->second / *v);
    if (ratio > kMaxReferenceDrift)
      refused[i] = true, problems.push_back(at(where[i]) + "reference_ms " + csv::format_number(v) + " ms is " + csv::format_number(ratio) +
                         "x " + (*v < t->second ? "below" : "above") + " the typical " + csv::format_number(t->second) +
                         " ms of the rows measured with it, more than " + csv::format_number(kMaxReferenceDrift) +
                         "x: a damaged cell, or a host too loaded to measure on");
  }
}

std::vector<std::string> check_dataset(const Dataset& d, const std::vector<std::string>& where,
                                       const ProtocolFactsById& facts) {
  std::vector<std::string> problems;
  check_duplicates(d, where, problems);
  check_one_platform_and_protocol(d, where, problems);
  std::vector<bool> refused(d.rows.size(), false);  // rows with a problem of their own
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const auto id = d.rows[i].extra.find("protocol_id");
    const auto f = id == d.rows[i].extra.end() ? facts.end() : facts.find(id->second);
    const ProtocolFacts* known = f == facts.end() ? nullptr : &f->second;
    const std::size_t before = problems.size();
    check_row(d.rows[i], known, where[i], problems);
    check_power_limit(d.rows[i], known, where[i], problems);
    check_timing_loop(d.rows[i], known, where[i], problems);
    refused[i] = problems.size() > before;
  }
  check_references(d, where, problems, refused);
  check_batch_order(d, where, refused, problems);
  check_precision_ratio(d, where, refused, problems);
  check_dominance(d, where, refused, facts, problems);
  check_partial_targets(d, where, problems);
  return problems;
}

std::vector<std::string> file_problems(const std::filesystem::path& path, const Dataset& d,
                                       const std::vector<std::size_t>& lines, const ProtocolFactsById& facts,
                                       std::vector<std::string> problems) {
  const std::vector<std::string> more = check_dataset(d, row_places(path.string(), lines), facts);
  problems.insert(problems.end(), more.begin(), more.end());
  try {
    recorded_campaign(read_provenance(path), provenance_path(path).string());
  } catch (const DataError& e) {
    problems.push_back(e.what());  // no line: said with the file's other problems
  }
  // Row problems come from two passes; report them in file order.
  sort_by_line(problems, path.string());
  return problems;
}

std::vector<std::string> validate_dataset_csv(const std::filesystem::path& path) {
  std::vector<std::string> problems;
  std::vector<std::size_t> lines;
  const Dataset d = read_dataset_csv(path, problems, &lines);
  return file_problems(path, d, lines, recorded_protocol_facts(path), std::move(problems));
}

Dataset read_dataset_csv(const std::filesystem::path& file) { return read_dataset_csvs({file}); }

Dataset read_dataset_csvs(const std::vector<std::filesystem::path>& files) {
  if (files.empty()) throw InputError("no dataset given");
  Dataset all;
  std::vector<std::string> where, names;
  ProtocolFactsById facts;
  for (const auto& f : files) {
    facts.merge(recorded_protocol_facts(f));
    std::vector<std::string> problems;
    std::vector<std::size_t> lines;
    Dataset d = read_dataset_csv(f, problems, &lines);
    const auto places = row_places(f.string(), lines);
    if (!problems.empty()) {
      // The rows that did parse are checked too, and the earliest problem is said with the count
      // `carb data validate` gives (hundred-and-fourth hostile pass: a bad cell on line 5 was said
      // alone, "1 more" where validate listed 3, or after a duplicate on line 13).
      const auto more = check_dataset(d, places, facts);
      problems.insert(problems.end(), more.begin(), more.end());
      sort_by_line(problems, f.string());
    }
    throw_dataset_problems(problems, f.string());
    where.insert(where.end(), places.begin(), places.end());
    all.add_extra_columns(d.extra_columns);
    for (auto& r : d.rows) all.rows.push_back(std::move(r));
    names.push_back(f.string());
  }
  // Problems across files (the same configuration in two of them): no one command lists them. One
  // file's are said earliest line first, as validate lists them.
  std::vector<std::string> problems = check_dataset(all, where, facts);
  if (files.size() == 1) sort_by_line(problems, names.front());
  throw_dataset_problems(problems, files.size() == 1 ? names.front() : "");
  return all;
}

}  // namespace carb
