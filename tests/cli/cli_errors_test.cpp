// Tests of the `carb` binary's contract: bad input exits non-zero with exactly one
// line on stderr naming the problem; good input exits 0 with the documented output.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_run.hpp"

namespace {

using namespace carb_cli_test;
namespace fs = std::filesystem;

struct BadCase {
  const char* args;
  std::vector<const char*> mentions;  // each must appear on the error line
};

TEST(Cli, BadInputExitsNonZeroWithOneLineNamingIt) {
  write_file("bad_line3.csv",
             "family,depth,width,resolution,batch,precision\n"
             "basic,18,1,224,1,fp32\n"
             "basic,eighteen,1,224,1,fp32\n");
  write_file("bad_family.csv",
             "family,depth,width,resolution,batch,precision\n"
             "basic,18,1,224,1,fp32\n"
             "basic,18,1,224,2,fp32\n"
             "resnet,18,1,224,1,fp32\n");
  write_file("missing_column.csv", "family,depth,width,resolution,batch\nbasic,18,1,224,1\n");
  write_file("fp16.csv", "family,depth,width,resolution,batch,precision\nbasic,10,0.25,32,1,fp16\n");
  write_file("header_only.csv", "family,depth,width,resolution,batch,precision\n");
  const BadCase cases[] = {
      // Seventeenth hostile pass: a header-only file printed nothing and exited 0 (predict), or was
      // "all 0 candidates are excluded" (plan).
      {"predict --model no_model --configs header_only.csv", {"nothing to predict"}},
      {"plan --configs header_only.csv --count 3 --out p.csv", {"nothing to plan", "no candidate"}},
      {"recommend --model no_model --batches 8,", {"--batches", "empty item"}},
      {"space --list --count", {"--list", "--count"}},
      // Ninety-seventh hostile pass: one bundle as both stages was a "two-stage screen" with rho 1;
      // checked before either is loaded (no bundle need exist).
      {"screen --preset tiny --source-model no_model --target-model ./no_model", {"--target-model is the --source-model"}},
      {"space --list --preset tiny", {"--list", "--preset"}},
      // Twentieth hostile pass: a forced ratio form was ignored under --raw-target; --k 5 --k 5 ran twice.
      {"train --data fp16.csv --out m --raw-target --normalize on", {"--normalize on", "--raw-target"}},
      {"transfer --source fp16.csv --target missing_column.csv --k 5 --k 5", {"--k", "twice"}},
      // Hundred-and-thirty-first hostile pass: "A subcommand is required", the word not named.
      {"data bogus", {"unknown data subcommand 'bogus'", "known: export, merge, combine, info, validate"}},
      {"data", {"carb data needs a subcommand first", "known: export"}},
      {"data --db x.db", {"carb data needs a subcommand first"}},
      {"arch --width 0", {"width"}},
      {"arch --width -1", {"width"}},
      {"arch --resolution 0", {"resolution"}},
      {"arch --resolution -224", {"resolution"}},
      {"arch --batch 0", {"batch"}},
      {"arch --batch -8", {"batch"}},
      {"arch --family resnet", {"resnet"}},
      {"arch --precision fp8", {"fp8"}},
      {"arch --depth 19", {"depth", "18", "20"}},
      {"arch --family bottleneck --depth 18", {"depth", "50"}},
      {"arch --depth 0", {"depth"}},
      {"arch --depth abc", {"depth", "abc"}},
      {"arch --width wide", {"width", "wide"}},
      {"arch --batch 1.5", {"batch", "1.5"}},
      // Twenty-third hostile pass: hex (and, below, leading zeros as octal) answered another
      // configuration; numbers on the command line follow a CSV cell's rule.
      {"arch --batch 0x10", {"--batch", "0x10", "not a whole decimal number"}},
      {"arch --width 0x0.8p0", {"--width", "0x0.8p0", "not a decimal number"}},
      {"arch --batch +8", {"--batch", "+8"}},
      {"arch --width 1e400", {"--width", "1e400", "out of range"}},
      {"space --preset tiny --shard 1/0x2", {"0x2"}},
      {"arch --format xml", {"format", "xml"}},
      {"space --preset nope", {"nope", "screen"}},
      {"space --count", {"preset"}},
      {"space --configs bad_line3.csv", {"bad_line3.csv", ":3"}},
      {"space --configs bad_family.csv", {"bad_family.csv", ":4", "resnet"}},
      {"space --configs missing_column.csv", {"missing_column.csv", "precision"}},
      {"space --configs no_such_file.csv", {"no_such_file.csv"}},
      {"space --preset tiny --configs bad_line3.csv", {"--preset", "--configs"}},
      {"space --preset tiny --shard 0/3", {"0/3"}},
      {"space --preset tiny --shard 4/3", {"4/3"}},
      {"space --preset tiny --shard 1/2x", {"1/2x"}},
      {"space --preset tiny --shard a/b", {"a/b"}},
      {"profile --preset tiny", {"--db"}},
      {"profile --preset tiny --db x.db --warmup -1", {"warmup"}},
      {"profile --preset tiny --db x.db --backend abacus", {"abacus", "cpu"}},
      {"profile --configs fp16.csv --db x.db", {"fp16"}},
      {"profile --preset tiny --db x.db --backend cuda --keep-memory", {"--keep-memory", "cpu"}},
      {"profile --preset tiny --db x.db --backend cuda --reference", {"--reference", "cpu"}},
      {"", {"subcommand"}},
      {"frobnicate", {"frobnicate"}},
  };
  // The profile runs load LibTorch (about a second of CPU), so a few run at a time.
  constexpr std::size_t kParallel = 4;
  const std::size_t n = sizeof cases / sizeof cases[0];
  std::vector<CliRun> runs(n);
  for (std::size_t i = 0; i < n; i += kParallel) {
    std::vector<std::future<CliRun>> batch;
    for (std::size_t k = i; k < std::min(n, i + kParallel); ++k)
      batch.push_back(
          std::async(std::launch::async, [&, k] { return carb(cases[k].args, "bad" + std::to_string(k)); }));
    for (std::size_t k = 0; k < batch.size(); ++k) runs[i + k] = batch[k].get();
  }
  for (std::size_t i = 0; i < n; ++i) {
    const BadCase& c = cases[i];
    const CliRun& r = runs[i];
    SCOPED_TRACE(std::string("carb ") + c.args + "\nstderr: " + r.err);
    EXPECT_NE(r.status, 0);
    EXPECT_LT(r.status, 64) << "a crash is not an error message";
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "exactly one line";
    for (const char* m : c.mentions) EXPECT_NE(r.err.find(m), std::string::npos) << "should mention " << m;
  }
  EXPECT_FALSE(fs::exists(scratch().dir() / "x.db")) << "bad input must be refused before creating the store";
}

// Twenty-eighth hostile pass: a shard past the configurations printed 0 without a word.
TEST(Cli, AnEmptyShardSaysSo) {
  const CliRun r = carb("space --preset tiny --count --shard 9/9");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "0\n");
  EXPECT_NE(r.err.find("shard 9/9 of 8 configurations is empty"), std::string::npos) << r.err;
  EXPECT_TRUE(carb("space --preset tiny --count --shard 1/2").err.empty());
}

