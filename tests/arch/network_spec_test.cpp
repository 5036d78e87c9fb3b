// Tests of the analytic network model against torchvision's published figures, and of
// how its counters scale with batch and precision.
#include "carb/network_spec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "carb/config.hpp"
#include "carb/error.hpp"
#include "carb/space.hpp"

namespace carb {
namespace {

struct Torchvision {
  const char* name;
  Family family;
  int depth;
  int64_t params;
  double macs;  // torchvision's published GFLOPS, which count multiply-accumulates
  int64_t conv_layers;
};

const Torchvision kTorchvision[] = {
    {"resnet18", Family::basic, 18, 11'689'512, 1.81e9, 20},
    {"resnet34", Family::basic, 34, 21'797'672, 3.66e9, 36},
    {"resnet50", Family::bottleneck, 50, 25'557'032, 4.09e9, 53},
    {"resnet101", Family::bottleneck, 101, 44'549'160, 7.80e9, 104},
    {"resnet152", Family::bottleneck, 152, 60'192'808, 11.51e9, 155},
};

Config torchvision_config(const Torchvision& t) { return {t.family, t.depth, 1.0, 224, 1, Precision::fp32}; }

TEST(NetworkSpec, ParamsMatchTorchvisionExactly) {
  for (const auto& t : kTorchvision)
    EXPECT_EQ(build_network_spec(torchvision_config(t)).params, t.params) << t.name;
}

TEST(NetworkSpec, MacsWithinOnePercentOfTorchvision) {
  for (const auto& t : kTorchvision) {
    const auto s = build_network_spec(torchvision_config(t));
    EXPECT_NEAR(static_cast<double>(s.macs), t.macs, 0.01 * t.macs) << t.name;
  }
}

TEST(NetworkSpec, ConvLayerCountsMatchTorchvision) {
  for (const auto& t : kTorchvision)
    EXPECT_EQ(build_network_spec(torchvision_config(t)).conv_layers, t.conv_layers) << t.name;
}

TEST(NetworkSpec, Resnet18LayerShapesFollowTorchvision) {
  const auto s = build_network_spec(Config{});
  auto shape_of = [&](const std::string& name) {
    for (const auto& l : s.layers)
      if (l.name == name) return l.out_shape;
    ADD_FAILURE() << "no layer " << name;
    return std::vector<int64_t>{};
  };
  EXPECT_EQ(s.input_shape, (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(shape_of("stem.conv"), (std::vector<int64_t>{1, 64, 112, 112}));
  EXPECT_EQ(shape_of("stem.maxpool"), (std::vector<int64_t>{1, 64, 56, 56}));
  EXPECT_EQ(shape_of("layer2.0.downsample.0"), (std::vector<int64_t>{1, 128, 28, 28}));
  EXPECT_EQ(shape_of("layer4.1.relu_out"), (std::vector<int64_t>{1, 512, 7, 7}));
  EXPECT_EQ(shape_of("avgpool"), (std::vector<int64_t>{1, 512}));
  EXPECT_EQ(s.layers.back().name, "fc");
  EXPECT_EQ(s.layers.back().out_shape, (std::vector<int64_t>{1, 1000}));
}

TEST(NetworkSpec, TotalsAreSumsOfLayers) {
  for (const Config& c : {Config{}, Config{Family::bottleneck, 59, 0.37, 97, 3, Precision::bf16},
                          Config{Family::basic, 8, 0.1, 32, 1, Precision::fp16}}) {
    const auto s = build_network_spec(c);
    int64_t params = 0, macs = 0, act = 0, act_max = 0;
    for (const auto& l : s.layers) {
      params += l.params, macs += l.macs, act += l.out_elements;
      act_max = std::max(act_max, l.out_elements);
      int64_t n = 1;
      for (auto d : l.out_shape) n *= d;
      EXPECT_EQ(l.out_elements, n) << l.name;
      for (int in : l.inputs)
        EXPECT_LT(in, &l - s.layers.data()) << l.name << ": inputs come before the layer";
    }
    EXPECT_EQ(s.params, params);
    EXPECT_EQ(s.macs, macs);
    EXPECT_EQ(s.act_elements_total, act);
    EXPECT_EQ(s.act_elements_max, act_max);
  }
}

TEST(NetworkSpec, MacsAndActivationsScaleLinearlyWithBatch) {
  for (const auto& t : kTorchvision) {
    Config c = torchvision_config(t);
    c.resolution = 96;
    const auto one = build_network_spec(c);
    for (int b : {2, 3, 16, 256}) {
      c.batch = b;
      const auto s = build_network_spec(c);
      EXPECT_EQ(s.macs, b * one.macs) << t.name << " batch " << b;
      EXPECT_EQ(s.act_elements_total, b * one.act_elements_total) << t.name << " batch " << b;
      EXPECT_EQ(s.act_elements_max, b * one.act_elements_max) << t.name << " batch " << b;
      EXPECT_EQ(s.input_bytes(), b * one.input_bytes()) << t.name << " batch " << b;
      EXPECT_EQ(s.params, one.params) << "parameters do not depend on the batch";
    }
  }
}

TEST(NetworkSpec, BytesFollowPrecision) {
  for (const Config& base : {Config{}, Config{Family::bottleneck, 50, 0.5, 64, 4, Precision::fp32}}) {
    const auto fp32 = build_network_spec(base);
    for (Precision p : {Precision::fp16, Precision::bf16}) {
      Config c = base;
      c.precision = p;
      const auto half = build_network_spec(c);
      EXPECT_EQ(2 * half.param_bytes(), fp32.param_bytes());
      EXPECT_EQ(2 * half.activation_bytes_total(), fp32.activation_bytes_total());
      EXPECT_EQ(2 * half.activation_bytes_max(), fp32.activation_bytes_max());
      EXPECT_EQ(2 * half.input_bytes(), fp32.input_bytes());
      EXPECT_EQ(half.macs, fp32.macs) << "precision changes bytes, not work";
    }
    EXPECT_EQ(fp32.param_bytes(), 4 * fp32.params);
    EXPECT_EQ(fp32.input_bytes(), 4 * base.batch * 3 * base.resolution * base.resolution);
  }
}

TEST(NetworkSpec, FlopsAreTwiceMacsAndMaxBelowTotal) {
  for (const Config& c : {Config{}, Config{Family::bottleneck, 302, 0.05, 32, 1, Precision::fp32},
                          Config{Family::basic, 200, 8.0, 1024, 4096, Precision::bf16},
                          Config{Family::basic, 8, 0.1, 33, 1, Precision::fp16}}) {
    const auto s = build_network_spec(c);
    EXPECT_EQ(s.flops(), 2.0 * static_cast<double>(s.macs)) << config_key(c);
    EXPECT_LE(s.act_elements_max, s.act_elements_total) << config_key(c);
    EXPECT_GT(s.act_elements_max, 0) << config_key(c);
    EXPECT_GT(s.macs, 0) << config_key(c);
  }
}

// Every total of `got` is `want`'s (the layer lists aside), naming the configuration when not.
void same_totals(const NetworkSpec& got, const NetworkSpec& want, const Config& c) {
  ASSERT_EQ(got.params, want.params) << config_key(c);
  ASSERT_EQ(got.macs, want.macs) << config_key(c);
  ASSERT_EQ(got.act_elements_total, want.act_elements_total) << config_key(c);
  ASSERT_EQ(got.act_elements_max, want.act_elements_max) << config_key(c);
  ASSERT_EQ(got.act_elements_peak, want.act_elements_peak) << config_key(c);
  ASSERT_EQ(got.conv_layers, want.conv_layers) << config_key(c);
  ASSERT_EQ(got.input_shape, want.input_shape) << config_key(c);
}

// The fast path walks the same topology without names or a layer list: every total must agree
// with the full spec on every configuration of the paper and screen presets.
TEST(NetworkSpec, TotalsFastPathAgreesWithTheFullSpec) {
  std::size_t n = 0;
  for (const char* preset : {"paper", "screen"})
    for (const auto& c : enumerate_preset(preset)) {
      const auto full = build_network_spec(c), fast = network_totals(c);
      ASSERT_NO_FATAL_FAILURE(same_totals(fast, full, c));
      ASSERT_TRUE(fast.layers.empty());
      ++n;
    }
  EXPECT_EQ(n, 4320u + 3072u);
}

// Features walk a network once per resolution and scale its totals to each batch: every field the
// same as walking it at that batch, on every configuration of two presets and batches to 4096.
TEST(NetworkSpec, TotalsScaledToABatchAreTheWalksAtIt) {
  std::size_t n = 0;
  for (const char* preset : {"paper", "deploy"})
    for (Config c : enumerate_preset(preset)) {
      const int batch = c.batch;
      c.batch = 1;
      const NetworkSpec one = network_totals(c);
      for (int b : {batch, 3, ConfigLimits::kMaxBatch}) {
        c.batch = b;
        const NetworkSpec walked = network_totals(c), scaled = totals_at_batch(one, b);
        ASSERT_EQ(scaled.config, walked.config) << config_key(c);
        ASSERT_NO_FATAL_FAILURE(same_totals(scaled, walked, c));
        ++n;
      }
    }
  EXPECT_EQ(n, 3u * (4320u + 2700u));
  // Only totals at batch 1 scale; a batch outside the space is refused as a configuration's is.
  const NetworkSpec one = network_totals({Family::basic, 18, 1.0, 64, 1, Precision::fp32});
  EXPECT_THROW(totals_at_batch(network_totals({Family::basic, 18, 1.0, 64, 2, Precision::fp32}), 4), std::logic_error);
  EXPECT_THROW(totals_at_batch(build_network_spec({Family::basic, 18, 1.0, 64, 1, Precision::fp32}), 4), std::logic_error);
  EXPECT_THROW(totals_at_batch(one, 0), InputError);
  EXPECT_THROW(totals_at_batch(one, ConfigLimits::kMaxBatch + 1), InputError);
}

// What inference holds at once, by hand. ResNet-18 at 224: the stem's convolution output (64 x 112 x
// 112 = S) and its BatchNorm output beside it, 2S; every later block holds less (its input, a
// convolution output and a BatchNorm output at 56 x 56 or smaller; ReLU and add work in place).
// ResNet-50: layer1.0's shortcut BatchNorm, made while the main path's output (256 x 56 x 56 = 4M,
// M = 64 x 56 x 56) and the shortcut convolution's (4M) are alive: 12M.
TEST(NetworkSpec, PeakLiveActivationsFollowTheProfilersForwardPass) {
  const int64_t S = 64 * 112 * 112, M = 64 * 56 * 56;
  EXPECT_EQ(build_network_spec({Family::basic, 18, 1.0, 224, 1, Precision::fp32}).act_elements_peak, 2 * S);
  EXPECT_EQ(build_network_spec({Family::bottleneck, 50, 1.0, 224, 1, Precision::fp32}).act_elements_peak, 12 * M);
  const auto b4 = build_network_spec({Family::bottleneck, 50, 1.0, 224, 4, Precision::fp16});
  EXPECT_EQ(b4.act_elements_peak, 4 * 12 * M);  // linear in batch
  EXPECT_EQ(b4.activation_bytes_peak(), 2 * b4.act_elements_peak);
  // Never below the largest output, never above all outputs at once.
  for (const auto& c : enumerate_preset("tiny")) {
    const auto s = network_totals(c);
    EXPECT_GE(s.act_elements_peak, s.act_elements_max) << config_key(c);
    EXPECT_LT(s.act_elements_peak, s.act_elements_total) << config_key(c);
  }
}

TEST(NetworkSpec, InvalidConfigIsInputError) {
  EXPECT_THROW(network_totals({Family::basic, 19, 1.0, 224, 1, Precision::fp32}), InputError);
  EXPECT_THROW(build_network_spec({Family::basic, 19, 1.0, 224, 1, Precision::fp32}), InputError);
  EXPECT_THROW(build_network_spec({Family::basic, 18, 0.0, 224, 1, Precision::fp32}), InputError);
  EXPECT_THROW(build_network_spec({Family::basic, 18, 1.0, 16, 1, Precision::fp32}), InputError);
  EXPECT_THROW(build_network_spec({Family::basic, 18, 1.0, 224, 0, Precision::fp32}), InputError);
}

}  // namespace
}  // namespace carb
