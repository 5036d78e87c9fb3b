// Tests of the RFC-4180 CSV reader/writer, strict number parsing and atomic writes.
#include "data/csv.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "carb/error.hpp"

namespace carb::csv {
namespace {

namespace fs = std::filesystem;

// The message of the DataError `f` throws, or "" when it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

TEST(DataCsv, PlainRowsAndLineNumbers) {
  const auto rows = parse("a,b,c\n1,2,3\n\n4,5,6\n", "t.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].fields, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(rows[1].line, 2u);
  EXPECT_EQ(rows[2].line, 4u);  // the blank line counts, but is not a record
  EXPECT_EQ(rows[2].fields, (std::vector<std::string>{"4", "5", "6"}));
}

TEST(DataCsv, QuotedFieldsHoldCommasQuotesAndNewlines) {
  const auto rows = parse("x,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"\nnext,1,2,3\n", "t.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].fields, (std::vector<std::string>{"x", "a,b", "say \"hi\"", "two\nlines"}));
  EXPECT_EQ(rows[1].line, 3u);  // the embedded newline advanced the line count
}

// A first field starting with a BOM was written bare and stripped on reading as the file's BOM
// (fuzz/regressions/fuzz_dataset_csv/csv_first_field_bom): it is quoted now and round-trips.
TEST(DataCsv, ALeadingBomInAFieldSurvivesTheRoundTrip) {
  std::ostringstream out;
  write_row(out, {"\xEF\xBB\xBFp", "x"});
  const auto rows = parse(out.str(), "bom.csv");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].fields[0], "\xEF\xBB\xBFp");
}

TEST(DataCsv, CrlfAndBomAreTolerated) {
  const auto rows = parse("\xEF\xBB\xBFh1,h2\r\n1,\"a\r\nb\"\r\n", "t.csv");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].fields[0], "h1");
  EXPECT_EQ(rows[1].fields, (std::vector<std::string>{"1", "a\nb"}));
}

TEST(DataCsv, EmptyFieldsAndNoFinalNewline) {
  const auto rows = parse("a,,c\n,,\n1,2,", "t.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].fields, (std::vector<std::string>{"a", "", "c"}));
  EXPECT_EQ(rows[1].fields, (std::vector<std::string>{"", "", ""}));
  EXPECT_EQ(rows[2].fields, (std::vector<std::string>{"1", "2", ""}));
}

TEST(DataCsv, SyntaxErrorsNameLineAndColumn) {
  EXPECT_EQ(error_of([] { parse("a,b\n1,\"open\n", "t.csv"); }), "t.csv:2:3: quoted field is never closed");
  EXPECT_EQ(error_of([] { parse("a,b\n1,\"x\"y\n", "t.csv"); }),
            "t.csv:2:6: unexpected text after a closing quote");
  EXPECT_NE(error_of([] { parse("a,b\nab\"c,1\n", "t.csv"); }).find("t.csv:2:3:"), std::string::npos);
}

TEST(DataCsv, WriteThenParseRoundTrips) {
  const std::vector<std::string> fields = {"plain", "a,b", "q\"q", "multi\nline", "", " padded "};
  std::ostringstream out;
  write_row(out, fields);
  write_row(out, {"1", "2"});
  const auto rows = parse(out.str(), "mem");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].fields, fields);
  EXPECT_EQ(quote("plain"), "plain");
  EXPECT_EQ(quote("a,b"), "\"a,b\"");
}

TEST(DataCsv, NumbersAreStrict) {
  const Where at{"f.csv", 7, 8, "latency_ms"};
  EXPECT_DOUBLE_EQ(parse_number("12.5", at), 12.5);
  EXPECT_DOUBLE_EQ(parse_number(" 1e3 ", at), 1000.0);
  EXPECT_EQ(parse_optional_number("", at), std::nullopt);
  EXPECT_EQ(parse_optional_number("  ", at), std::nullopt);
  for (const char* bad : {"abc", "12ms", "1,5", "nan", "inf", "1e999", "--1"})
    EXPECT_EQ(error_of([&] { parse_optional_number(bad, at); }),
              std::string("f.csv:7: column 'latency_ms' (field 9): expected a number, got \"") + bad + "\"")
        << bad;
  EXPECT_NE(error_of([&] { parse_number("", at); }).find("f.csv:7:"), std::string::npos);
}

