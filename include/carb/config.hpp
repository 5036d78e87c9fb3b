// A CNN configuration: the six knobs that define one point of the space
// (family, depth, width multiplier, input resolution, batch size, precision),
// plus the rules that make depth and width concrete.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace carb {

enum class Family { basic, bottleneck };
enum class Precision { fp32, fp16, bf16 };

struct Config {
  Family family = Family::basic;
  int depth = 18;
  double width = 1.0;
  int resolution = 224;
  int batch = 1;
  Precision precision = Precision::fp32;

  bool operator==(const Config&) const = default;
};

/// The six configuration column names, in CSV order.
inline constexpr std::array<const char*, 6> kConfigColumns = {
    "family", "depth", "width", "resolution", "batch", "precision"};

std::string to_string(Family f);
std::string to_string(Precision p);
/// Throws InputError naming the accepted values.
Family parse_family(std::string_view s);
Precision parse_precision(std::string_view s);
/// Bytes per element of a precision (4 for fp32, 2 for fp16/bf16).
int element_bytes(Precision p);

/// Width formatted canonically (shortest round-trip, e.g. "0.25", "1").
std::string format_width(double w);
/// Canonical, unique key of a configuration, e.g. "basic-18-w1-r224-b1-fp32".
std::string config_key(const Config& c);
/// Key of what a configuration runs: config_key with the width replaced by the channels it
/// builds (stem and four stages), e.g. "basic-18-c16/16/32/64/128-r224-b1-fp32". Two widths that
/// round to the same channels (0.25 and 0.2500000001, or 0.25 and 0.251; not 0.26, which builds 136
/// channels where 0.25 builds 128) run the same network:
/// two such rows are one measurement twice.
std::string network_key(const Config& c);
/// For a message about `c` repeating `earlier` (the same network_key): "" when the two are the
/// same configuration as written, " (<earlier's key>: the same network)" when only their widths'
/// channels make them one.
std::string same_network_as(const Config& c, const Config& earlier);
/// The architecture of a configuration, the part a built network fixes: family, depth, width,
/// precision (resolution and batch only change the input), e.g. "basic-18-w1-fp32".
std::string architecture_key(const Config& c);
/// The channels a width builds, stem and four stages ("16/16/32/64/128" for 0.25): two widths with
/// the same channels build the same network at any depth.
std::string width_channels(double width);
/// The configuration a key names ("basic-18-w0.5-r64-b8-fp32"), when it names a valid one exactly
/// (the key config_key writes for it); nullopt otherwise.
std::optional<Config> parse_config_key(const std::string& key);

/// Valid ranges (inclusive). Depth also has to satisfy the depth rule.
struct ConfigLimits {
  static constexpr int kMinDepthBasic = 8, kMaxDepthBasic = 200;
  static constexpr int kMinDepthBottleneck = 50, kMaxDepthBottleneck = 302;
  static constexpr double kMinWidth = 0.05, kMaxWidth = 8.0;
  static constexpr int kMinResolution = 32, kMaxResolution = 1024;
  static constexpr int kMinBatch = 1, kMaxBatch = 4096;
};

/// Throws InputError with a message naming the bad field when c is outside the space.
void validate(const Config& c);

/// Residual blocks per stage for a family and depth.
/// Standard depths give torchvision's lists (basic 18/34, bottleneck 50/101/152/200).
/// Other depths must be 2 + 2*blocks (basic) or 2 + 3*blocks (bottleneck); the blocks are
/// spread over the four stages in proportion 1:1:3:1... see docs in config.cpp.
/// Throws InputError naming the nearest valid depths.
std::array<int, 4> stage_blocks(Family f, int depth);

/// Channels of a layer with torchvision base channels `base` at width multiplier w:
/// round(base*w) to the nearest multiple of 8, at least 8.
int scaled_channels(int base, double width);

/// One width for each network: the middle of the range of width multipliers whose stem and stage
/// channels all equal `width`'s (within ConfigLimits). Widths that build the same network (0.37,
/// 0.375 and 0.38 all build 24/24/48/96/192) have the same canonical width.
double canonical_width(double width);

}  // namespace carb
