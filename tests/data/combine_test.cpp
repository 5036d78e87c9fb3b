// Tests of combining measuring rounds: medians per configuration over the ok rounds, the rounds and
// spread columns, configurations seen in one round only, failed rounds, protocol mismatches and
// too few inputs. The rounds are small hand-written datasets (test data, not measurements).
#include "carb/combine.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "data/csv.hpp"
#include "data/provenance.hpp"
#include "temp_dir_test.hpp"
#include "util/stop_signal.hpp"

namespace carb {
namespace {

std::string slurp(const std::filesystem::path& f) {
  std::ifstream in(f, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

namespace fs = std::filesystem;

class Combine : public TempDirTest {
 protected:
  Combine() : TempDirTest("carb_combine_") {}

  static Record row(int batch, double latency, double memory, const std::string& protocol = "p1",
                    const std::string& passes = "10") {
    Record r;
    r.platform = "cpu-2t";
    r.config = {Family::basic, 18, 0.1, 32, batch, Precision::fp32};  // small: 0.6 MB of weights
    r.latency_ms = latency;
    r.peak_memory_mb = memory;
    r.extra = {{"protocol_id", protocol}, {"passes", passes}};
    return r;
  }

  fs::path write(const std::string& name, std::vector<Record> rows) const {
    Dataset d;
    d.rows = std::move(rows);
    d.extra_columns = {"protocol_id", "passes"};
    const fs::path f = dir_ / name;
    write_dataset_csv(d, f);
    return f;
  }

  static const Record& find(const Dataset& d, int batch) {
    for (const Record& r : d.rows)
      if (r.config.batch == batch) return r;
    throw std::runtime_error("no row with batch " + std::to_string(batch));
  }
};

// Ninety-sixth hostile pass: SIGINT/SIGTERM ended combine without a word, sometimes leaving
// temporaries; a signal while it reads stops it before the write, nothing written.
TEST_F(Combine, ASignalWhileReadingStopsItWritingNothing) {
  const auto a = write("a.csv", {row(1, 10, 5)});
  const auto b = write("b.csv", {row(1, 12, 5)});
  {
    detail::StopOnSignals signals;  // as the CLI's: the signal comes while the rounds are read
    ASSERT_EQ(std::raise(SIGTERM), 0);
    try {
      combine_rounds({a, b}, dir_ / "out.csv", "test");
      ADD_FAILURE() << "combine went on after a signal";
    } catch (const Interrupted& e) {
      EXPECT_EQ(std::string(e.what()), "data combine interrupted by SIGTERM; nothing was written; what was at --out is "
                                       "unchanged");
    }
  }
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().find("out"), std::string::npos) << e.path() << " was written";
  EXPECT_EQ(combine_rounds({a, b}, dir_ / "out.csv", "test").rows_out, 1u);  // no signal: written
}

TEST_F(Combine, TakesTheMedianOfEachQuantityOverTheRounds) {
  // Batch 1: a slow episode in round 2 (30 ms) is outvoted by rounds 1 and 3.
  const auto a = write("a.csv", {row(1, 10, 5, "p1", "10"), row(2, 20, 8, "p1", "40")});
  const auto b = write("b.csv", {row(1, 30, 5, "p1", "12"), row(2, 22, 8, "p1", "20")});
  const auto c = write("c.csv", {row(1, 11, 5, "p1", "11")});
  const CombineSummary s = combine_rounds({a, b, c}, dir_ / "out.csv", "test");
  EXPECT_EQ(s.rounds, 3u);
  EXPECT_EQ(s.rows_out, 2u);
  EXPECT_EQ(s.combined, 2u);
  const Dataset d = read_dataset_csv(dir_ / "out.csv");
  ASSERT_EQ(d.rows.size(), 2u);
  const Record& b1 = find(d, 1);
  EXPECT_DOUBLE_EQ(*b1.latency_ms, 11);
  EXPECT_DOUBLE_EQ(*b1.peak_memory_mb, 5);
  EXPECT_EQ(b1.extra.at("passes"), "11");
  EXPECT_EQ(b1.extra.at("rounds"), "3");
  EXPECT_DOUBLE_EQ(std::stod(b1.extra.at("latency_round_spread")), 2.0);  // 30 / 10 - 1
  EXPECT_EQ(b1.extra.at("protocol_id"), "p1");
  // Two rounds: the median is their mean.
  const Record& b2 = find(d, 2);
  EXPECT_DOUBLE_EQ(*b2.latency_ms, 21);
  EXPECT_EQ(b2.extra.at("passes"), "30");
  EXPECT_EQ(b2.extra.at("rounds"), "2");
  EXPECT_FALSE(b2.energy_j) << "a quantity no round measured stays empty";
}

// Thirty-first session: the combined record is the last round's, which may be of an export made
// before carb recorded the device's memory: the memory an earlier round's record holds is kept.
TEST_F(Combine, TheDevicesMemoryOneRoundsRecordLacksIsKept) {
  const auto write_with = [&](const std::string& name, double latency, const nlohmann::json& info) {
    Dataset d;
    d.rows = {row(1, latency, 5)};
    d.extra_columns = {"protocol_id", "passes"};
    const nlohmann::json settings = {{"warmup", 10}, {"backend", "cpu"}, {"platform_info", info}};
    write_dataset_with_provenance(d, dir_ / name, {{"kind", "carb dataset"}, {"protocols", {{"p1", settings}}}});
    return dir_ / name;
  };
  const nlohmann::json older = {{"cpu_model", "AMD EPYC 7B13"}};
  nlohmann::json newer = older;
  newer["device_memory_mb"] = 25276;
  const auto a = write_with("a.csv", 10, newer), b = write_with("b.csv", 11, older);
  for (const auto& rounds : {std::vector<fs::path>{a, b}, std::vector<fs::path>{b, a}}) {
    const CombineSummary s = combine_rounds(rounds, dir_ / "out.csv", "test", true);
    const auto info = read_provenance(dir_ / "out.csv")["protocols"]["p1"]["platform_info"];
    EXPECT_EQ(info.value("device_memory_mb", 0), 25276) << rounds.front();
    EXPECT_TRUE(s.warnings.empty()) << s.warnings.front();
  }
  // Another memory: said, and the last round's kept (a hostile tester: taken without a word).
  nlohmann::json smaller = newer;
  smaller["device_memory_mb"] = 16000;
  const auto c = write_with("c.csv", 12, smaller);
  const CombineSummary s = combine_rounds({a, c}, dir_ / "out.csv", "test", true);
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_NE(s.warnings[0].find("protocol 'p1' has different settings in " + a.string() + " and " + c.string()),
            std::string::npos) << s.warnings[0];
  EXPECT_EQ(read_provenance(dir_ / "out.csv")["protocols"]["p1"]["platform_info"].value("device_memory_mb", 0), 16000);
  // Another device: refused, nothing written (medians over two machines are of neither).
  nlohmann::json intel = newer;
  intel["cpu_model"] = "Intel Xeon";
  const auto x = write_with("x.csv", 13, intel);
  try {
    combine_rounds({a, x}, dir_ / "other.csv", "test");
    ADD_FAILURE() << "rounds of two devices were combined";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("on 'cpu AMD EPYC 7B13' and " + x.string() + " on 'cpu Intel Xeon'"),
              std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "other.csv"));
}

// Forty-second hostile pass: a round in microseconds written as ms, combined with one in ms,
// gave medians 500x one round and half the other, without a word.
TEST_F(Combine, SaysWhenRoundsDisagreeMoreThanTenfold) {
  const auto a = write("a.csv", {row(1, 10, 5), row(2, 20, 8)});
  const auto b = write("b.csv", {row(1, 11, 5), row(2, 20000, 8)});
  const CombineSummary s = combine_rounds({a, b}, dir_ / "out.csv", "test");
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0].rfind("1 row combine rounds whose latencies are more than 11 times apart (first: cpu-2t "
                                "basic-18-w0.1-r32-b2-fp32, latency_round_spread 999",
                                0),
            0u)
      << s.warnings[0];
  EXPECT_EQ(s.to_json()["warnings"].size(), 1u);
  const auto c = write("c.csv", {row(1, 12, 5), row(2, 22, 8)});
  EXPECT_TRUE(combine_rounds({a, c}, dir_ / "out2.csv", "test").warnings.empty());
}

