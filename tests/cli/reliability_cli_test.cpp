// Tests of what a hostile but fair user found (issue 16), through the `carb` binary: outputs that
// never remove what carb did not write, data every reader refuses alike, flags that cannot carry
// NaN, error lines without raw control bytes, and kill -9 of `carb train` at random moments.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "carb/dataset.hpp"
#include "carb/network_spec.hpp"
#include "carb/store.hpp"
#include "cli/cli_run.hpp"

extern char** environ;

namespace {

using namespace carb_cli_test;
using carb_cli_test::carb;  // the helper, not namespace carb
using ::carb::Family, ::carb::NetworkSpec, ::carb::Precision, ::carb::network_totals;

// A small dataset whose costs are a formula of the configuration (test data, never a measurement).
std::string synthetic_dataset_csv(const std::string& extra_row = "") {
  std::string csv =
      "platform,family,depth,width,resolution,batch,precision,status,latency_ms,energy_j,peak_memory_mb,"
      "avg_sm_util,avg_mem_util\n";
  for (int depth : {10, 18, 26})
    for (const char* width : {"0.25", "0.5", "1"})
      for (int res : {32, 64})
        for (int batch : {1, 4, 16}) {
          const double w = std::stod(width);
          const double latency = 0.1 * depth * w * res * res / 1024.0 * (1 + 0.3 * batch);
          // Above the weights, input and largest layer output, which every measured peak holds
          // (data validate checks it).
          const NetworkSpec net = network_totals({Family::basic, depth, w, res, batch, Precision::fp32});
          const double memory = 1.2 * net.memory_floor_mb() +
                                0.01 * batch * res * res / 1024.0 * w;
          csv += "synthetic,basic," + std::to_string(depth) + "," + width + "," + std::to_string(res) + "," +
                 std::to_string(batch) + ",fp32,ok," + std::to_string(latency) + ",," + std::to_string(memory) +
                 ",,\n";
        }
  return csv + extra_row;
}

constexpr const char* kFastTrain = "--trees 8 --folds 2 --threads 1";

bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == s.size() - 1; }

TEST(CliReliability, TrainNeverEmptiesADirectoryItDidNotWrite) {
  write_file("rel_data.csv", synthetic_dataset_csv());
  fs::create_directories(scratch().dir() / "work");
  write_file("work/notes.txt", "my notes");
  write_file("work/train.csv", synthetic_dataset_csv());
  const CliRun r = carb(std::string("train --data rel_data.csv --out work ") + kFastTrain, "rel_work");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(scratch().dir() / "work" / "notes.txt"), "my notes");
  EXPECT_TRUE(fs::exists(scratch().dir() / "work" / "train.csv"));

  write_file("rel_file", "a regular file");
  EXPECT_EQ(carb(std::string("train --data rel_data.csv --out rel_file ") + kFastTrain, "rel_file").status, 1);
  EXPECT_EQ(slurp(scratch().dir() / "rel_file"), "a regular file");

  // An unwritable destination is found before the work and is the user's error (1), not internal (3).
  const CliRun missing = carb(std::string("train --data rel_data.csv --out no/such/dir/m ") + kFastTrain, "rel_miss");
  EXPECT_EQ(missing.status, 1) << missing.err;
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
}

