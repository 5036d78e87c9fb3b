// Characterization of a measured dataset: how each cost target scales along each knob,
// how the families compare, what reduced precision buys on matched configurations,
// compute efficiency per batch tier (J, ms, MB per GFLOP) and the energy-latency
// divergence across utilization x batch tiers (the paper's characterization section).
//
// The result is a Characterization (carb/characterization.hpp); its to_json() is the
// `carb characterize --format json` contract. Every section says whether it is available, and
// an unavailable section carries only the reason naming the missing input — it is never filled
// with estimates.
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "carb/characterization.hpp"
#include "carb/dataset.hpp"

namespace carb {

struct CharacterizeOptions {
  /// Split between low- and high-SM-utilization rows (percent). Unset: the median avg_sm_util
  /// of the dataset, so both groups are populated on any platform (the paper's fixed 65% is
  /// platform-specific: a saturated GPU has no low-SM rows under it).
  std::optional<double> sm_threshold;
};

/// Characterizes the ok rows of `d`. Throws DataError when the dataset has no ok rows.
Characterization characterize(const Dataset& d, const CharacterizeOptions& o = {});

/// A titled table of formatted cells; the human renderings (markdown, text, HTML) share it.
struct NamedTable {
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string note;  // a definition, or why the section is unavailable (then rows is empty)
};
/// The characterization as tables, in section order.
std::vector<NamedTable> characterization_tables(const Characterization& ch);

/// Human renderings of a characterization: markdown (headings + tables) and plain aligned text
/// tables.
void render_characterization_md(const Characterization& ch, std::ostream& out);
void render_characterization_table(const Characterization& ch, std::ostream& out);

/// Analytic GFLOPs of one forward pass of the whole batch (NetworkSpec::flops() / 1e9).
double config_gflops(const Config& c);

}  // namespace carb