// Twenty-third hostile pass: CLI11 read an integer flag's "010" as octal 8 (`predict --batch 010`
// answered batch 8) where a CSV cell's "010" is 10. Every numeric flag reads decimal.
TEST(Cli, LeadingZerosAreDecimalOnEveryIntegerFlag) {
  const CliRun padded = carb("arch --depth 018 --resolution 064 --batch 010 --width 00.5 --format json");
  const CliRun plain = carb("arch --depth 18 --resolution 64 --batch 10 --width 0.5 --format json");
  ASSERT_EQ(padded.status, 0) << padded.err;
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(nlohmann::json::parse(padded.out).at("config"), nlohmann::json::parse(plain.out).at("config"));
  EXPECT_EQ(nlohmann::json::parse(padded.out).at("config").at("batch"), 10);
  const CliRun counted = carb("space --preset screen --count --shard 01/03");
  ASSERT_EQ(counted.status, 0) << counted.err;
  EXPECT_EQ(counted.out, carb("space --preset screen --count --shard 1/3").out);
}

// A hostile tester: a decimal the option's type cannot hold got CLI11's "Could not convert: ...".
TEST(Cli, ANumberTheOptionCannotHoldIsSaidInCarbsWords) {
  for (const auto& [args, said] : std::vector<std::pair<std::string, std::string>>{
           {"arch --batch 99999999999", "--batch: '99999999999' is out of the range this option takes"},
           {"plan --preset tiny --count 3 --out never.csv --seed -1", "--seed: '-1' is out of the range this option takes"}}) {
    const CliRun r = carb(args);
    EXPECT_NE(r.status, 0) << args;
    EXPECT_EQ(r.err.find("Could not convert"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(said), std::string::npos) << r.err;
  }
}

// Eighteenth hostile pass: output that could not be written (a full disk) exited 0.
TEST(Cli, OutputThatCannotBeWrittenIsAFailure) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
  const std::string cmd = std::string("'") + CARB_BINARY + "' space --preset tiny > /dev/full 2>/dev/null";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

TEST(Cli, SpaceCountsScreen) {
  const CliRun r = carb("space --preset screen --count");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "3072\n");
  EXPECT_TRUE(r.err.empty()) << r.err;
  const CliRun j = carb("space --preset screen --count --format json");
  EXPECT_EQ(j.status, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out).at("count").get<int>(), 3072);
}

