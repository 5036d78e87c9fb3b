// Combining independent measuring rounds. On a host whose speed drifts over minutes, one campaign's
// latency carries that campaign's slow and fast episodes; measuring the same configurations again
// later and keeping, per configuration, the median across rounds averages those episodes out.
#pragma once
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace carb {

struct CombineSummary {
  std::size_t rounds = 0;        // input files
  std::size_t rows_out = 0;      // one per platform + configuration
  std::size_t combined = 0;      // rows with ok measurements from two or more rounds
  std::filesystem::path csv, provenance;
  /// Rows whose rounds disagree by more than kMaxRoundSpread, said (their median means little); pairs
  /// of rounds holding the same latencies at some of the configurations both measured (not measured
  /// again between them).
  std::vector<std::string> warnings;

  nlohmann::json to_json() const;
};

/// The latency_round_spread (max / min - 1) above which a combined row's rounds are said to
/// disagree: 10, rounds 11 times apart (shipped data/cpu-2t.csv: at most 1.22). Forty-second hostile
/// pass: one round in microseconds written as ms was combined with another in ms without a word.
inline constexpr double kMaxRoundSpread = 10;

/// Writes one row per platform + configuration found in any round. For a configuration with ok
/// rows, each target, telemetry column and numeric extra column is the median over the rounds
/// that measured it ok (the mean of the middle two for an even count); text extras come from the
/// first such round. Two extra columns are added: `rounds` (ok rounds combined) and
/// `latency_round_spread` (max / min latency over those rounds, minus 1; empty with one round).
/// A configuration with no ok row keeps its first row. Every round must be measured under the
/// same protocol per platform (the `protocol_id` column): InputError otherwise, and with fewer
/// than two rounds, the same file (or identical contents) twice, two rounds holding the same
/// latencies (written to 6 significant digits or more) at every configuration both measured ok (a
/// part of one round, two exports of one store), or an `out` that may not be
/// replaced (check_dataset_output, unless `force`); DataError for a malformed or invalid input
/// (each round is read with read_dataset_csv: no duplicates inside a round). Nothing is written
/// on error.
CombineSummary combine_rounds(const std::vector<std::filesystem::path>& rounds, const std::filesystem::path& out,
                              const std::string& command_line, bool force = false);

}  // namespace carb
