// Configuration parsing, validation and the depth and width rules.
//
// Depth rule: the standard depths map to torchvision's block lists. Any other depth
// d is valid when d = 2 + 2n (basic) or d = 2 + 3n (bottleneck), n = number of blocks
// (the 2 counts the stem convolution and the classifier). The n blocks are spread over
// the four stages in proportion to ResNet-34/50's [3, 4, 6, 3] by largest remainder,
// with at least one block per stage; with fewer than four blocks (basic depth 8) the
// first n stages get one block each and the later stages are absent.
// Width rule: channels = round(base * w / 8) * 8, at least 8 (hardware-friendly multiples).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

#include "carb/config.hpp"
#include "carb/error.hpp"
#include "carb/network_spec.hpp"

namespace carb {

// An enum value no parse makes (a cast in a caller's code) is refused, never named as another
// (seventy-sixth hostile pass: Family 7 read "bottleneck", and a valid-looking key was made of it).
std::string to_string(Family f) {
  switch (f) {
    case Family::basic: return "basic";
    case Family::bottleneck: return "bottleneck";
  }
  throw InputError("family " + std::to_string(static_cast<int>(f)) + " is none (expected basic or bottleneck)");
}

std::string to_string(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
  }
  throw InputError("precision " + std::to_string(static_cast<int>(p)) + " is none (expected fp32, fp16 or bf16)");
}

Family parse_family(std::string_view s) {
  if (s == "basic") return Family::basic;
  if (s == "bottleneck") return Family::bottleneck;
  throw InputError("unknown family '" + std::string(s) + "' (expected basic or bottleneck)");
}

Precision parse_precision(std::string_view s) {
  if (s == "fp32") return Precision::fp32;
  if (s == "fp16") return Precision::fp16;
  if (s == "bf16") return Precision::bf16;
  throw InputError("unknown precision '" + std::string(s) + "' (expected fp32, fp16 or bf16)");
}

int element_bytes(Precision p) {
  switch (p) {
    case Precision::fp32: return 4;
    case Precision::fp16:
    case Precision::bf16: return 2;
  }
  throw InputError("precision " + std::to_string(static_cast<int>(p)) + " is none (expected fp32, fp16 or bf16)");
}

std::string format_width(double w) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, w);
  return std::string(buf, r.ptr);
}

std::string config_key(const Config& c) {
  std::ostringstream o;
  o << to_string(c.family) << '-' << c.depth << "-w" << format_width(c.width) << "-r" << c.resolution
    << "-b" << c.batch << '-' << to_string(c.precision);
  return o.str();
}

std::string width_channels(double width) {
  std::string s = std::to_string(scaled_channels(NetworkDefaults::kStemChannels, width));
  for (int base : NetworkDefaults::kStageChannels) s += '/' + std::to_string(scaled_channels(base, width));
  return s;
}

std::string architecture_key(const Config& c) {
  return to_string(c.family) + "-" + std::to_string(c.depth) + "-w" + format_width(c.width) + "-" +
         to_string(c.precision);
}

std::string network_key(const Config& c) {
  std::ostringstream o;
  o << to_string(c.family) << '-' << c.depth << "-c" << width_channels(c.width) << "-r" << c.resolution << "-b"
    << c.batch << '-' << to_string(c.precision);
  return o.str();
}

std::string same_network_as(const Config& c, const Config& earlier) {
  // A hostile tester: an identical row was said to be "the same network", as if it were another.
  const std::string key = config_key(earlier);
  return key == config_key(c) ? "" : " (" + key + ": the same network)";
}

