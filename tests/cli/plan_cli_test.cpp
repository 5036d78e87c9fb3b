// `carb plan` as a command: a plan is written and read back, respects --exclude and a budget; bad
// input exits non-zero with one line naming the problem; --out never overwrites an input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <thread>

#include <filesystem>
#include <fstream>
#include <set>
#include <vector>
#include <string>

#include "analysis/synthetic_datasets.hpp"
#include "carb/dataset.hpp"
#include "carb/plan.hpp"
#include "cli/cli_run.hpp"
#include "cli/large_space.hpp"
#include "profile/carb_process.hpp"

namespace {

using namespace carb_cli_test;
namespace fs = std::filesystem;

// A model bundle and candidates around its training grid, written once per test process.
void prepare() {
  static const bool done = [] {
    carb::testing::synthetic_source_model().save(scratch().dir() / "plan_model");
    std::vector<carb::Config> cands;
    for (int d : {10, 18, 26, 34})
      for (int r : {32, 48, 64})
        for (int b : {1, 8, 32})
          cands.push_back({carb::Family::basic, d, 0.75, r, b, carb::Precision::fp32});
    std::ofstream out(scratch().dir() / "plan_candidates.csv");
    carb::write_configs_csv(cands, out);
    write_file("plan_measured.csv", "family,depth,width,resolution,batch,precision\nbasic,26,0.75,48,8,fp32\n"
                                    "basic,10,0.75,32,1,fp32\n");
    return true;
  }();
  (void)done;
}

std::set<std::string> keys(const std::vector<carb::Config>& cs) {
  std::set<std::string> k;
  for (const auto& c : cs) k.insert(carb::config_key(c));
  return k;
}

TEST(PlanCli, WritesAPlanThatSkipsTheMeasuredAndKeepsToTheBudget) {
  prepare();
  const CliRun r = carb_cli_test::carb("plan --model plan_model --configs plan_candidates.csv --exclude plan_measured.csv --count 10 "
                        "--out plan_a.csv",
                        "plan_a");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("planned 10 of 36 configurations (2 measured or trained on)"), std::string::npos) << r.out;
  // What the predicted time leaves out is said (hundred-and-seventeenth hostile pass).
  EXPECT_NE(r.out.find("building each network and the profiler's own work per configuration are not counted"),
            std::string::npos) << r.out;
  const CliRun built = carb_cli_test::carb("plan --model plan_model --configs plan_candidates.csv --count 3 --build-s 1 "
                                           "--out plan_built.csv", "plan_built");
  ASSERT_EQ(built.status, 0) << built.err;
  EXPECT_EQ(built.out.find("are not counted"), std::string::npos) << built.out;
  const auto planned = carb::read_plan_csv(scratch().dir() / "plan_a.csv");
  ASSERT_EQ(planned.size(), 10u);
  EXPECT_EQ(keys(planned).size(), 10u);
  for (const auto& m : carb::read_configs_csv(scratch().dir() / "plan_measured.csv"))
    EXPECT_FALSE(keys(planned).count(carb::config_key(m)));

  // Thirty-third hostile pass: rows of another platform were counted as measured for this model's plan.
  write_file("plan_measured_two.csv", "platform,family,depth,width,resolution,batch,precision\n"
                                      "synthetic-a,basic,26,0.75,48,8,fp32\nother,basic,10,0.75,32,1,fp32\n");
  const CliRun two = carb_cli_test::carb("plan --model plan_model --configs plan_candidates.csv --exclude "
                                         "plan_measured_two.csv --count 10 --out plan_two.csv",
                                         "plan_two");
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_NE(two.out.find("(1 measured or trained on)"), std::string::npos) << two.out;
  EXPECT_NE(two.err.find("1 row of plan_measured_two.csv (platform 'other') is not of the model's platform"),
            std::string::npos) << two.err;

