// What a plan was planned for travels in its sidecar, and a run that departs from it is told so:
// another protocol, backend or platform, a build time counted once per architecture for a run that
// rebuilds, a plan or sidecar edited since carb wrote them (hostile tester: `carb profile --plan`
// measured a plan priced for another protocol, or edited by hand, without a word).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "carb/dataset.hpp"
#include "carb/model.hpp"
#include "carb/plan.hpp"
#include "carb/training.hpp"
#include "temp_dir_test.hpp"

namespace carb {
namespace {

class PlanPricing : public TempDirTest {
 protected:
  PlanPricing() : TempDirTest("carb_plan_pricing_") {}

  // A priced two-row plan, as make_plan fills it for a model of platform cpu-2t.
  static Plan priced(const std::string& backend = "cpu") {
    Plan p;
    p.strategy = PlanStrategy::uncertainty;
    p.rows = {{{Family::basic, 10, 0.25, 32, 1, Precision::fp32}, 2, 0.2, 1.2, 1.1, 0.4, {}},
              {{Family::basic, 18, 0.5, 64, 4, Precision::fp32}, 1, 0.1, 8, 2.0, 0.3, {}}};
    p.platform = "cpu-2t", p.priced = true, p.backend = backend;
    p.protocol.warmup = 5, p.protocol.max_timed_s = 0.5, p.protocol.cooldown_s = 2;
    p.protocol.util_sample = 0.2;
    return p;
  }
  std::filesystem::path written(const Plan& p) {
    const auto f = dir_ / "plan.csv";
    write_plan_csv(p, f);
    return f;
  }
  static std::string joined(const std::vector<std::string>& lines) {
    std::string all;
    for (const auto& l : lines) all += l + "\n";
    return all;
  }
};

TEST_F(PlanPricing, TheRunThePlanWasPricedForDepartsFromNothing) {
  const Plan p = priced();
  const auto f = written(p);
  EXPECT_TRUE(plan_departures(f, p.protocol, "cpu", "cpu-2t", true).empty())
      << joined(plan_departures(f, p.protocol, "cpu", "cpu-2t", true));
  // The sidecar records it, with integers as integers and yes/no as yes/no.
  std::ifstream in(dir_ / "plan.json");
  const auto side = nlohmann::json::parse(in);
  EXPECT_EQ(side["planned_for"]["platform"], "cpu-2t");
  EXPECT_EQ(side["planned_for"]["priced"]["warmup"], 5);
  EXPECT_EQ(side["planned_for"]["priced"]["reference"], false);
  EXPECT_FALSE(side["planned_for"]["priced"].contains("util_sample"));  // a cuda window: not priced on cpu
}

TEST_F(PlanPricing, EachPricedSettingThatDiffersIsNamedWithBothValues) {
  const Plan p = priced();
  const auto f = written(p);
  Protocol run = p.protocol;
  run.warmup = 10, run.reference = true;
  run.threads = 1;  // not priced: says nothing
  const auto lines = plan_departures(f, run, "cpu", "cpu-2t", true);
  ASSERT_EQ(lines.size(), 1u) << joined(lines);
  EXPECT_NE(lines[0].find("--warmup 5 (this run: 10)"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("--reference off (this run: on)"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[0].find("threads"), std::string::npos) << lines[0];
}

TEST_F(PlanPricing, TheCudaWindowsArePricedOnlyOnCudaAndAnotherBackendIsSaid) {
  const Plan p = priced("cuda");
  const auto f = written(p);
  Protocol run = p.protocol;
  run.util_sample = 1;
  auto lines = plan_departures(f, run, "cuda", "cpu-2t", true);
  ASSERT_EQ(lines.size(), 1u) << joined(lines);
  EXPECT_NE(lines[0].find("--util sample:0.2 (this run: all)"), std::string::npos) << lines[0];
  lines = plan_departures(f, p.protocol, "cpu", "cpu-2t", true);
  ASSERT_EQ(lines.size(), 1u) << joined(lines);
  EXPECT_NE(lines[0].find("predicted for the 'cuda' backend; this run measures on 'cpu'"), std::string::npos) << lines[0];
}

TEST_F(PlanPricing, AnotherPlatformAndABuildTimeARunDoesNotSaveAreSaid) {
  Plan p = priced();
  p.build_s = 2.8;
  const auto f = written(p);
  EXPECT_TRUE(plan_departures(f, p.protocol, "cpu", "cpu-2t", true).empty());
  const auto lines = plan_departures(f, p.protocol, "cpu", "cpu-1t", false);
  ASSERT_EQ(lines.size(), 2u) << joined(lines);
  EXPECT_NE(lines[0].find("platform 'cpu-2t'"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("this run measures platform 'cpu-1t'"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("--build-s 2.8"), std::string::npos) << lines[1];
  // Ninety-seventh hostile pass: a run that rebuilds every network, grouped or not, was not said.
  Protocol rebuilding = p.protocol;
  rebuilding.rebuild_networks = true;
  const auto rebuilt = plan_departures(f, rebuilding, "cpu", "cpu-2t", true);
  ASSERT_EQ(rebuilt.size(), 1u) << joined(rebuilt);
  EXPECT_NE(rebuilt[0].find("--rebuild-networks builds it again for every configuration"), std::string::npos)
      << rebuilt[0];
}

TEST_F(PlanPricing, AnUnpricedPlanComparesOnlyItsPlatform) {
  Plan p = priced();
  p.priced = false, p.platform.clear();
  const auto f = written(p);
  Protocol other;
  EXPECT_TRUE(plan_departures(f, other, "cuda", "h200", false).empty());
}

TEST_F(PlanPricing, AnEditedPlanOrSidecarAndAMissingOrForeignOneAreSaid) {
  const Plan p = priced();
  const auto f = written(p);
  std::ofstream(f, std::ios::app) << "";  // unchanged
  EXPECT_TRUE(plan_departures(f, p.protocol, "cpu", "cpu-2t", true).empty());
  {
    std::ofstream out(f, std::ios::app);
    out << "\n";
  }
  auto lines = plan_departures(f, p.protocol, "cpu", "cpu-2t", true);
  ASSERT_EQ(lines.size(), 1u) << joined(lines);
  EXPECT_NE(lines[0].find("was edited since carb plan wrote it"), std::string::npos) << lines[0];

  written(p);
  const auto side = dir_ / "plan.json";
  std::ifstream in(side);
  auto j = nlohmann::json::parse(in);
  in.close();
  j["planned_for"]["priced"]["warmup"] = 10;  // a hand edit that would hide a departure
  std::ofstream(side) << j.dump();
  Protocol run = p.protocol;
  run.warmup = 10;
  lines = plan_departures(f, run, "cpu", "cpu-2t", true);
  ASSERT_EQ(lines.size(), 1u) << joined(lines);
  EXPECT_NE(lines[0].find("plan.json was edited"), std::string::npos) << lines[0];

  std::ofstream(side) << "{not json";
  lines = plan_departures(f, p.protocol, "cpu", "cpu-2t", true);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("cannot be read"), std::string::npos) << lines[0];
  std::ofstream(side) << R"({"kind": "carb dataset"})";
  lines = plan_departures(f, p.protocol, "cpu", "cpu-2t", true);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("is not the sidecar carb plan writes"), std::string::npos) << lines[0];
  std::filesystem::remove(side);
  lines = plan_departures(f, p.protocol, "cpu", "cpu-2t", true);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("has no sidecar"), std::string::npos) << lines[0];
}

// A hand-written sidecar (no seal of its own) whose fields are not text: the kind said "internal
// error" (json's type_error), and a priced plan without a backend was said to be priced for ''.
TEST_F(PlanPricing, AHandWrittenSidecarWithFieldsThatAreNotTextIsSaidNotThrown) {
  const Plan p = priced();
  const auto f = written(p);
  const auto side = dir_ / "plan.json";
  std::ofstream(side) << R"({"kind": 5})";
  auto lines = plan_departures(f, p.protocol, "cpu", "cpu-2t", true);
  ASSERT_EQ(lines.size(), 1u) << joined(lines);
  EXPECT_NE(lines[0].find("is not the sidecar carb plan writes"), std::string::npos) << lines[0];
  for (const char* backend : {R"("backend": 7, )", ""}) {
    std::ofstream(side) << R"({"kind": "carb plan", "planned_for": {"priced": {)" << backend << R"("warmup": 9}}})";
    lines = plan_departures(f, p.protocol, "cpu", "cpu-2t", true);
    ASSERT_EQ(lines.size(), 2u) << joined(lines);
    EXPECT_NE(lines[0].find("does not say which backend"), std::string::npos) << lines[0];
    EXPECT_EQ(lines[0].find("''"), std::string::npos) << lines[0];
    EXPECT_NE(lines[1].find("--warmup 9 (this run: 5)"), std::string::npos) << lines[1];
  }
}

}  // namespace
}  // namespace carb

namespace carb {
namespace {

class ModelProtocol : public TempDirTest {
 protected:
  ModelProtocol() : TempDirTest("carb_model_protocol_") {}