TEST(CliReliability, TrainReplacesItsOwnBundleAndLeavesSiblingsAlone) {
  write_file("rel2_data.csv", synthetic_dataset_csv());
  fs::create_directories(scratch().dir() / "rel2_model.old");
  fs::create_directories(scratch().dir() / "rel2_model.tmp");
  write_file("rel2_model.old/keep", "old");
  write_file("rel2_model.tmp/keep", "tmp");
  for (int i = 0; i < 2; ++i) {
    const CliRun r = carb(std::string("train --data rel2_data.csv --out rel2_model ") + kFastTrain, "rel2");
    ASSERT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(slurp(scratch().dir() / "rel2_model.old" / "keep"), "old");
  EXPECT_EQ(slurp(scratch().dir() / "rel2_model.tmp" / "keep"), "tmp");
  EXPECT_EQ(carb("predict --model rel2_model --depth 18 --width 0.5 --resolution 32", "rel2p").status, 0);
}

// Twenty-first hostile pass: a --raw-target model that predicts negative energy at a configuration
// it trained on was saved over a working bundle with exit 0, and every reader refused it. train now
// loads what it wrote through the readers' checks before the swap.
TEST(CliReliability, TrainNeverSwapsInABundleReadersRefuse) {
  // The 150 H200 rows of 2026-11-30, where a seed-6 raw-target model predicts negative energy.
  const std::string data = std::string(CARB_SOURCE_DIR) + "/data/gpu/h200-2026-11-30.csv";
  const std::string opts = " --learners gbdt_depthwise gbdt_leafwise --raw-target --trees 50 --seed 6";
  ASSERT_EQ(carb("train --data " + data + " --out rel_raw --fast", "rel_raw0").status, 0);
  const CliRun bad = carb("train --data " + data + " --out rel_raw" + opts, "rel_raw1");
  // A test audit: a skip here hid the whole check on a build where this model happened to pass.
  ASSERT_NE(bad.status, 0) << "this build's seed-6 raw-target model passes the readers' checks: choose data or a "
                              "seed whose model predicts a cost below zero, or nothing here is tested";
  EXPECT_NE(bad.err.find("fails the checks every reader applies"), std::string::npos) << bad.err;
  // Thirty-fifth hostile pass: it said what a reader says of such a bundle, "it was altered".
  EXPECT_EQ(bad.err.find("altered"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("a --raw-target model can predict costs below zero"), std::string::npos) << bad.err;
  const CliRun p = carb("predict --model rel_raw --family basic --depth 18 --width 1 --resolution 64 --batch 1 "
                        "--precision fp16", "rel_raw2");
  EXPECT_EQ(p.status, 0) << p.err;  // the earlier bundle is still there and loads
}

// Thirty-sixth hostile pass: a raw-target linear model's latency at or below zero was printed by
// predict unflagged (inside the trained ranges too) and its unbounded interval blamed on too few
// rows; evaluate scored such predictions without a word; a plan --budget-s of candidates whose
// measuring time none could be predicted blamed the budget.
TEST(CliReliability, APredictedCostAtOrBelowZeroIsSaidByEveryCommand) {
  std::string csv = "platform,family,depth,width,resolution,batch,precision,status,latency_ms,energy_j,peak_memory_mb,"
                    "avg_sm_util,avg_mem_util\n";
  for (int depth : {10, 14, 18, 22, 26})
    for (int batch : {1, 2, 4, 8})
      csv += "synthetic,basic," + std::to_string(depth) + ",0.5,32," + std::to_string(batch) + ",fp32,ok," +
             std::to_string(60 - 1.5 * depth + batch) + ",," + std::to_string(40 + 2 * depth) + ",,\n";
  write_file("falling.csv", csv);
  ASSERT_EQ(carb("train --data falling.csv --out falling --learners linear --raw-target --normalize off --folds 2",
                 "fall_train").status, 0);
  const CliRun p = carb("predict --model falling --depth 82 --width 0.5 --resolution 32 --batch 4 --confidence 0.8",
                        "fall_predict");
  EXPECT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.err.find("1 prediction is at or below zero, which is no cost"), std::string::npos) << p.err;
  EXPECT_EQ(p.err.find("too few training rows"), std::string::npos) << p.err;
  write_file("falling_far.csv", "family,depth,width,resolution,batch,precision\nbasic,66,0.5,32,4,fp32\n"
                                "basic,82,0.5,32,4,fp32\n");
  std::string far = "platform,family,depth,width,resolution,batch,precision,status,latency_ms,energy_j,peak_memory_mb,"
                    "avg_sm_util,avg_mem_util\n";
  for (int depth : {50, 66, 82}) far += "synthetic,basic," + std::to_string(depth) + ",0.5,32,4,fp32,ok,5,,200,,\n";
  write_file("falling_far_measured.csv", far);  // test data: costs made up for the check, never measured
  const CliRun e = carb("evaluate --model falling --external --data falling_far_measured.csv", "fall_eval");
  EXPECT_EQ(e.status, 0) << e.err;
  EXPECT_NE((e.out + e.err).find("predictions at or below zero, which no configuration costs"), std::string::npos)
      << e.out << e.err;
  EXPECT_NE((e.out + e.err).find("3 of latency_ms among 3 rows"), std::string::npos) << e.out << e.err;
  const CliRun plan = carb("plan --model falling --configs falling_far.csv --strategy random --budget-s 100 --out fp.csv",
                           "fall_plan");
  EXPECT_EQ(plan.status, 1);
  EXPECT_NE(plan.err.find("the measuring time of none of the 2 candidates can be predicted"), std::string::npos)
      << plan.err;
  EXPECT_FALSE(fs::exists(scratch().dir() / "fp.csv"));
  // Thirty-ninth hostile pass: planned by uncertainty, candidates of an impossible cost were neither
  // counted nor said. (--learners takes a comma-separated list too.)
  ASSERT_EQ(carb("train --data falling.csv --out falling2 --learners linear,extra_trees --trees 10 --raw-target "
                 "--normalize off --folds 2", "fall_train2").status, 0);
  const CliRun u = carb("plan --model falling2 --configs falling_far.csv --count 2 --spread units --out fu.csv",
                        "fall_plan_u");
  EXPECT_EQ(u.status, 0) << u.err;
  EXPECT_NE(u.out.find("the model predicts a cost at or below zero for 2 of the 2 candidates (2 of them planned)"),
            std::string::npos) << u.out;
  // Seventy-second hostile pass: recommend's reasons for no fit were printed twice, on stdout and
  // again as the error line.
  const CliRun r = carb("recommend --model falling --depth 18 --width 0.5 --resolution 32 --latency-max 0.001",
                        "fall_recommend");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("no batch size x precision meets the constraints (7 evaluated); "), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "carb: error: no batch size x precision meets the constraints (7 evaluated): why is in the output "
                   "above\n");
  const CliRun rj = carb("recommend --model falling --depth 18 --width 0.5 --resolution 32 --latency-max 0.001 "
                         "--format json", "fall_recommend_json");
  EXPECT_EQ(rj.status, 1);
  EXPECT_NE(nlohmann::json::parse(rj.out).at("message").get<std::string>().find("no batch size x precision meets"),
            std::string::npos) << rj.out;
  EXPECT_EQ(rj.err, "carb: error: no batch size x precision meets the constraints (7 evaluated): why is in the "
                    "document's \"message\"\n");
}