  const CliRun b = carb_cli_test::carb("plan --model plan_model --configs plan_candidates.csv --budget-s 20 --strategy "
                        "uncertainty-per-cost --out plan_b.csv",
                        "plan_b");
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out.find(" the model trained on) by uncertainty-per-cost"), std::string::npos) << b.out;
  std::ifstream in(scratch().dir() / "plan_b.csv");
  std::string line, last;
  while (std::getline(in, line)) last = line;
  std::vector<std::string> cells;  // ..., cumulative_cost_s, distance, outside
  for (std::size_t at = 0, end = 0; end != std::string::npos; at = end + 1) {
    end = last.find(',', at);
    cells.push_back(last.substr(at, end == std::string::npos ? end : end - at));
  }
  ASSERT_GE(cells.size(), 3u) << last;
  const double cumulative = std::stod(cells[cells.size() - 3]);
  EXPECT_LE(cumulative, 20.0) << last;
  EXPECT_GT(cumulative, 0.0) << last;

  // A row far past the grid, predicted to take more than an hour to measure, is named (a hostile tester).
  write_file("plan_huge.csv", "family,depth,width,resolution,batch,precision\nbasic,200,8,1024,4096,fp32\n"
                              "basic,10,0.75,32,1,fp32\n");
  const CliRun huge = carb_cli_test::carb("plan --model plan_model --configs plan_huge.csv --count 2 --out plan_h.csv",
                                          "plan_h");
  ASSERT_EQ(huge.status, 0) << huge.err;
  EXPECT_NE(huge.out.find("note: 1 of the 2 planned rows is predicted to take more than an hour to measure ("
                          "basic-200-w8-r1024-b4096-fp32, "),
            std::string::npos) << huge.out;
  EXPECT_NE(huge.out.find("or give --budget-s to keep the plan within a time"), std::string::npos) << huge.out;
  const CliRun budget = carb_cli_test::carb("plan --model plan_model --configs plan_huge.csv --budget-s 1e12 --out "
                                            "plan_hb.csv", "plan_hb");
  ASSERT_EQ(budget.status, 0) << budget.err;
  EXPECT_NE(budget.out.find("or lower --budget-s"), std::string::npos) << budget.out;
  EXPECT_EQ(two.out.find("more than an hour"), std::string::npos) << two.out;

  const CliRun fill = carb_cli_test::carb("plan --preset tiny --count 4 --out plan_c.csv", "plan_c");
  ASSERT_EQ(fill.status, 0) << fill.err;
  EXPECT_NE(fill.out.find("stratified"), std::string::npos) << fill.out;
  EXPECT_NE(fill.out.find("(0 already measured)"), std::string::npos) << fill.out;
  EXPECT_EQ(carb::read_plan_csv(scratch().dir() / "plan_c.csv").size(), 4u);

  // A plan carb wrote is planned over; one edited by hand since is kept unless --force.
  const CliRun again = carb_cli_test::carb("plan --preset tiny --count 3 --out plan_c.csv", "plan_c_again");
  ASSERT_EQ(again.status, 0) << again.err;
  {
    std::ofstream(scratch().dir() / "plan_c.csv", std::ios::app) << "basic,10,0.25,32,8,fp32,4,mine,,,,,,,\n";
  }
  const CliRun edited = carb_cli_test::carb("plan --preset tiny --count 3 --out plan_c.csv", "plan_c_edited");
  EXPECT_NE(edited.status, 0);
  EXPECT_NE(edited.err.find("plan_c.csv was changed since carb wrote it"), std::string::npos) << edited.err;
  EXPECT_EQ(carb::read_plan_csv(scratch().dir() / "plan_c.csv").size(), 4u) << "the edit is kept";
  const CliRun forced = carb_cli_test::carb("plan --preset tiny --count 3 --out plan_c.csv --force", "plan_c_forced");
  ASSERT_EQ(forced.status, 0) << forced.err;
  EXPECT_EQ(carb::read_plan_csv(scratch().dir() / "plan_c.csv").size(), 3u);
}

