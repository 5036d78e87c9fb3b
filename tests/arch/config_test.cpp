// Tests of the configuration knobs: parsing and formatting, the depth rule (torchvision's
// block lists and the proportional rule for other depths), the width rule and validation.
#include "carb/config.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "carb/error.hpp"

namespace carb {
namespace {

// The InputError message of `f`, or a failure when it does not throw InputError.
template <class F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected InputError";
  return "";
}

TEST(ConfigParse, FamilyRoundTrips) {
  for (Family f : {Family::basic, Family::bottleneck}) EXPECT_EQ(parse_family(to_string(f)), f);
  EXPECT_EQ(to_string(Family::basic), "basic");
  EXPECT_EQ(to_string(Family::bottleneck), "bottleneck");
}

TEST(ConfigParse, PrecisionRoundTrips) {
  for (Precision p : {Precision::fp32, Precision::fp16, Precision::bf16})
    EXPECT_EQ(parse_precision(to_string(p)), p);
  EXPECT_EQ(to_string(Precision::fp16), "fp16");
}

TEST(ConfigParse, UnknownFamilyIsInputErrorNamingValue) {
  for (const char* bad : {"", "Basic", "resnet", "basic ", "bottle"}) {
    const std::string msg = input_error_of([&] { parse_family(bad); });
    EXPECT_NE(msg.find("'" + std::string(bad) + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bottleneck"), std::string::npos) << "should list accepted values: " << msg;
  }
}

TEST(ConfigParse, UnknownPrecisionIsInputErrorNamingValue) {
  for (const char* bad : {"", "FP32", "fp8", "int8", "float"}) {
    const std::string msg = input_error_of([&] { parse_precision(bad); });
    EXPECT_NE(msg.find("'" + std::string(bad) + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bf16"), std::string::npos) << "should list accepted values: " << msg;
  }
}

TEST(ConfigParse, ElementBytes) {
  EXPECT_EQ(element_bytes(Precision::fp32), 4);
  EXPECT_EQ(element_bytes(Precision::fp16), 2);
  EXPECT_EQ(element_bytes(Precision::bf16), 2);
}

TEST(ConfigFormat, WidthIsShortestAndRoundTrips) {
  struct Case {
    double w;
    const char* text;
  };
  for (const Case& c : {Case{1.0, "1"}, Case{0.25, "0.25"}, Case{0.1, "0.1"}, Case{4.0, "4"},
                        Case{0.75, "0.75"}, Case{1.5, "1.5"}})
    EXPECT_EQ(format_width(c.w), c.text);
  for (double w : {0.05, 0.1, 0.3, 1.0 / 3.0, 0.123456789, 2.2, 7.999})
    EXPECT_EQ(std::stod(format_width(w)), w) << format_width(w);
}

TEST(ConfigFormat, KeyIsCanonical) {
  EXPECT_EQ(config_key(Config{}), "basic-18-w1-r224-b1-fp32");
  EXPECT_EQ(config_key({Family::bottleneck, 50, 0.25, 64, 8, Precision::bf16}),
            "bottleneck-50-w0.25-r64-b8-bf16");
}

TEST(ConfigFormat, KeysDifferWhenAnyKnobDiffers) {
  const Config base{Family::basic, 18, 1.0, 224, 1, Precision::fp32};
  std::vector<Config> variants(6, base);
  variants[0].family = Family::bottleneck;
  variants[1].depth = 34;
  variants[2].width = 0.5;
  variants[3].resolution = 128;
  variants[4].batch = 2;
  variants[5].precision = Precision::fp16;
  for (const auto& v : variants) EXPECT_NE(config_key(v), config_key(base));
}

TEST(ConfigDepth, StandardDepthsGiveTorchvisionBlocks) {
  struct Case {
    Family f;
    int depth;
    std::array<int, 4> blocks;
  };
  const Case cases[] = {
      {Family::basic, 18, {2, 2, 2, 2}},        {Family::basic, 34, {3, 4, 6, 3}},
      {Family::bottleneck, 50, {3, 4, 6, 3}},   {Family::bottleneck, 101, {3, 4, 23, 3}},
      {Family::bottleneck, 152, {3, 8, 36, 3}}, {Family::bottleneck, 200, {3, 24, 36, 3}},
  };
  for (const auto& c : cases) EXPECT_EQ(stage_blocks(c.f, c.depth), c.blocks) << to_string(c.f) << c.depth;
}

TEST(ConfigDepth, OtherDepthsSumToBlockCount) {
  struct Case {
    Family f;
    int k;  // layers per block
    int lo, hi;
  };
  for (const Case& c :
       {Case{Family::basic, 2, ConfigLimits::kMinDepthBasic, ConfigLimits::kMaxDepthBasic},
        Case{Family::bottleneck, 3, ConfigLimits::kMinDepthBottleneck, ConfigLimits::kMaxDepthBottleneck}}) {
    int checked = 0;
    for (int d = c.lo; d <= c.hi; d += c.k) {
      const auto b = stage_blocks(c.f, d);
      const int n = (d - 2) / c.k;
      EXPECT_EQ(std::accumulate(b.begin(), b.end(), 0), n) << to_string(c.f) << d;
      EXPECT_EQ(stage_blocks(c.f, d), b) << "deterministic";
      for (int s = 0; s < 4; ++s) EXPECT_GE(b[s], n >= 4 ? 1 : 0) << to_string(c.f) << d << " stage " << s;
      ++checked;
    }
    EXPECT_GT(checked, 40);
  }
}

TEST(ConfigDepth, FewerThanFourBlocksFillEarlyStages) {
  EXPECT_EQ(stage_blocks(Family::basic, 8), (std::array<int, 4>{1, 1, 1, 0}));
}

TEST(ConfigDepth, InvalidDepthNamesNearestValidDepths) {
  struct Case {
    Family f;
    int depth;
    const char* nearest;
  };
  const Case cases[] = {
      {Family::basic, 19, "nearest valid depths: 18 20"},
      {Family::basic, 7, "nearest valid depths: 8"},
      {Family::basic, 0, "nearest valid depths: 8"},
      {Family::basic, -4, "nearest valid depths: 8"},
      {Family::basic, 201, "nearest valid depths: 200"},
      {Family::basic, 5000, "nearest valid depths: 200"},
      {Family::bottleneck, 51, "nearest valid depths: 50 53"},
      {Family::bottleneck, 52, "nearest valid depths: 50 53"},
      {Family::bottleneck, 49, "nearest valid depths: 50"},
      {Family::bottleneck, 18, "nearest valid depths: 50"},
      {Family::bottleneck, 303, "nearest valid depths: 302"},
      {Family::bottleneck, 100, "nearest valid depths: 98 101"},
  };
  for (const auto& c : cases) {
    const std::string msg = input_error_of([&] { stage_blocks(c.f, c.depth); });
    EXPECT_NE(msg.find("invalid depth " + std::to_string(c.depth)), std::string::npos) << msg;
    EXPECT_NE(msg.find(to_string(c.f)), std::string::npos) << msg;
    // The list ends the message: no further depths after the expected ones.
    const std::string tail(c.nearest);
    ASSERT_GE(msg.size(), tail.size()) << msg;
    EXPECT_EQ(msg.substr(msg.size() - tail.size()), tail) << msg;
  }
}

TEST(ConfigDepth, NamedNearestDepthsAreValidAndNear) {
  // Whatever the message proposes must itself be accepted, and be the closest on its side.
  struct Family_ {
    Family f;
    int k, lo, hi;
  };
  for (const Family_& c :
       {Family_{Family::basic, 2, ConfigLimits::kMinDepthBasic, ConfigLimits::kMaxDepthBasic},
        Family_{Family::bottleneck, 3, ConfigLimits::kMinDepthBottleneck, ConfigLimits::kMaxDepthBottleneck}})
    for (int d = -3; d < 320; ++d) {
      std::string msg;
      try {
        stage_blocks(c.f, d);
        continue;
      } catch (const InputError& e) {
        msg = e.what();
      }
      const auto at = msg.find("nearest valid depths:");
      ASSERT_NE(at, std::string::npos) << msg;
      std::istringstream in(msg.substr(at + 21));
      int v = 0, n = 0;
      while (in >> v) {
        EXPECT_NO_THROW(stage_blocks(c.f, v)) << msg;
        if (d < c.lo)
          EXPECT_EQ(v, c.lo) << msg;
        else if (d > c.hi)
          EXPECT_EQ(v, c.hi) << msg;
        else
          EXPECT_LT(std::abs(v - d), c.k) << msg;
        ++n;
      }
      EXPECT_EQ(n, d < c.lo || d > c.hi ? 1 : 2) << msg;
    }
}

TEST(ConfigWidth, ChannelsAreMultiplesOfEightAtLeastEight) {
  struct Case {
    int base;
    double w;
    int channels;
  };
  const Case cases[] = {{64, 1.0, 64}, {64, 0.1, 8},     {64, 0.05, 8},   {512, 0.25, 128}, {64, 0.75, 48},
                        {64, 0.3, 16}, {512, 4.0, 2048}, {100, 1.0, 104}, {256, 0.37, 96},  {8, 0.01, 8}};
  for (const auto& c : cases) EXPECT_EQ(scaled_channels(c.base, c.w), c.channels) << c.base << "x" << c.w;
  for (int base : {64, 128, 256, 512})
    for (double w = 0.05; w <= 8.0; w += 0.07) {
      const int ch = scaled_channels(base, w);
      EXPECT_EQ(ch % 8, 0);
      EXPECT_GE(ch, 8);
      EXPECT_LE(std::abs(ch - base * w), std::max(4.0, 8.0 - base * w) + 1e-9) << base << "x" << w;
    }
}

TEST(ConfigValidate, AcceptsTheDefaultAndLimits) {
  EXPECT_NO_THROW(validate(Config{}));
  EXPECT_NO_THROW(validate({Family::basic, 8, ConfigLimits::kMinWidth, ConfigLimits::kMinResolution,
                            ConfigLimits::kMinBatch, Precision::fp16}));
  EXPECT_NO_THROW(validate({Family::bottleneck, 302, ConfigLimits::kMaxWidth, ConfigLimits::kMaxResolution,
                            ConfigLimits::kMaxBatch, Precision::bf16}));
}

TEST(ConfigValidate, RejectsBadFieldsNamingThem) {
  struct Case {
    const char* field;
    Config c;
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto with = [](auto mutate) {
    Config c;
    mutate(c);
    return c;
  };
  const Case cases[] = {
      {"width", with([](Config& c) { c.width = 0; })},
      {"width", with([](Config& c) { c.width = -1; })},
      {"width", with([&](Config& c) { c.width = nan; })},
      {"width", with([](Config& c) { c.width = 9; })},
      {"resolution", with([](Config& c) { c.resolution = 0; })},
      {"resolution", with([](Config& c) { c.resolution = -224; })},
      {"resolution", with([](Config& c) { c.resolution = 31; })},
      {"resolution", with([](Config& c) { c.resolution = 1025; })},
      {"batch", with([](Config& c) { c.batch = 0; })},
      {"batch", with([](Config& c) { c.batch = -1; })},
      {"batch", with([](Config& c) { c.batch = 4097; })},
      {"depth", with([](Config& c) { c.depth = 0; })},
      {"depth", with([](Config& c) { c.depth = -18; })},
      {"depth", with([](Config& c) { c.depth = 19; })},
      {"depth", with([](Config& c) { c.family = Family::bottleneck; })},  // depth 18 is basic-only
      // Seventy-first hostile pass: values cast into the enums validated (precision 7 as fp16).
      {"precision 7 is not fp32, fp16 or bf16", with([](Config& c) { c.precision = static_cast<Precision>(7); })},
      {"family 9 is not basic or bottleneck", with([](Config& c) { c.family = static_cast<Family>(9); })},
  };
  for (const auto& c : cases) {
    const std::string msg = input_error_of([&] { validate(c.c); });
    EXPECT_NE(msg.find(c.field), std::string::npos) << "expected '" << c.field << "' in: " << msg;
  }
  // Twenty-sixth hostile pass: a batch of 99999999 was shown as 1e+08.
  EXPECT_NE(input_error_of([&] { validate(with([](Config& c) { c.batch = 99999999; })); })
                .find("batch 99999999 is out of range 1..4096"),
            std::string::npos);
  // Fortieth: a batch of 100000 was shown as 1e+05.
  EXPECT_NE(input_error_of([&] { validate(with([](Config& c) { c.batch = 100000; })); })
                .find("batch 100000 is out of range 1..4096"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { validate(with([](Config& c) { c.width = 0.01; })); }).find("width 0.01 "),
            std::string::npos);
}

}  // namespace
}  // namespace carb

namespace carb {
namespace {

TEST(NetworkKey, NamesTheChannelsAWidthBuilds) {
  Config c{Family::basic, 18, 0.25, 224, 1, Precision::fp32};
  EXPECT_EQ(network_key(c), "basic-18-c16/16/32/64/128-r224-b1-fp32");
  Config same = c;
  same.width = 0.251;  // every stage rounds to the channels of 0.25 (512 * 0.251 = 128.5 -> 128)
  EXPECT_EQ(network_key(same), network_key(c));
  EXPECT_NE(config_key(same), config_key(c));
  Config other = c;
  other.width = 0.26;  // the last stage: 512 * 0.26 = 133 -> 136
  EXPECT_NE(network_key(other), network_key(c));
  other.width = 0.5;
  EXPECT_NE(network_key(other), network_key(c));
  other = c, other.batch = 2;
  EXPECT_NE(network_key(other), network_key(c));
}

}  // namespace
}  // namespace carb

namespace carb {
namespace {
// Forty-seventh hostile pass: one network, one width for the model to see.
TEST(CanonicalWidth, OneWidthForEachNetwork) {
  const double w = canonical_width(0.37);
  EXPECT_EQ(canonical_width(0.375), w);
  EXPECT_EQ(canonical_width(0.38), w);
  EXPECT_EQ(width_channels(w), width_channels(0.37));  // it builds the same network
  EXPECT_NE(canonical_width(0.30), w);                 // another network, another width
  for (double x = ConfigLimits::kMinWidth; x <= 4.0; x += 0.0137) {
    EXPECT_EQ(width_channels(canonical_width(x)), width_channels(x)) << x;
    EXPECT_EQ(canonical_width(canonical_width(x)), canonical_width(x)) << x;
  }
}
// Seventy-sixth hostile pass: the width helpers answered any double, a NaN width as the narrowest
// network (8 channels, the key of a valid width-0.05 network); an enum value no parse makes read as
// a valid family.
TEST(ConfigWidth, AWidthThatBuildsNoNetworkIsRefusedNotNamedAsTheNarrowest) {
  for (const double w : {std::nan(""), std::numeric_limits<double>::infinity(), -1.0, 0.0, 1e300}) {
    EXPECT_THROW(scaled_channels(64, w), InputError) << w;
    EXPECT_THROW(width_channels(w), InputError) << w;
    EXPECT_THROW(canonical_width(w), InputError) << w;
    EXPECT_THROW(network_key(Config{Family::basic, 18, w, 64, 1, Precision::fp32}), InputError) << w;
  }
  EXPECT_THROW(scaled_channels(std::numeric_limits<int>::max(), 8.0), InputError);
  EXPECT_EQ(scaled_channels(64, 0.05), 8);  // the narrowest width still builds its 8 channels
  EXPECT_NE(input_error_of([] { return to_string(static_cast<Family>(7)); }).find("family 7 is none"), std::string::npos);
  EXPECT_THROW(to_string(static_cast<Precision>(9)), InputError);
  EXPECT_THROW(element_bytes(static_cast<Precision>(9)), InputError);
  EXPECT_THROW(config_key(Config{static_cast<Family>(7), 18, 1.0, 64, 1, Precision::fp32}), InputError);
}

}  // namespace
}  // namespace carb
