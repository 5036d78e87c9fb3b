// Writing predictions (src/learn/prediction_io.cpp): the CSV says per row whether a prediction fits
// the device's memory when the model knows it (a hostile tester: only a count on stderr said which).
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
  write_predictions_csv(p, targets, with, nullptr, std::nullopt, 100.0);
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

}  // namespace
}  // namespace carb
