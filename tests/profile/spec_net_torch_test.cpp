// The proof that the analytic model and the real LibTorch model are the same network:
// across configurations drawn from the whole space, the real parameter count equals the
// analytic one and every layer's real output shape equals the spec's.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "carb/network_spec.hpp"
#include "profile/spec_net.hpp"

namespace carb {
namespace {

// Keeps the suite within seconds on two cores: forward cost and weight memory bounded.
constexpr double kMaxMacs = 1.0e9;
constexpr int64_t kMaxParams = 25'000'000;

int random_depth(Family f, bool large, std::mt19937& rng) {
  const int k = f == Family::basic ? 2 : 3;
  const int lo = f == Family::basic ? ConfigLimits::kMinDepthBasic : ConfigLimits::kMinDepthBottleneck;
  const int hi = f == Family::basic ? ConfigLimits::kMaxDepthBasic : ConfigLimits::kMaxDepthBottleneck;
  const int mid = lo + ((hi - lo) / k / 4) * k;  // the lower quarter counts as small
  std::uniform_int_distribution<int> steps(0, ((large ? hi - mid : mid - lo) / k));
  return (large ? mid : lo) + k * steps(rng);
}

// Configurations across the space (fixed seed), cheap enough to run: both families, widths
// 0.1-4, resolutions 32-224, small and large depths, and torchvision's standard depths.
std::vector<Config> drawn_configs() {
  std::vector<Config> out = {{Family::basic, 18, 1.0, 64, 1, Precision::fp32},
                             {Family::basic, 34, 0.5, 96, 1, Precision::fp32},
                             {Family::bottleneck, 50, 0.5, 64, 1, Precision::fp32},
                             {Family::bottleneck, 101, 0.25, 64, 1, Precision::fp32},
                             {Family::bottleneck, 152, 0.1, 128, 1, Precision::fp32},
                             {Family::bottleneck, 200, 0.1, 32, 1, Precision::fp32},
                             {Family::basic, 8, 4.0, 33, 1, Precision::fp32},
                             {Family::basic, 10, 2.5, 48, 1, Precision::fp32},
                             {Family::basic, 14, 2.0, 64, 1, Precision::fp32},
                             {Family::basic, 200, 0.1, 224, 1, Precision::fp32}};
  std::mt19937 rng(20240611);
  std::uniform_real_distribution<double> width(0.1, 4.0);
  std::uniform_int_distribution<int> res(32, 224), coin(0, 1);
  int attempts = 0;
  while (out.size() < 52 && ++attempts < 10000) {
    const Family f = coin(rng) ? Family::basic : Family::bottleneck;
    const bool large = coin(rng);
    const int depth = random_depth(f, large, rng);
    const double w = std::round(width(rng) * 100) / 100;
    const Config c{f, depth, w, res(rng), 1, Precision::fp32};
    const auto s = build_network_spec(c);
    if (static_cast<double>(s.macs) <= kMaxMacs && s.params <= kMaxParams) out.push_back(c);
  }
  return out;
}

TEST(SpecNetTorch, DrawCoversTheSpace) {
  const auto cs = drawn_configs();
  ASSERT_GE(cs.size(), 50u);
  int basic = 0, wide = 0, narrow = 0, hi_res = 0, deep_basic = 0, deep_bottleneck = 0;
  for (const auto& c : cs) {
    basic += c.family == Family::basic;
    wide += c.width >= 2.0, narrow += c.width <= 0.3, hi_res += c.resolution >= 160;
    deep_basic += c.family == Family::basic && c.depth >= 100;
    deep_bottleneck += c.family == Family::bottleneck && c.depth >= 150;
  }
  EXPECT_GE(basic, 10);
  EXPECT_GE(static_cast<int>(cs.size()) - basic, 10);
  EXPECT_GE(wide, 3);
  EXPECT_GE(narrow, 3);
  EXPECT_GE(hi_res, 3);
  EXPECT_GE(deep_basic, 3);
  EXPECT_GE(deep_bottleneck, 3);
}

TEST(SpecNetTorch, RealModelMatchesSpecAcrossTheSpace) {
  torch::InferenceMode guard;
  for (const Config& c : drawn_configs()) {
    SCOPED_TRACE(config_key(c));
    const auto spec = build_network_spec(c);
    torch::manual_seed(0);
    SpecNet net(spec);
    net->eval();
    EXPECT_EQ(net->parameter_count(), spec.params);
    const auto shapes = net->layer_shapes(torch::randn(spec.input_shape));
    ASSERT_EQ(shapes.size(), spec.layers.size());
    for (std::size_t i = 0; i < shapes.size(); ++i)
      ASSERT_EQ(shapes[i], spec.layers[i].out_shape) << "layer " << spec.layers[i].name;
  }
}

TEST(SpecNetTorch, ForwardGivesLogitsOfTheBatch) {
  torch::InferenceMode guard;
  const auto spec = build_network_spec({Family::bottleneck, 50, 0.25, 64, 3, Precision::fp32});
  torch::manual_seed(0);
  SpecNet net(spec);
  net->eval();
  const auto y = net->forward(torch::randn(spec.input_shape));
  EXPECT_EQ(y.sizes().vec(), (std::vector<int64_t>{3, 1000}));
  EXPECT_TRUE(torch::isfinite(y).all().item<bool>());
}

TEST(SpecNetTorch, Bf16ModelRunsAndAgreesWithFp32) {
  torch::InferenceMode guard;
  const Config c{Family::basic, 18, 0.25, 64, 2, Precision::bf16};
  const auto spec = build_network_spec(c);
  ASSERT_EQ(to_dtype(c.precision), torch::kBFloat16);
  torch::manual_seed(0);
  SpecNet net(spec);
  net->eval();
  const auto x = torch::randn(spec.input_shape);
  const auto y32 = net->forward(x);
  net->to(torch::kBFloat16);
  const auto y16 = net->forward(x.to(torch::kBFloat16));
  EXPECT_EQ(y16.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(y16.sizes().vec(), (std::vector<int64_t>{2, 1000}));
  ASSERT_TRUE(torch::isfinite(y16).all().item<bool>());
  const double rel = (y16.to(torch::kFloat32) - y32).norm().item<double>() / y32.norm().item<double>();
  EXPECT_LT(rel, 0.1) << "bf16 logits should be the fp32 ones to within bf16 rounding";
}

TEST(SpecNetTorch, DtypeOfEachPrecision) {
  EXPECT_EQ(to_dtype(Precision::fp32), torch::kFloat32);
  EXPECT_EQ(to_dtype(Precision::fp16), torch::kFloat16);
  EXPECT_EQ(to_dtype(Precision::bf16), torch::kBFloat16);
}

}  // namespace
}  // namespace carb

namespace carb {
namespace {

// Batch 1 at resolution 32: the last stage's map is 1x1, so training-mode BatchNorm sees one
// value per channel and refuses. The first training step then freezes BatchNorm and says so.
TEST(SpecNetTraining, FirstStepFreezesBatchNormWhereTrainingModeRefuses) {
  const auto spec = build_network_spec({Family::basic, 10, 0.25, 32, 1, Precision::fp32});
  torch::manual_seed(0);
  SpecNet net(spec);
  const auto x = torch::randn(spec.input_shape);
  net->train();
  EXPECT_THROW(train_step(net, x), c10::Error);  // what the GPU window hit on 5 of 150 rows
  net->zero_grad();
  EXPECT_TRUE(first_train_step(net, x));
  int frozen_bn = 0, training_bn = 0, training_other = 0;
  for (const auto& m : net->modules(/*include_self=*/false)) {
    if (m->as<torch::nn::BatchNorm2d>())
      ++(m->is_training() ? training_bn : frozen_bn);
    else if (m->is_training())
      ++training_other;
  }
  EXPECT_GT(frozen_bn, 0);
  EXPECT_EQ(training_bn, 0);
  EXPECT_GT(training_other, 0);
  for (const auto& p : net->parameters()) EXPECT_TRUE(p.grad().defined());
}

TEST(SpecNetTraining, FirstStepTrainsNormallyWhereBatchNormCan) {
  const auto spec = build_network_spec({Family::basic, 10, 0.25, 32, 2, Precision::fp32});
  torch::manual_seed(0);
  SpecNet net(spec);
  net->train();
  EXPECT_FALSE(first_train_step(net, torch::randn(spec.input_shape)));
  for (const auto& m : net->modules(false)) EXPECT_TRUE(m->is_training());
}

}  // namespace
}  // namespace carb
