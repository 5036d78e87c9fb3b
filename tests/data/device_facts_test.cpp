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

// A hostile tester: "143771", -5, 0 and null were merged into outputs as the memory without a word.
TEST(DeviceFacts, OnlyAUsableValueIsCopiedAndItRepairsAnUnusableOne) {
  const nlohmann::json h200 = record("cuda", "gpu_name", "NVIDIA H200");
  for (const nlohmann::json& bad : {nlohmann::json("143771"), nlohmann::json(-5), nlohmann::json(0), nlohmann::json(),
                                    nlohmann::json{{"v", 1}}}) {
    EXPECT_FALSE(usable_device_fact(bad)) << bad.dump();
    nlohmann::json r = h200, other = h200;
    other["platform_info"]["device_memory_mb"] = bad;
    EXPECT_FALSE(add_lasting_device_facts(r, other)) << bad.dump();
    EXPECT_FALSE(r["platform_info"].contains("device_memory_mb")) << bad.dump();
    // Held as no size, it gives way to a usable value.
    nlohmann::json good = h200;
    good["platform_info"]["device_memory_mb"] = 150109.5;
    EXPECT_TRUE(add_lasting_device_facts(other, good)) << bad.dump();
    EXPECT_EQ(other["platform_info"]["device_memory_mb"], 150109.5);
  }
  EXPECT_TRUE(usable_device_fact(nlohmann::json(143771)));
  EXPECT_TRUE(usable_device_fact(nlohmann::json(0.5)));
}

// A hostile tester: two runs of one protocol on one GPU differ in the clocks and temperature read
// when each began, and merge called them "different settings" (and so added no memory).
TEST(DeviceFacts, ReadingsOfTheMomentAndRecordOnlyKeysAreNoSettings) {
  nlohmann::json a = record("cuda", "gpu_name", "NVIDIA H200"), b = a;
  a["platform_info"]["sm_clock_mhz_now"] = 1980, a["platform_info"]["gpu_temp_c_now"] = 42;
  b["platform_info"]["sm_clock_mhz_now"] = 1755;
  a["command"] = "carb profile --db a.db", b["command"] = "carb profile --db b.db";
  b["meter_check"] = {{"period_ms", 100}};
  EXPECT_EQ(measuring_settings(a), measuring_settings(b));
  b["platform_info"]["driver"] = "580.159.04";  // a lasting fact of the setup: a setting
  EXPECT_NE(measuring_settings(a), measuring_settings(b));
  a["platform_info"]["now"] = 1;  // only a name ending in _now is a reading
  EXPECT_TRUE(measuring_settings(a)["platform_info"].contains("now"));
  EXPECT_EQ(measuring_settings(nlohmann::json::array()), nlohmann::json::array());
}

}  // namespace
}  // namespace carb::detail
