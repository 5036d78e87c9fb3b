// Host-speed drift correction. On a shared or virtual machine the host's speed wanders by tens of
// percent over minutes, so two runs of the same configuration disagree far beyond their own
// spread. `carb profile --reference` times a fixed reference network right before every timed pass
// and stores its mean as `reference_ms`; this module turns that reading into a correction:
//   latency_corrected = latency_ms * R / reference_ms,
// with R the median reference time of the training rows, i.e. the latency the configuration would
// have had at the host's typical speed. Raw latency_ms in the CSV is never changed; the correction
// is applied in memory, recorded in the model bundle, and reapplied to any data the model is
// evaluated or validated on.
#pragma once
#include <string>

#include "carb/config.hpp"
#include "carb/dataset.hpp"

namespace carb {

inline constexpr const char* kReferenceColumn = "reference_ms";
/// The reference network of Protocol::reference (`carb profile --reference`): small enough to add
/// little time, large enough to run the same convolution kernels as the profiled networks.
inline constexpr Config kReferenceConfig{Family::basic, 18, 0.5, 64, 1, Precision::fp32};
/// The most a row's reference time may differ from the typical one, either way, for its latency to
/// be corrected: a host ten times slower or faster than usual is a damaged cell, not drift
/// (shipped: at most 4.2x the median, on a deliberately busy host). Forty-second hostile pass: one
/// reference_ms of 0.00296 ms scaled its row's latency 1000x into a model without a word.
inline constexpr double kMaxReferenceDrift = 10;
/// The most a row's reference time may differ from the typical one for its latency to be corrected
/// at all: a row further off (but within kMaxReferenceDrift) is left out of the drift-corrected data.
/// A reading that far off is more often a stall of the reference alone than the host's speed during
/// the pass: on data/extra/cpu-2t-ref.csv 99.5% of rows lie within 0.55-1.7x of the median and 6 of
/// 1,958 beyond 2x, and one at 4.2x whose own latency sat between its batch neighbours' was corrected
/// 4.2x too fast, which made the model rank it best by far (fifty-ninth hostile pass).
inline constexpr double kMaxTrustedReferenceDrift = 2;

/// The reference time of an ok row; throws DataError naming the row when it is missing or not a
/// positive number.
double row_reference_ms(const Record& r);

/// Median of reference_ms over the ok rows. Throws DataError when a row lacks it (the data was
/// not measured with --reference) and InputError when there are no ok rows.
double median_reference_ms(const Dataset& d);

/// The dataset with every ok row's latency_ms scaled by reference_ms_typical / row reference_ms.
/// Other columns (and non-ok rows) are unchanged; an ok row whose reference time is more than
/// kMaxTrustedReferenceDrift times from the typical one is left out (drift_left_out_note says so).
/// Throws like row_reference_ms, and DataError for a row whose reference time is more than
/// kMaxReferenceDrift times from the typical one.
Dataset drift_corrected(const Dataset& d, double reference_ms_typical);

/// Whether drift_corrected keeps `r` (every row but an ok one whose reference time it does not trust).
bool drift_keeps(const Record& r, double reference_ms_typical);

/// What drift_corrected(d, reference_ms_typical) leaves out, in words for a command's warnings
/// ("" when it leaves out nothing).
std::string drift_left_out_note(const Dataset& d, double reference_ms_typical);

}  // namespace carb