// train once trained on conflicting duplicates (latency R2 -0.30, exit 0) and on 1e308 latencies.
// Twenty-eighth hostile pass: evaluate warned that 1 of 131 held-out cpu-1t rows is a guess past the
// trained ranges; train's summary showed the same scores without it.
TEST(CliReliability, TrainSaysWhatEvaluateSaysOfItsHeldOutRows) {
  const std::string data = std::string(CARB_SOURCE_DIR) + "/data/cpu-1t.csv";
  const CliRun t = carb("train --data " + data + " --out rel_guess --fast", "rel_guess");
  ASSERT_EQ(t.status, 0) << t.err;
  const CliRun e = carb("evaluate --model rel_guess --data " + data + " --quick", "rel_guess_eval");
  ASSERT_EQ(e.status, 0) << e.err;
  const auto line = [](const std::string& out) {
    const auto at = out.find("scored configurations lie outside");
    return at == std::string::npos ? std::string() : out.substr(out.rfind("warning: ", at), out.find('\n', at) - out.rfind("warning: ", at));
  };
  ASSERT_FALSE(line(e.out).empty()) << e.out;  // the shipped split has such a row
  EXPECT_EQ(line(t.out), line(e.out)) << t.out;
}

TEST(CliReliability, EveryReaderRefusesWhatValidateRejects) {
  write_file("rel_dup.csv", synthetic_dataset_csv("synthetic,basic,10,0.25,32,1,fp32,ok,99,,3,,\n"));
  write_file("rel_huge.csv", synthetic_dataset_csv("synthetic,basic,34,1,32,1,fp32,ok,1e308,,3,,\n"));
  for (const char* file : {"rel_dup.csv", "rel_huge.csv"}) {
    for (const std::string& cmd :
         {std::string("train --out rel_never ") + kFastTrain + " --data ", std::string("characterize --data "),
          std::string("data validate ")}) {
      const CliRun r = carb(cmd + file, "rel_reader");
      SCOPED_TRACE(cmd + file + "\n" + r.err);
      EXPECT_EQ(r.status, 1);
      EXPECT_TRUE(one_line(r.err) || cmd.rfind("data validate", 0) == 0);
      EXPECT_NE(r.err.find(file), std::string::npos);
    }
  }
  EXPECT_FALSE(fs::exists(scratch().dir() / "rel_never"));
}

TEST(CliReliability, NumericFlagsRefuseNanInfinityAndNonsense) {
  const char* cases[] = {
      "predict --model m --confidence nan",
      "predict --model m --confidence inf",
      "predict --model m --confidence 0",
      "screen --source-model m --confidence 0",
      "screen --source-model m --validate-include-trained",
      "train --data d.csv --out o --no-correctors --lambda 0.5",
      "train --data d.csv --out o --no-correctors --corrector-max-batch 4",
      "train --data d.csv --out o --corrector-max-batch -5",
      "train --data d.csv --out o --lambda nan",
      "screen --source-model m --confidence nan",
      "screen --source-model m --latency-max nan",
      "screen --source-model m --energy-max -1",
      "recommend --model m --memory-max inf",
      "evaluate --model m --data d.csv --test-fraction nan",
      "profile --preset tiny --db never.db --target-ci nan",
      "profile --preset tiny --db never.db --min-energy-window -1",
      "profile --preset tiny --db never.db --max-timed-s inf",
  };
  for (const char* args : cases) {
    const CliRun r = carb(args, "rel_flag");
    SCOPED_TRACE(std::string("carb ") + args + "\nstderr: " + r.err);
    EXPECT_EQ(r.status, 2);
    EXPECT_TRUE(one_line(r.err));
  }
  EXPECT_FALSE(fs::exists(scratch().dir() / "never.db"));
}

// Flag combinations that mean nothing were accepted and answered: a platform compared with itself,
// --shard of a single configuration.
TEST(CliReliability, MeaninglessCombinationsAreRefused) {
  write_file("rel_same.csv", synthetic_dataset_csv(""));
  for (const char* args : {"transfer --source rel_same.csv --target rel_same.csv",
                           "predict --model m --shard 1/2 --family basic --depth 18 --width 1 --resolution 32 "
                           "--batch 1 --precision fp32"}) {
    const CliRun r = carb(args, "rel_meaningless");
    SCOPED_TRACE(std::string("carb ") + args + "\nstderr: " + r.err);
    EXPECT_EQ(r.status, 1);
    EXPECT_TRUE(one_line(r.err));
  }
  EXPECT_NE(carb("transfer --source rel_same.csv --target ./rel_same.csv", "rel_same2").err.find("same file"),
            std::string::npos);
}

// Thirteenth hostile pass: `train --out d.json --force` replaced the training data's provenance
// sidecar with a model bundle; an input and its sidecar are never an output, even with --force.
TEST(CliReliability, TrainNeverReplacesTheSidecarOfItsData) {
  write_file("side.csv", synthetic_dataset_csv());
  write_file("side.json", "{\"kind\": \"carb dataset\"}\n");
  const CliRun r = carb(std::string("train --data side.csv --out side.json --force ") + kFastTrain, "side_train");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("provenance file of an input"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(scratch().dir() / "side.json"), "{\"kind\": \"carb dataset\"}\n");
}