// Twenty-first hostile pass: with one round's reference_ms empty, the first round's stood beside the
// median latency, so the answer depended on the order of the files. A column is the median of the
// rounds that hold a number in it, whatever the order.
TEST_F(Combine, AnExtraColumnSomeRoundsLeaveEmptyIsTheMedianOfTheOthersInAnyOrder) {
  Record r1 = row(1, 10, 5), r2 = row(1, 20, 5), r3 = row(1, 12, 5);
  r1.extra["reference_ms"] = "3", r2.extra["reference_ms"] = "", r3.extra["reference_ms"] = "9";
  const auto write_with_ref = [&](const std::string& name, Record r) {
    Dataset d;
    d.rows = {std::move(r)};
    d.extra_columns = {"protocol_id", "passes", "reference_ms"};
    write_dataset_csv(d, dir_ / name);
    return dir_ / name;
  };
  const auto a = write_with_ref("a.csv", r1), b = write_with_ref("b.csv", r2), c = write_with_ref("c.csv", r3);
  for (const auto& order : {std::vector<fs::path>{a, b, c}, std::vector<fs::path>{c, b, a}}) {
    combine_rounds(order, dir_ / "out.csv", "test", true);
    const Dataset d = read_dataset_csv(dir_ / "out.csv");
    EXPECT_DOUBLE_EQ(*d.rows.at(0).latency_ms, 12);
    EXPECT_DOUBLE_EQ(std::stod(d.rows.at(0).extra.at("reference_ms")), 6);
  }
}