  // A model trained by `carb train`'s job on data whose sidecar records `protocols` (test data: costs
  // are a formula of the configuration, never a measurement).
  CarbModel trained(const nlohmann::json& protocols) const {
    Dataset d;
    for (int depth : {10, 18, 26})
      for (int res : {32, 64})
        for (int batch : {1, 4}) {
          Record r;
          r.platform = "cpu-2t";
          r.config = {Family::basic, depth, 0.5, res, batch, Precision::fp32};
          r.latency_ms = 0.05 * depth * res * (1 + batch);
          d.rows.push_back(r);
        }
    const auto f = dir_ / "data.csv";
    write_dataset_csv(d, f);
    std::ofstream(dir_ / "data.json") << nlohmann::json{{"protocols", protocols}}.dump();
    TrainJob job;
    job.data = {f};
    job.out = dir_ / "model";
    job.force = true;
    job.options.params.n_trees = 8;
    job.options.params.threads = 1;
    job.options.folds = 2;
    run_train_job(job);
    return CarbModel::load(dir_ / "model");
  }
  static nlohmann::json cpu_2t_protocol() {  // data/cpu-2t.json's, the priced settings
    return {{"backend", "cpu"}, {"warmup", 5}, {"min_passes", 10}, {"max_passes", 100}, {"max_timed_s", 2.0},
            {"cooldown_s", 0.5}, {"reference", "basic-18-w0.5-r64-b1-fp32"}, {"min_energy_window_s", 1.0}};
  }
  static Protocol as_measured() {
    Protocol p;
    p.warmup = 5, p.min_passes = 10, p.max_passes = 100, p.max_timed_s = 2, p.cooldown_s = 0.5, p.reference = true;
    return p;
  }
};

// A README walkthrough: the cpu-2t plan example was priced under profile's defaults (10 warm-up
// passes, 100 timed, no time limit) where the model's data took 5 and 10 within 2 s, without a word.
TEST_F(ModelProtocol, APlanPricedUnderOtherSettingsThanTheModelsDataIsSaid) {
  const CarbModel m = trained({{"p1", cpu_2t_protocol()}});
  EXPECT_EQ(model_protocol_departure(m, as_measured(), "cpu"), "");
  const std::string w = model_protocol_departure(m, Protocol{}, "cpu");
  EXPECT_EQ(w.rfind("the model's data (data.csv) was measured with --warmup 5 (this plan: 10), --min-passes 10 "
                    "(this plan: 100), --max-timed-s 2 (this plan: 0), --cooldown 0.5 (this plan: 1), --reference on "
                    "(this plan: off): ", 0), 0u) << w;
  // The cuda windows are not priced on the cpu backend; another backend is said as such.
  EXPECT_NE(model_protocol_departure(m, as_measured(), "cuda").find("was measured on the 'cpu' backend"),
            std::string::npos);
  // A pause only above a temperature, a window in the meter's ticks: what the plan prices them as is its own.
  nlohmann::json h200 = cpu_2t_protocol();
  h200["backend"] = "cuda", h200["cooldown_s"] = 2, h200["cooldown_above_c"] = 65, h200["energy_ticks"] = 10;
  h200["min_energy_window_s"] = 0, h200["util_window_s"] = 0.5, h200["util_sample"] = 0.2;
  Protocol gpu = as_measured();
  gpu.cooldown_s = 0, gpu.min_energy_window_s = 1, gpu.util_window_s = 0.5, gpu.util_sample = 0.2;
  EXPECT_EQ(model_protocol_departure(trained({{"p2", h200}}), gpu, "cuda"), "");
  gpu.util_sample = 1;
  EXPECT_NE(model_protocol_departure(trained({{"p2", h200}}), gpu, "cuda").find("--util sample:0.2 (this plan: all)"),
            std::string::npos);
  // Two protocols that differ in one priced setting: that one is not compared, the others are (a review:
  // one difference among them silenced every other departure).
  nlohmann::json other = cpu_2t_protocol();
  other["warmup"] = 20;
  const std::string two = model_protocol_departure(trained({{"p3", cpu_2t_protocol()}, {"p4", other}}), Protocol{}, "cpu");
  EXPECT_EQ(two.find("--warmup"), std::string::npos) << two;
  EXPECT_NE(two.find("--min-passes 10 (this plan: 100)"), std::string::npos) << two;
  // A hostile tester: a reference written by hand as "false" or 0 read as on, and values no flag
  // could give (1e308 passes, a negative limit, 10.5 passes) were said as the data's.
  nlohmann::json odd = cpu_2t_protocol();
  odd["reference"] = "false", odd["warmup"] = 1e308, odd["max_timed_s"] = -3, odd["min_passes"] = 10.5;
  const std::string said = model_protocol_departure(trained({{"p5", odd}}), as_measured(), "cpu");
  EXPECT_NE(said.find("--reference off (this plan: on)"), std::string::npos) << said;
  for (const char* flag : {"--warmup", "--max-timed-s", "--min-passes"}) EXPECT_EQ(said.find(flag), std::string::npos) << said;
  odd["reference"] = 0;
  EXPECT_NE(model_protocol_departure(trained({{"p6", odd}}), as_measured(), "cpu").find("--reference"), std::string::npos);
  // The data moved away, its sidecar unreadable or gone: nothing to compare with, nothing said as a
  // departure; a file gone or a sidecar unreadable is told apart from a match (a hostile tester).
  const CarbModel again = trained({{"p1", cpu_2t_protocol()}});
  ASSERT_NE(model_protocol_departure(again, Protocol{}, "cpu"), "");
  std::string unknown;
  std::filesystem::rename(dir_ / "data.csv", dir_ / "moved.csv");
  EXPECT_EQ(model_protocol_departure(again, Protocol{}, "cpu", &unknown), "");
  EXPECT_NE(unknown.find("data.csv is gone"), std::string::npos) << unknown;
  std::filesystem::rename(dir_ / "moved.csv", dir_ / "data.csv");
  std::ofstream(dir_ / "data.json") << "{bad";
  unknown.clear();
  EXPECT_EQ(model_protocol_departure(again, Protocol{}, "cpu", &unknown), "");
  EXPECT_NE(unknown.find("cannot be read"), std::string::npos) << unknown;
  std::filesystem::remove(dir_ / "data.json");
  unknown.clear();
  EXPECT_EQ(model_protocol_departure(again, Protocol{}, "cpu", &unknown), "");
  EXPECT_EQ(unknown, "");  // no provenance at all: a user's own data, nothing to note
}

}  // namespace
}  // namespace carb