std::optional<Config> parse_config_key(const std::string& key) {
  std::vector<std::string> parts;
  std::stringstream in(key);
  for (std::string p; std::getline(in, p, '-');) parts.push_back(p);
  if (parts.size() != 6 || parts[2].size() < 2 || parts[2][0] != 'w' || parts[3].size() < 2 || parts[3][0] != 'r' ||
      parts[4].size() < 2 || parts[4][0] != 'b')
    return std::nullopt;
  try {
    Config c{parse_family(parts[0]), std::stoi(parts[1]), std::stod(parts[2].substr(1)), std::stoi(parts[3].substr(1)),
             std::stoi(parts[4].substr(1)), parse_precision(parts[5])};
    validate(c);
    if (config_key(c) == key) return c;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

namespace {

struct Standard {
  Family family;
  int depth;
  std::array<int, 4> blocks;
};
constexpr Standard kStandard[] = {
    {Family::basic, 18, {2, 2, 2, 2}},       {Family::basic, 34, {3, 4, 6, 3}},
    {Family::bottleneck, 50, {3, 4, 6, 3}},  {Family::bottleneck, 101, {3, 4, 23, 3}},
    {Family::bottleneck, 152, {3, 8, 36, 3}}, {Family::bottleneck, 200, {3, 24, 36, 3}},
};

int layers_per_block(Family f) { return f == Family::basic ? 2 : 3; }
int min_depth(Family f) {
  return f == Family::basic ? ConfigLimits::kMinDepthBasic : ConfigLimits::kMinDepthBottleneck;
}
int max_depth(Family f) {
  return f == Family::basic ? ConfigLimits::kMaxDepthBasic : ConfigLimits::kMaxDepthBottleneck;
}

std::string depth_error(Family f, int depth) {
  const int k = layers_per_block(f), lo = min_depth(f), hi = max_depth(f);
  std::ostringstream o;
  o << "invalid depth " << depth << " for family " << to_string(f) << ": depth must be 2 + " << k
    << "*blocks within " << lo << ".." << hi;
  int below = lo + ((std::clamp(depth, lo, hi) - lo) / k) * k;
  if (below > depth) below -= k;
  int above = below + k;
  o << "; nearest valid depths:";
  if (below >= lo) o << ' ' << below;
  if (above <= hi) o << ' ' << above;
  return o.str();
}

std::array<int, 4> proportional_blocks(int n) {
  std::array<int, 4> a{0, 0, 0, 0};
  if (n < 4) {
    for (int i = 0; i < n; ++i) a[i] = 1;
    return a;
  }
  constexpr double w[4] = {3, 4, 6, 3};
  double target[4];
  int sum = 0;
  for (int i = 0; i < 4; ++i) {
    target[i] = n * w[i] / 16.0;
    a[i] = std::max(1, static_cast<int>(std::floor(target[i])));
    sum += a[i];
  }
  while (sum != n) {  // largest remainder; first stage wins ties
    int best = -1;
    double best_gap = -1e18;
    for (int i = 0; i < 4; ++i) {
      double gap = sum < n ? target[i] - a[i] : a[i] - target[i];
      if ((sum < n || a[i] > 1) && gap > best_gap) best_gap = gap, best = i;
    }
    a[best] += sum < n ? 1 : -1;
    sum += sum < n ? 1 : -1;
  }
  return a;
}

}  // namespace

std::array<int, 4> stage_blocks(Family f, int depth) {
  for (const auto& s : kStandard)
    if (s.family == f && s.depth == depth) return s.blocks;
  const int k = layers_per_block(f);
  if (depth < min_depth(f) || depth > max_depth(f) || (depth - 2) % k != 0)
    throw InputError(depth_error(f, depth));
  return proportional_blocks((depth - 2) / k);
}

int scaled_channels(int base, double width) {
  // Seventy-sixth hostile pass: a NaN, infinite or negative width answered 8 channels, as the
  // narrowest network does, and a width past int overflowed to 8 too.
  const double n = base * width / 8.0;
  if (base < 1 || !(width > 0) || !(n < std::numeric_limits<int>::max() / 8.0))
    throw InputError("width " + format_width(width) + " of " + std::to_string(base) +
                     " channels builds no network (a width is a positive number, at most " +
                     format_width(ConfigLimits::kMaxWidth) + ")");
  return std::max(8, static_cast<int>(std::lround(n)) * 8);
}

double canonical_width(double width) {
  // scaled_channels(b, w) is n*8 for n = lround(b*w/8) >= 2, i.e. b*w/8 in [n - 0.5, n + 0.5), and
  // 8 for b*w/8 < 1.5: the widths of one network are the intersection of those ranges.
  const std::string channels = width_channels(width);  // refuses a width that builds no network
  double lo = ConfigLimits::kMinWidth, hi = ConfigLimits::kMaxWidth;
  const auto narrow = [&](int base) {
    const long n = std::lround(base * width / 8.0);
    const double step = 8.0 / base;
    if (n >= 2) lo = std::max(lo, (n - 0.5) * step);
    hi = std::min(hi, (std::max(n, 1L) + 0.5) * step);
  };
  narrow(NetworkDefaults::kStemChannels);
  for (int base : NetworkDefaults::kStageChannels) narrow(base);
  const double mid = 0.5 * (lo + hi);
  // The half-open ends and float rounding: the middle builds the same channels, or `width` stays.
  return width_channels(mid) == channels ? mid : width;
}

void validate(const Config& c) {
  auto range = [](const char* what, double v, double lo, double hi) {
    if (!(v >= lo && v <= hi)) {
      // The shortest text that reads back as the value (a batch 99999999 was shown as 1e+08), whole
      // numbers written out (fortieth hostile pass: a batch 100000 was shown as 1e+05).
      const auto text = [](double x) {
        char buf[400];
        const bool whole = std::isfinite(x) && x == std::trunc(x) && std::fabs(x) < 1e15;
        return std::string(buf, (whole ? std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed)
                                       : std::to_chars(buf, buf + sizeof buf, x)).ptr);
      };
      std::ostringstream o;
      o << what << " " << text(v) << " is out of range " << text(lo) << ".." << text(hi);
      throw InputError(o.str());
    }
  };
  // A value cast into the enums from a number (seventy-first hostile pass: precision 7 validated,
  // and was predicted as fp16, keyed "?").
  if (c.family != Family::basic && c.family != Family::bottleneck)
    throw InputError("family " + std::to_string(static_cast<int>(c.family)) + " is not basic or bottleneck");
  if (c.precision != Precision::fp32 && c.precision != Precision::fp16 && c.precision != Precision::bf16)
    throw InputError("precision " + std::to_string(static_cast<int>(c.precision)) + " is not fp32, fp16 or bf16");
  range("width", c.width, ConfigLimits::kMinWidth, ConfigLimits::kMaxWidth);
  range("resolution", c.resolution, ConfigLimits::kMinResolution, ConfigLimits::kMaxResolution);
  range("batch", c.batch, ConfigLimits::kMinBatch, ConfigLimits::kMaxBatch);
  stage_blocks(c.family, c.depth);
}

}  // namespace carb
