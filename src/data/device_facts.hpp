// The device a protocol's record names, and the lasting facts of it (not readings of the moment)
// that two records of one protocol on one device may hold one without the other: a store or export
// made before carb recorded a device's memory lacks it, and a later one has it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace carb::detail {

/// The device named by a protocol's recorded settings (what run_profile stores: "backend" and the
/// backend's platform_info): "cuda NVIDIA H200" from its NVML name, "cpu AMD EPYC 7B13" from
/// /proc/cpuinfo's model name; "" when the settings name none (a CUDA run without NVML, an older
/// or hand-made record).
std::string measuring_device(const nlohmann::json& settings);

/// The facts of a device that do not change from run to run, in platform_info: its memory (recorded
/// since 2026-12-07). Its clocks, temperature or power limit are readings of the moment.
inline constexpr const char* kLastingDeviceFacts[] = {"device_memory_mb"};

/// A lasting device fact as a record may hold it: a positive, finite number. A value that is none
/// ("143771", null, -5) is no fact, and is never copied into another record.
bool usable_device_fact(const nlohmann::json& value);

/// Adds to `record`'s platform_info each lasting device fact `other`'s records as a usable value and
/// `record`'s lacks (or holds as no usable value), where both name the same device
/// (measuring_device) and both platform_info are objects; changes no usable fact `record` holds.
/// True when one was added.
bool add_lasting_device_facts(nlohmann::json& record, const nlohmann::json& other);

/// A protocol's recorded settings without what `profile` records beside them for provenance only,
/// which differ from run to run under one protocol: the command line, the meter check (thirty-third
/// hostile pass: two stores profiled with the same flags were said to have "different settings")
/// and platform_info's readings of the moment (`*_now`: a GPU's clocks and temperature when the run
/// began). What two records of one protocol are compared by.
nlohmann::json measuring_settings(nlohmann::json settings);

}  // namespace carb::detail
