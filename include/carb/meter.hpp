// Knowing the energy meter: how often its counter updates (period and jitter), whether instant
// power readings exist and how often they change, the idle power; and the window study that
// measures how far energy per batch from a short window lies from a long reference window.
#pragma once
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "carb/config.hpp"
#include "carb/dataset.hpp"

namespace carb {

/// What `carb meter` (and every profiling run, into the dataset's provenance) finds out about the
/// meter on the machine it runs on. Quantities that could not be observed stay empty.
struct MeterCheck {
  std::string meter = "none";  // what energy is read from ("nvml total-energy counter", "rapl")
  std::string note;            // why there is none, or what limited the check
  double observed_s = 0;       // how long the counter was watched
  int updates = 0;             // counter changes seen
  /// Time between counter updates: median, 10th and 90th percentile (ms); jitter = p90 - p10.
  std::optional<double> period_ms, period_p10_ms, period_p90_ms;
  /// Energy between the first and the last update over their time, with the machine idle (W).
  std::optional<double> idle_power_w;
  std::string power_reading = "none";  // instant power readings, where the meter has them
  int power_changes = 0;               // changes of the instant reading seen
  std::optional<double> power_period_ms, power_mean_w;

  nlohmann::json to_json() const;
};

/// Watches a counter (joules, monotonic) and an optional instant power reading (watts) for at
/// most max_s seconds or until the counter has changed `updates` times. The machine should be
/// idle meanwhile (nothing else is run).
MeterCheck check_meter(const std::function<std::optional<double>()>& joules,
                       const std::function<std::optional<double>()>& power_w, double max_s, int updates);

/// One configuration run back to back for a long window, with every pass's end and every counter
/// change recorded: from it, windows of any length can be evaluated after the fact.
struct EnergyTrace {
  Config config;
  Status status = Status::ok;
  std::string error;
  double start_s = 0;                  // when the first pass began (the counter's clock)
  std::vector<double> pass_end_s;      // end of each pass
  std::vector<double> counter_t_s, counter_j;  // the first reading, then one entry per change
};

/// One evaluated window of a trace: energy per pass by one method over a window of about window_s.
struct WindowStudyRow {
  Config config;
  int repeat = 0;
  double window_s = 0;  // nominal length; the reference row has the trace's whole length
  bool reference = false;
  std::string method;   // "ticks" (aligned to counter updates) | "reads" (two plain reads)
  double start_s = 0, seconds = 0;  // where the window lies in the trace, its actual length
  int passes = 0, ticks = 0;
  double energy_per_pass_j = 0;
};

/// Cuts a trace into consecutive windows of each nominal length (each starting and ending at a
/// pass boundary) and evaluates both methods on each; adds the whole trace, tick-aligned, as the
/// reference. Windows that hold no whole counter period get no "ticks" row.
std::vector<WindowStudyRow> study_windows(const EnergyTrace& trace, int repeat, const std::vector<double>& windows_s);

/// Whether `file` starts with the window-study header (so carb may add to it).
bool looks_like_window_study(const std::filesystem::path& file);

struct Protocol;

struct WindowStudyOptions {
  std::string backend = "cuda";
  std::filesystem::path out;                 // the study CSV; a provenance sidecar goes beside it
  double trace_s = 5.0;                      // each trace's length: the reference window
  std::vector<double> windows_s = {0.1, 0.25, 0.5, 1, 2};
  int repeats = 3;
  int warmup = 5;
  bool force = false;                        // replace an --out that is not a window study
  std::vector<std::filesystem::path> inputs;  // files the study reads (never its --out)
  bool progress = true;
  std::string command_line;
};

struct WindowStudySummary {
  std::size_t traces = 0, skipped = 0, rows = 0;
  std::vector<std::string> failures;  // "config: oom: why", one per configuration that failed
};

/// Runs the window study: for every configuration and repeat, one trace (trace_energy), cut into
/// windows (study_windows), the CSV rewritten atomically after each trace. An --out that already
/// holds a window study is resumed (its traces are kept and not measured again); anything else
/// there is refused unless `force`. Backends must be registered (load_profiler_backends).
WindowStudySummary run_window_study(const std::vector<Config>& configs, const WindowStudyOptions& o);

}  // namespace carb