TEST(CliReliability, ErrorLinesEscapeControlBytes) {
  const CliRun r = carb("space --configs \"$(printf 'in\\001\\033[31mput.csv')\"", "rel_ctl");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_EQ(r.err.find('\001'), std::string::npos);
  EXPECT_EQ(r.err.find('\033'), std::string::npos);
  EXPECT_NE(r.err.find("in\\x01\\x1b[31mput.csv"), std::string::npos) << r.err;
  // C1 controls (U+009B is a CSI on many terminals) and bytes that are not UTF-8 are escaped too;
  // well-formed UTF-8 is kept as it is.
  const CliRun u = carb("space --configs \"$(printf 'caf\303\251-\302\233-\377.csv')\"", "rel_utf8");
  EXPECT_EQ(u.status, 1) << u.err;
  EXPECT_NE(u.err.find("caf\303\251-\\xc2\\x9b-\\xff.csv"), std::string::npos) << u.err;
}

// Fifteenth hostile pass: a 10 MB cell was echoed whole, a 10 MB "one-line" error. The middle of a
// long message is left out; its start (file, line, column) and its end stay.
TEST(CliReliability, AHugeBadCellGivesAShortErrorLine) {
  write_file("huge_cell.csv", "family,depth,width,resolution,batch,precision\nbasic,18,0.5,64,8,fp32" +
                                  std::string(1000000, '0') + "\n");
  const CliRun r = carb("space --configs huge_cell.csv", "rel_huge");
  EXPECT_EQ(r.status, 1) << r.err.substr(0, 300);
  EXPECT_TRUE(one_line(r.err));
  EXPECT_LT(r.err.size(), 2500u);
  EXPECT_NE(r.err.find("huge_cell.csv:2"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" bytes left out ...] "), std::string::npos) << r.err;
}

// Twelfth hostile pass: the success lines printed the --out path as it was given, an ESC included.
// Since 2026-12-06 no output gets such a name (a hostile tester's --out $'a\nb.csv' was written):
// the refusal names it escaped, and a file of such a name made elsewhere is still named escaped.
TEST(CliReliability, SuccessLinesEscapeControlBytesInPaths) {
  write_file("ok_data.csv", synthetic_dataset_csv());
  for (const auto& [args, name] : std::vector<std::pair<std::string, std::string>>{
           {"train --data ok_data.csv --out \"$(printf 'mo\033[2Jdel')\" " + std::string(kFastTrain), "mo\\x1b[2Jdel"},
           {"report --data ok_data.csv --out \"$(printf 're\033[2Jport.html')\"", "re\\x1b[2Jport.html"},
           {"data merge ok_data.csv --out \"$(printf 'mer\033[2Jged.csv')\"", "mer\\x1b[2Jged.csv"}}) {
    const CliRun r = carb(args, "ctl_out");
    EXPECT_EQ(r.status, 1) << args;
    EXPECT_EQ(r.err.find('\033'), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(name + ": the output's name holds a control character"), std::string::npos) << r.err;
  }
  // Thirteenth hostile pass: `data info` printed the file name as it was.
  fs::copy_file(scratch().dir() / "ok_data.csv", scratch().dir() / "mer\033[2Jged.csv");
  const CliRun i = carb("data info \"$(printf 'mer\033[2Jged.csv')\"", "ok_info");
  ASSERT_EQ(i.status, 0) << i.err;
  EXPECT_EQ(i.out.find('\033'), std::string::npos) << i.out;
  EXPECT_EQ(i.out.rfind("mer\\x1b[2Jged.csv: ", 0), 0u) << i.out;
  EXPECT_NE(i.out.find("\n\n"), std::string::npos) << "the lines were kept apart: " << i.out;
}

