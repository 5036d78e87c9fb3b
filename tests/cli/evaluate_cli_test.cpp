// `carb evaluate --external` through the binary, on shipped measurements: rows measured under
// another protocol than the model's data are said, and those of configurations it trained on are
// not called in-sample (ninety-fourth hostile pass: an older campaign's rows were scored without a
// word, and 1,566 of them called "in-sample ... optimistic").
#include <gtest/gtest.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_run.hpp"
#include "profile/carb_process.hpp"

namespace {

using namespace carb_cli_test;
using carb_cli_test::carb;  // the helper, not namespace carb

TEST(EvaluateCli, RowsOfAnotherProtocolAreSaidAndNeverInSample) {
  const std::string data = std::string(CARB_SOURCE_DIR) + "/data/";
  const CliRun t = carb("train --data " + data + "cpu-1t.csv --out ev_model --fast", "ev_train");
  ASSERT_EQ(t.status, 0) << t.err;
  // The shipped data predates recorded device memory, and no --device-memory-mb was given: said.
  EXPECT_NE(t.out.find("device: memory unknown (the data's provenance records none"), std::string::npos) << t.out;
  // The previous campaign of the same platform, under protocol pf6805e84f2ef.
  const CliRun other = carb("evaluate --model ev_model --data " + data + "extra/cpu-1t-ref.csv --external --quick "
                            "--format json", "ev_other");
  ASSERT_EQ(other.status, 0) << other.err;
  const auto doc = nlohmann::json::parse(other.out);
  const std::string all = doc["warnings"].dump();
  EXPECT_NE(all.find("653 of 653 rows were measured under protocol 'pf6805e84f2ef', the model's data (cpu-1t.csv) "
                     "under 'pd102136a4bb8': their errors include the difference between the protocols"),
            std::string::npos) << all;
  // Which settings make the difference, from the two files' provenance (the command, the meter
  // check and the machine's facts are a record, not the protocol).
  EXPECT_NE(all.find("'pf6805e84f2ef' differs from the model's 'pd102136a4bb8' in keep_memory (none recorded "
                     "against true), max_timed_s (0.6 against 2.0)"),
            std::string::npos) << all;
  EXPECT_NE(all.find("rows are configurations the model trained on, measured under another protocol"), std::string::npos)
      << all;
  EXPECT_EQ(all.find("in-sample"), std::string::npos) << all;
  EXPECT_EQ(doc["split"]["in_sample_rows"], 0) << doc["split"].dump();
  EXPECT_GT(doc["split"]["rows_in_training"].get<int>(), 0) << doc["split"].dump();
  // Its own data, under its own protocol: in-sample where it trained, and no protocol said.
  const CliRun own = carb("evaluate --model ev_model --data " + data + "cpu-1t.csv --external --quick --format json",
                          "ev_own");
  ASSERT_EQ(own.status, 0) << own.err;
  const auto mine = nlohmann::json::parse(own.out);
  EXPECT_EQ(mine["warnings"].dump().find("measured under protocol"), std::string::npos) << mine["warnings"].dump();
  EXPECT_GT(mine["split"]["in_sample_rows"].get<int>(), 0);
  // The report scores the same rows and says the same (hundred-and-seventeenth hostile pass: its
  // accuracy table stood without the protocol evaluate names).
  const CliRun report = carb("report --data " + data + "extra/cpu-1t-ref.csv --model ev_model --out ev_report.html",
                             "ev_report");
  ASSERT_EQ(report.status, 0) << report.err;
  const std::string html = slurp(scratch().dir() / "ev_report.html");
  EXPECT_NE(html.find("rows were measured under protocol &#39;pf6805e84f2ef&#39;, the model&#39;s data (cpu-1t.csv) "
                      "under &#39;pd102136a4bb8&#39;: their errors include the difference between the protocols"),
            std::string::npos);
  const CliRun own_report = carb("report --data " + data + "cpu-1t.csv --model ev_model --out ev_own.html", "ev_own_report");
  ASSERT_EQ(own_report.status, 0) << own_report.err;
  const std::string own_html = slurp(scratch().dir() / "ev_own.html");
  EXPECT_EQ(own_html.find("measured under protocol"), std::string::npos);
}

// Hundred-and-eleventh hostile pass: SIGINT or SIGTERM killed `carb evaluate` without a word (it
// never caught them). It stops before its next section, says so in one line, and prints nothing.
TEST(EvaluateCli, ASignalStopsItWithALineAndNoOutput) {
  const std::string data = std::string(CARB_SOURCE_DIR) + "/data/";
  const CliRun t = carb("train --data " + data + "cpu-1t.csv --out ev_stop_model --fast", "ev_stop_train");
  ASSERT_EQ(t.status, 0) << t.err;
  for (const int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig == SIGINT ? "SIGINT" : "SIGTERM");
    const auto dir = scratch().dir();
    // A name of its own per run: the first run's stderr must not read as the second's.
    const std::string tag = sig == SIGINT ? "int" : "term";
    const auto out = dir / ("ev_stop_" + tag + ".out"), err = dir / ("ev_stop_" + tag + ".err");
    const pid_t pid = carb::test::spawn_carb({"evaluate", "--model", (dir / "ev_stop_model").string(), "--data",
                                              data + "cpu-1t.csv", "--verbose"},
                                             out, err);
    ASSERT_GT(pid, 0);
    // Signalled once it has begun its sections (--verbose names each on stderr).
    const auto t0 = std::chrono::steady_clock::now();
    while (carb::test::slurp(err).find("evaluate: ") == std::string::npos &&
           std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60))
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_EQ(::kill(pid, sig), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "evaluate died by the signal instead of stopping";
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
    const std::string said = carb::test::slurp(err);
    EXPECT_NE(said.find(std::string("carb: evaluation interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") +
                        "; nothing was written"),
              std::string::npos)
        << said;
    EXPECT_EQ(carb::test::slurp(out), "");
  }
}

}  // namespace
