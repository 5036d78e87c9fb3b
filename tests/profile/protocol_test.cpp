// Tests of the protocol's identity: options added later (--reference, --keep-memory) appear in the
// protocol and change its id only when on, so stores measured before them keep their ids and resume.
// And of validate(): the settings that contradict each other or mean nothing on a backend.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "carb/error.hpp"
#include "carb/profiler.hpp"
#include "data/provenance.hpp"

namespace carb {
namespace {

TEST(Protocol, LaterOptionsChangeTheIdOnlyWhenOn) {
  const Protocol plain;
  EXPECT_FALSE(plain.to_json().contains("reference"));
  EXPECT_FALSE(plain.to_json().contains("keep_memory"));
  EXPECT_EQ(plain.id(), Protocol{}.id());

  Protocol ref = plain;
  ref.reference = true;
  EXPECT_EQ(ref.to_json()["reference"], config_key(kReferenceConfig));
  Protocol keep = plain;
  keep.keep_memory = true;
  EXPECT_TRUE(keep.to_json()["keep_memory"].get<bool>());
  Protocol both = ref;
  both.keep_memory = true;

  const std::string ids[] = {plain.id(), ref.id(), keep.id(), both.id()};
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j) EXPECT_NE(ids[i], ids[j]) << i << " vs " << j;
}

// A dataset's recorded settings are checked against their id (fifty-fourth hostile pass): what the
// profiler records beside Protocol::to_json() must be all of kProtocolRecordOnlyKeys, or every
// honest provenance would be refused.
TEST(Protocol, TheRecordedSettingsMakeTheId) {
  Protocol p;
  p.threads = 2, p.reference = true, p.max_timed_s = 2;
  nlohmann::json settings = p.to_json();
  EXPECT_EQ(protocol_id_of(settings), p.id());
  settings["backend"] = "cpu", settings["platform_info"] = {{"cores", 2}}, settings["command"] = "carb profile";
  settings["meter_check"] = {{"meter", "none"}};
  EXPECT_EQ(protocol_id_of(settings), p.id());
  settings["threads"] = 64;
  EXPECT_NE(protocol_id_of(settings), p.id());
}

TEST(Protocol, ReferenceNetworkIsAValidConfiguration) {
  EXPECT_NO_THROW(validate(kReferenceConfig));
  EXPECT_EQ(config_key(kReferenceConfig), "basic-18-w0.5-r64-b1-fp32");
}

TEST(ProtocolValidate, DefaultsAndMeaningfulSettingsPass) {
  EXPECT_NO_THROW(validate(Protocol{}, "cpu"));
  EXPECT_NO_THROW(validate(Protocol{}, "cuda"));
  Protocol p;
  p.min_passes = p.max_passes = 7;  // equal is a fixed count, not a contradiction
  p.reference = p.keep_memory = true;
  EXPECT_NO_THROW(validate(p, "cpu"));
  p.min_passes = 6, p.target_rel_ci = 0.01, p.max_timed_s = 2;  // early stops with room to stop in
  EXPECT_NO_THROW(validate(p, "cpu"));
  Protocol gpu;
  gpu.util_window_s = 0.5;
  gpu.min_energy_window_s = 5;
  EXPECT_NO_THROW(validate(gpu, "cuda"));
}

struct BadProtocol {
  const char* backend;
  std::function<void(Protocol&)> change;
  std::vector<const char*> mentions;  // each must appear in the message
};

TEST(ProtocolValidate, ContradictionsAndMeaninglessSettingsAreRefused) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const BadProtocol cases[] = {
      {"cpu",
       [](Protocol& p) { p.min_passes = 10, p.max_passes = 5; },
       {"--min-passes 10", "--max-passes 5"}},
      {"cuda", [](Protocol& p) { p.min_passes = 3, p.max_passes = 2; }, {"--min-passes 3", "--max-passes 2"}},
      {"cpu", [](Protocol& p) { p.lock_clocks = true; }, {"--lock-clocks", "no clocks to lock", "cpu"}},
      {"cuda", [](Protocol& p) { p.lock_clocks = true; }, {"--lock-clocks", "not implemented"}},
      {"cpu", [](Protocol& p) { p.util_window_s = 5; }, {"--util-window", "cpu"}},
      {"cpu", [](Protocol& p) { p.util_window_s = 0; }, {"--util-window", "cpu"}},
      {"cpu", [](Protocol& p) { p.min_energy_window_s = 3; }, {"--min-energy-window", "cpu"}},
      {"cuda", [](Protocol& p) { p.reference = true; }, {"--reference", "cuda"}},
      {"cuda", [](Protocol& p) { p.keep_memory = true; }, {"--keep-memory", "cuda"}},
      {"cpu", [](Protocol& p) { p.warmup = -1; }, {"--warmup", "-1"}},
      {"cpu", [](Protocol& p) { p.min_passes = 0; }, {"--min-passes", "0"}},
      {"cpu", [](Protocol& p) { p.threads = 0; }, {"--threads"}},
      {"cpu", [nan](Protocol& p) { p.cooldown_s = nan; }, {"--cooldown", "nan"}},
      {"cuda", [nan](Protocol& p) { p.util_window_s = nan; }, {"--util-window", "nan"}},
      {"cpu", [](Protocol& p) { p.max_timed_s = -2; }, {"--max-timed-s", "-2"}},
      {"cpu", [](Protocol& p) { p.target_rel_ci = INFINITY; }, {"--target-ci", "inf"}},
      // Ninety-seventh hostile pass: early stops between an equal minimum and maximum stop nothing.
      {"cpu", [](Protocol& p) { p.target_rel_ci = 0.01; }, {"--target-ci", "both are 100", "takes 100 passes"}},
      {"cuda", [](Protocol& p) { p.min_passes = p.max_passes = 5, p.max_timed_s = 0.5; }, {"--max-timed-s", "both are 5"}},
  };
  for (const auto& c : cases) {
    Protocol p;
    c.change(p);
    try {
      validate(p, c.backend);
      ADD_FAILURE() << "accepted on " << c.backend << ": " << p.to_json().dump();
    } catch (const InputError& e) {
      const std::string msg = e.what();
      for (const char* m : c.mentions)
        EXPECT_NE(msg.find(m), std::string::npos) << "'" << m << "' not in: " << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace carb
