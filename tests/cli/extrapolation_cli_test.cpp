// Tests of `carb predict` past the trained ranges through the binary (issue 14): the table, CSV and
// JSON name the dimension, and the interval is unbounded for a precision never trained.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "carb/dataset.hpp"
#include "carb/network_spec.hpp"
#include "learn/memory_floor.hpp"
#include "cli/cli_run.hpp"

namespace {

using namespace carb_cli_test;
using carb_cli_test::carb;  // the helper, not namespace carb
using ::carb::Family, ::carb::NetworkSpec, ::carb::Precision, ::carb::network_totals;

// A small dataset whose costs are a formula of the configuration (test data, never a measurement).
std::string formula_dataset_csv() {
  std::string csv =
      "platform,family,depth,width,resolution,batch,precision,status,latency_ms,energy_j,peak_memory_mb,"
      "avg_sm_util,avg_mem_util\n";
  for (int depth : {10, 18, 26})
    for (const char* width : {"0.25", "0.5", "1"})
      for (int res : {32, 64})
        for (int batch : {1, 4, 16}) {
          const double w = std::stod(width);
          // Above the weights and input, which every measured peak holds (data validate checks it).
          const NetworkSpec net = network_totals({Family::basic, depth, w, res, batch, Precision::fp32});
          const double memory = static_cast<double>(net.param_bytes() + net.input_bytes()) / 1e6 + 2 + depth * w +
                                0.01 * batch * res;
          csv += "synthetic,basic," + std::to_string(depth) + "," + width + "," + std::to_string(res) + "," +
                 std::to_string(batch) + ",fp32,ok," + std::to_string(0.1 * depth * w * res * (1 + batch)) + ",," +
                 std::to_string(memory) + ",,\n";
        }
  return csv;
}

class CliExtrapolation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    write_file("ex_data.csv", formula_dataset_csv());
    const CliRun r = carb("train --data ex_data.csv --out ex_model --trees 8 --folds 2 --threads 1", "ex_train");
    ASSERT_EQ(r.status, 0) << r.err;
  }
};

