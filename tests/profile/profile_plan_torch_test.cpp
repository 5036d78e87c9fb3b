// `carb profile --plan`: the cpu backend measures a plan's configurations in the plan's order,
// a rerun resumes (measures nothing twice), and a run under another protocol than the plan was
// priced for is measured as asked, with a warning that the plan's costs are not its own.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "carb/plan.hpp"
#include "carb_process.hpp"
#include "temp_dir_test.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

class ProfilePlan : public TempDirTest {
 protected:
  ProfilePlan() : TempDirTest("carb_profile_plan_") {}
};

TEST_F(ProfilePlan, MeasuresInThePlansOrderAndResumes) {
  // A plan written as carb plan writes it, in an order unlike the tiny preset's (batch ascending).
  const fs::path plan = dir_ / "plan.csv", db = dir_ / "store.db";
  std::ofstream(plan) << "family,depth,width,resolution,batch,precision,rank,strategy\n"
                         "basic,10,0.25,32,8,fp32,1,uncertainty\n"
                         "basic,10,0.25,32,1,fp32,2,uncertainty\n"
                         "basic,10,0.25,32,4,fp32,3,uncertainty\n";
  const std::vector<std::string> args = {"profile", "--plan",     plan.string(), "--threads", "1",  "--warmup", "0",
                                         "--min-passes", "2", "--max-passes", "2", "--cooldown", "0", "--quiet",
                                         "--db", db.string()};
  const test::Finished first = test::run_carb(args, dir_, "first");
  ASSERT_EQ(first.status, 0) << first.err;
  const auto order = test::query_store(db, "SELECT config_key FROM measurements ORDER BY id");
  EXPECT_EQ(order, (std::vector<std::string>{"basic-10-w0.25-r32-b8-fp32", "basic-10-w0.25-r32-b1-fp32",
                                             "basic-10-w0.25-r32-b4-fp32"}));
  const test::Finished again = test::run_carb(args, dir_, "again");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("3 already done"), std::string::npos) << again.out;
  EXPECT_EQ(test::stored_rows(db), 3);

  // A plan together with a preset is a contradiction; a file without a rank column is not a plan.
  const test::Finished both = test::run_carb({"profile", "--plan", plan.string(), "--preset", "tiny", "--db",
                                              (dir_ / "other.db").string()},
                                             dir_, "both");
  EXPECT_NE(both.status, 0);
  EXPECT_NE(both.err.find("--plan"), std::string::npos) << both.err;
  const fs::path configs = dir_ / "configs.csv";
  std::ofstream(configs) << "family,depth,width,resolution,batch,precision\nbasic,10,0.25,32,8,fp32\n";
  const test::Finished not_plan =
      test::run_carb({"profile", "--plan", configs.string(), "--db", (dir_ / "other.db").string()}, dir_, "notplan");
  EXPECT_NE(not_plan.status, 0);
  EXPECT_NE(not_plan.err.find("not a plan"), std::string::npos) << not_plan.err;
  EXPECT_FALSE(fs::exists(dir_ / "other.db"));
}

// Hostile tester: a plan priced for one protocol was measured under another without a word.
TEST_F(ProfilePlan, ARunUnderAnotherProtocolThanThePlansIsMeasuredWithAWarning) {
  Plan p;
  p.strategy = PlanStrategy::uncertainty;
  p.rows = {{{Family::basic, 10, 0.25, 32, 2, Precision::fp32}, 1, 0.1, 1.0, 0.1, 0.4, {}}};
  p.platform = "cpu-1t", p.priced = true, p.backend = "cpu";
  p.protocol.warmup = 3, p.protocol.min_passes = 2, p.protocol.max_passes = 2, p.protocol.cooldown_s = 0;
  const fs::path plan = dir_ / "priced.csv";
  write_plan_csv(p, plan);
  const auto args = [&](const std::string& warmup, const std::string& db) {
    return std::vector<std::string>{"profile", "--plan", plan.string(), "--threads", "1", "--warmup", warmup,
                                    "--min-passes", "2", "--max-passes", "2", "--cooldown", "0", "--quiet",
                                    "--no-meter-check", "--db", (dir_ / db).string()};
  };
  const test::Finished same = test::run_carb(args("3", "same.db"), dir_, "same");
  ASSERT_EQ(same.status, 0) << same.err;
  EXPECT_EQ(same.err.find("warning"), std::string::npos) << same.err;
  const test::Finished other = test::run_carb(args("0", "other.db"), dir_, "other");
  ASSERT_EQ(other.status, 0) << other.err;
  EXPECT_NE(other.err.find("costs were predicted for --warmup 3 (this run: 0)"), std::string::npos) << other.err;
  EXPECT_EQ(test::stored_rows(dir_ / "other.db"), 1);
}

}  // namespace
}  // namespace carb