// Seventh hostile pass: `data validate` printed each problem line with the cell's raw bytes on
// stdout (an ESC that clears the screen); only the summary on stderr was escaped.
TEST(CliReliability, ValidateProblemLinesEscapeControlBytes) {
  std::ofstream(scratch().dir() / "ctl.csv")
      << "platform,family,depth,width,resolution,batch,precision,status,latency_ms,energy_j,peak_memory_mb,"
         "avg_sm_util,avg_mem_util\n"
      << "cpu,ba\033[2Jsic,18,0.5,64,1,fp32,ok,1.5,,3.0,,\n";
  const CliRun r = carb("data validate ctl.csv", "rel_validate_ctl");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out.find('\033'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ba\\x1b[2Jsic"), std::string::npos) << r.out;
}

// Starts `carb ARGS...` in the scratch directory with output discarded; returns its pid.
pid_t spawn_carb(const std::vector<std::string>& args) {
  std::vector<std::string> argv_s = {CARB_BINARY};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  const std::string cwd = scratch().dir().string();
  posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, CARB_BINARY, &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc == 0 ? pid : -1;
}

// kill -9 of `carb train` at 20 seeded random moments: the previous bundle is never lost or
// half-replaced (what is at --out always predicts exactly what a finished bundle predicts), and
// the staging directories a killed run leaves are hidden and cleaned by the next run.
TEST(CliReliability, KillNineOfTrainNeverLosesOrTearsTheBundle) {
  write_file("kill_data.csv", synthetic_dataset_csv());
  const std::vector<std::string> train = {"train", "--data", "kill_data.csv", "--out", "kill_model",
                                          "--trees", "8", "--folds", "2", "--threads", "1"};
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t first = spawn_carb(train);
  ASSERT_GT(first, 0);
  int status = 0;
  ASSERT_EQ(waitpid(first, &status, 0), first);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const double full_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string predict = "predict --model kill_model --depth 18 --width 0.5 --resolution 64 --batch 4";
  const CliRun reference = carb(predict, "kill_ref");
  ASSERT_EQ(reference.status, 0) << reference.err;

  std::mt19937 g(16);
  std::uniform_real_distribution<double> when(0.0, 1.1);  // times the run's length as last seen
  const auto staging = [] {
    for (const auto& e : fs::directory_iterator(scratch().dir()))
      if (e.path().filename().string().find(".kill_model.carb-staging-") != std::string::npos) return true;
    return false;
  };
  int killed = 0, mid = 0;  // killed at all, and while a bundle was staged (a test audit: uncounted)
  // Up to 40 tries for 20 kills: a first run slowed by a busy machine (a CI beside a build) drew
  // moments most later runs finished before, and 9 kills of 20 failed the count below. A run that
  // finished before its kill says how long a run takes now.
  double run_s = full_s;
  for (int k = 0; k < 40 && killed < 20; ++k) {
    const double at = when(g) * run_s;
    const pid_t pid = spawn_carb(train);
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::duration<double>(at));
    const bool staged = staging();
    ::kill(pid, SIGKILL);
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      ++killed, mid += staged;
    else
      run_s = std::min(run_s, at);
    const CliRun after = carb(predict, "kill_after");
    SCOPED_TRACE("kill " + std::to_string(k) + " at " + std::to_string(at) + " s\n" + after.err);
    ASSERT_EQ(after.status, 0);
    ASSERT_EQ(after.out, reference.out);
  }
  EXPECT_GE(killed, 10) << "most runs finished before their kill: the property was barely tried";
  EXPECT_GT(mid, 0) << "no kill came while a bundle was staged";
  ASSERT_EQ(carb("train --data kill_data.csv --out kill_model --trees 8 --folds 2 --threads 1", "kill_last").status, 0);
  for (const auto& e : fs::directory_iterator(scratch().dir())) {
    if (e.path().filename().string().find(".kill_model.carb-staging-") == std::string::npos) continue;
    std::string held;
    for (const auto& f : fs::directory_iterator(e.path())) held += " " + f.path().filename().string();
    ADD_FAILURE() << "a dead run's staging directory was not cleaned: " << e.path() << " holding" << held;
  }
}

}  // namespace