TEST_F(CliExtrapolation, TheTableNamesWhatLiesOutsideTheTrainedRanges) {
  const CliRun in = carb("predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4", "ex_in");
  ASSERT_EQ(in.status, 0) << in.err;
  EXPECT_EQ(in.out.find("outside the trained ranges"), std::string::npos) << in.out;
  const CliRun out = carb("predict --model ex_model --depth 18 --width 0.5 --resolution 224 --batch 4", "ex_out");
  ASSERT_EQ(out.status, 0) << out.err;
  EXPECT_NE(out.out.find("outside the trained ranges"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("resolution 224 > 64 trained"), std::string::npos) << out.out;
  const CliRun csv =
      carb("predict --model ex_model --depth 18 --width 0.5 --resolution 224 --batch 4 --format csv", "ex_csv");
  ASSERT_EQ(csv.status, 0) << csv.err;
  // Resolution 224 is past the ranges, but the network itself was measured (at 64 px).
  EXPECT_NE(csv.out.find(",trained_architecture,outside\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",true,resolution 224 > 64 trained"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("resolution 224 > 64 trained"), std::string::npos) << csv.out;
  // Thirty-third hostile pass: the bounds' columns did not say their coverage; a column does now.
  EXPECT_EQ(csv.out.find("confidence"), std::string::npos) << csv.out;  // no bounds, no level
  const CliRun lv = carb(
      "predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4 --confidence 0.8 --format csv",
      "ex_csv_level");
  ASSERT_EQ(lv.status, 0) << lv.err;
  EXPECT_NE(lv.out.find("_upper,confidence,trained_architecture,outside\n"), std::string::npos) << lv.out;
  EXPECT_NE(lv.out.find(",0.8,true,\n"), std::string::npos) << lv.out;
}

// Tenth hostile pass: a valid configuration far past the trained ranges (weeks per batch, as the
// estimate extrapolates) was refused as a damaged bundle, failing every row of the command. Past
// the ranges an answer beyond the plausible bounds is a flagged guess; inside them it is refused.
TEST_F(CliExtrapolation, AFarExtrapolationBeyondThePlausibleBoundsIsAFlaggedGuess) {
  const CliRun far = carb("predict --model ex_model --family bottleneck --depth 302 --width 8 --resolution 1024 "
                          "--batch 4096 --format json", "ex_far");
  ASSERT_EQ(far.status, 0) << far.err;
  const auto j = nlohmann::json::parse(far.out);
  EXPECT_GT(j["predictions"][0]["latency_ms"].get<double>(), 1e7) << far.out;
  EXPECT_FALSE(j["predictions"][0]["outside"].empty()) << far.out;
}

TEST_F(CliExtrapolation, JsonCarriesTheExcursionsAndAnUnboundedIntervalForAnUntrainedPrecision) {
  const CliRun r = carb(
      "predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4 --precision bf16 --confidence 0.9 "
      "--format json",
      "ex_json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& p = j.at("predictions").at(0);
  ASSERT_FALSE(p.at("outside").empty());
  EXPECT_EQ(p["outside"][0]["dimension"], "precision");
  EXPECT_TRUE(p["outside"][0]["log_ratio"].is_null());
  // JSON has no infinity: nlohmann writes it as null, which says "no bound".
  EXPECT_TRUE(p.at("latency_ms_upper").is_null()) << p.dump();
  // Seventeenth hostile pass: unbounded above, memory still cannot be below the weights and input
  // (the lower end was 0); it stops at the least peak a measurement may have, 0.1% under them: under
  // the layer outputs alive at once too, as every row this model trained on peaked above them.
  const double floor = carb::memory_alive_mb({Family::basic, 18, 0.5, 64, 4, Precision::bf16});
  EXPECT_NEAR(p.at("peak_memory_mb_lower").get<double>(), carb::kMinMemoryOverNetwork * floor, 1e-9 * floor) << p.dump();
}

// Seventeenth hostile pass: --confidence 0.5 answered the 0.8 interval and called it 50% (the bundle
// calibrates 0.8, 0.9, 0.95 and 0.99; a level between them took the next one up). Refused now.
TEST_F(CliExtrapolation, AConfidenceTheBundleDoesNotCalibrateIsRefused) {
  for (const char* level : {"0.5", "0.85", "0.96"}) {
    const CliRun r = carb(std::string("predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4 "
                                      "--confidence ") + level, "ex_level");
    EXPECT_NE(r.status, 0) << level << ": " << r.out;
    EXPECT_NE(r.err.find("0.8|0.9|0.95|0.99"), std::string::npos) << r.err;
  }
  const CliRun ok = carb("predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4 --confidence 0.95",
                         "ex_level_ok");
  EXPECT_EQ(ok.status, 0) << ok.err;
  // Twenty-sixth hostile pass: the bounds did not say at what level they were.
  EXPECT_NE(ok.out.find("[95% interval]"), std::string::npos) << ok.out;
  const CliRun json = carb("predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4 --confidence 0.95 "
                           "--format json", "ex_level_json");
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(json.out).at("confidence").get<double>(), 0.95) << json.out;
  const CliRun none = carb("predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4 --format json",
                           "ex_level_none");
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_TRUE(nlohmann::json::parse(none.out).at("confidence").is_null()) << none.out;
  EXPECT_EQ(none.out.find("interval"), std::string::npos);
}

// Seventeenth hostile pass: a level the model's rows cannot bound printed [0, inf] inside the trained
// ranges with nothing said. 54 rows cannot bound 99%: predict says why.
TEST_F(CliExtrapolation, AnUnboundedLevelInsideTheRangesIsExplained) {
  const CliRun r = carb("predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4 --confidence 0.99",
                        "ex_unbounded");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("too few training rows"), std::string::npos) << r.err;
  const CliRun bounded = carb("predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4 "
                              "--confidence 0.8", "ex_bounded");
  EXPECT_EQ(bounded.err.find("too few training rows"), std::string::npos) << bounded.err;
}

// Fifty-eighth hostile pass: outside the trained ranges an interval of [0, inf] was printed with no
// word of why (the outside column named the dimension, not the missing bound).
TEST_F(CliExtrapolation, AnUnboundedIntervalOutsideTheRangesIsExplained) {
  const CliRun r = carb("predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4 --precision bf16 "
                        "--confidence 0.9",
                        "ex_unbounded_outside");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("inf]"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("1 prediction outside the trained ranges has no upper bound at 90%"), std::string::npos)
      << r.err;
  const CliRun bounded = carb("predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4 "
                              "--confidence 0.8", "ex_bounded_outside");
  EXPECT_EQ(bounded.err.find("outside the trained ranges"), std::string::npos) << bounded.err;
}

// Depth 14 lies between the trained 10 and 18: inside the ranges, but a network never measured,
// whose interval is calibrated by holding whole architectures out (never narrower), and the note says so.
TEST_F(CliExtrapolation, AnArchitectureNeverTrainedIsSaidAndGetsTheWiderInterval) {
  const CliRun seen = carb("predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4 "
                           "--confidence 0.8 --format json", "ex_seen_arch");
  const CliRun novel = carb("predict --model ex_model --depth 14 --width 0.5 --resolution 64 --batch 4 "
                            "--confidence 0.8 --format json", "ex_novel_arch");
  ASSERT_EQ(seen.status, 0) << seen.err;
  ASSERT_EQ(novel.status, 0) << novel.err;
  EXPECT_EQ(seen.err.find("never trained on"), std::string::npos) << seen.err;
  EXPECT_NE(novel.err.find("1 of 1 configurations inside the trained ranges is of an architecture"), std::string::npos)
      << novel.err;
  EXPECT_NE(novel.err.find("calibrated by holding whole architectures out"), std::string::npos) << novel.err;
  const auto a = nlohmann::json::parse(seen.out), b = nlohmann::json::parse(novel.out);
  EXPECT_EQ(a["predictions"][0]["trained_architecture"], true) << seen.out;
  EXPECT_EQ(b["predictions"][0]["trained_architecture"], false) << novel.out;
  const auto log_width = [](const nlohmann::json& p) {
    const auto& x = p["predictions"][0];
    return std::log(x["latency_ms_upper"].get<double>() / x["latency_ms"].get<double>());
  };
  EXPECT_GE(log_width(b), log_width(a)) << seen.out << novel.out;
  // Each answered with its own width, as the bundle stores them (batch 4: the low-batch regime; the
  // formula has no per-network effect, so the two may be equal here: Conformal.* tells them apart).
  const auto man = nlohmann::json::parse(slurp(scratch().dir() / "ex_model" / "manifest.json"));
  const auto& lat = man["models"]["latency_ms"];
  EXPECT_NEAR(log_width(a), lat["conformal"]["low_batch"]["0.8"].get<double>(), 1e-9);
  EXPECT_NEAR(log_width(b), lat["conformal_unseen_architecture"]["widths"]["low_batch"]["0.8"].get<double>(), 1e-9);
  // 9 networks trained: a new one's 95% interval needs 19, and is unbounded, with the reason.
  const CliRun high = carb("predict --model ex_model --depth 14 --width 0.5 --resolution 64 --batch 4 --confidence 0.95",
                           "ex_novel_95");
  ASSERT_EQ(high.status, 0) << high.err;
  EXPECT_NE(high.out.find("inf]"), std::string::npos) << high.out;
  EXPECT_NE(high.err.find("a new network's 95% interval needs 19 trained networks, and the model has 9"), std::string::npos)
      << high.err;
  const CliRun trained95 = carb("predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4 --confidence 0.95",
                                "ex_seen_95");
  EXPECT_EQ(trained95.out.find("inf]"), std::string::npos) << trained95.out;
  // Without a confidence there is no interval to speak of, and no note; the table still marks the
  // new network, and only it.
  const CliRun plain = carb("predict --model ex_model --depth 14 --width 0.5 --resolution 64 --batch 4", "ex_novel_plain");
  EXPECT_EQ(plain.err.find("never trained on"), std::string::npos) << plain.err;
  EXPECT_NE(plain.out.find("network never measured"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("yes"), std::string::npos) << plain.out;
  const CliRun measured = carb("predict --model ex_model --depth 18 --width 0.5 --resolution 64 --batch 4", "ex_seen_plain");
  EXPECT_EQ(measured.out.find("never measured"), std::string::npos) << measured.out;
}

}  // namespace