TEST(DataCsv, IntegersRejectFractions) {
  const Where at{"f.csv", 3, 2, "depth"};
  EXPECT_EQ(parse_int("18", at), 18);
  for (const char* bad : {"18.0", "1e2", "", "x", "99999999999"})
    EXPECT_NE(error_of([&] { parse_int(bad, at); }).find("f.csv:3: column 'depth'"), std::string::npos)
        << bad;
}

TEST(DataCsv, FormatNumberRoundTripsExactly) {
  for (double v : {0.1, 1.0 / 3.0, 123456.789012345, 1e-12, 5e20, 0.0}) {
    const std::string s = format_number(v);
    EXPECT_EQ(parse_number(s, {}), v) << s;
  }
  EXPECT_EQ(format_number(std::nullopt), "");
  EXPECT_EQ(format_number(2.5), "2.5");
}

TEST(DataCsv, ShowKeepsMessagesOnOneLine) {
  EXPECT_EQ(show("a\nb"), "\"a b\"");
  EXPECT_EQ(show(std::string(100, 'x')).size(), 40u + 3u + 2u);
}

TEST(DataCsv, AtomicWriteReplacesAndLeavesNoTemp) {
  const fs::path dir = fs::temp_directory_path() / "carb_csv_atomic_test";
  fs::create_directories(dir);
  const fs::path file = dir / "out.csv";
  write_text_atomic(file, "old\n");
  write_text_atomic(file, "new\n");
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "new\n");
  EXPECT_FALSE(fs::exists(dir / "out.csv.tmp"));
  EXPECT_NE(error_of([&] { write_text_atomic(dir / "missing" / "x.csv", "x"); }).find("x.csv"),
            std::string::npos);
  fs::remove_all(dir);
}

