// Profiling: the measurement protocol, the backend interface with its name-keyed
// registry, and the resumable profiling loop that writes every measurement to the store
// the moment it exists.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "carb/config.hpp"
#include "carb/dataset.hpp"
#include "carb/drift.hpp"  // kReferenceConfig
#include "carb/meter.hpp"

namespace carb {

/// The measurement protocol. Every field is stored with each row (via protocol_id).
struct Protocol {
  int warmup = 10;            // untimed passes before timing
  int min_passes = 100;       // timed passes at least
  int max_passes = 100;       // timed passes at most (adaptive stopping in between)
  double target_rel_ci = 0;   // stop once the 95% CI half-width / mean falls below this (0 = off)
  double max_timed_s = 0;     // stop once timed passes took this long, after min_passes (0 = off)
  double cooldown_s = 1.0;    // pause between configurations
  int threads = 2;            // intra-op threads (CPU)
  bool channels_last = false; // NHWC memory format
  double min_energy_window_s = 1.0;  // energy window at least this long (repeat passes)
  double util_window_s = 2.0;        // telemetry sampling window (cuda)
  bool lock_clocks = false;   // explicit opt-in; never on shared machines
  bool realtime = false;      // run under SCHED_FIFO so other processes cannot preempt timing (root)
  /// Time a fixed reference network (kReferenceConfig) right before every timed pass and record
  /// its mean as reference_ms: a per-configuration reading of the host's speed at that moment.
  bool reference = false;
  /// Keep freed memory in the process (glibc: no mmap'ed blocks, no trimming), so that large
  /// activation buffers are not page-faulted in again on every pass (cpu backend).
  bool keep_memory = false;
  /// Size the energy window in whole updates of the energy counter (cuda): the window starts at
  /// one update and stops at another, covering this many periods (0 = sized in seconds only, by
  /// min_energy_window_s, with plain reads at its ends: the earlier protocol).
  int energy_ticks = 0;
  /// Share of configurations that get the utilization window (cuda), chosen by a hash of the
  /// configuration so that a resumed or sharded campaign picks the same ones: 1 = all, 0 = none.
  double util_sample = 1.0;
  /// Cool down only while the GPU is warmer than this (degrees C; at most cooldown_s, checked
  /// before each configuration; 0 = always pause cooldown_s, the earlier protocol).
  double cooldown_above_c = 0;
  /// Build every configuration's network anew instead of once per architecture (family, depth,
  /// width, precision) for all of its resolutions and batch sizes: the earlier way, for comparison.
  bool rebuild_networks = false;

