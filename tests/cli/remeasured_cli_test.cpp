// `carb train --remeasured`: an independent re-measurement's spread added to the intervals, on the
// shipped CPU data and its repeat run; and what it refuses.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_run.hpp"

namespace {

using namespace carb_cli_test;

const std::string kData = std::string(CARB_SOURCE_DIR) + "/data/cpu-2t.csv";
const std::string kRepeat = std::string(CARB_SOURCE_DIR) + "/data/cpu-2t-repeat.csv";

double upper(const std::string& json) {
  return nlohmann::json::parse(json).at("predictions").at(0).at("latency_ms_upper").get<double>();
}

TEST(CliRemeasured, TheSpreadWidensTheIntervalsAndIsRecorded) {
  const CliRun plain = carb("train --data " + kData + " --out rm_plain --fast", "rm_plain");
  ASSERT_EQ(plain.status, 0) << plain.err;
  const CliRun t = carb("train --data " + kData + " --remeasured " + kRepeat + " --out rm_spread --fast", "rm_spread");
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("intervals add the spread of an independent re-measurement (490 configurations measured in "
                       "both runs; at 90%: latency_ms x1.2"),
            std::string::npos)
      << t.out;
  const std::string ask = " --family basic --depth 18 --width 0.5 --resolution 64 --batch 4 --precision fp32 "
                          "--confidence 0.9 --format json";
  const CliRun a = carb("predict --model rm_plain" + ask, "rm_predict_plain");
  const CliRun b = carb("predict --model rm_spread" + ask, "rm_predict_spread");
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_GT(upper(b.out), 1.1 * upper(a.out));
  const nlohmann::json man = nlohmann::json::parse(slurp(scratch().dir() / "rm_spread" / "manifest.json"));
  EXPECT_EQ(man.at("models").at("latency_ms").at("remeasured").at("pairs"), 490);
  EXPECT_EQ(man.at("extra").at("remeasured_files").size(), 1u);
}

TEST(CliRemeasured, OnlyAnotherRunOfTheSamePlatformIsTaken) {
  const CliRun same = carb("train --data " + kData + " --remeasured " + kData + " --out rm_same --fast", "rm_same");
  EXPECT_EQ(same.status, 1);
  EXPECT_NE(same.err.find("is given as the data and as the re-measurement"), std::string::npos) << same.err;
  const std::string other = std::string(CARB_SOURCE_DIR) + "/data/cpu-1t.csv";
  const CliRun plat = carb("train --data " + kData + " --remeasured " + other + " --out rm_other --fast", "rm_other");
  EXPECT_EQ(plat.status, 1);
  EXPECT_NE(plat.err.find(": the re-measurement is of platform 'cpu-1t', the data of 'cpu-2t'"), std::string::npos)
      << plat.err;
  EXPECT_FALSE(fs::exists(scratch().dir() / "rm_other"));
  // Seventy-fifth hostile pass: a round the data combines passed as an independent run.
  const CliRun round = carb("train --data " + kData + " --remeasured " + std::string(CARB_SOURCE_DIR) +
                                "/data/cpu-2t-round1.csv --out rm_round --fast",
                            "rm_round");
  EXPECT_EQ(round.status, 1);
  EXPECT_NE(round.err.find("cpu-2t-round1.csv is one of the rounds"), std::string::npos) << round.err;
  // Ninety-fourth hostile pass: the same files in a folder not named data/ (the combine recorded the
  // rounds' paths as typed, and no hash) passed. The round's own provenance, copied into the
  // combine's, names the export that wrote it.
  fs::create_directories(scratch().dir() / "rm_archive");
  for (const char* f : {"cpu-2t.csv", "cpu-2t.json", "cpu-2t-round1.csv", "cpu-2t-round1.json"})
    fs::copy_file(std::string(CARB_SOURCE_DIR) + "/data/" + f, scratch().dir() / "rm_archive" / f,
                  fs::copy_options::overwrite_existing);
  const CliRun moved = carb("train --data rm_archive/cpu-2t.csv --remeasured rm_archive/cpu-2t-round1.csv "
                            "--out rm_moved --fast", "rm_moved");
  EXPECT_EQ(moved.status, 1) << moved.out;
  EXPECT_NE(moved.err.find("cpu-2t-round1.csv is one of the rounds"), std::string::npos) << moved.err;
  EXPECT_FALSE(fs::exists(scratch().dir() / "rm_moved"));
  // Nor may --out (with --force) hold the re-measurement: it was moved away, and the bundle
  // recorded a file that was gone.
  fs::create_directories(scratch().dir() / "rm_holds");
  fs::copy_file(kRepeat, scratch().dir() / "rm_holds" / "again.csv", fs::copy_options::overwrite_existing);
  const CliRun holds = carb("train --data " + kData + " --remeasured rm_holds/again.csv --out rm_holds --force --fast",
                            "rm_holds");
  EXPECT_EQ(holds.status, 1) << holds.out;
  EXPECT_TRUE(fs::exists(scratch().dir() / "rm_holds" / "again.csv"));
  const CliRun drift = carb("train --data " + kData + " --remeasured " + kRepeat + " --drift-correct --out rm_drift",
                            "rm_drift");
  EXPECT_EQ(drift.status, 1);
  EXPECT_NE(drift.err.find("--remeasured with --drift-correct is not implemented"), std::string::npos) << drift.err;
}

// The same pass: another protocol's warning was printed twice, and a re-measurement of 20-98
// configurations left 99% unbounded with a note that blamed the training rows.
TEST(CliRemeasured, WhatItCannotBoundIsSaidOnceAndNamed) {
  std::string head;
  {
    std::ifstream in(kRepeat);
    std::string line;
    for (int i = 0; i < 31 && std::getline(in, line); ++i) head += line + "\n";  // 30 configurations
  }
  write_file("rm_thirty.csv", head);
  const CliRun t = carb("train --data " + kData + " --remeasured rm_thirty.csv --out rm_thirty --fast", "rm_thirty");
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.err.find("cannot bound the 99% level"), std::string::npos) << t.err;
  const CliRun p = carb("predict --model rm_thirty --family basic --depth 18 --width 0.5 --resolution 64 --batch 4 "
                        "--precision fp32 --confidence 0.99", "rm_thirty_predict");
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE((p.out + p.err).find("the re-measurement that calibrated its spread has 30 configurations, too few"),
            std::string::npos) << p.out << p.err;
  const std::string quiet = std::string(CARB_SOURCE_DIR) + "/data/extra/cpu-2t-quiet-repeat.csv";
  const CliRun q = carb("train --data " + kData + " --remeasured " + quiet + " --out rm_quiet --fast", "rm_quiet");
  ASSERT_EQ(q.status, 0) << q.err;
  const std::string w = "the re-measurement was measured under protocol";
  const auto first = q.err.find(w);
  ASSERT_NE(first, std::string::npos) << q.err;
  EXPECT_EQ(q.err.find(w, first + 1), std::string::npos) << q.err;
}

}  // namespace