TEST(Cli, SpaceShardCountsAddUp) {
  int sum = 0;
  for (int k = 1; k <= 3; ++k) {
    const CliRun r = carb("space --preset screen --count --shard " + std::to_string(k) + "/3");
    ASSERT_EQ(r.status, 0) << r.err;
    sum += std::stoi(r.out);
  }
  EXPECT_EQ(sum, 3072);
}

TEST(Cli, SpaceConfigsCsvRoundTrips) {
  const CliRun csv = carb("space --preset tiny");
  ASSERT_EQ(csv.status, 0) << csv.err;
  write_file("tiny.csv", csv.out);
  const CliRun again = carb("space --configs tiny.csv");
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.out, csv.out);
}

// Twenty-sixth hostile pass: `--format table` printed the CSV.
TEST(Cli, SpaceTableIsATableOfTheSameConfigurations) {
  const CliRun csv = carb("space --preset tiny");
  const CliRun table = carb("space --preset tiny --format table");
  ASSERT_EQ(table.status, 0) << table.err;
  EXPECT_EQ(table.out.find(','), std::string::npos) << table.out.substr(0, 200);
  // One line per configuration plus the header (and any rule under it), the same first row.
  const auto lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  EXPECT_GE(lines(table.out), lines(csv.out));
  EXPECT_LE(lines(table.out), lines(csv.out) + 1);
  EXPECT_NE(table.out.find("basic"), std::string::npos);
  EXPECT_NE(table.out.find("resolution"), std::string::npos);
  // Thirtieth hostile pass: `--list --format csv` printed the table.
  const CliRun list_csv = carb("space --list --format csv");
  EXPECT_NE(list_csv.status, 0);
  EXPECT_NE(list_csv.err.find("--list prints a table or JSON"), std::string::npos) << list_csv.err;
  EXPECT_EQ(carb("space --list").status, 0);
}

TEST(Cli, ArchJsonParsesWithParams) {
  const CliRun r = carb("arch --family bottleneck --depth 50 --format json");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("params").get<int64_t>(), 25'557'032);
  EXPECT_TRUE(j.at("layers").is_array());
  EXPECT_EQ(j.at("config").at("family"), "bottleneck");
}

// Only `carb profile` needs LibTorch: the executable does not link it (it is loaded as a plugin),
// so every other subcommand starts without LibTorch's second of start-up.
TEST(Cli, ExecutableDoesNotLinkLibTorch) {
  const fs::path out = scratch().dir() / "ldd.out";
  ASSERT_EQ(std::system(("ldd '" + std::string(CARB_BINARY) + "' >'" + out.string() + "' 2>&1").c_str()), 0);
  const std::string deps = slurp(out);
  EXPECT_NE(deps.find("libcarb_core"), std::string::npos) << deps;
  EXPECT_EQ(deps.find("libtorch"), std::string::npos) << deps;
  EXPECT_EQ(deps.find("libc10"), std::string::npos) << deps;
}

TEST(Cli, BrokenTorchPluginIsAOneLineError) {
  write_file("not_a_plugin.so", "this is not a shared library\n");
  ASSERT_EQ(setenv("CARB_TORCH_PLUGIN", (scratch().dir() / "not_a_plugin.so").c_str(), 1), 0);
  const CliRun r = carb("profile --preset tiny --db plugin.db");
  unsetenv("CARB_TORCH_PLUGIN");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find("LibTorch profiler plugin"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not_a_plugin.so"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(scratch().dir() / "plugin.db")) << "no store without a backend";
}

TEST(Cli, HelpExitsZeroForEachSubcommand) {
  for (const char* sub : {"space", "arch", "profile"}) {
    const CliRun r = carb(std::string(sub) + " --help");
    EXPECT_EQ(r.status, 0) << sub << ": " << r.err;
    EXPECT_NE(r.out.find("--format"), std::string::npos) << sub << " help should list --format";
  }
  const CliRun top = carb("--help");
  EXPECT_EQ(top.status, 0);
  for (const char* sub : {"space", "arch", "profile"}) EXPECT_NE(top.out.find(sub), std::string::npos) << sub;
}

}  // namespace