  nlohmann::json to_json() const;
  /// Short stable hash of the settings: rows measured under another protocol are kept apart.
  std::string id() const;
};

/// Refuses settings that contradict each other or mean nothing on `backend` (InputError naming the
/// flags): min_passes above max_passes, cpu-only options on another backend, GPU-only options
/// (clock locking, utilization and energy windows other than their defaults) on the cpu backend,
/// and values no caller should pass (negative or not finite). run_profile calls it first, so the
/// library and the CLI refuse the same things; an unknown backend is make_backend's to refuse.
void validate(const Protocol& p, const std::string& backend);

/// Whether `c` gets the utilization window under p.util_sample (a stable hash of its key).
bool samples_utilization(const Protocol& p, const Config& c);


/// Groups configurations by architecture, architectures in a seeded random order. With
/// per_visit = 0, each architecture's configurations in their given order: a campaign stopped
/// anywhere has measured every resolution and batch of a uniform sample of architectures, and each
/// network is built once. With per_visit = K, the architectures are visited in rounds, K
/// configurations of each per visit, spread over its resolutions and batches (round-robin over
/// resolutions, batches in a seeded order): a campaign stopped anywhere has a few configurations
/// of many more architectures, each network built once per visit (bench/arch_spread.py measures
/// what that buys).
std::vector<Config> order_by_architecture(const std::vector<Config>& configs, uint64_t seed, std::size_t per_visit = 0);

/// The configurations one architecture at a time, architectures in the order of their first
/// configuration, each one's configurations in their given order (stable): a plan measured this
/// way builds each network once, its best-ranked architecture first.
std::vector<Config> group_by_architecture(const std::vector<Config>& configs);

/// What one backend measured for one configuration.
struct Measurement {
  Status status = Status::ok;
  std::string error;
  std::optional<double> latency_ms, energy_j, peak_memory_mb, avg_sm_util, avg_mem_util;
  std::map<std::string, std::string> extra;  // median, std, passes, load average, clocks, ...
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  /// Throws InputError for a configuration this backend cannot run at all (e.g. fp16 on CPU).
  virtual void check(const Config& c) const = 0;
  virtual Measurement measure(const Config& c, const Protocol& p) = 0;
  /// Machine, accelerator, library versions: goes into the provenance file.
  virtual nlohmann::json platform_info() const = 0;
  /// Releases cached memory and synchronises between configurations.
  virtual void settle() {}
  /// The meter check (carb meter; every profiling run records it in the provenance): watches the
  /// energy counter with the device idle for at most max_s seconds. Default: no meter.
  virtual MeterCheck check_meter(double max_s);
  /// Runs `c` back to back for about `seconds`, recording every pass's end and every counter
  /// change (the window study). Default: refuses (InputError), the backend has no counter.
  virtual EnergyTrace trace_energy(const Config& c, const Protocol& p, double seconds);
  /// Whether trace_energy works here (checked before a study writes anything).
  virtual bool traces_energy() const { return false; }
  /// The device's temperature now (cuda), for Protocol::cooldown_above_c; nullopt when unknown.
  virtual std::optional<double> temperature_c() { return std::nullopt; }
};

using BackendFactory = std::function<std::unique_ptr<Backend>(const Protocol&)>;
void register_backend(const std::string& name, BackendFactory f);
/// Throws InputError naming the available backends.
std::unique_ptr<Backend> make_backend(const std::string& name, const Protocol& p);
std::vector<std::string> backend_names();

struct ProfileOptions {
  std::string backend = "cpu";
  std::string platform;  // platform id stored with each row (default: backend + threads)
  std::filesystem::path db;
  Protocol protocol;
  bool progress = true;
  std::string command_line;  // recorded with the protocol
  /// Run the meter check before measuring and record it with the protocol (provenance).
  bool check_meter = true;
  /// Measure again the configurations stored as error (a fault of the machine, such as too few file
  /// descriptors, not of the configuration); their rows are replaced. An oom row stays.
  bool retry_errors = false;
  /// Measure every given configuration again, those stored ok too; the new row replaces the stored
  /// one (a disturbed measurement that `data export` refuses: "re-measure both").
  bool redo = false;
  /// This run's configurations become the whole plan of its platform and protocol: what earlier runs
  /// were given and this one is not is forgotten, so `data export` no longer counts it as unmeasured
  /// (a campaign abandoned for a smaller one). Rows already measured stay.
  bool replan = false;
};

struct ProfileSummary {
  std::size_t total = 0, skipped = 0, ok = 0, oom = 0, error = 0;
  /// Of the skipped, those stored as error (not measured again without retry_errors).
  std::size_t skipped_errors = 0;
  /// Stored rows measured again, under `redo` or `retry_errors` (each replaced by its new row).
  std::size_t replaced = 0;
  /// Under `redo`: stored ok rows kept because measuring them again failed with an error.
  std::size_t kept_on_error = 0;
  /// What `data export` would refuse of the store's rows of this platform and protocol, checked at
  /// the end of the run: how many problems, and the first (rows measured on a disturbed host, say).
  std::size_t export_problems = 0;
  std::string first_export_problem;
  /// A signal stopped the run with configurations left to measure; signal is its number.
  bool interrupted = false;
  int signal = 0;
  /// The store's name no longer named its file at the end (renamed or moved during the run).
  bool store_moved = false;
  /// Under a --target-ci: rows measured ok whose latency interval was still wider than the target
  /// when timing stopped at --max-passes or --max-timed-s (each row's latency_rel_ci95 says by how
  /// much). Ninety-seventh hostile pass: a missed target was never said.
  std::size_t ci_target_missed = 0;
  /// Wall time of the measuring loop, and the part of it spent in timed and energy-window passes.
  double wall_s = 0, compute_s = 0;
  std::size_t measured() const { return ok + oom + error; }
  double configs_per_s() const { return wall_s > 0 ? measured() / wall_s : 0; }
  double compute_share() const { return wall_s > 0 ? compute_s / wall_s : 0; }
  nlohmann::json to_json() const;
};

/// Profiles every configuration not yet in the store (resume), committing each row as it completes.
/// Holds the store as its sole writer (StoreAccess::sole_writer): a second profile of the same store
/// fails at once. SIGINT/SIGTERM stop it after the configuration in flight, keeping every committed
/// row; it then returns with `interrupted` set, and the caller must not treat the store as complete
/// (the CLI prints the summary and throws Interrupted). A second signal ends the process at once.
ProfileSummary run_profile(const std::vector<Config>& configs, const ProfileOptions& o);

}  // namespace carb
