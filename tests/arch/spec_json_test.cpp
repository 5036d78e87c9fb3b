// Tests of the JSON rendering of a NetworkSpec (the `carb arch --format json` contract).
#include <gtest/gtest.h>

#include <string>

#include "carb/arch.hpp"
#include "carb/network_spec.hpp"

namespace carb {
namespace {

const Config kConfigs[] = {
    Config{},
    Config{Family::bottleneck, 59, 0.37, 97, 3, Precision::bf16},
    Config{Family::basic, 8, 0.1, 32, 1, Precision::fp16},
};

TEST(SpecJson, HasTheContractKeysWithTheSpecsValues) {
  for (const Config& c : kConfigs) {
    const auto s = build_network_spec(c);
    const auto j = spec_to_json(s);
    for (const char* key : {"config", "params", "param_bytes", "macs", "flops", "activation_bytes_total",
                            "activation_bytes_max", "activation_bytes_peak", "input_bytes", "conv_layers", "layers"})
      EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j.at("params").get<int64_t>(), s.params);
    EXPECT_EQ(j.at("param_bytes").get<int64_t>(), s.param_bytes());
    EXPECT_EQ(j.at("macs").get<int64_t>(), s.macs);
    EXPECT_EQ(j.at("flops").get<double>(), 2.0 * static_cast<double>(s.macs));
    EXPECT_EQ(j.at("activation_bytes_total").get<int64_t>(), s.activation_bytes_total());
    EXPECT_EQ(j.at("activation_bytes_max").get<int64_t>(), s.activation_bytes_max());
    EXPECT_EQ(j.at("activation_bytes_peak").get<int64_t>(), s.activation_bytes_peak());
    EXPECT_EQ(j.at("input_bytes").get<int64_t>(), s.input_bytes());
    EXPECT_EQ(j.at("conv_layers").get<int64_t>(), s.conv_layers);
  }
}

TEST(SpecJson, ConfigRoundTrips) {
  for (const Config& c : kConfigs) {
    const auto j = spec_to_json(build_network_spec(c)).at("config");  // a copy, not a reference
    const Config back{parse_family(j.at("family").get<std::string>()),
                      j.at("depth").get<int>(),
                      j.at("width").get<double>(),
                      j.at("resolution").get<int>(),
                      j.at("batch").get<int>(),
                      parse_precision(j.at("precision").get<std::string>())};
    EXPECT_EQ(back, c) << config_key(c);
    EXPECT_EQ(config_to_json(c), j);
  }
}

TEST(SpecJson, LayersCarryNameKindAndShape) {
  for (const Config& c : kConfigs) {
    const auto s = build_network_spec(c);
    const auto j = spec_to_json(s);
    const auto& layers = j.at("layers");
    ASSERT_TRUE(layers.is_array());
    ASSERT_EQ(layers.size(), s.layers.size());
    for (std::size_t i = 0; i < s.layers.size(); ++i) {
      const auto& l = layers[i];
      EXPECT_EQ(l.at("name").get<std::string>(), s.layers[i].name);
      EXPECT_EQ(l.at("kind").get<std::string>(), to_string(s.layers[i].kind));
      EXPECT_EQ(l.at("out_shape").get<std::vector<int64_t>>(), s.layers[i].out_shape);
      EXPECT_EQ(l.at("in_shape").get<std::vector<int64_t>>(), s.layers[i].in_shape);
      EXPECT_EQ(l.at("inputs").get<std::vector<int>>(), s.layers[i].inputs);
      EXPECT_EQ(l.at("params").get<int64_t>(), s.layers[i].params);
      EXPECT_EQ(l.at("macs").get<int64_t>(), s.layers[i].macs);
    }
  }
}

TEST(SpecJson, WithoutLayersOmitsThem) {
  const auto j = spec_to_json(build_network_spec(Config{}), false);
  EXPECT_FALSE(j.contains("layers"));
  EXPECT_TRUE(j.contains("params"));
}

TEST(SpecJson, SurvivesTextRoundTrip) {
  const auto j = spec_to_json(build_network_spec(kConfigs[1]));
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);
}

}  // namespace
}  // namespace carb