// Thirty-fifth hostile pass: a user's job ids, sample ids and hashes in an extra column, the same in
// every round, were rewritten to 6 significant digits (10 distinct job ids became one, 1234e56 became
// 1.234e+59). Where the rounds agree, the text is kept; a median is written so it reads back exactly.
TEST_F(Combine, AnExtraColumnTheRoundsAgreeOnIsKeptAsWritten) {
  const auto with = [&](const std::string& name, double latency, const std::string& median_col) {
    Record r = row(1, latency, 5);
    r.extra["job_id"] = "1796236840", r.extra["sample_id"] = "00012345678", r.extra["commit"] = "1234e56";
    r.extra["reference_ms"] = median_col;
    Dataset d;
    d.rows = {r};
    d.extra_columns = {"protocol_id", "passes", "job_id", "sample_id", "commit", "reference_ms"};
    write_dataset_csv(d, dir_ / name);
    return dir_ / name;
  };
  combine_rounds({with("a.csv", 10, "1.23456789"), with("b.csv", 12, "1.23456791")}, dir_ / "out.csv", "test");
  const Record r = read_dataset_csv(dir_ / "out.csv").rows.at(0);
  EXPECT_EQ(r.extra.at("job_id"), "1796236840");
  EXPECT_EQ(r.extra.at("sample_id"), "00012345678");
  EXPECT_EQ(r.extra.at("commit"), "1234e56");
  EXPECT_DOUBLE_EQ(std::stod(r.extra.at("reference_ms")), (1.23456789 + 1.23456791) / 2);  // not 1.23457
}

