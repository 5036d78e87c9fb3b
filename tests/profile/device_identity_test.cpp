// The device a protocol record names, and the refusal to record another device's rows under it.
#include "profile/device_identity.hpp"

#include <gtest/gtest.h>

#include "carb/error.hpp"

namespace carb::detail {
namespace {

nlohmann::json settings(const std::string& backend, const char* key, const std::string& name) {
  return {{"warmup", 5}, {"backend", backend}, {"platform_info", {{key, name}}}};
}

TEST(DeviceIdentity, TheRecordNamesTheBackendAndItsDevice) {
  EXPECT_EQ(measuring_device(settings("cuda", "gpu_name", "NVIDIA H200")), "cuda NVIDIA H200");
  EXPECT_EQ(measuring_device(settings("cpu", "cpu_model", "AMD EPYC 7B13")), "cpu AMD EPYC 7B13");
  // What names no device: a CUDA run without NVML, an unread cpuinfo, older or hand-made records.
  EXPECT_EQ(measuring_device(settings("cuda", "cuda_device", "0")), "");
  EXPECT_EQ(measuring_device(settings("cpu", "cpu_model", "unknown")), "");
  EXPECT_EQ(measuring_device({{"warmup", 1}}), "");
  EXPECT_EQ(measuring_device(nlohmann::json::array()), "");
  EXPECT_EQ(measuring_device({{"backend", "cuda"}, {"platform_info", {{"gpu_name", 3}}}}), "");
}

TEST(DeviceIdentity, AnotherDeviceUnderTheSameProtocolIsRefused) {
  const nlohmann::json stored = {{"p1", settings("cuda", "gpu_name", "NVIDIA H200")}};
  const auto h100 = settings("cuda", "gpu_name", "NVIDIA H100 80GB HBM3");
  try {
    require_same_device(stored, "p1", h100, "h200.db");
    FAIL() << "an H100 run was taken under an H200's record";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("h200.db records protocol p1 as measured on 'cuda NVIDIA H200'"), std::string::npos) << what;
    EXPECT_NE(what.find("'cuda NVIDIA H100 80GB HBM3'"), std::string::npos) << what;
  }
  // Taken: the same device; a protocol the store has no record of; a record naming no device; a
  // run naming none.
  EXPECT_NO_THROW(require_same_device(stored, "p1", settings("cuda", "gpu_name", "NVIDIA H200"), "s.db"));
  EXPECT_NO_THROW(require_same_device(stored, "p2", h100, "s.db"));
  EXPECT_NO_THROW(require_same_device({{"p1", {{"warmup", 5}}}}, "p1", h100, "s.db"));
  EXPECT_NO_THROW(require_same_device(stored, "p1", {{"warmup", 5}}, "s.db"));
  // Another backend under the same protocol id is another device too.
  EXPECT_THROW(require_same_device(stored, "p1", settings("cpu", "cpu_model", "AMD EPYC"), "s.db"), InputError);
}

}  // namespace
}  // namespace carb::detail
