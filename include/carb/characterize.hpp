// Characterization of a measured dataset: how each cost target scales along each knob,
// how the families compare, what reduced precision buys on matched configurations,
// compute efficiency per batch tier (J, ms, MB per GFLOP) and the energy-latency
// divergence across utilization x batch tiers (the paper's characterization section).
//
// The result is a JSON document (the `carb characterize --format json` contract); every
// section carries "available": true|false, and an unavailable section carries only a
// "reason" naming the missing input — it is never filled with estimates.
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "carb/dataset.hpp"

namespace carb {

/// A batch-size tier, inclusive on both ends (the paper's 1-4, 5-16, 17-64, 65-256).
struct BatchTier {
  int lo, hi;
  std::string label() const { return std::to_string(lo) + "-" + std::to_string(hi); }
  bool contains(int batch) const { return batch >= lo && batch <= hi; }
};
inline constexpr std::array<BatchTier, 4> kBatchTiers = {{{1, 4}, {5, 16}, {17, 64}, {65, 256}}};
/// The efficiency metrics, in display order (energy, latency, memory per GFLOP).
inline constexpr std::array<const char*, 3> kEfficiencyMetrics = {"j_per_gflop", "ms_per_gflop",
                                                                  "mb_per_gflop"};

struct CharacterizeOptions {
  /// Split between low- and high-SM-utilization rows (percent). Unset: the median avg_sm_util
  /// of the dataset, so both groups are populated on any platform (the paper's fixed 65% is
  /// platform-specific: a saturated GPU has no low-SM rows under it).
  std::optional<double> sm_threshold;
};

/// Characterizes the ok rows of `d`. Throws DataError when the dataset has no ok rows.
nlohmann::json characterize(const Dataset& d, const CharacterizeOptions& o = {});

/// A titled table of formatted cells; the human renderings (markdown, text, HTML) share it.
struct NamedTable {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string note;  // a definition, or why the section is unavailable (then rows is empty)
};
/// The characterization document as tables, in section order.
std::vector<NamedTable> characterization_tables(const nlohmann::json& ch);

/// Human renderings of a characterize() document: markdown (headings + tables) and plain
/// aligned text tables.
void render_characterization_md(const nlohmann::json& ch, std::ostream& out);
void render_characterization_table(const nlohmann::json& ch, std::ostream& out);

/// Analytic GFLOPs of one forward pass of the whole batch (NetworkSpec::flops() / 1e9).
double config_gflops(const Config& c);

}  // namespace carb