// Fifteenth hostile pass: the README says every subcommand takes --format json; plan did not.
TEST(PlanCli, FormatJsonIsOneDocumentThatAgreesWithThePlanCsv) {
  prepare();
  const CliRun r = carb_cli_test::carb("plan --model plan_model --configs plan_candidates.csv --count 4 --out plan_j.csv "
                                       "--format json",
                                       "plan_j");
  ASSERT_EQ(r.status, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["planned"], 4);
  EXPECT_EQ(j["candidates"], 36);
  EXPECT_EQ(j["strategy"], "uncertainty");
  EXPECT_EQ(j["out"], "plan_j.csv");
  const auto planned = carb::read_plan_csv(scratch().dir() / "plan_j.csv");
  ASSERT_EQ(j["rows"].size(), planned.size());
  double cost = 0;
  for (std::size_t k = 0; k < planned.size(); ++k) {
    EXPECT_EQ(j["rows"][k]["rank"], k + 1);
    EXPECT_EQ(j["rows"][k]["batch"], planned[k].batch);
    EXPECT_EQ(j["rows"][k]["depth"], planned[k].depth);
    cost += j["rows"][k]["cost_s"].get<double>();
  }
  EXPECT_NEAR(j["predicted_cost_s"].get<double>(), cost, 1e-9 * cost);
}

TEST(PlanCli, BadInputExitsNonZeroWithOneLineNamingIt) {
  prepare();
  write_file("plan_notes.txt", "mine\n");
  const std::pair<const char*, const char*> cases[] = {
      {"plan --preset nope --count 3 --out p.csv", "nope"},
      {"plan --model no_such_model --preset tiny --count 3 --out p.csv", "no_such_model"},
      {"plan --preset tiny --count 0 --out p.csv", "count"},
      {"plan --preset tiny --count 2.5 --out p.csv", "count"},
      {"plan --model plan_model --preset tiny --budget-s nan --out p.csv", "budget-s"},
      {"plan --model plan_model --preset tiny --budget-s -3 --out p.csv", "budget-s"},
      {"plan --preset tiny --out p.csv", "--count"},
      {"plan --preset tiny --count 3", "--out"},
      {"plan --preset tiny --count 3 --strategy uncertainty --out p.csv", "--model"},
      {"plan --preset tiny --budget-s 10 --out p.csv", "--model"},
      {"plan --preset tiny --count 3 --strategy greedy --out p.csv", "greedy"},
      {"plan --preset tiny --count 3 --exclude plan_measured.csv --out plan_measured.csv", "input"},
      {"plan --configs plan_candidates.csv --count 3 --out plan_candidates.csv", "input"},
      {"plan --preset tiny --count 3 --out plan_notes.txt", "plan_notes.txt"},
      {"plan --preset tiny --count 3 --out no_dir/p.csv", "no_dir"},
      // Eighth hostile pass: every candidate excluded wrote a header-only plan (exit 0) that
      // `profile --plan` then refused, over an earlier plan.
      {"plan --configs plan_candidates.csv --exclude plan_candidates.csv --count 3 --out p.csv", "nothing to plan"},
      // Ninety-seventh hostile pass: taken silently (train, evaluate, report and combine refuse it).
      {"plan --preset tiny --count 3 --exclude plan_measured.csv ./plan_measured.csv --out p.csv", "given twice"},
      // ... and a flag the strategy ignores, given at its default value (the library sees values only).
      {"plan --preset tiny --count 3 --diversity 1 --out p.csv", "--diversity"},
      {"plan --preset tiny --count 3 --spread units --out p.csv", "--spread"},
  };
  const std::string measured_before = slurp(scratch().dir() / "plan_measured.csv");
  int k = 0;
  for (const auto& [args, mention] : cases) {
    const CliRun r = carb_cli_test::carb(args, "plan_bad" + std::to_string(k++));
    SCOPED_TRACE(std::string("carb ") + args + "\nstderr: " + r.err);
    EXPECT_NE(r.status, 0);
    EXPECT_LT(r.status, 64) << "a crash is not an error message";
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "exactly one line";
    EXPECT_NE(r.err.find(mention), std::string::npos) << "should mention " << mention;
  }
  EXPECT_FALSE(fs::exists(scratch().dir() / "p.csv")) << "refused before writing anything";
  EXPECT_EQ(slurp(scratch().dir() / "plan_measured.csv"), measured_before);
  EXPECT_EQ(slurp(scratch().dir() / "plan_notes.txt"), "mine\n");
}

