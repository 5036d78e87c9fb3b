// The result of characterize(): one struct per section of the paper's characterization, with
// to_json() at the edge (the `carb characterize --format json` contract). Every section says
// whether it is available; an unavailable one carries only the reason (the missing input) and is
// never filled with estimates. Maps keyed by a target or a family iterate in name order, as the
// JSON objects do.
#pragma once
#include <array>
#include <cstddef>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "carb/config.hpp"

namespace carb {

/// A batch-size tier, inclusive on both ends (the paper's 1-4, 5-16, 17-64, 65-256).
struct BatchTier {
  int lo, hi;
  std::string label() const { return std::to_string(lo) + "-" + std::to_string(hi); }
  bool contains(int batch) const { return batch >= lo && batch <= hi; }
};
inline constexpr std::array<BatchTier, 4> kBatchTiers = {{{1, 4}, {5, 16}, {17, 64}, {65, 256}}};
/// "N rows with a batch above 256 are outside the tiers and left out" (a section's note).
std::string rows_past_tiers_note(std::size_t rows);
/// The efficiency metrics, in display order (energy, latency, memory per GFLOP).
inline constexpr std::array<const char*, 3> kEfficiencyMetrics = {"j_per_gflop", "ms_per_gflop",
                                                                  "mb_per_gflop"};

/// The knobs a configuration varies along, in display order.
enum class Knob { depth, width, resolution, batch, precision };
inline constexpr std::array<Knob, 5> kKnobs = {Knob::depth, Knob::width, Knob::resolution, Knob::batch,
                                               Knob::precision};
std::string to_string(Knob k);
Knob parse_knob(std::string_view s);  // InputError on an unknown name

/// Low or high SM utilization: the divergence section's split at its threshold.
enum class SmRegime { low, high };
std::string to_string(SmRegime r);
SmRegime parse_sm_regime(std::string_view s);  // InputError on an unknown name

/// Whether a section (or an entry of one) could be computed, and if not, why.
struct Availability {
  bool available = true;
  std::string reason;  // set when !available
};

/// The mean of a target over the rows at one level of a knob. `level` is the knob's value (a
/// precision as its enum's number); `n` is the row count.
struct LevelMean {
  double level = 0, mean = 0;
  int n = 0;
};

/// One target along one knob, all other knobs pooled: the mean per level (ascending), the
/// lowest and highest means, and their ratio (unset when the lowest mean is not positive).
struct KnobScaling : Availability {
  Knob knob = Knob::depth;
  std::vector<LevelMean> levels;
  LevelMean min, max;
  std::optional<double> ratio;
  /// The knob's highest level over its lowest (matched_high / matched_low, as `level`; for precision,
  /// which has no order, the pooled costliest level over the cheapest, as `ratio` is), over only
  /// the configurations measured at both (every other knob equal), each one's rows there averaged:
  /// where a space leaves some configurations out at some levels (the cpu space drops networks over
  /// 12 GMACs at large batches), the pooled ratio compares different networks and the matched one
  /// does not. May be below 1. Unset when no configuration was measured at both.
  std::optional<double> matched_ratio;
  double matched_low = 0, matched_high = 0;
  int matched_pairs = 0;
  /// True when the pooled means say other knobs, not this one: no configuration was measured at
  /// both the lowest and highest level, or the pooled curve's end (highest level's mean over the
  /// lowest's) goes the other way from the matched ratio.
  bool pooled_confounded() const;
  /// True when the pooled curve's end goes the matched ratio's way but differs from it by more than
  /// kPooledMatchedTolerance times either way: the pooled ratio's size compares other knobs too
  /// (cpu-2t's basic latency read 1.48x along depth, pooled, where the 278 networks measured at both
  /// ends scale 2.65x: the `cpu` space leaves large networks out at large sizes).
  bool pooled_size_differs() const;
};

/// How far (a factor either way) the pooled curve's end may lie from the matched ratio before the
/// pooled ratio's size is said to compare other knobs: a grid measured whole gives one quotient both
/// ways; configurations left out at one end move it.
inline constexpr double kPooledMatchedTolerance = 1.25;

struct ScalingSection : Availability {
  std::string definition;
  /// family -> target -> one entry per knob (kKnobs order)
  std::map<Family, std::map<std::string, std::vector<KnobScaling>>> families;
};

/// mean(bottleneck) / mean(basic) of one target.
struct FamilyRatio : Availability {
  double basic_mean = 0, bottleneck_mean = 0, ratio = 0;
  int n_basic = 0, n_bottleneck = 0;
};

struct FamilySection : Availability {
  std::string definition;
  std::map<std::string, FamilyRatio> targets;
};

/// value(low precision) / value(fp32) over matched configurations of one target.
struct PrecisionRatio : Availability {
  double mean_ratio = 0, min_ratio = 0, max_ratio = 0;
  int pairs = 0;
};

/// One reduced precision against fp32, per target.
struct PrecisionComparison {
  Precision low = Precision::fp16;
  std::map<std::string, PrecisionRatio> targets;
  std::string name() const { return to_string(low) + "_vs_fp32"; }
};

struct PrecisionSection : Availability {
  std::string definition;
  std::vector<PrecisionComparison> comparisons;  // in name order (bf16 before fp16)
};

/// A cost per GFLOP in one batch tier: pooled (sum / sum) and the mean of per-row ratios;
/// unset when the tier has no row.
struct TierCost {
  BatchTier tier{};
  int n = 0;
  std::optional<double> pooled, row_mean;
};

/// One efficiency metric (kEfficiencyMetrics) over the batch tiers; spread = worst / best pooled
/// tier (unset when no tier is positive, or fewer than two tiers have rows).
struct EfficiencyMetric : Availability {
  std::string name, target;
  std::vector<TierCost> tiers;
  std::optional<double> spread;
};

struct EfficiencySection : Availability {
  std::string definition;
  int rows_outside_tiers = 0;
  std::vector<EfficiencyMetric> metrics;  // kEfficiencyMetrics order
};

/// The rows of one SM regime and batch tier: mean energy and latency, their ratios to the
/// baseline cell (low SM, batch 1-4) and divergence = energy ratio / latency ratio. Unset where
/// the cell (or, for ratios, the baseline) is empty.
struct DivergenceCell {
  SmRegime sm = SmRegime::low;
  BatchTier tier{};
  int n = 0;
  std::optional<double> mean_energy_j, mean_latency_ms, energy_ratio, latency_ratio, divergence;
};

/// High-SM over low-SM mean energy and latency in one batch tier.
struct HighOverLow {
  BatchTier tier{};
  std::optional<double> energy, latency;
};

struct DivergenceSection : Availability {
  std::string definition;
  double sm_threshold = 0;
  bool threshold_given = false;  // else the median avg_sm_util
  std::size_t rows = 0;
  std::vector<DivergenceCell> cells;  // per batch tier: low SM, then high SM
  std::vector<HighOverLow> high_over_low;
  std::optional<DivergenceCell> headline;  // the largest populated high-SM tier vs the baseline
  std::string baseline_note;               // set when the baseline cell is empty
};

/// What was characterized: row counts, platforms, the targets with a value.
struct DatasetSummary {
  std::size_t rows = 0, ok_rows = 0;
  std::set<std::string> platforms;
  std::vector<std::string> targets;  // kTargets order
  std::string warning;               // set when several platforms are pooled
};

struct Characterization {
  DatasetSummary dataset;
  ScalingSection scaling;
  FamilySection family_comparison;
  PrecisionSection precision;
  EfficiencySection efficiency;
  DivergenceSection divergence;

  /// The `carb characterize --format json` document.
  nlohmann::json to_json() const;
};

}  // namespace carb
