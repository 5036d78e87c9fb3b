// Writing predictions (src/learn/prediction_io.cpp): the CSV says per row whether a prediction fits
// the device's memory, and whether its energy and latency imply a power within the device's limit,
// when the model knows them (hostile testers: only a count on stderr said which).
#include "carb/prediction_io.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace carb {
namespace {

Prediction with_memory(double mb) {
  Prediction p;
  p.config = {Family::basic, 18, 0.5, 32, 4, Precision::fp32};
  p.value = {{"peak_memory_mb", mb}, {"latency_ms", 1.0}};
  return p;
}

TEST(PredictionIo, TheCsvSaysWhichRowsFitTheDevicesMemory) {
  const std::vector<Prediction> p = {with_memory(50), with_memory(150), with_memory(100)};
  const std::vector<std::string> targets = {"peak_memory_mb", "latency_ms"};
  std::ostringstream with, without;
  write_predictions_csv(p, targets, with, nullptr, std::nullopt, DeviceLimits{100.0, std::nullopt});
  write_predictions_csv(p, targets, without);
  EXPECT_NE(with.str().find("latency_ms,fits_device_memory,trained_architecture,outside\n"), std::string::npos)
      << with.str();
  EXPECT_NE(with.str().find(",50,1,true,true,\n"), std::string::npos) << with.str();
  EXPECT_NE(with.str().find(",150,1,false,true,\n"), std::string::npos) << with.str();
  EXPECT_NE(with.str().find(",100,1,true,true,\n"), std::string::npos) << with.str();  // at the limit fits
  EXPECT_EQ(without.str().find("fits_device_memory"), std::string::npos) << without.str();
  // A model without memory predicts nothing that could exceed it.
  Prediction latency_only;
  latency_only.value = {{"latency_ms", 1.0}};
  EXPECT_TRUE(fits_device_memory(latency_only, 1.0));
}

TEST(PredictionIo, TheCsvSaysWhichRowsImplyMorePowerThanTheDevicesLimit) {
  const auto with = [](double energy_j, double latency_ms) {
    Prediction p;
    p.config = {Family::basic, 18, 0.5, 32, 4, Precision::fp32};
    p.value = {{"energy_j", energy_j}, {"latency_ms", latency_ms}};
    return p;
  };
  // 300 W, 500 W, and 330 W: exactly 1.1x the 300 W limit, as close as measured rows come.
  const std::vector<Prediction> p = {with(0.3, 1), with(0.5, 1), with(0.33, 1)};
  const std::vector<std::string> targets = {"energy_j", "latency_ms"};
  std::ostringstream both;
  write_predictions_csv(p, targets, both, nullptr, std::nullopt, DeviceLimits{1000.0, 300.0});
  EXPECT_NE(both.str().find("latency_ms,fits_device_memory,within_power_limit,trained_architecture,outside\n"),
            std::string::npos) << both.str();
  EXPECT_NE(both.str().find(",0.3,1,true,true,true,\n"), std::string::npos) << both.str();
  EXPECT_NE(both.str().find(",0.5,1,true,false,true,\n"), std::string::npos) << both.str();
  EXPECT_NE(both.str().find(",0.33,1,true,true,true,\n"), std::string::npos) << both.str();
  EXPECT_DOUBLE_EQ(predicted_power_w(p[1]).value(), 500);
  EXPECT_FALSE(within_power_limit(p[1], 300));
  EXPECT_TRUE(within_power_limit(p[1], 500));
  // Without energy or latency no power is implied, and nothing is over the limit.
  Prediction memory_only;
  memory_only.value = {{"peak_memory_mb", 10.0}, {"latency_ms", 1.0}};
  EXPECT_FALSE(predicted_power_w(memory_only));
  EXPECT_TRUE(within_power_limit(memory_only, 1e-9));
}

}  // namespace
}  // namespace carb