// Seventeenth hostile pass: a replaced file lost its mode (a 0600 file became world-readable).
TEST(DataCsv, AtomicWriteKeepsTheReplacedFilesMode) {
  const fs::path dir = fs::temp_directory_path() / ("carb_csv_mode_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_text_atomic(dir / "out.csv", "old\n");
  fs::permissions(dir / "out.csv", fs::perms::owner_read | fs::perms::owner_write);
  write_text_atomic(dir / "out.csv", "new\n");
  EXPECT_EQ(fs::status(dir / "out.csv").permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
  fs::remove_all(dir);
}

// The old writer used the fixed name FILE.tmp: a user's file of that name was truncated, then deleted.
TEST(DataCsv, AtomicWriteLeavesAUsersTmpFileAlone) {
  const fs::path dir = fs::temp_directory_path() / ("carb_csv_tmp_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "out.csv.tmp") << "mine";
  write_text_atomic(dir / "out.csv", "new\n");
  std::ifstream in(dir / "out.csv.tmp");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "mine");
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) entries += e.is_regular_file();
  EXPECT_EQ(entries, 2u);  // out.csv and the user's file: no temp left
  EXPECT_NE(error_of([&] { write_text_atomic(dir, "x"); }).find("is a directory"), std::string::npos);
  fs::remove_all(dir);
}

// Thirty-third hostile pass: a user's file moved onto a dataset or plan --out while carb computed
// the output was replaced by it. The commit replaces only the file that was there when the write
// began; a file put there since, or at a name that was free, is left as it is.
TEST(DataCsv, TheCommitReplacesOnlyTheFileThatWasThere) {
  const fs::path dir = fs::temp_directory_path() / ("carb_csv_commit_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path out = dir / "out.csv", tmp = dir / "staged";
  const auto text = [](const fs::path& f) {
    std::ifstream in(f);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  // A free name that stays free takes the file.
  std::ofstream(tmp) << "new";
  commit_temp(tmp, out, file_id(out));
  EXPECT_EQ(text(out), "new");
  EXPECT_FALSE(fs::exists(tmp));
  // The file that was there is replaced.
  std::ofstream(tmp) << "newer";
  commit_temp(tmp, out, file_id(out));
  EXPECT_EQ(text(out), "newer");
  // Another file put in its place meanwhile is kept.
  const auto before = file_id(out);
  std::ofstream(dir / "mine") << "my notes";
  fs::rename(dir / "mine", out);
  std::ofstream(tmp) << "carb's";
  EXPECT_NE(error_of([&] { commit_temp(tmp, out, before); }).find("another file was put in its place"),
            std::string::npos);
  EXPECT_EQ(text(out), "my notes");
  EXPECT_FALSE(fs::exists(tmp));
  // A file that appears at a name that was free is kept too.
  const fs::path fresh = dir / "fresh.csv";
  const auto nothing = file_id(fresh);
  EXPECT_FALSE(nothing.has_value());
  std::ofstream(fresh) << "theirs";
  std::ofstream(tmp) << "carb's";
  EXPECT_NE(error_of([&] { commit_temp(tmp, fresh, nothing); }).find("a file appeared at this name"),
            std::string::npos);
  EXPECT_EQ(text(fresh), "theirs");
  EXPECT_FALSE(fs::exists(tmp));
  // Thirty-fourth hostile pass: the same file edited in place after the check was replaced too.
  const auto checked = file_id(out);
  ::usleep(20000);  // a later change time, on file systems with coarse clocks
  std::ofstream(out, std::ios::app) << " and more";
  std::ofstream(tmp) << "carb's";
  EXPECT_NE(error_of([&] { commit_temp(tmp, out, checked); }).find("it was changed while carb was working"),
            std::string::npos);
  EXPECT_EQ(text(out), "my notes and more");
  // What a write returns is what the next write of the same output may replace.
  const FileId mine = write_text_atomic(fresh, "one", file_id(fresh));
  (void)write_text_atomic(fresh, "two", mine);
  EXPECT_EQ(text(fresh), "two");
  EXPECT_THROW((void)write_text_atomic(fresh, "three", mine), OutputChanged);
  fs::remove_all(dir);
}

// A kill -9 between mkstemp and rename used to leave ".out.csv.carb-XXXXXX" for ever. The name now
// carries the writer's pid: the next write removes a dead writer's temp, never a live one's or a
// name carb does not make.
TEST(DataCsv, AtomicWriteRemovesTempsOfDeadWritersOnly) {
  const fs::path dir = fs::temp_directory_path() / ("carb_csv_stale_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // its pid now names no process
  const fs::path dead = dir / (".out.csv.carb-" + std::to_string(child) + "-abc123");
  const fs::path live = dir / (".out.csv.carb-" + std::to_string(::getpid()) + "-def456");
  const fs::path odd = dir / ".out.csv.carb-notes";
  for (const auto& p : {dead, live, odd}) std::ofstream(p) << "platform,fam";  // torn writes of this file
  // Fourth hostile pass: names alone made the user's files carb's to delete. A dead writer's name
  // holding something else (another format, a directory) is kept.
  const fs::path users = dir / (".out.csv.carb-" + std::to_string(child) + "-xyz789");
  const fs::path users_dir = dir / (".out.csv.carb-" + std::to_string(child) + "-notes1");
  const fs::path long_name = dir / (".out.csv.carb-" + std::to_string(child) + "-abc1234");
  std::ofstream(users) << "my thesis";
  fs::create_directories(users_dir);
  std::ofstream(users_dir / "thesis.tex") << "precious";
  std::ofstream(long_name) << "";
  write_text_atomic(dir / "out.csv", "platform,family\n");
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(odd));
  EXPECT_TRUE(fs::exists(users));
  EXPECT_TRUE(fs::exists(users_dir / "thesis.tex"));
  EXPECT_TRUE(fs::exists(long_name));  // not mkstemp's six characters
  fs::remove_all(dir);
}

// Third hostile pass: a platform of "cpu-\xff2t" passed every check, trained, and then broke the
// JSON written from it (internal error). Files are UTF-8 text or refused at the first bad byte.
TEST(DataCsv, BytesThatAreNotUtf8AreRefusedWithTheirLine) {
  const fs::path dir = fs::temp_directory_path() / ("carb_csv_utf8_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "ok.csv") << "platform,note\ncaf\xc3\xa9,\xe2\x82\xac\n";
  EXPECT_EQ(read_file(dir / "ok.csv").size(), 2u);
  std::ofstream(dir / "bad.csv") << "platform,note\ncpu,x\ncpu-\xff" "2t,y\n";
  EXPECT_EQ(error_of([&] { read_file(dir / "bad.csv"); }),
            (dir / "bad.csv").string() + ":3: byte 0xff is not UTF-8 text; save the file as UTF-8");
  std::ofstream(dir / "cut.csv") << "platform\ncaf\xc3";  // a sequence cut short by the end
  EXPECT_NE(error_of([&] { read_file(dir / "cut.csv"); }).find(":2: byte 0xc3 is not UTF-8"), std::string::npos);
  // A measurement store given as a dataset is named as one, with the command that exports it (it
  // was "byte 0xf8 is not UTF-8": seventy-eighth hostile pass).
  std::ofstream(dir / "m.db", std::ios::binary) << std::string("SQLite format 3\0", 16) << "\x10\x00\x02\x02";
  EXPECT_NE(error_of([&] { read_file(dir / "m.db"); }).find("is an SQLite database (a measurement store?), not a CSV file: "
                                                         "export a store as a dataset with `carb data export --db"),
            std::string::npos);
  fs::remove_all(dir);
}

// Hundred-and-third hostile pass: `carb data validate` stopped at the first such byte and listed
// nothing else of the file. The listing reader says each line once and reads the bytes as U+FFFD.
TEST(DataCsv, TheListingReaderSaysEveryLineWithABadByteAndReadsOn) {
  const fs::path dir = fs::temp_directory_path() / ("carb_csv_utf8_all_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "bad.csv") << "platform,note\ncpu-\xff\xfe,x\ncpu,y\ncpu,\"two\nlin\xe9s\"\ncpu,\xc3\n";
  std::vector<std::string> problems;
  const auto rows = read_file(dir / "bad.csv", problems);
  const std::string f = (dir / "bad.csv").string();
  EXPECT_EQ(problems, (std::vector<std::string>{f + ":2: byte 0xff is not UTF-8 text; save the file as UTF-8",
                                                f + ":5: byte 0xe9 is not UTF-8 text; save the file as UTF-8",
                                                f + ":6: byte 0xc3 is not UTF-8 text; save the file as UTF-8"}));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[1].fields[0], "cpu-\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(rows[3].fields[1], "two\nlin\xEF\xBF\xBDs");
  EXPECT_EQ(rows[4].line, 6u);
  // Lines end as the parser ends them: a CR-only file's bad lines are each said, at the row's line (a
  // review: counted by LF alone, the file was one line and only its first bad byte was listed).
  problems.clear();
  std::ofstream(dir / "cr.csv") << "platform,note\rcpu,x\rcpu-\xff,y\rcpu,z\r\ncpu,\xfe\r";
  const auto cr = read_file(dir / "cr.csv", problems);
  EXPECT_EQ(problems, (std::vector<std::string>{(dir / "cr.csv").string() + ":3: byte 0xff is not UTF-8 text; save the file as UTF-8",
                                                (dir / "cr.csv").string() + ":5: byte 0xfe is not UTF-8 text; save the file as UTF-8"}));
  ASSERT_EQ(cr.size(), 5u);
  EXPECT_EQ(cr[2].line, 3u);
  EXPECT_EQ(cr[4].line, 5u);
  // A sequence cut short reads as one U+FFFD (its maximal subpart, as Python decodes it), not one
  // per byte: the euro sign's first two bytes before a comma.
  problems.clear();
  std::ofstream(dir / "cut.csv") << "platform,note\ncpu,\xe2\x82,\n";
  const auto cut = read_file(dir / "cut.csv", problems);
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_EQ(cut[1].fields[1], "\xEF\xBF\xBD");
  EXPECT_EQ(problems.size(), 1u);
  // A clean file reads as read_file reads it, with nothing said.
  problems.clear();
  std::ofstream(dir / "ok.csv") << "platform,note\ncaf\xc3\xa9,\xe2\x82\xac\n";
  EXPECT_EQ(read_file(dir / "ok.csv", problems).size(), 2u);
  EXPECT_TRUE(problems.empty());
  fs::remove_all(dir);
}

TEST(DataCsv, ReadingADirectoryOrAnEndlessDeviceFailsClearly) {
  EXPECT_NE(error_of([] { read_file(fs::temp_directory_path()); }).find("is a directory, not a CSV file"),
            std::string::npos);
  // /dev/zero never ends: the reader stops at its cap instead of growing without bound.
  EXPECT_NE(error_of([] { read_file("/dev/zero"); }).find("larger than 256 MiB"), std::string::npos);
}

}  // namespace
}  // namespace carb::csv
