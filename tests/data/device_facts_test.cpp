// The lasting facts of a device two records of one protocol may hold one without the other.
#include "data/device_facts.hpp"

#include <gtest/gtest.h>

namespace carb::detail {
namespace {

nlohmann::json record(const std::string& backend, const char* key, const std::string& name) {
  return {{"warmup", 5}, {"backend", backend}, {"platform_info", {{key, name}, {"gpu_clock_mhz", 1980}}}};
}

TEST(DeviceFacts, TheMemoryARecordOfTheSameDeviceHoldsIsAdded) {
  nlohmann::json older = record("cuda", "gpu_name", "NVIDIA H200");
  nlohmann::json newer = older;
  newer["platform_info"]["device_memory_mb"] = 150109;
  newer["platform_info"]["gpu_clock_mhz"] = 1755;  // a reading of the moment: never taken over
  EXPECT_TRUE(add_lasting_device_facts(older, newer));
  EXPECT_EQ(older["platform_info"]["device_memory_mb"], 150109);
  EXPECT_EQ(older["platform_info"]["gpu_clock_mhz"], 1980);
  EXPECT_EQ(older["warmup"], 5);
  // Once there, nothing more to add; and a fact the record holds is never changed.
  EXPECT_FALSE(add_lasting_device_facts(older, newer));
  newer["platform_info"]["device_memory_mb"] = 80000;
  EXPECT_FALSE(add_lasting_device_facts(older, newer));
  EXPECT_EQ(older["platform_info"]["device_memory_mb"], 150109);
}

TEST(DeviceFacts, NothingIsAddedAcrossDevicesOrWhereADeviceIsUnnamed) {
  nlohmann::json with_memory = record("cuda", "gpu_name", "NVIDIA H200");
  with_memory["platform_info"]["device_memory_mb"] = 150109;
  for (nlohmann::json r : {record("cuda", "gpu_name", "NVIDIA H100 80GB HBM3"), record("cpu", "cpu_model", "NVIDIA H200"),
                           record("cuda", "cuda_device", "0"), record("cpu", "cpu_model", "unknown"),
                           nlohmann::json{{"warmup", 5}}, nlohmann::json::array()}) {
    const nlohmann::json before = r;
    EXPECT_FALSE(add_lasting_device_facts(r, with_memory)) << before.dump();
    EXPECT_EQ(r, before);
    nlohmann::json back = with_memory;
    EXPECT_FALSE(add_lasting_device_facts(back, r)) << before.dump();
  }
}

}  // namespace
}  // namespace carb::detail