// A README walkthrough: combining the shipped rounds again wrote load_avg_1m 1.8800000000000001 and
// latency_cv 0.057762100000000004 where the rounds' readings have a few digits: the mean of the
// middle two, in binary. Medians are written as the decimals they are.
TEST_F(Combine, AMedianOfDecimalReadingsIsWrittenAsADecimal) {
  const auto with = [&](const std::string& name, double latency, const std::string& load) {
    Record r = row(1, latency, 5);
    r.extra["load_avg_1m"] = load;
    Dataset d;
    d.rows = {r};
    d.extra_columns = {"protocol_id", "passes", "load_avg_1m"};
    write_dataset_csv(d, dir_ / name);
    return dir_ / name;
  };
  // The binary means are not the decimal ones.
  ASSERT_EQ(csv::format_number((0.1 + 0.2) / 2), "0.15000000000000002");
  ASSERT_EQ(csv::format_number((2.1 + 2.2) / 2), "2.1500000000000004");
  combine_rounds({with("a.csv", 2.1, "0.1"), with("b.csv", 2.2, "0.2")}, dir_ / "out.csv", "test");
  const std::string text = slurp(dir_ / "out.csv");
  const Record r = read_dataset_csv(dir_ / "out.csv").rows.at(0);
  EXPECT_EQ(r.extra.at("load_avg_1m"), "0.15") << text;
  EXPECT_EQ(csv::format_number(r.latency_ms), "2.15") << text;
  EXPECT_EQ(text.find("0000"), std::string::npos) << text;
  // An odd count's median is one round's own reading, to the last digit (a review: it was rounded to
  // 15 digits); an even count's mean keeps every digit it has (1 and 0.001: 0.5005, not 0.5).
  combine_rounds({with("a.csv", 0.9206117162162163, "1"), with("b.csv", 0.95, "0.001"),
                  with("c.csv", 0.91, "5")},
                 dir_ / "odd.csv", "test");
  const Record odd = read_dataset_csv(dir_ / "odd.csv").rows.at(0);
  EXPECT_EQ(*odd.latency_ms, 0.9206117162162163);
  EXPECT_EQ(odd.extra.at("load_avg_1m"), "1");
  combine_rounds({with("a.csv", 2.1, "1"), with("b.csv", 2.2, "0.001")}, dir_ / "even.csv", "test");
  EXPECT_EQ(read_dataset_csv(dir_ / "even.csv").rows.at(0).extra.at("load_avg_1m"), "0.5005");
}

// Twenty-eighth hostile pass: rounds measured at 1 and 2 threads under one protocol id were combined,
// their `threads` the median 1.5. Settings are not medians: rounds that disagree on one are refused,
// and rounds that agree keep it as written.
TEST_F(Combine, RoundsMeasuredWithDifferentSettingsAreRefused) {
  const auto write_with = [&](const std::string& name, const std::string& threads) {
    Record r = row(1, 10 + threads.size() + std::stod(threads), 5);
    r.extra["threads"] = threads;
    Dataset d;
    d.rows = {std::move(r)};
    d.extra_columns = {"protocol_id", "passes", "threads"};
    write_dataset_csv(d, dir_ / name);
    return dir_ / name;
  };
  const auto one = write_with("one.csv", "1"), two = write_with("two.csv", "2");
  try {
    combine_rounds({one, two}, dir_ / "out.csv", "test");
    ADD_FAILURE() << "rounds at 1 and 2 threads were combined";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("threads 1 and 2"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "out.csv"));
  Record other = row(1, 12, 5);
  other.extra["threads"] = "2";
  Dataset d;
  d.rows = {other};
  d.extra_columns = {"protocol_id", "passes", "threads"};
  write_dataset_csv(d, dir_ / "two_b.csv");
  combine_rounds({two, dir_ / "two_b.csv"}, dir_ / "out.csv", "test");
  EXPECT_EQ(read_dataset_csv(dir_ / "out.csv").rows.at(0).extra.at("threads"), "2");
}

