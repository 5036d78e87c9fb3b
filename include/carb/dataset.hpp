// The measured dataset: one Record per (platform, configuration), the CSV
// contract of docs/ARCHITECTURE.md, and reading/writing/validating it.
#pragma once
#include <array>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "carb/config.hpp"
#include "carb/extra_columns.hpp"

namespace carb {

/// The three cost targets carb predicts, in cascade order.
inline constexpr std::array<const char*, 3> kTargets = {"peak_memory_mb", "energy_j", "latency_ms"};

/// Columns every dataset CSV has, in this order (more columns may follow).
inline constexpr std::array<const char*, 13> kDatasetColumns = {
    "platform", "family",     "depth",    "width",          "resolution",  "batch",       "precision",
    "status",   "latency_ms", "energy_j", "peak_memory_mb", "avg_sm_util", "avg_mem_util"};

/// Plausibility bounds of a measured column. A value outside is a broken meter or a damaged
/// file, never data: a latency of 1e308 ms once trained "fine" into predictions of 1e288 ms.
struct ColumnBounds {
  const char* column;
  double lo, hi;
  bool lo_inclusive;  // utilization may be 0; a measured latency, energy or memory may not
  const char* unit;
  bool whole = false;  // a count (threads, rounds): 2.5 threads is no measurement

