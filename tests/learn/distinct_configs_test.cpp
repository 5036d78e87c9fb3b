#include "learn/distinct_configs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "carb/error.hpp"

namespace carb {
namespace {

TEST(DistinctConfigs, EachConfigurationOnceInOrderOfFirstAppearance) {
  const Config a{Family::basic, 18, 0.5, 64, 8, Precision::fp32};
  Config b = a, c = a, d = a;
  b.batch = 16;
  c.precision = Precision::bf16;
  d.width = 0.75;
  const std::vector<Config> cs = {a, b, a, c, b, d, a, c};
  const DistinctConfigs got = distinct_configs(cs, {});
  EXPECT_EQ(got.configs, (std::vector<Config>{a, b, c, d}));
  EXPECT_TRUE(got.tel.empty());
  EXPECT_EQ(got.index, (std::vector<std::size_t>{0, 1, 0, 2, 1, 3, 0, 2}));
}

TEST(DistinctConfigs, EveryFieldAndReadingTellsConfigurationsApart) {
  const Config a{Family::basic, 18, 0.5, 64, 8, Precision::fp32};
  std::vector<Config> cs(9, a);
  cs[1].family = Family::bottleneck, cs[1].depth = 50;
  cs[2].depth = 34;
  cs[3].width = 0.5000000000000001;  // the next double: another width
  cs[4].resolution = 96;
  cs[5].batch = 9;
  cs[6].precision = Precision::fp16;
  std::vector<Telemetry> tel(9);
  tel[7].avg_sm_util = 50;  // the configuration of row 0, at a reading
  tel[8].avg_mem_util = 0;  // a reading of 0 is a reading
  const DistinctConfigs got = distinct_configs(cs, tel);
  EXPECT_EQ(got.configs.size(), 9u);
  ASSERT_EQ(got.tel.size(), 9u);
  EXPECT_EQ(got.tel[7].avg_sm_util, 50.0);
  EXPECT_FALSE(got.tel[0].avg_sm_util.has_value());
  // The same readings are the same configuration.
  cs.push_back(a), tel.push_back(tel[7]);
  const DistinctConfigs again = distinct_configs(cs, tel);
  EXPECT_EQ(again.configs.size(), 9u);
  EXPECT_EQ(again.index.back(), 7u);
}

TEST(DistinctConfigs, ManyRandomConfigurationsMapBackToThemselves) {
  std::mt19937 g(3);
  std::vector<Config> cs;
  std::vector<Telemetry> tel;
  for (int k = 0; k < 5000; ++k) {
    cs.push_back({g() % 2 ? Family::basic : Family::bottleneck, 10 + static_cast<int>(g() % 4), 0.25 * (1 + g() % 4),
                  32 * (1 + static_cast<int>(g() % 3)), 1 + static_cast<int>(g() % 5), Precision::fp32});
    Telemetry t;
    if (g() % 2) t.avg_sm_util = static_cast<double>(g() % 3);
    tel.push_back(t);
  }
  const DistinctConfigs got = distinct_configs(cs, tel);
  EXPECT_LT(got.configs.size(), cs.size());
  ASSERT_EQ(got.index.size(), cs.size());
  for (std::size_t i = 0; i < cs.size(); ++i) {
    EXPECT_EQ(got.configs[got.index[i]], cs[i]);
    EXPECT_EQ(got.tel[got.index[i]].avg_sm_util, tel[i].avg_sm_util);
  }
  // And none twice.
  const DistinctConfigs twice = distinct_configs(got.configs, got.tel);
  EXPECT_EQ(twice.configs.size(), got.configs.size());
}

TEST(DistinctConfigs, ReadingsMustBeOnePerConfigurationOrNone) {
  const Config a{Family::basic, 18, 0.5, 64, 8, Precision::fp32};
  EXPECT_THROW(distinct_configs({a, a}, std::vector<Telemetry>(1)), InputError);
  EXPECT_TRUE(distinct_configs({}, {}).configs.empty());
}

}  // namespace
}  // namespace carb