// Thirteenth hostile pass: a round that wrote the width as another spelling of the same channels
// was kept apart (and then refused as a duplicate of an output file) instead of combined.
TEST_F(Combine, RoundsThatSpellAWidthOtherwiseAreCombined) {
  Record respelled = row(1, 30, 5);
  respelled.config.width = 0.1000001;
  const auto a = write("a.csv", {row(1, 10, 5)});
  const auto b = write("b.csv", {respelled});
  const auto c = write("c.csv", {row(1, 11, 5)});
  const CombineSummary s = combine_rounds({a, b, c}, dir_ / "out.csv", "test");
  EXPECT_EQ(s.rows_out, 1u);
  const Dataset d = read_dataset_csv(dir_ / "out.csv");
  ASSERT_EQ(d.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(*d.rows[0].latency_ms, 11);
  EXPECT_EQ(d.rows[0].extra.at("rounds"), "3");
  EXPECT_DOUBLE_EQ(d.rows[0].config.width, 0.1);  // the first round's spelling
}

TEST_F(Combine, KeepsConfigurationsOfOneRoundAndIgnoresFailedRounds) {
  Record oom = row(4, 0, 0);
  oom.status = Status::oom;
  oom.latency_ms.reset();
  oom.peak_memory_mb.reset();
  Record error = row(8, 0, 0);
  error.status = Status::error;
  error.latency_ms.reset();
  error.peak_memory_mb.reset();
  const auto a = write("a.csv", {row(1, 10, 5), oom, error});
  const auto b = write("b.csv", {row(1, 14, 5), row(4, 40, 9), row(16, 60, 2)});
  combine_rounds({a, b}, dir_ / "out.csv", "test");
  const Dataset d = read_dataset_csv(dir_ / "out.csv");
  ASSERT_EQ(d.rows.size(), 4u);
  const Record& b4 = find(d, 4);  // oom in round 1, ok in round 2: the ok round alone
  EXPECT_EQ(b4.status, Status::ok);
  EXPECT_DOUBLE_EQ(*b4.latency_ms, 40);
  EXPECT_EQ(b4.extra.at("rounds"), "1");
  EXPECT_FALSE(b4.extra.count("latency_round_spread")) << "one round has no spread: left empty";
  const Record& b8 = find(d, 8);  // never ok: kept as measured
  EXPECT_EQ(b8.status, Status::error);
  EXPECT_EQ(b8.extra.at("rounds"), "0");
  EXPECT_EQ(find(d, 16).extra.at("rounds"), "1");
  const auto prov = read_provenance(dir_ / "out.csv");
  EXPECT_EQ(prov["rounds"].size(), 2u);
  EXPECT_EQ(prov["rows"], 4);
}

// Seventy-seventh hostile pass: two rounds out of memory at the same configurations were refused as
// "the same round twice"; rounds sharing no configuration were "combined" without a word; and a
// round without energy was blamed on the output, never written.
TEST_F(Combine, RoundsWithoutAnOkRowOrWithoutACommonOneAreSaidAndABadRowNamesItsRounds) {
  Record oom = row(4, 0, 0);
  oom.status = Status::oom;
  oom.latency_ms.reset();
  oom.peak_memory_mb.reset();
  Record oom_again = oom;
  oom_again.extra["passes"] = "7";
  const auto a = write("oom-a.csv", {oom});
  const auto b = write("oom-b.csv", {oom_again});
  const CombineSummary failures = combine_rounds({a, b}, dir_ / "oom.csv", "test");
  ASSERT_EQ(failures.warnings.size(), 1u);
  EXPECT_NE(failures.warnings[0].find("no round measured any configuration ok"), std::string::npos) << failures.warnings[0];
  const auto c = write("c.csv", {row(1, 10, 5)});
  const auto d = write("d.csv", {row(2, 20, 8)});
  const CombineSummary disjoint = combine_rounds({c, d}, dir_ / "disjoint.csv", "test");
  ASSERT_EQ(disjoint.warnings.size(), 1u);
  EXPECT_NE(disjoint.warnings[0].find("nothing was combined"), std::string::npos) << disjoint.warnings[0];
  Record with_energy = row(1, 12, 5), with_energy2 = row(2, 22, 8);
  with_energy.energy_j = 0.01, with_energy2.energy_j = 0.02;
  const auto e = write("e.csv", {with_energy, with_energy2});
  const auto f = write("f.csv", {row(1, 10, 5), row(8, 30, 9)});
  try {
    combine_rounds({e, f}, dir_ / "mixed.csv", "test");
    ADD_FAILURE() << "a round without energy beside one with it was combined";
  } catch (const DataError& err) {
    const std::string what = err.what();
    EXPECT_NE(what.find("combined from " + f.string()), std::string::npos) << what;
    EXPECT_EQ(what.find((dir_ / "mixed.csv").string()), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(dir_ / "mixed.csv"));
}

TEST_F(Combine, RefusesRoundsOfDifferentProtocols) {
  const auto a = write("a.csv", {row(1, 10, 5, "p1")});
  const auto b = write("b.csv", {row(1, 12, 5, "p2")});
  try {
    combine_rounds({a, b}, dir_ / "out.csv", "test");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("p2"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "out.csv"));
}

TEST_F(Combine, NeedsTwoRoundsAndWellFormedInputs) {
  const auto a = write("a.csv", {row(1, 10, 5)});
  EXPECT_THROW(combine_rounds({a}, dir_ / "out.csv", "test"), InputError);
  const fs::path bad = dir_ / "bad.csv";
  std::ofstream(bad) << "platform,family\ncpu-2t,basic\n";
  EXPECT_THROW(combine_rounds({a, bad}, dir_ / "out.csv", "test"), DataError);
  EXPECT_FALSE(fs::exists(dir_ / "out.csv"));
  // A FIFO is refused without being opened: the check for a round given twice blocked in its open.
  const fs::path fifo = dir_ / "fifo.csv";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    combine_rounds({fifo, a}, dir_ / "out.csv", "test");
    ADD_FAILURE() << "a FIFO was combined";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("fifo.csv: is a named pipe (FIFO)"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "out.csv"));
}

// The same round given twice would pass for two agreeing measurements (spread 0).
TEST_F(Combine, RefusesTheSameRoundTwice) {
  const auto a = write("a.csv", {row(1, 10, 5)});
  const auto b = write("b.csv", {row(1, 12, 5)});
  EXPECT_THROW(combine_rounds({a, b, a}, dir_ / "out.csv", "test"), InputError);
  EXPECT_THROW(combine_rounds({a, dir_ / "." / "a.csv"}, dir_ / "out.csv", "test"), InputError);
  fs::copy_file(a, dir_ / "copy.csv");
  try {
    combine_rounds({a, dir_ / "copy.csv"}, dir_ / "out.csv", "test");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has the same contents as"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "out.csv"));
}

// A configuration twice inside one round is not a second round of it.
TEST_F(Combine, RefusesDuplicatesInsideARound) {
  const auto a = write("a.csv", {row(1, 10, 5), row(1, 30, 5)});
  const auto b = write("b.csv", {row(1, 12, 5)});
  EXPECT_THROW(combine_rounds({a, b}, dir_ / "out.csv", "test"), DataError);
  EXPECT_FALSE(fs::exists(dir_ / "out.csv"));
}

TEST_F(Combine, NeverReplacesAFileItDidNotWrite) {
  const auto a = write("a.csv", {row(1, 10, 5)});
  const auto b = write("b.csv", {row(1, 12, 5)});
  std::ofstream(dir_ / "notes.csv") << "mine";
  EXPECT_THROW(combine_rounds({a, b}, dir_ / "notes.csv", "test"), InputError);
  EXPECT_NO_THROW(combine_rounds({a, b}, dir_ / "notes.csv", "test", /*force=*/true));
}

// Seventh hostile pass: a combine of two unrelated rounds replaced the shipped 1,958-row combined
// dataset with 8 rows, because it was an earlier combine's output.
TEST_F(Combine, NeverDropsTheConfigurationsOfTheCombinedFileItReplaces) {
  const auto a = write("a.csv", {row(1, 10, 5), row(2, 20, 8)});
  const auto b = write("b.csv", {row(1, 12, 5), row(2, 22, 8)});
  combine_rounds({a, b}, dir_ / "all.csv", "test");
  const auto c = write("c.csv", {row(4, 40, 9)});
  const auto d = write("d.csv", {row(4, 42, 9)});
  EXPECT_THROW(combine_rounds({c, d}, dir_ / "all.csv", "test"), InputError);
  EXPECT_EQ(read_dataset_csv(dir_ / "all.csv").rows.size(), 2u);
  const auto e = write("e.csv", {row(1, 11, 5), row(2, 21, 8), row(4, 41, 9)});
  EXPECT_NO_THROW(combine_rounds({a, b, e}, dir_ / "all.csv", "test"));  // every configuration kept
  // Ninth hostile pass: a combine of fewer rounds replaced one of more (3 rounds there, 2 here).
  EXPECT_THROW(combine_rounds({a, b}, dir_ / "all.csv", "test"), InputError);
  EXPECT_NO_THROW(combine_rounds({c, d}, dir_ / "all.csv", "test", /*force=*/true));
}

// Fourth hostile pass: the sidecar is the --out with .json for its extension, so "--out a" replaced
// a.csv's sidecar and "--out x.json" wrote the CSV and its sidecar to one file; and a sidecar of
// another kind was replaced when its CSV did not exist. An --out must end in .csv (even with
// --force), and a sidecar that is not an earlier output of this command is never replaced.
TEST_F(Combine, AnOutputNeverTakesAnotherDatasetsSidecar) {
  const auto a = write("a.csv", {row(1, 10, 5)});
  const auto b = write("b.csv", {row(1, 12, 5)});
  std::ofstream(dir_ / "a.json") << R"({"kind": "carb-export", "host": "h200"})";
  const std::string before = slurp(dir_ / "a.json");
  for (const char* out : {"a", "a.CSV", "a.txt", "x.json"}) {
    EXPECT_THROW(combine_rounds({a, b}, dir_ / out, "test"), InputError) << out;
    EXPECT_THROW(combine_rounds({a, b}, dir_ / out, "test", /*force=*/true), InputError) << out;
  }
  EXPECT_EQ(slurp(dir_ / "a.json"), before);
  std::ofstream(dir_ / "lonely.json") << R"({"kind": "carb-export"})";  // its CSV is elsewhere now
  EXPECT_THROW(combine_rounds({a, b}, dir_ / "lonely.csv", "test"), InputError);
  EXPECT_FALSE(fs::exists(dir_ / "lonely.csv"));
  EXPECT_NO_THROW(combine_rounds({a, b}, dir_ / "fresh.csv", "test"));
  EXPECT_NO_THROW(combine_rounds({a, b}, dir_ / "fresh.csv", "test"));  // its own earlier output
}

// Second hostile pass: the output named an input and replaced its measurements; a round rewritten
// with other line endings or row order passed for a second round; a combined file counted its
// rounds again; rounds of two platforms made a file every reader refuses.
TEST_F(Combine, RefusesAnInputAsOutputAndRoundsThatAreNotNewMeasurements) {
  const auto a = write("a.csv", {row(1, 10, 5), row(2, 20, 8)});
  const auto b = write("b.csv", {row(1, 12, 5), row(2, 22, 8)});
  EXPECT_THROW(combine_rounds({a, b}, a, "test"), InputError);
  EXPECT_THROW(combine_rounds({a, b}, a, "test", /*force=*/true), InputError);
  const auto reversed = write("r.csv", {row(2, 20, 8), row(1, 10, 5)});
  EXPECT_THROW(combine_rounds({a, reversed}, dir_ / "out.csv", "test"), InputError);
  combine_rounds({a, b}, dir_ / "ab.csv", "test");
  EXPECT_THROW(combine_rounds({dir_ / "ab.csv", b}, dir_ / "out.csv", "test"), InputError);
  Record other = row(1, 11, 5);
  other.platform = "gpu";
  const auto g = write("g.csv", {other});
  EXPECT_THROW(combine_rounds({a, g}, dir_ / "out.csv", "test"), DataError);
  EXPECT_FALSE(fs::exists(dir_ / "out.csv"));
  // Seventy-second hostile pass: the error named the output (twice), not the rounds.
  try {
    combine_rounds({a, b, g}, dir_ / "out.csv", "test");
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(g.string() + " (basic-18-w0.1-r32-b1-fp32) is platform 'gpu', but " +
                                         a.string() + " is platform 'cpu-2t'"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("out.csv"), std::string::npos) << e.what();
  }
}

// Hundred-and-thirty-first hostile pass: an export of a store part-way and another after it finished
// (or the first lines of a round) combined as two rounds agreeing exactly. Independent timings never
// agree to every digit: rounds that do at every configuration both measured are refused, and where
// some do, that is said.
TEST_F(Combine, RoundsThatHoldTheSameTimingsAreOneMeasurementNotTwo) {
  const auto full = write("full.csv", {row(1, 10.25313, 5), row(2, 20.51274, 8), row(4, 41.00932, 9)});
  const auto part = write("part.csv", {row(1, 10.25313, 5), row(2, 20.51274, 8)});
  try {
    combine_rounds({full, part}, dir_ / "out.csv", "test");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), part.string() + " holds the same measurements as " + full.string() +
                                         " at all 2 configurations both measured ok (first: basic-18-w0.1-r32-b1-fp32, "
                                         "latency_ms 10.25313 in both): a part of one round, or two exports of one "
                                         "store, is not another round");
  }
  EXPECT_FALSE(fs::exists(dir_ / "out.csv"));
  const auto one = write("one.csv", {row(4, 41.00932, 9)});
  EXPECT_THROW(
      try { combine_rounds({full, one}, dir_ / "out.csv", "test"); } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("at the one configuration both measured ok (basic-18-w0.1-r32-b4-fp32"),
                  std::string::npos)
            << e.what();
        throw;
      },
      InputError);
  // Measured again in part: combined, and said.
  const auto redone = write("redone.csv", {row(1, 10.25313, 5), row(2, 21.00417, 8), row(4, 40.11873, 9)});
  const CombineSummary s = combine_rounds({full, redone}, dir_ / "out.csv", "test");
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0], "1 of the 3 configurations measured ok in " + full.string() + " and " + redone.string() +
                               " hold the same measurement in both (first: basic-18-w0.1-r32-b1-fp32, latency_ms "
                               "10.25313): not measured again between them (exports of one store?), they count as two "
                               "rounds that agree exactly");
  // Memory agrees between rounds as a rule: it decides nothing. Nor do latencies rounded to a few
  // digits, which independent rounds share (a review: two hand-rounded rounds were refused).
  const auto again = write("again.csv", {row(1, 10.5, 5), row(2, 20.25, 8), row(4, 41.5, 9)});
  EXPECT_TRUE(combine_rounds({full, again}, dir_ / "out2.csv", "test").warnings.empty());
  const auto rounded = write("rounded.csv", {row(1, 10.5, 6), row(2, 20.25, 9), row(4, 41.5, 10)});
  EXPECT_TRUE(combine_rounds({again, rounded}, dir_ / "out3.csv", "test").warnings.empty());
}

}  // namespace
}  // namespace carb