  bool contains(double v) const {
    return (lo_inclusive ? v >= lo : v > lo) && v <= hi && (!whole || v == static_cast<double>(static_cast<long long>(v)));
  }
  /// "(0, 1e+07] ms"
  std::string describe() const;
};

/// The one statement of the bounds, applied by every reader of a dataset: a latency below a
/// nanosecond or above 1e7 ms (2.8 hours) per batch, an energy below a nanojoule or above 1e7 J
/// (700 W for 4 hours), memory below a byte or above 1e8 MB (100 TB). A denormal like 1e-320
/// once trained into an infinite MAPE.
inline constexpr std::array<ColumnBounds, 5> kPlausibleBounds = {{
    {"latency_ms", 1e-6, 1e7, true, "ms"},
    {"energy_j", 1e-9, 1e7, true, "J"},
    {"peak_memory_mb", 1e-6, 1e8, true, "MB"},
    {"avg_sm_util", 0, 100, true, "%"},
    {"avg_mem_util", 0, 100, true, "%"},
}};

/// The plausibility bounds of one of the five measured columns, or nullptr for another column.
inline const ColumnBounds* plausible_bounds(std::string_view column) {
  for (const ColumnBounds& b : kPlausibleBounds)
    if (column == b.column) return &b;
  return nullptr;
}

/// The highest average power (energy_j / latency) a row may imply, in W: well above the largest
/// single accelerator sold (a B200 or MI355X board draws up to about 1.0-1.4 kW; an H200 at most
/// about 700 W, shipped rows at most 705 W). It was 100 kW, a rack's worth, until the ninetieth
/// hostile pass: an H200 file stripped of its protocol, with energy and latency swapped, validated
/// at 8 kW.
inline constexpr double kMaxAveragePowerW = 5e3;
/// The lowest: no device carb measures energy on draws under half a watt while it computes (an
/// NVML GPU's board power, a CPU package's RAPL; shipped H200 rows: 115-705 W, a Jetson Nano idles
/// at about 1.25 W). Forty-first hostile pass: energy divided by 1e4 validated at 0.01 W on an H200.
inline constexpr double kMinAveragePowerW = 0.5;
/// The highest compute rate a row may imply, analytic FLOPs of the batch over latency_ms, in
/// FLOP/s: 10 PFLOP/s, five times an H200's peak sparse fp16 (shipped: at most 0.32 PFLOP/s on
/// the H200, 0.0004 on CPU). Forty-first hostile pass: latency and energy divided by 1000 kept
/// every other rule and implied 85 PFLOP/s.
inline constexpr double kMaxFlopsPerSecond = 1e16;
/// The highest compute rate per CPU thread a row with a `threads` column may imply: 10 TFLOP/s,
/// above an AMX core's bf16 peak (shipped: at most 0.24 TFLOP/s per thread). Forty-third hostile
/// pass: a cpu-1t row 1000x too fast, self-consistent throughout, implied 81 TFLOP/s on one thread.
inline constexpr double kMaxCpuFlopsPerThread = 1e13;
/// The same for an fp32 row, which no CPU computes on a matrix engine: 1 TFLOP/s per thread, above
/// a 5.7 GHz AVX-512 core's fp32 peak (two FMA units, 0.36 TFLOP/s) times the 2.25x fewer
/// multiplies of a Winograd convolution (shipped: at most 0.14 TFLOP/s per thread, 0.25 in bf16).
/// Fifty-fourth hostile pass: every cpu-2t timing column x0.025 kept under the 10 TFLOP/s of AMX
/// bf16 and trained into 8.9 TFLOP/s of fp32 on two EPYC threads.
inline constexpr double kMaxCpuFp32FlopsPerThread = 1e12;
/// The most a row's compute rate may exceed the rate its host showed on the reference network
/// (`reference_ms`, timed beside each pass): 100x (shipped: at most 19.8x, a large batch against
/// the batch-1 reference).
inline constexpr double kMaxRateOverReference = 100;
/// The most FLOPs a row may imply per joule, analytic FLOPs of the batch over energy_j: 5 TFLOP/J,
/// twice the dense fp16 efficiency of any GPU made (a B200: about 2.25; an H200 1.4; shipped H200
/// rows at most 0.48). Forty-fourth hostile pass: an H200 fp32 row 60x faster, with energy and
/// every timing column to match, implied 8,917 TFLOP/s and validated.
inline constexpr double kMaxFlopsPerJoule = 5e12;
/// How far a row's average power (energy_j over latency_ms) may lie from the instant power the
/// device read before and after it (gpu_power_w_start/end): at most 5x the higher reading and at
/// least a tenth of the lower (shipped H200 rows: 0.22-1.75x the higher, 0.42-5.5x the lower).
/// Forty-fourth hostile pass: an H200 row at 13.2 kW beside readings of 130 and 436 W validated,
/// and one at 6 W beside 156 and 445 W.
inline constexpr double kMaxPowerOverInstant = 5;
inline constexpr double kMinPowerOverInstant = 0.1;
/// The most a row's average power may exceed its device's power limit, where the dataset's
/// provenance records one (platform_info.power_limit_w of the row's protocol): 1.5x (shipped H200
/// rows: at most 1.007x the 700 W limit; the limit holds over about a second, a window may be shorter).
inline constexpr double kMaxPowerOverLimit = 1.5;
/// The most a prediction's average power may exceed that limit before `predict` says its energy or
/// latency is off: 1.1x (measured rows reach 1.007x; a review: 1.0x flagged answers as close to the
/// limit as measurements are).
inline constexpr double kPredictedPowerOverLimit = 1.1;
/// The average power of a batch: its energy over its time (W from J and ms).
inline double average_power_w(double energy_j, double latency_ms) { return energy_j / (latency_ms / 1000.0); }
/// The least a row's average power may be of that limit: 0.05x (35 W on the H200, below its idle
/// draw; shipped H200 rows at least 0.16x; a consumer GPU idles near 0.05x of its limit and draws
/// more while it computes). Fifty-second hostile pass: the H200's energy and every power column
/// scaled to 0.2x validated beside the 700 W limit, and the model answered an H200 at 60 W.
inline constexpr double kMinPowerOverLimit = 0.05;
/// The most a peak may exceed every tensor a forward pass makes (weights, input and each layer's
/// output, all held at once): 4x, plus a fixed allowance for the library's own buffers, 64 MB on a
/// CPU row (a row with `threads`), 1 GB elsewhere (cuDNN workspaces). Shipped: CPU at most 1.41x
/// and 8.6 MB over; H200 at most 142 MB over. Forty-fourth hostile pass: a cpu-1t peak x1000,
/// 1,821 MB for a network whose every tensor takes 1.9 MB, validated.
inline constexpr double kMaxMemoryOverTensors = 4;
inline constexpr double kCpuMemoryAllowanceMb = 64;
inline constexpr double kDeviceMemoryAllowanceMb = 1024;

/// The least a larger batch of the same network may take of a smaller batch's latency or energy,
/// within one platform and protocol: 0.4x. A larger batch does all the smaller one's work and
/// more; only a disturbed measurement makes it look cheaper (shipped: at least 0.54x for latency,
/// on a loaded CPU host, 0.59x on the H200, and 0.66x for H200 energy, all between neighbouring
/// batches). Fiftieth hostile pass: batch 1's and batch 32's timing columns swapped in 160
/// networks validated, and the model trained on them answered 32 images in a sixth of one's time.
inline constexpr double kMinCostOverSmallerBatch = 0.4;

/// Across networks: a configuration at least as large as another in every dimension (depth, width,
/// resolution, batch; same family, precision, platform and protocol) with at least
/// kMinFlopsOverDominated times its FLOPs costs at least kMinCostOverDominated of its latency and
/// energy. Looser than the batch rule, because honest data breaks it more: a network can be slower
/// than a deeper one where the allocator struggles (data/extra, measured without --keep-memory:
/// basic-10 at width 0.25 and batch 64 took 4.4x basic-18's time; with at least 4x the FLOPs, every
/// shipped dataset is at 0.43x or more, cpu-2t and cpu-1t at 1.0x, the H200 at 0.59x). Fifty-first
/// hostile pass: resolutions 32 and 128 (or widths 0.25 and 1) swapped in whole networks validated
/// and trained into resolution 128 predicted 8x faster than 32.
inline constexpr double kMinFlopsOverDominated = 4;
inline constexpr double kMinCostOverDominated = 0.3;
/// On a CPU (no cuDNN workspace chosen per shape) a peak never falls when the configuration grows
/// in any dimension: at least 0.8x that of any configuration it outdoes (shipped: 1.000x or more).
/// Fifty-first hostile pass: resolution 32's peaks raised to 1.5x resolution 128's validated.
inline constexpr double kMinCpuMemoryOverDominated = 0.8;

/// How far past its protocol's max_timed_s a row's passes before the last may have run: 1.5x (the
/// loop stops at the first pass past it; shipped rows at most 0.997x, combined rows are medians).
inline constexpr double kMaxTimedOverProtocol = 1.5;

/// How far a measured row's own figures may disagree (fortieth hostile pass: a row implying 0.66 W on
/// an H200 passed every bound). energy_j is avg_power_w x energy_window_s / energy_passes, the same
/// window's figures, to rounding (every shipped row: within 5e-6), except in a row combined over
/// rounds, whose columns are each their own median; a pass in the energy window takes
/// energy_window_s / energy_passes, which no steady device makes this many times longer or shorter
/// than latency_ms (shipped: 0.79-1.27x); and latency_ms, a mean of positive passes, is never below
/// half their median, latency_median_ms. Forty-second hostile pass: a latency 1000x its own median
/// validated. In a row of one measurement (no rounds, or rounds 1), latency_ms is also the timed
/// window over its passes (timed_s x 1000 / passes) and latency_std_ms / latency_ms is latency_cv,
/// both within kEnergyIdentityTolerance (shipped: 5e-6, 9e-6), and the mean is within one standard
/// deviation of the median, as every sample's is. In a combined row, whose columns are medians
/// over rounds each on its own, energy and the timed window need only agree within
/// kMaxEnergyPassOverLatency.
inline constexpr double kEnergyIdentityTolerance = 0.01;
inline constexpr double kMaxEnergyPassOverLatency = 3;
inline constexpr double kMinMeanOverMedianLatency = 0.5;

/// The least peak memory a row may have, as a share of its network's weights plus input (which are
/// in memory throughout the pass the peak is taken over). 0.999, not 1: rounding in a CSV.
inline constexpr double kMinMemoryOverNetwork = 0.999;

/// Bounds of the extra columns carb itself reads (the protocol a row was measured under, what
/// combine and drift correction use); other extra columns are carried as text. An empty cell is
/// "not recorded"; anything else must be a number within these. `passes` and `warmup` may be
/// fractional: `carb data combine` writes the median over rounds (74.5 in data/cpu-2t.csv).
inline constexpr std::array<ColumnBounds, 22> kExtraColumnBounds = {{
    {"threads", 1, 4096, true, "threads", true},
    {"warmup", 0, 1e9, true, "passes"},
    {"passes", 1, 1e9, true, "passes"},
    {"timed_s", 0, 1e7, true, "s"},
    {"reference_ms", 1e-6, 1e7, true, "ms"},
    {"rounds", 0, 1e6, true, "rounds", true},  // ok rounds: 0 for a configuration that failed in every one
    {"latency_round_spread", 0, 1e6, true, "(max/min - 1)"},
    // The timing statistics and host load the profiler writes beside the latency (thirteenth
    // hostile pass: negative ones validated).
    {"latency_median_ms", 1e-6, 1e7, true, "ms"},
    {"latency_std_ms", 0, 1e7, true, "ms"},
    {"latency_cv", 0, 1e3, true, "(std/mean)"},
    {"latency_rel_ci95", 0, 1e3, true, "(half-width/mean)"},
    {"load_avg_1m", 0, 1e5, true, "runnable tasks"},
    // The energy window's own figures and the allocator's reserved pool (forty-second hostile pass:
    // a negative avg_power_w read as "not recorded" switched the energy identity off).
    {"avg_power_w", 0, kMaxAveragePowerW, false, "W"},
    {"energy_window_s", 0, 1e7, false, "s"},
    {"energy_passes", 0, 1e9, false, "passes"},
    {"peak_reserved_mb", 0, 1e8, false, "MB"},
    // The device's instant power before and after the row (forty-fourth hostile pass: read by the
    // check of the average power against them, so a broken one is refused, not skipped).
    {"gpu_power_w_start", 0, kMaxAveragePowerW, false, "W"},
    {"gpu_power_w_end", 0, kMaxAveragePowerW, false, "W"},
    // The device's state the profiler records (fifty-sixth hostile pass: 900 C and 99,999 MHz
    // validated). A GPU throttles near 90 C and shuts down before 150; shipped H200 rows: 38-55 C,
    // SM clocks 1,965-1,980 MHz, memory 3,201 MHz; no chip clocks at 10 GHz.
    {"gpu_temp_c_start", -40, 150, true, "C"},
    {"gpu_temp_c_end", -40, 150, true, "C"},
    {"sm_clock_mhz", 0, 1e4, false, "MHz"},
    {"mem_clock_mhz", 0, 1e4, false, "MHz"},
}};

/// How one measurement ended: measured, out of memory, or failed otherwise.
enum class Status { ok, oom, error };
inline constexpr std::array<Status, 3> kStatuses = {Status::ok, Status::oom, Status::error};
std::string to_string(Status s);
/// The status named `s`; nullopt for anything but "ok", "oom" or "error".
std::optional<Status> parse_status(std::string_view s);

struct Record {
  std::string platform;
  Config config;
  Status status = Status::ok;
  std::optional<double> latency_ms, energy_j, peak_memory_mb, avg_sm_util, avg_mem_util;
  /// Any further columns, by name, as text (e.g. latency_std_ms, passes, load_avg).
  ExtraColumns extra;