namespace {

// SIGINT or SIGTERM during training: carb stops at the next fit, removes its staging directory,
// leaves the earlier bundle as it was, and exits 128 + signal (130, 143), as `profile` does, so
// that `carb train ... && next step` does not go on.
void interrupt_train_once(int sig) {
  SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
  write_file("int_data.csv", synthetic_dataset_csv());
  ASSERT_EQ(carb(std::string("train --data int_data.csv --out int_model ") + kFastTrain, "int_first").status, 0);
  const std::string predict = "predict --model int_model --depth 18 --width 0.5 --resolution 64 --batch 4";
  const CliRun reference = carb(predict, "int_ref");
  ASSERT_EQ(reference.status, 0) << reference.err;
  auto staging_dirs = [] {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(scratch().dir()))
      if (e.path().filename().string().find(".int_model.carb-staging-") != std::string::npos)
        found.push_back(e.path().filename().string());
    return found;
  };
  // Far more trees than the data needs: it is still training when the signal comes.
  const pid_t pid = spawn_carb({"train", "--data", "int_data.csv", "--out", "int_model", "--trees", "20000",
                                "--folds", "5", "--threads", "1"});
  ASSERT_GT(pid, 0);
  const auto t0 = std::chrono::steady_clock::now();
  while (staging_dirs().empty() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_FALSE(staging_dirs().empty()) << "train never staged its bundle";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // well inside the fits
  ASSERT_EQ(::kill(pid, sig), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "train died by the signal instead of stopping";
  EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
  EXPECT_TRUE(staging_dirs().empty()) << "the interrupted run left " << staging_dirs().front();
  const CliRun after = carb(predict, "int_after");
  ASSERT_EQ(after.status, 0) << after.err;
  EXPECT_EQ(after.out, reference.out);
}

TEST(CliReliability, InterruptedTrainExitsWithTheSignalsCodeAndLeavesNothing) {
  interrupt_train_once(SIGINT);
  interrupt_train_once(SIGTERM);
}


// Fiftieth hostile pass: `report`, `plan`, `data merge` and `train` refused a measurement store at
// --out and advised --force, which then replaced it (1,958 rows gone). No output replaces a store
// or the -wal, -shm, -journal or lock file beside one, with or without --force.
TEST(CliReliability, NoOutputReplacesAMeasurementStoreEvenWithForce) {
  const fs::path db = scratch().dir() / "st.db";
  {
    ::carb::Store s(db);
    ::carb::StoredMeasurement m;
    m.record.platform = "cpu2t";
    m.record.config = {Family::basic, 18, 0.5, 64, 1, Precision::fp32};
    m.record.latency_ms = 12.5;
    m.record.peak_memory_mb = 100;
    m.protocol_id = "p1";
    s.put_protocol("p1", {{"warmup", 10}, {"backend", "cpu"}});
    s.put(m);
  }
  const std::string before = slurp(db);
  ASSERT_EQ(before.rfind(std::string("SQLite format 3\0", 16), 0), 0u);
  write_file("st_data.csv", synthetic_dataset_csv());
  fs::copy_file(db, scratch().dir() / "st.csv");  // a store by another name
  fs::copy_file(db, scratch().dir() / "st2.db");
  write_file("st2.db-shm", "not SQLite's, but beside a store");
  for (const std::string out : {"st.db", "st.csv", "st2.db-shm", "st.db.lock"}) {
    const std::vector<std::string> commands = {
        "report --data st_data.csv --out " + out + " --force",
        "plan --preset tiny --count 2 --out " + out + " --force",
        "data merge st_data.csv --out " + out + " --force",
        "train --data st_data.csv --out " + out + " --force " + kFastTrain};
    for (const std::string& c : commands) {
      const CliRun r = carb(c, "st_force");
      EXPECT_EQ(r.status, 1) << c << ": " << r.err;
      EXPECT_TRUE(one_line(r.err)) << r.err;
      // plan and merge write only a .csv: other names are refused for that first.
      const bool csv_only = c.rfind("plan", 0) == 0 || c.rfind("data merge", 0) == 0;
      if (csv_only && fs::path(out).extension() != ".csv") {
        EXPECT_NE(r.err.find("must end in .csv"), std::string::npos) << c << ": " << r.err;
        continue;
      }
      EXPECT_NE(r.err.find("SQLite database"), std::string::npos) << c << ": " << r.err;
      EXPECT_NE(r.err.find("--force does not change this"), std::string::npos) << r.err;
    }
  }
  EXPECT_TRUE(slurp(db) == before);
  EXPECT_TRUE(slurp(scratch().dir() / "st.csv") == before);
  EXPECT_EQ(slurp(scratch().dir() / "st2.db-shm"), "not SQLite's, but beside a store");
  EXPECT_FALSE(fs::exists(scratch().dir() / "st.db.lock") && fs::is_directory(scratch().dir() / "st.db.lock"));
  // Without --force the refusal says what the file is instead of advising --force.
  const CliRun r = carb("report --data st_data.csv --out st.db", "st_plain");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.find("pass --force"), std::string::npos) << r.err;
  const CliRun e = carb("data export --db st.db --out st_export.csv", "st_export");
  EXPECT_EQ(e.status, 0) << e.err;  // the store still reads
  // Fiftieth hostile pass: export's success line escaped the CSV's name but not its provenance's.
  // Since 2026-12-06 such a name is refused, in one escaped line.
  const CliRun nl = carb("data export --db st.db --out \"$(printf 'st\nexp.csv')\"", "st_export_nl");
  EXPECT_EQ(nl.status, 1) << nl.err;
  EXPECT_TRUE(one_line(nl.err)) << nl.err;
  EXPECT_NE(nl.err.find("st\\x0aexp.csv: the output's name holds a control character"), std::string::npos) << nl.err;
  // Hundred-and-second hostile pass: a folder as --out was refused with advice to pass --force, which
  // then failed on the folder; and --format json exited 3 with an internal error after writing a
  // report whose name is not UTF-8.
  fs::create_directories(scratch().dir() / "st_folder");
  const CliRun folder = carb("report --data st_data.csv --out st_folder", "st_folder");
  EXPECT_EQ(folder.status, 1) << folder.err;
  EXPECT_TRUE(one_line(folder.err)) << folder.err;
  EXPECT_NE(folder.err.find("is a folder; give --out a file name"), std::string::npos) << folder.err;
  EXPECT_EQ(folder.err.find("--force"), std::string::npos) << folder.err;
  const CliRun bytes = carb("report --data st_data.csv --out \"$(printf 'st\377.html')\" --format json", "st_bytes");
  EXPECT_EQ(bytes.status, 0) << bytes.err;
  const auto doc = nlohmann::json::parse(bytes.out);  // valid JSON, the byte replaced
  EXPECT_GT(doc["bytes"].get<long>(), 0);
  EXPECT_NE(doc["out"].get<std::string>().find("st\xEF\xBF\xBD.html"), std::string::npos) << bytes.out;
}


// Fifty-first hostile pass: `report --out cpu-1t.json --force` made another dataset's sidecar an
// HTML page, and `train --out cpu-1t.json --force` a bundle directory: its record of how it was
// measured was gone and every reader refused it. A provenance is replaced only by its own output.
TEST(CliReliability, NoOutputButItsOwnReplacesADatasetsProvenance) {
  const std::string src = std::string(CARB_SOURCE_DIR) + "/data/";
  fs::copy_file(src + "cpu-1t.csv", scratch().dir() / "pv.csv", fs::copy_options::overwrite_existing);
  const std::string prov = slurp(src + "cpu-1t.json");
  write_file("pv.json", prov);
  write_file("pv_other.csv", synthetic_dataset_csv());
  for (const std::string& c : std::vector<std::string>{
           "report --data pv_other.csv --out pv.json --force",
           std::string("train --data pv_other.csv --out pv.json --force ") + kFastTrain}) {
    const CliRun r = carb(c, "pv");
    EXPECT_EQ(r.status, 1) << c << ": " << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("pv.json is the provenance of the "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--force does not change this"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(slurp(scratch().dir() / "pv.json") == prov);
  EXPECT_EQ(carb("data validate pv.csv", "pv_validate").status, 0);

  // Fifty-second hostile pass: nor the dataset itself, by a report, a plan or a bundle, nor a
  // directory holding it given to train --force (its CSV and provenance were deleted).
  const std::string csv = slurp(scratch().dir() / "pv.csv");
  fs::create_directories(scratch().dir() / "pvdir" / "runs");
  fs::copy_file(scratch().dir() / "pv.csv", scratch().dir() / "pvdir" / "runs" / "pv.csv");
  write_file("pvdir/runs/pv.json", prov);
  for (const std::string& c : std::vector<std::string>{
           "report --data pv_other.csv --out pv.csv --force",
           "plan --preset tiny --count 2 --out pv.csv --force",
           std::string("train --data pv_other.csv --out pv.csv --force ") + kFastTrain,
           std::string("train --data pv_other.csv --out pvdir --force ") + kFastTrain}) {
    const CliRun r = carb(c, "pv_csv");
    EXPECT_EQ(r.status, 1) << c << ": " << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_TRUE(r.err.find("provenance") != std::string::npos || r.err.find("a dataset CSV") != std::string::npos)
        << c << ": " << r.err;
    EXPECT_NE(r.err.find("does not change this"), std::string::npos) << c << ": " << r.err;
  }
  EXPECT_TRUE(slurp(scratch().dir() / "pv.csv") == csv);
  EXPECT_TRUE(slurp(scratch().dir() / "pv.json") == prov);
  EXPECT_TRUE(slurp(scratch().dir() / "pvdir" / "runs" / "pv.csv") == csv);
  EXPECT_TRUE(slurp(scratch().dir() / "pvdir" / "runs" / "pv.json") == prov);
  // Fifty-fifth hostile pass: a dataset whose provenance is gone is measurements all the same; a
  // plan, a report and train --force replaced it, and train --force deleted a directory holding one.
  fs::create_directories(scratch().dir() / "lostdir" / "sub");
  fs::copy_file(scratch().dir() / "pv.csv", scratch().dir() / "lost.csv");
  fs::copy_file(scratch().dir() / "pv.csv", scratch().dir() / "lostdir" / "sub" / "measured.csv");
  for (const std::string& c : std::vector<std::string>{
           "report --data pv_other.csv --out lost.csv --force",
           "plan --preset tiny --count 2 --out lost.csv --force",
           std::string("train --data pv_other.csv --out lost.csv --force ") + kFastTrain,
           std::string("train --data pv_other.csv --out lostdir --force ") + kFastTrain}) {
    const CliRun r = carb(c, "lost_csv");
    EXPECT_EQ(r.status, 1) << c << ": " << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find("a dataset CSV"), std::string::npos) << c << ": " << r.err;
    EXPECT_NE(r.err.find("does not change this"), std::string::npos) << c << ": " << r.err;
  }
  EXPECT_TRUE(slurp(scratch().dir() / "lost.csv") == csv);
  EXPECT_TRUE(slurp(scratch().dir() / "lostdir" / "sub" / "measured.csv") == csv);

  // A merge may still replace a dataset under --force: that is a dataset's own kind of output. What
  // it would have refused without --force (another kind of dataset, rows it loses) is kept beside
  // it, the CSV with its provenance (fifty-fifth hostile pass: combine --force replaced a round).
  const CliRun merged = carb("data merge pv_other.csv --out pv.csv --force", "pv_merge");
  EXPECT_EQ(merged.status, 0) << merged.err;
  EXPECT_NE(merged.err.find("pv.csv held measurements that --force replaces"), std::string::npos) << merged.err;
  EXPECT_TRUE(slurp(scratch().dir() / "pv.earlier.csv") == csv);
  EXPECT_TRUE(slurp(scratch().dir() / "pv.earlier.json") == prov);
  EXPECT_EQ(carb("data validate pv.earlier.csv", "pv_kept").status, 0);
  // The same merge again replaces only its own output, as it would without --force: nothing kept.
  const CliRun again = carb("data merge pv_other.csv --out pv.csv --force", "pv_merge_again");
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.err.find("held measurements"), std::string::npos) << again.err;
  EXPECT_FALSE(fs::exists(scratch().dir() / "pv.earlier-1.csv"));
  // A dataset without its provenance, replaced by a merge under --force, is kept too.
  const CliRun over_lost = carb("data merge pv_other.csv --out lost.csv --force", "lost_merge");
  EXPECT_EQ(over_lost.status, 0) << over_lost.err;
  EXPECT_TRUE(slurp(scratch().dir() / "lost.earlier.csv") == csv);
  EXPECT_FALSE(fs::exists(scratch().dir() / "lost.earlier.json"));

  // Fifty-sixth hostile pass: a dataset is known as the reader knows one, not by its exact header at
  // byte 0: a round re-saved by a spreadsheet (BOM, CRLF, quoted names, columns reordered) was
  // destroyed by merge --force and replaced by plan --force. And a sidecar whose CSV was moved away,
  // its only provenance, is kept too.
  std::string spreadsheet = "\xEF\xBB\xBF";
  for (char ch : csv) spreadsheet += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
  spreadsheet.replace(spreadsheet.find("family"), 6, "\"family\"");
  write_file("sheet.csv", spreadsheet);
  write_file("sheet.json", prov);
  EXPECT_EQ(carb("data validate sheet.csv", "sheet_valid").status, 0);
  const CliRun planned = carb("plan --preset tiny --count 2 --out sheet.csv --force", "sheet_plan");
  EXPECT_EQ(planned.status, 1) << planned.err;
  const CliRun over_sheet = carb("data merge pv_other.csv --out sheet.csv --force", "sheet_merge");
  EXPECT_EQ(over_sheet.status, 0) << over_sheet.err;
  EXPECT_TRUE(slurp(scratch().dir() / "sheet.earlier.csv") == spreadsheet);
  EXPECT_TRUE(slurp(scratch().dir() / "sheet.earlier.json") == prov);
  write_file("orphan.json", prov);
  const CliRun orphan = carb("data merge pv_other.csv --out orphan.csv --force", "orphan_merge");
  EXPECT_EQ(orphan.status, 0) << orphan.err;
  EXPECT_NE(orphan.err.find("orphan.json held the only provenance of a dataset"), std::string::npos) << orphan.err;
  EXPECT_TRUE(slurp(scratch().dir() / "orphan.earlier.json") == prov);

  // Fifty-seventh hostile pass: a dataset with a comment line first is no dataset to the reader, and
  // merge and plan --force replaced it with nothing kept. What --force overrides a refusal for is kept.
  const std::string commented = "# lab run 3 - keep\n" + csv;
  write_file("mine.csv", commented);
  write_file("notes.csv", "my notes\n");
  const CliRun over_mine = carb("data merge pv_other.csv --out mine.csv --force", "mine_merge");
  EXPECT_EQ(over_mine.status, 0) << over_mine.err;
  EXPECT_NE(over_mine.err.find("mine.csv held a file carb did not write that --force replaces"), std::string::npos)
      << over_mine.err;
  EXPECT_TRUE(slurp(scratch().dir() / "mine.earlier.csv") == commented);
  const CliRun over_notes = carb("plan --preset tiny --count 2 --out notes.csv --force", "notes_plan");
  EXPECT_EQ(over_notes.status, 0) << over_notes.err;
  EXPECT_TRUE(slurp(scratch().dir() / "notes.earlier.csv") == "my notes\n");
  // A plan replacing its own earlier plan keeps nothing.
  EXPECT_EQ(carb("plan --preset tiny --count 2 --out notes.csv --force", "notes_plan2").status, 0);
  EXPECT_FALSE(fs::exists(scratch().dir() / "notes.earlier-1.csv"));
}

// Fifty-ninth hostile pass: a window study's provenance is its name with ".json" added, and only
// `<stem>.json` was looked at: `report --force` and `plan --force` onto a study kept its rows as
// <stem>.earlier.csv without its provenance, which stayed beside the new file describing it. A study
// is known by its provenance or its header, and no other output replaces it, --force or not.
TEST(CliReliability, NoOutputButTheStudysOwnReplacesAWindowStudy) {
  const std::string header = carb::kWindowStudyHeader;
  const std::string rows = header + "\nbasic,18,1,64,8,fp16,1,0.1,1,ticks,0,0.1,3,2,0.5\n";
  const std::string prov = "{\"kind\": \"carb window study\", \"backend\": \"cuda\"}\n";
  write_file("ws.csv", rows);
  write_file("ws.csv.json", prov);
  write_file("ws_bare.csv", rows);  // its provenance gone: the header says what it is
  write_file("ws_other.csv", synthetic_dataset_csv());
  for (const std::string out : {"ws.csv", "ws_bare.csv"})
    for (const std::string& c : std::vector<std::string>{
             "report --data ws_other.csv --out " + out + " --force",
             "plan --preset tiny --count 2 --out " + out + " --force",
             "data merge ws_other.csv --out " + out + " --force",
             std::string("train --data ws_other.csv --out ") + out + " --force " + kFastTrain}) {
      const CliRun r = carb(c, "ws");
      EXPECT_EQ(r.status, 1) << c << ": " << r.err;
      EXPECT_TRUE(one_line(r.err)) << r.err;
      EXPECT_NE(r.err.find(out + " holds a window study"), std::string::npos) << c << ": " << r.err;
      EXPECT_NE(r.err.find("--force does not change this"), std::string::npos) << c << ": " << r.err;
    }
  EXPECT_EQ(slurp(scratch().dir() / "ws.csv"), rows);
  EXPECT_EQ(slurp(scratch().dir() / "ws.csv.json"), prov);
  EXPECT_EQ(slurp(scratch().dir() / "ws_bare.csv"), rows);
  EXPECT_FALSE(fs::exists(scratch().dir() / "ws.earlier.csv"));
  EXPECT_FALSE(fs::exists(scratch().dir() / "ws.json"));
}

}  // namespace
