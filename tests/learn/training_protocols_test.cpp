// The protocols a model's data (or any dataset) was measured under, read from provenance sidecars,
// and the settings in which two of them differ.
#include "learn/training_protocols.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "temp_dir_test.hpp"

namespace carb {
namespace {

TEST(ProtocolSettingDifferences, NamesTheMeasuringSettingsNotTheRecord) {
  const nlohmann::json mine = {{"warmup", 5}, {"max_timed_s", 2.0}, {"keep_memory", true}, {"command", "carb profile a"},
                               {"platform_info", {{"cpu", "x"}}}, {"backend", "cpu"}};
  nlohmann::json theirs = mine;
  EXPECT_TRUE(protocol_setting_differences(theirs, mine).empty());
  // The command, the meter check, the backend and the machine's facts are a record of the run.
  theirs["command"] = "carb profile b";
  theirs["meter_check"] = {{"meter", "none"}};
  theirs["platform_info"] = {{"cpu", "y"}};
  EXPECT_TRUE(protocol_setting_differences(theirs, mine).empty());
  theirs["max_timed_s"] = 0.6;
  theirs.erase("keep_memory");
  theirs["ci"] = "student_t";
  EXPECT_EQ(protocol_setting_differences(theirs, mine),
            (std::vector<std::string>{"ci (\"student_t\" against none recorded)",
                                      "keep_memory (none recorded against true)", "max_timed_s (0.6 against 2.0)"}));
  EXPECT_TRUE(protocol_setting_differences(nlohmann::json::array(), mine).empty());
  // Ninety-eighth hostile pass: a sidecar's key with a newline forged a line of its own, a
  // right-to-left override passed, a 1 MB value was echoed whole. Escaped as JSON and cut short.
  nlohmann::json odd = mine;
  odd["x\nwarning: injected"] = 1;
  odd["warmup"] = "\u202e5";
  odd["max_timed_s"] = std::string(100000, 'a');
  odd["keep_memory"] = true;
  const auto said = protocol_setting_differences(odd, mine);
  ASSERT_EQ(said.size(), 3u);
  EXPECT_EQ(said[0], "max_timed_s (\"" + std::string(56, 'a') + "... against 2.0)");
  EXPECT_EQ(said[1], "warmup (\"\\u202e5\" against 5)");
  EXPECT_EQ(said[2], "\"x\\nwarning: injected\" (1 against none recorded)");
}

class ProtocolsOfFiles : public TempDirTest {
 protected:
  ProtocolsOfFiles() : TempDirTest("carb_protocols_of_files_") {}
};

TEST_F(ProtocolsOfFiles, ReadsEachSidecarAndSaysWhatItCouldNot) {
  const auto csv = dir_ / "a.csv";
  std::ofstream(csv) << "family\n";
  std::string why;
  EXPECT_FALSE(protocols_of_files({csv.string()}, &why));  // no sidecar: not known, and nothing wrong
  EXPECT_EQ(why, "");
  std::ofstream(dir_ / "a.json") << R"({"protocols": {"p1": {"warmup": 5}, "p2": 3}})";
  const auto got = protocols_of_files({csv.string()}, &why);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->size(), 1u);  // a protocol that is not an object is not a protocol's settings
  EXPECT_EQ(got->at("p1").at("warmup"), 5);
  EXPECT_FALSE(protocols_of_files({csv.string(), (dir_ / "gone.csv").string()}, &why, "the data file"));
  EXPECT_EQ(why, "the data file " + (dir_ / "gone.csv").string() + " is gone (or not a file)");
  std::ofstream(dir_ / "a.json") << "{not json";
  EXPECT_FALSE(protocols_of_files({csv.string()}, &why));
  EXPECT_NE(why.find("the provenance of the data file " + csv.string() + " cannot be read"), std::string::npos) << why;
  EXPECT_FALSE(protocols_of_files({}, &why));
}

}  // namespace
}  // namespace carb