  /// Value of a numeric core column by name ("latency_ms", ...); nullopt when empty.
  std::optional<double> value(std::string_view column) const;
  void set_value(std::string_view column, std::optional<double> v);
};

struct Dataset {
  std::vector<Record> rows;
  /// Names of the extra columns, in first-seen order (kept on write).
  std::vector<std::string> extra_columns;

  /// Rows with status ok only.
  Dataset ok_only() const;
  /// True when every ok row has a value for the column.
  bool has_column(std::string_view column) const;
  /// Appends the names not yet among extra_columns, keeping first-seen order.
  void add_extra_columns(const std::vector<std::string>& names);
};

/// A number as stored in a record's extra columns ("%.6g"): the profiler's and combine's.
std::string extra_number(double v);

/// Reads a dataset CSV and checks it as `carb data validate` does (duplicates, one platform and
/// one protocol, status-consistent values, plausibility bounds, targets measured on all ok rows
/// or none). Throws DataError naming file and line of the first problem, and how many more there
/// are. Every reader of datasets goes through this or read_dataset_csvs.
Dataset read_dataset_csv(const std::filesystem::path& file);
/// Several dataset CSVs as one dataset, each read and checked as above and then checked together
/// (a configuration in two files is a duplicate; all files hold one platform and protocol).
Dataset read_dataset_csvs(const std::vector<std::filesystem::path>& files);
/// Reads like read_dataset_csv but, instead of stopping at the first problem, appends every
/// problem ("file:line: ...") to `problems` and leaves the bad rows out; a file that cannot be
/// read or tokenized, or lacks required columns, gives problems and no rows. Never throws
/// DataError for the file's contents (used by `carb data validate`). When `lines` is given it
/// receives the CSV line of each returned row (same order as rows).
Dataset read_dataset_csv(const std::filesystem::path& file, std::vector<std::string>& problems,
                         std::vector<std::size_t>* lines = nullptr);
/// Checks, before any work, that a dataset CSV and its provenance sidecar may be written at `csv`:
/// its directory exists, neither path is a directory, and what is already there is a dataset carb
/// wrote by the same operation (its sidecar's kind is `kind`), unless `force`. A dataset of another
/// kind (a measuring round where a combined one would go) holds measurements that may exist nowhere
/// else. Throws InputError naming the path otherwise.
void check_dataset_output(const std::filesystem::path& csv, bool force, const std::string& kind);
/// The same rule for any CSV carb writes with a sidecar whose kind is `kind`: `ours` tells from the
/// file whether it is one (its header), `what` names it in errors ("a plan CSV").
void check_sealed_csv_output(const std::filesystem::path& csv, bool force, const std::string& kind,
                             bool (*ours)(const std::filesystem::path&), const char* what);
/// Runs `checks(force)`, the rules for what a CSV output with a sidecar may replace at `csv`. Without
/// --force that is all. With it, where the same checks without it would have refused (rows the output
/// loses, another kind of dataset, an edit, a file carb did not write), what is there is kept first:
/// the file and its provenance copied to `<stem>.earlier.csv` and its `.json` (`.earlier-1`, ... when
/// taken; an orphaned provenance alone), and a warning says where: --force replaces, never destroys
/// (fifty-fifth hostile pass: `data combine --out cpu-2t-round3.csv --force` replaced a measuring
/// round, as the refusal advised). Meant to run as write_csv_with_provenance's recheck, just before
/// the replacing write.
void keep_what_force_replaces(const std::filesystem::path& csv, bool force, const std::function<void(bool)>& checks);
/// The provenance kinds of carb's dataset outputs.
inline constexpr const char* kExportedKind = "carb dataset";
inline constexpr const char* kCombinedKind = "carb dataset (combined measuring rounds)";
inline constexpr const char* kMergedKind = "carb dataset (merged)";
inline constexpr const char* kPlanKind = "carb plan";
inline constexpr const char* kWindowStudyKind = "carb window study";
/// The first line of a window study's CSV (`carb meter --study --out`), whose provenance is its
/// name with ".json" added, not replaced.
inline constexpr const char* kWindowStudyHeader =
    "family,depth,width,resolution,batch,precision,repeat,window_s,reference,method,start_s,seconds,passes,ticks,"
    "energy_per_pass_j";
/// Every kind of provenance document carb writes: a sidecar is carb's own only when its "kind" is
/// one of these exactly (thirty-first hostile pass: a user's {"kind": "carbon emissions"} passed a
/// prefix test, and --force replaced it).
inline constexpr std::array<const char*, 5> kProvenanceKinds = {kExportedKind, kCombinedKind, kMergedKind,
                                                                kPlanKind, kWindowStudyKind};
/// Refuses (InputError) an output that is one of the inputs, an input's provenance sidecar, or
/// inside an input directory (a model bundle), however either path is spelled (links, `.`,
/// relative names): combine and merge once replaced an input round with their result.
/// `kind` says whether the input files are datasets (with a sidecar beside each) or files without
/// one (a store: `--db cpu.db --out cpu.csv` puts the export's sidecar at cpu.json, as it should).
enum class InputKind { datasets, plain_files };
void check_not_an_input(const std::filesystem::path& out, const std::vector<std::filesystem::path>& inputs,
                        InputKind kind = InputKind::datasets);
/// `d` with one spelling of the width per network: every row's width replaced by the first width
/// in `d` that builds the same channels (0.251 becomes 0.25), for analyses that group by width
/// (characterize counted 0.25 and 0.251 as two width levels).
Dataset with_one_width_per_network(Dataset d);
/// Refuses (InputError) an --out that is a symbolic link unless `force`: writing replaces the link.
/// And, even with `force`, a file of a carb model bundle (its manifest, a learner's .model file,
/// trained_configs.txt): replacing one breaks the bundle.
void check_not_a_link(const std::filesystem::path& out, bool force);
/// Refuses (InputError), whatever the flags, an output at a carb model bundle's own file: its
/// manifest (even a damaged one), a learner's .model file or trained_configs.txt.
void check_not_a_bundle_file(const std::filesystem::path& out);
/// Refuses (InputError), whatever the flags, an output that is not a provenance at a carb provenance
/// sidecar (a dataset's, merge's, combine's, plan's or window study's JSON): it is its file's only
/// record of how it was measured, and only that file's own output replaces it. For outputs other
/// than CSVs with sidecars: reports, model bundles, a window study's --out. Nor a window study
/// (its header, or its provenance beside it as `<out>.json`), measurements only `meter --study`
/// adds to, unless `study_output` (the study's own --out, which it resumes).
void check_not_a_provenance(const std::filesystem::path& out, bool study_output = false);
/// True when `f` is a carb provenance document (a dataset's, plan's or window study's sidecar).
bool is_carb_provenance(const std::filesystem::path& f);
/// True when `f`'s first line is a dataset CSV's header (the core columns in order), sidecar or not:
/// measurements, which only a dataset's own kinds of output replace (fifty-fifth hostile pass: a
/// dataset whose sidecar was lost was replaced by a plan, a report and a bundle, with --force).
bool is_dataset_csv(const std::filesystem::path& f);
/// The path as it resolves (absolute, symlinks followed as far as they exist), for comparing paths.
std::filesystem::path resolved_path(const std::filesystem::path& p);
/// What replacing an earlier output must keep: every configuration with its ok status, each of its
/// measured values and its rounds (combine, merge); or, for an export, every row exactly as it was
/// (a store never rewrites a committed row, so a changed row is another store's).
enum class KeepRule { measurements, same_rows };
/// Refuses (InputError, unless `force`) to replace the dataset at `csv` with `next` when `next`
/// would lose what `rule` keeps: an earlier output may be the only copy left.
void check_output_keeps_rows(const std::filesystem::path& csv, const Dataset& next, bool force,
                             KeepRule rule = KeepRule::measurements);
/// Refuses (InputError, unless `force`) a merge or combine output at `csv` that would change
/// measured values of the earlier output there when one of the files that output was made from
/// (its sidecar's inputs or rounds) is not among `inputs`, by path or by hash: the new values
/// would be other measurements, and the earlier ones may be kept nowhere else. Returns, when it
/// allows a change (every source is among `inputs`), how many rows change and the first
/// ("3 rows (first: ...)"); empty when none does.
std::string check_output_keeps_sources(const std::filesystem::path& csv, const Dataset& next,
                                       const std::vector<std::filesystem::path>& inputs, bool force);
/// Writes atomically (temp file + rename), so a crash never leaves a half-written file.
void write_dataset_csv(const Dataset& d, const std::filesystem::path& file);
/// Writes the CSV text (header + rows) to a stream; numbers round-trip exactly, nullopt is empty.
void write_dataset_csv(const Dataset& d, std::ostream& out);

/// Reads a CSV of configurations (the six configuration columns; other columns ignored).
std::vector<Config> read_configs_csv(const std::filesystem::path& file);
void write_configs_csv(const std::vector<Config>& cs, std::ostream& out);
/// Each configuration's `platform` cell, in file order, as read_configs_csv reads them ("" for every
/// row of a CSV without a platform column, such as a configuration list or a plan).
std::vector<std::string> read_config_platforms_csv(const std::filesystem::path& file);
/// The configurations of a CSV (as read_configs_csv) with the utilization measured for each, from
/// its required columns avg_sm_util and avg_mem_util (0-100 %): what a telemetry model predicts from.
std::vector<Record> read_utilization_csv(const std::filesystem::path& file);

}  // namespace carb
