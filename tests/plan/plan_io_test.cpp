// The plan CSV: written and read back in its order, refused when it is not a plan or repeats a
// configuration; and the --out check that never lets a plan overwrite an input.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "carb/error.hpp"
#include "carb/plan.hpp"
#include "temp_dir_test.hpp"

namespace carb {
namespace {

class PlanIo : public TempDirTest {
 protected:
  PlanIo() : TempDirTest("carb_plan_io_") {}
  void write(const std::filesystem::path& f, const std::string& text) { std::ofstream(f) << text; }
  std::string read(const std::filesystem::path& f) {
    std::ifstream in(f);
    return {std::istreambuf_iterator<char>(in), {}};
  }
};

Plan three_rows() {
  Plan p;
  p.strategy = PlanStrategy::uncertainty;
  p.rows = {{{Family::bottleneck, 50, 1.0, 224, 8, Precision::fp32}, 3, 0.3, 120, 14, 0.5,
             {{"resolution", "resolution 224 > 128 trained", 0.56}}},
            {{Family::basic, 10, 0.25, 32, 1, Precision::bf16}, 2, 0.2, 1.2, 1.1, 0.4, {}},
            {{Family::basic, 18, 0.5, 64, 4, Precision::fp32}, 1, 0.1, 8, 2.0, 0.3, {}}};
  return p;
}

// Twenty-fourth hostile pass: a plan spent 90% of its budget on a configuration far past what the
// model trained on, priced from a guessed latency, without a word. Its "outside" column says so;
// plans written before the column are still plans.
TEST_F(PlanIo, ARowOutsideTheTrainedRangesSaysSoAndOlderPlansStillRead) {
  const auto f = dir_ / "plan.csv";
  write_plan_csv(three_rows(), f);
  const std::string text = read(f);
  EXPECT_NE(text.find(",distance,outside\n"), std::string::npos) << text;
  EXPECT_NE(text.find(",resolution 224 > 128 trained\n"), std::string::npos) << text;
  const auto j = three_rows().to_json();
  EXPECT_EQ(j["planned_outside"], 1);
  EXPECT_EQ(j["rows"][0]["outside"][0]["text"], "resolution 224 > 128 trained");
  EXPECT_TRUE(j["rows"][1]["outside"].empty());
  // A plan without the column (an earlier carb's) is read, and its --out is an earlier plan.
  std::string old;
  for (std::size_t at = 0, end; at < text.size(); at = end + 1) {
    end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    old += line.substr(0, line.rfind(',')) + "\n";
  }
  const auto g = dir_ / "old.csv";
  std::ofstream(g) << old;
  EXPECT_EQ(read_plan_csv(g).size(), 3u);
}

// A hostile tester: a row predicted to take 6.6 years to measure was planned first, with the outside
// note alone. The rows past an hour are counted (the CLI names the longest).
TEST_F(PlanIo, RowsPredictedToTakeMoreThanAnHourAreCounted) {
  Plan p = three_rows();
  EXPECT_TRUE(p.rows_longer_than(3600).empty());
  p.rows[1].cost_s = 2.1e8, p.rows[2].cost_s = std::nan("");  // an unknown cost is no longer than anything
  EXPECT_EQ(p.rows_longer_than(3600), (std::vector<std::size_t>{1}));
  EXPECT_EQ(p.rows_longer_than(10), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(p.to_json()["planned_over_an_hour"], 1);
}

TEST_F(PlanIo, RoundTripsInItsOrderWithTheScoresBeside) {
  const auto f = dir_ / "plan.csv";
  write_plan_csv(three_rows(), f);
  const auto back = read_plan_csv(f);
  ASSERT_EQ(back.size(), 3u);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(back[k], three_rows().rows[k].config);
  const std::string text = read(f);
  EXPECT_EQ(text.rfind("family,depth,width,resolution,batch,precision,rank,strategy,score,uncertainty,", 0), 0u);
  EXPECT_NE(text.find(",17.1,"), std::string::npos) << "the cumulative cost 14 + 1.1 + 2 is written:\n" << text;
}

TEST_F(PlanIo, RefusesAFileThatIsNotAPlanOrRepeatsARow) {
  const auto configs = dir_ / "configs.csv";
  write(configs, "family,depth,width,resolution,batch,precision\nbasic,10,0.25,32,1,fp32\n");
  EXPECT_THROW(read_plan_csv(configs), DataError);
  const auto twice = dir_ / "twice.csv";
  write(twice, "family,depth,width,resolution,batch,precision,rank\nbasic,10,0.25,32,1,fp32,1\n"
               "basic,10,0.25,32,1,fp32,2\n");
  EXPECT_THROW(read_plan_csv(twice), DataError);
  EXPECT_THROW(read_plan_csv(dir_ / "missing.csv"), DataError);
}

// Third hostile pass: ranks "abc", -7 or out of order were accepted and the file order measured;
// a plan of only its header "profiled 0 configurations".
TEST_F(PlanIo, RanksMustBeTheOrderAndAPlanMustPlanSomething) {
  const std::string head = "family,depth,width,resolution,batch,precision,rank\n";
  const auto f = dir_ / "p.csv";
  const auto error_of = [&](const std::string& text) -> std::string {
    write(f, text);
    try {
      read_plan_csv(f);
    } catch (const DataError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of(head + "basic,10,0.25,32,1,fp32,1\nbasic,10,0.25,32,2,fp32,2\n"), "");
  EXPECT_NE(error_of(head + "basic,10,0.25,32,1,fp32,2\nbasic,10,0.25,32,2,fp32,1\n").find(":2: rank is '2', expected 1"),
            std::string::npos);
  EXPECT_NE(error_of(head + "basic,10,0.25,32,1,fp32,abc\n").find("rank is 'abc'"), std::string::npos);
  EXPECT_NE(error_of(head + "basic,10,0.25,32,1,fp32,-7\n").find("rank is '-7'"), std::string::npos);
  EXPECT_NE(error_of(head).find("the plan has no configurations"), std::string::npos);
}

TEST_F(PlanIo, OutputNeverReplacesAnInputOrAFileCarbDidNotWriteAsAPlan) {
  const auto measured = dir_ / "measured.csv", model = dir_ / "model";
  write(measured, "family,depth,width,resolution,batch,precision\nbasic,10,0.25,32,1,fp32\n");
  std::filesystem::create_directories(model);
  EXPECT_THROW(check_plan_output(measured, {measured, model}, false), InputError);
  EXPECT_THROW(check_plan_output(measured, {measured}, true), InputError) << "not even with --force";
  EXPECT_THROW(check_plan_output(dir_ / "." / "measured.csv", {measured}, true), InputError);
  EXPECT_THROW(check_plan_output(model / "plan.csv", {model}, false), InputError);
  EXPECT_THROW(check_plan_output(dir_ / "nodir" / "plan.csv", {}, false), InputError);
  EXPECT_THROW(check_plan_output(model, {}, false), InputError) << "a directory";
  const auto other = dir_ / "notes.csv";
  write(other, "my,own,file\n");
  EXPECT_THROW(check_plan_output(other, {measured}, false), InputError);
  EXPECT_NO_THROW(check_plan_output(other, {measured}, true));
  const auto plan = dir_ / "plan.csv";
  EXPECT_NO_THROW(check_plan_output(plan, {measured, model}, false));
  write_plan_csv(three_rows(), plan);
  EXPECT_NO_THROW(check_plan_output(plan, {measured, model}, false)) << "an earlier plan is replaced";
  EXPECT_EQ(read(measured), "family,depth,width,resolution,batch,precision\nbasic,10,0.25,32,1,fp32\n");
  // Seventh hostile pass: with --force a plan replaced an input's provenance sidecar.
  write(dir_ / "measured.json", "{\"kind\": \"carb dataset\"}");
  EXPECT_THROW(check_plan_output(dir_ / "measured.json", {measured}, true), InputError);
  EXPECT_EQ(read(dir_ / "measured.json"), "{\"kind\": \"carb dataset\"}");
}

// Fifteenth-pass leftover: a plan edited by hand (a row struck out, the order changed) was planned
// over without a word. The sidecar records the plan's hash; an edited plan, or one without its
// sidecar, needs --force.
TEST_F(PlanIo, APlanEditedSinceCarbWroteItIsNotReplacedWithoutForce) {
  const auto plan = dir_ / "plan.csv";
  write_plan_csv(three_rows(), plan, "carb plan --count 3");
  const std::string sidecar = read(dir_ / "plan.json");
  EXPECT_NE(sidecar.find("\"kind\": \"carb plan\""), std::string::npos) << sidecar;
  EXPECT_NE(sidecar.find("\"command\": \"carb plan --count 3\""), std::string::npos) << sidecar;
  EXPECT_NE(sidecar.find("csv_fnv1a64"), std::string::npos) << sidecar;
  EXPECT_NO_THROW(check_plan_output(plan, {}, false));
  std::string text = read(plan);
  text.erase(text.find("\nbasic,10,"), text.find('\n', text.find("\nbasic,10,") + 1) - text.find("\nbasic,10,"));
  write(plan, text);  // one row struck out by hand
  try {
    check_plan_output(plan, {}, false);
    ADD_FAILURE() << "an edited plan was accepted as --out";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("was changed since carb wrote it"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(check_plan_output(plan, {}, true));
  std::filesystem::remove(dir_ / "plan.json");
  try {
    check_plan_output(plan, {}, false);
    ADD_FAILURE() << "a plan without its sidecar was accepted as --out";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a plan CSV without its provenance file"), std::string::npos) << e.what();
  }
  write(dir_ / "notes.json", "my notes");  // the sidecar path holds someone's file
  EXPECT_THROW(check_plan_output(dir_ / "notes.csv", {}, false), InputError);
  EXPECT_THROW(check_plan_output(dir_ / "plan.txt", {}, true), InputError) << "a plan is a .csv";
}

}  // namespace
}  // namespace carb
