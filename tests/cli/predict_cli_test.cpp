// `carb predict` on many configurations through the binary: answered a chunk at a time, the CSV
// written as it is answered and equal to the library's answer for the whole list, with progress on
// stderr (ninety-first hostile pass: a million configurations ran for minutes with nothing written
// and no word, and a kill lost everything).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <regex>
#include <thread>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/synthetic_datasets.hpp"
#include "carb/dataset.hpp"
#include "carb/prediction_io.hpp"
#include "cli/cli_run.hpp"
#include "profile/carb_process.hpp"

namespace {

using namespace carb_cli_test;
using carb_cli_test::carb;  // the helper, not namespace carb

// Distinct basic fp32 configurations: 10 depths x 10 widths x `resolutions` (32, then every
// `step` pixels) x 25 batches.
std::vector<::carb::Config> basic_grid(int resolutions, int step) {
  std::vector<::carb::Config> configs;
  for (int depth = 10; depth <= 28; depth += 2)
    for (int w = 1; w <= 10; ++w)
      for (int r = 0; r < resolutions; ++r)
        for (int batch = 1; batch <= 25; ++batch)
          configs.push_back({::carb::Family::basic, depth, 0.25 * w, 32 + step * r, batch, ::carb::Precision::fp32});
  return configs;
}

TEST(PredictCli, ManyConfigurationsAreWrittenAsAnsweredWithProgressAndEqualTheWholeAnswer) {
  const auto configs = basic_grid(20, 16);  // 50,000 distinct networks and shapes
  ASSERT_EQ(configs.size(), 50000u);
  {
    std::ofstream out(scratch().dir() / "many.csv");
    ::carb::write_configs_csv(configs, out);
  }
  const auto& model = ::carb::testing::synthetic_source_model();
  model.save(scratch().dir() / "many_model");
  const CliRun r = carb("predict --model many_model --configs many.csv --format csv --confidence 0.9", "many");
  ASSERT_EQ(r.status, 0) << r.err;
  std::ostringstream whole;
  const auto loaded = ::carb::CarbModel::load(scratch().dir() / "many_model");
  ::carb::write_predictions_csv(loaded.predict(configs, {}, 0.9), loaded.targets(), whole, nullptr, 0.9,
                                ::carb::held_device(loaded));
  EXPECT_TRUE(r.out == whole.str()) << r.out.size() << " bytes against " << whole.str().size();
  EXPECT_EQ(r.err.rfind("carb predict: 50000 configurations, 20000 at a time\n", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("carb predict: 50000 of 50000 configurations, "), std::string::npos) << r.err;
  // Fewer than that: no progress line.
  const CliRun few = carb("predict --model many_model --preset tiny --format csv", "few");
  ASSERT_EQ(few.status, 0) << few.err;
  EXPECT_EQ(few.err.find("carb predict:"), std::string::npos) << few.err;
}

// Ninety-sixth hostile pass: SIGINT or SIGTERM ended a streamed CSV between chunks, whole rows and
// no word, an answer that looked complete. It now stops after the chunk in hand, exits 128 + the
// signal and says how many configurations the output holds, which is what the file holds.
TEST(PredictCli, AnInterruptedCsvSaysHowMuchOfTheAnswerItHolds) {
  const auto configs = basic_grid(40, 8);  // 100,000 distinct: five chunks
  ASSERT_EQ(configs.size(), 100000u);
  const fs::path dir = scratch().dir();
  {
    std::ofstream out(dir / "stop.csv");
    ::carb::write_configs_csv(configs, out);
  }
  ::carb::testing::synthetic_source_model().save(dir / "stop_model");
  for (const int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
    // A name of its own per run: the first run's output must not read as the second's.
    const std::string tag = sig == SIGINT ? "int" : "term";
    const fs::path out = dir / ("stop_" + tag + ".out"), err = dir / ("stop_" + tag + ".err");
    const pid_t pid = ::carb::test::spawn_carb({"predict", "--model", (dir / "stop_model").string(), "--configs",
                                                 (dir / "stop.csv").string(), "--format", "csv"}, out, err);
    ASSERT_GT(pid, 0);
    const auto t0 = std::chrono::steady_clock::now();
    std::error_code ec;
    while ((!fs::exists(out) || fs::file_size(out, ec) == 0) && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_GT(fs::file_size(out, ec), 0u) << "predict wrote nothing in 60 s";
    ASSERT_EQ(::kill(pid, sig), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "predict died by the signal instead of stopping";
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    const std::string said = slurp(err);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(said, m, std::regex("carb: predict interrupted by SIG(INT|TERM); the output is "
                                                      "incomplete: it holds the answers for the first ([0-9]+) of "
                                                      "100000 configurations\n")))
        << said;
    const std::size_t held = std::stoul(m[2].str());
    EXPECT_GT(held, 0u);
    EXPECT_LT(held, 100000u);
    const std::string text = slurp(out);
    EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')), held + 1);  // and the header
    EXPECT_EQ(text.back(), '\n');
  }
  // Ninety-eighth hostile pass: with standard output failing it claimed the answers it never wrote.
  const fs::path err = dir / "stop_full.err";
  const pid_t pid = ::carb::test::spawn_carb({"predict", "--model", (dir / "stop_model").string(), "--configs",
                                              (dir / "stop.csv").string(), "--format", "csv"}, "/dev/full", err);
  ASSERT_GT(pid, 0);
  const auto t0 = std::chrono::steady_clock::now();
  while (slurp(err).find("20000 at a time") == std::string::npos && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  const int status = ::carb::test::wait_status(pid);
  ASSERT_TRUE(WIFEXITED(status)) << slurp(err);
  EXPECT_NE(WEXITSTATUS(status), 0);
  const std::string said = slurp(err);
  EXPECT_EQ(said.find("it holds the answers for the first"), std::string::npos) << said;
  EXPECT_TRUE(said.find("standard output could not be written either") != std::string::npos ||
              said.find("cannot write the output to standard output") != std::string::npos) << said;
}

// Hundred-and-first hostile pass: a JSON or table being written when SIGINT/SIGTERM came was cut
// mid-token (2,097,152 bytes of a JSON, inside a string) and nothing was said. The output is built
// whole and written under the signal guard: stopped while writing, it finishes and says the output
// is whole. Deterministic: the JSON goes into a pipe nobody reads until the signal is sent, so carb
// is blocked in its write when it arrives.
TEST(PredictCli, AJsonInterruptedWhileWrittenIsWrittenWhole) {
  const auto configs = basic_grid(40, 8);
  const fs::path dir = scratch().dir();
  {
    std::ofstream out(dir / "whole.csv");
    ::carb::write_configs_csv(configs, out);
  }
  ::carb::testing::synthetic_source_model().save(dir / "whole_model");
  for (const std::string format : {"json", "table"}) {
    SCOPED_TRACE(format);
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const fs::path err = dir / ("whole_" + format + ".err");
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      ::close(fds[1]);
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(e, 2);
      const std::string model = (dir / "whole_model").string(), list = (dir / "whole.csv").string();
      ::execl(CARB_BINARY, CARB_BINARY, "predict", "--model", model.c_str(), "--configs", list.c_str(), "--format",
              format.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ASSERT_GT(pid, 0);
    ::close(fds[1]);
    // The first byte: carb is writing (and, the pipe full, blocked there).
    char first = 0;
    ASSERT_EQ(::read(fds[0], &first, 1), 1) << slurp(err);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_EQ(::kill(pid, SIGTERM), 0);
    std::string text(1, first);
    char buf[65536];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;)
      if (n > 0) text.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    const int status = ::carb::test::wait_status(pid);
    ASSERT_TRUE(WIFEXITED(status)) << "predict died by the signal while writing";
    EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
    EXPECT_NE(slurp(err).find("carb: predict interrupted by SIGTERM; the output is whole: it holds the answers for all "
                              "100000 configurations"),
              std::string::npos)
        << slurp(err);
    if (format == "json") {
      const auto j = nlohmann::json::parse(text);  // throws on a cut document
      EXPECT_EQ(j["predictions"].size(), configs.size());
    } else {
      EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')), configs.size() + 2);  // head, rule
    }
  }
}

}  // namespace