// A plan that takes a while says how far it has come, and SIGINT/SIGTERM stop it with nothing
// written (ninety-sixth hostile pass: a 40-second plan died by the signal without a word; the
// nineteenth session's list: a space-filling plan of 50,000 rows chose for half a minute silently).
TEST(PlanCli, ALongPlanShowsProgressAndASignalStopsItWritingNothing) {
  std::vector<carb::Config> cands;  // 40,000 distinct: choosing all of them takes many seconds
  for (int depth = 10; depth <= 28; depth += 2)
    for (int w = 1; w <= 10; ++w)
      for (int r = 0; r < 20; ++r)
        for (int batch = 1; batch <= 20; ++batch)
          cands.push_back({carb::Family::basic, depth, 0.25 * w, 32 + 8 * r, batch, carb::Precision::fp32});
  ASSERT_EQ(cands.size(), 40000u);
  const fs::path dir = scratch().dir();
  {
    std::ofstream out(dir / "long_candidates.csv");
    carb::write_configs_csv(cands, out);
  }
  const fs::path err = dir / "long_plan.err";
  const pid_t pid = carb::test::spawn_carb({"plan", "--configs", (dir / "long_candidates.csv").string(), "--count",
                                            "40000", "--strategy", "space-filling", "--out",
                                            (dir / "long_plan.csv").string()},
                                           dir / "long_plan.out", err);
  ASSERT_GT(pid, 0);
  const auto t0 = std::chrono::steady_clock::now();
  while (slurp(err).find("carb plan: ") == std::string::npos && !carb::test::has_ended(pid) &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::string shown = slurp(err);
  ASSERT_NE(shown.find("carb plan: "), std::string::npos) << "no progress within the plan's first seconds: " << shown;
  EXPECT_NE(shown.find(" of at most 40000 rows chosen\n"), std::string::npos) << shown;  // a log's line (not a terminal)
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  const int status = carb::test::wait_status(pid);
  ASSERT_TRUE(WIFEXITED(status)) << "plan died by the signal instead of stopping";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_NE(slurp(err).find("carb: plan interrupted by SIGINT; no plan was written; what was at --out is unchanged\n"),
            std::string::npos) << slurp(err);
  EXPECT_FALSE(fs::exists(dir / "long_plan.csv"));
  EXPECT_FALSE(fs::exists(dir / "long_plan.json"));
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".long_plan."), std::string::npos) << e.path();  // no temporaries
}

// While the model predicted the candidates, before the first row, Ctrl-C went unheard (a minute for
// 100,000 of them with a shipped model): progress is shown there too, and a signal stops it.
TEST(PlanCli, ASignalWhileTheModelScoresTheCandidatesStopsThePlan) {
  const fs::path dir = scratch().dir();
  write_large_space(dir / "scored_candidates.csv");
  carb::testing::synthetic_source_model().save(dir / "scored_model", true);
  const fs::path err = dir / "scored_plan.err";
  const pid_t pid = carb::test::spawn_carb({"plan", "--model", (dir / "scored_model").string(), "--configs",
                                            (dir / "scored_candidates.csv").string(), "--count", "5", "--out",
                                            (dir / "scored_plan.csv").string()},
                                           dir / "scored_plan.out", err);
  ASSERT_GT(pid, 0);
  const auto t0 = std::chrono::steady_clock::now();
  while (slurp(err).find("candidates predicted") == std::string::npos && !carb::test::has_ended(pid) &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::string shown = slurp(err);
  ASSERT_NE(shown.find("candidates predicted (uncertainty)\n"), std::string::npos) << "no progress while scoring: " << shown;
  EXPECT_EQ(shown.find("rows chosen"), std::string::npos) << shown;  // still scoring when it was told
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  const int status = carb::test::wait_status(pid);
  ASSERT_TRUE(WIFEXITED(status)) << "plan died by the signal instead of stopping";
  EXPECT_EQ(WEXITSTATUS(status), 130) << slurp(err);
  EXPECT_NE(slurp(err).find("carb: plan interrupted by SIGINT; no plan was written; what was at --out is unchanged\n"),
            std::string::npos) << slurp(err);
  EXPECT_EQ(slurp(err).find("rows chosen"), std::string::npos) << slurp(err);  // stopped before the choosing
  EXPECT_FALSE(fs::exists(dir / "scored_plan.csv"));
}

}  // namespace
