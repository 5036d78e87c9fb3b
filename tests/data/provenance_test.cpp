// Tests of provenance sidecars: where they live, what machine facts they hold, and that
// they are written atomically and read back.
#include "data/provenance.hpp"

#include <gtest/gtest.h>

#include "carb/data_ops.hpp"
#include <sys/statvfs.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <atomic>
#include <regex>
#include <set>
#include <thread>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/warning.hpp"
#include "small_disk_test.hpp"
#include "util/stop_signal.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

TEST(DataProvenance, SidecarSitsBesideTheCsv) {
  EXPECT_EQ(provenance_path("data/cpu2t.csv"), fs::path("data/cpu2t.json"));
  EXPECT_EQ(provenance_path("run.v2.csv"), fs::path("run.v2.json"));
  EXPECT_EQ(provenance_path("noext"), fs::path("noext.json"));
}

TEST(DataProvenance, MachineInfoHasTheFactsLinuxOffers) {
  const nlohmann::json m = collect_machine_info();
  EXPECT_TRUE(m.contains("hostname"));
  EXPECT_GT(m.value("cores", 0), 0);
  EXPECT_GT(m.value("memory_total_mb", 0.0), 0.0);
  // memory_total_mb is MiB (as every sidecar so far records it); machine_memory_mb is MB of 1e6 bytes.
  ASSERT_TRUE(machine_memory_mb());
  EXPECT_NEAR(*machine_memory_mb(), m.value("memory_total_mb", 0.0) * 1.048576, 1e-6 * *machine_memory_mb());
  EXPECT_EQ(m["kernel"]["sysname"], "Linux");
  EXPECT_TRUE(
      std::regex_match(m["date"].get<std::string>(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << m["date"];
}

TEST(DataProvenance, WriteThenReadRoundTrips) {
  const fs::path dir = fs::temp_directory_path() / "carb_provenance_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path csv = dir / "d.csv";
  EXPECT_TRUE(read_provenance(csv).is_null());
  const nlohmann::json p = {{"command", "carb data export"}, {"protocols", {{"p1", {{"warmup", 10}}}}}};
  write_csv_with_provenance(csv, "a,b\n1,2\n", p);
  nlohmann::json back = read_provenance(csv);
  EXPECT_EQ(back[kCsvHashKey], file_fnv1a64(csv).value());
  back.erase(kCsvHashKey);
  EXPECT_TRUE(back.contains(kSidecarHashKey));
  EXPECT_FALSE(sidecar_edited(read_provenance(csv)));
  back.erase(kSidecarHashKey);
  EXPECT_EQ(back, p);
  EXPECT_FALSE(fs::exists(dir / "d.json.tmp"));
  std::ofstream(dir / "d.json") << "{not json";
  EXPECT_THROW(read_provenance(csv), DataError);
  // An empty sidecar, as `> d.json` leaves one, is said to be d.csv's and empty, and how that happens.
  std::ofstream(dir / "d.json", std::ios::trunc).flush();
  try {
    read_provenance(csv);
    ADD_FAILURE() << "an empty sidecar was read";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("d.json (the provenance sidecar of d.csv) is empty: a shell redirect such as "
                                         "`> d.json` empties a file before the command runs"),
              std::string::npos)
        << e.what();
  }
  // JSON that is no object is no provenance either: `[]` was read as none, without a word, where
  // `{bad` was refused (sixty-eighth hostile pass).
  for (const char* text : {"[]", "3", "\"x\"", "null"}) {
    std::ofstream(dir / "d.json", std::ios::trunc) << text;
    try {
      read_provenance(csv);
      ADD_FAILURE() << text << " was read as provenance";
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find("d.json: the provenance file is JSON but not an object"), std::string::npos)
          << e.what();
    }
  }
  fs::remove_all(dir);
}

// Twenty-seventh hostile pass: a sidecar that failed after its CSV was replaced was named alone, and
// the next run called the complete new CSV "changed since carb wrote it, or killed". The error says
// the CSV was written and what to do.
// A sidecar that cannot be written is found before the CSV is replaced (fifty-second hostile pass:
// the CSV went first, and a disk that filled during the sidecar left it beside the old sidecar).
TEST(DataProvenance, ASidecarThatCannotBeWrittenLeavesTheCsvAlone) {
  const fs::path dir = fs::temp_directory_path() / "carb_provenance_sidecar_fails";
  fs::remove_all(dir);
  fs::create_directories(dir / "d.json");  // nothing can be written at the sidecar's name
  std::ofstream(dir / "d.csv") << "old\n";
  try {
    write_csv_with_provenance(dir / "d.csv", "a,b\n1,2\n", nlohmann::json::object());
    ADD_FAILURE() << "the sidecar was written over a directory";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("d.json: is a directory"), std::string::npos) << e.what();
  }
  std::ifstream in(dir / "d.csv");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "old\n");
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 2u) << "no temp file left";
  fs::remove_all(dir);
}

// Fifty-second hostile pass: with the disk filled to within a page or so, `data merge --force`
// replaced the CSV and then failed on the sidecar, leaving the new rows beside the old provenance,
// which readers took. Swept over the free space from none to more than both need: after every run
// the pair is the old one byte for byte, or the new one with its own hash. Needs root (a tmpfs).
TEST(DataProvenance, AFullDiskNeverLeavesAMismatchedPair) {
  const fs::path dir = fs::temp_directory_path() / ("carb_provenance_full_" + std::to_string(::getpid()));
  if (!testing::mount_small_disk(dir, "256k")) GTEST_SKIP() << "mounting a tmpfs needs root";
  const auto slurp = [](const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string old_text = "a,b\n" + std::string(3000, '1') + "\n";
  const std::string new_text = "a,b\n" + std::string(20000, '2') + "\n";
  const nlohmann::json prov = {{"kind", kMergedKind}, {"notes", std::string(6000, 'n')}};
  int written = 0, refused = 0;
  for (int pages = 0; pages <= 12; ++pages) {
    for (const auto& e : fs::directory_iterator(dir)) fs::remove_all(e.path());
    write_csv_with_provenance(dir / "d.csv", old_text, prov);
    const std::string old_side = slurp(dir / "d.json");
    struct statvfs sv {};
    ASSERT_EQ(::statvfs(dir.c_str(), &sv), 0);
    const long long leave = 4096LL * pages, avail = static_cast<long long>(sv.f_bavail) * sv.f_frsize;
    if (avail > leave) {
      std::ofstream fill(dir / "fill", std::ios::binary);
      const std::string block(4096, '\0');
      for (long long n = 0; n + 4096 <= avail - leave; n += 4096) fill.write(block.data(), block.size());
    }
    try {
      write_csv_with_provenance(dir / "d.csv", new_text, prov);
      ++written;
    } catch (const DataError& e) {
      ++refused;  // the disk was full: said so
      EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos) << e.what();
    }
    fs::remove(dir / "fill");
    const std::string csv = slurp(dir / "d.csv"), side = slurp(dir / "d.json");
    const bool old_pair = csv == old_text && side == old_side;
    const bool new_pair = csv == new_text && nlohmann::json::parse(side)[kCsvHashKey] == file_fnv1a64(dir / "d.csv");
    EXPECT_TRUE(old_pair || new_pair) << pages << " pages free: a new CSV beside the old sidecar, or the reverse";
  }
  // The sweep reached both sides of the boundary: writes the full disk refused, and writes that fit.
  EXPECT_GT(refused, 0);
  EXPECT_GT(written, 0);
  EXPECT_EQ(std::system(("umount '" + dir.string() + "'").c_str()), 0);
  fs::remove_all(dir);
}

// Ninety-sixth hostile pass: SIGINT/SIGTERM during `data merge`, `combine` or `plan` ended them
// wherever they were, leaving hidden temporaries or the new CSV beside the old sidecar. A signal
// recorded before the write (a command's scope opens when its work begins) stops it with nothing
// written; one that comes during the write waits until both files are in place.
TEST(DataProvenance, ASignalBeforeTheWriteWritesNothingAndOneDuringItWaitsForBoth) {
  const fs::path dir = fs::temp_directory_path() / ("carb_provenance_signal_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto slurp = [](const fs::path& f) {
    std::ifstream in(f, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const auto names = [&] {
    std::set<std::string> n;
    for (const auto& e : fs::directory_iterator(dir)) n.insert(e.path().filename().string());
    return n;
  };
  write_csv_with_provenance(dir / "d.csv", "a,b\n1,2\n", nlohmann::json::object());
  const std::string old_side = slurp(dir / "d.json");
  {
    detail::StopOnSignals signals;
    ASSERT_EQ(std::raise(SIGTERM), 0);  // recorded, as if it came while the command read its inputs
    try {
      write_csv_with_provenance(dir / "d.csv", "a,b\n3,4\n", nlohmann::json::object());
      ADD_FAILURE() << "written after a signal asked to stop";
    } catch (const Interrupted& e) {
      EXPECT_EQ(e.signal_number, SIGTERM);
      EXPECT_NE(std::string(e.what()).find("interrupted by SIGTERM; nothing was written"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(slurp(dir / "d.csv"), "a,b\n1,2\n");
  EXPECT_EQ(slurp(dir / "d.json"), old_side);
  EXPECT_EQ(names(), (std::set<std::string>{"d.csv", "d.json"}));
  // During the write (the recheck runs once both files are staged): recorded by the writer's own
  // scope, not delivered, and both files are replaced.
  write_csv_with_provenance(dir / "d.csv", "a,b\n5,6\n", nlohmann::json::object(),
                            [] { ASSERT_EQ(std::raise(SIGINT), 0); });
  EXPECT_EQ(slurp(dir / "d.csv"), "a,b\n5,6\n");
  EXPECT_EQ(nlohmann::json::parse(slurp(dir / "d.json"))[kCsvHashKey], file_fnv1a64(dir / "d.csv"));
  EXPECT_EQ(names(), (std::set<std::string>{"d.csv", "d.json"}));
  fs::remove_all(dir);
}

// Thirty-fifth hostile pass: a file put at the sidecar's name while the command ran is kept, and
// the advice was to "rerun the same command", which then refused the CSV without its provenance.
TEST(DataProvenance, AFilePutAtTheSidecarsNameIsKeptAndTheAdviceWorks) {
  const fs::path dir = fs::temp_directory_path() / ("carb_provenance_side_race_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  try {
    write_csv_with_provenance(dir / "d.csv", "a,b\n1,2\n", nlohmann::json::object(),
                              [&] { std::ofstream(dir / "d.json") << "my notes\n"; });
    ADD_FAILURE() << "the sidecar was written over a file put there during the run";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("move that file away and rerun the same command with --force"),
              std::string::npos) << e.what();
  }
  std::ifstream in(dir / "d.json");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "my notes\n");
  fs::remove_all(dir);
}

// Thirty-third hostile pass: what is at --out is checked before the work and again just before the
// write (the files there may change while a command runs); a refusal then writes nothing.
TEST(DataProvenance, TheRecheckRunsBeforeAnythingIsWritten) {
  const fs::path dir = fs::temp_directory_path() / ("carb_provenance_recheck_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  int checks = 0;
  EXPECT_THROW(write_csv_with_provenance(dir / "d.csv", "a,b\n1,2\n", nlohmann::json::object(),
                                         [&] {
                                           ++checks;
                                           throw InputError("d.csv exists and is not a dataset CSV carb wrote");
                                         }),
               InputError);
  EXPECT_EQ(checks, 1);
  EXPECT_FALSE(fs::exists(dir / "d.csv"));
  EXPECT_FALSE(fs::exists(dir / "d.json"));
  write_csv_with_provenance(dir / "d.csv", "a,b\n1,2\n", nlohmann::json::object(), [&] { ++checks; });
  EXPECT_EQ(checks, 2);
  EXPECT_TRUE(fs::exists(dir / "d.json"));
  fs::remove_all(dir);
}

// Seventeenth hostile pass: two writers racing on one --out (combine and merge) left one's CSV with
// the other's sidecar, and the sidecar's hash, taken from the file on disk after the write, matched.
// The hash is of the text each writer wrote: a mismatched pair is always told apart.
TEST(DataProvenance, RacingWritersNeverLeaveAMismatchedPairThatVerifies) {
  const fs::path dir = fs::temp_directory_path() / ("carb_provenance_race_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path csv = dir / "o.csv";
  int verified = 0;
  for (int round = 0; round < 150; ++round) {
    std::atomic<int> ready{0};
    auto writer = [&](const std::string& who) {
      ++ready;
      while (ready.load() < 2) {
      }
      try {
        write_csv_with_provenance(csv, "writer\n" + who + "\n" + std::string(4096 * (who == "a" ? 1 : 3), 'x'),
                                  {{"kind", "carb " + who}});
      } catch (const DataError& e) {
        // The other writer's file appeared at the name while this one wrote: left as it is.
        EXPECT_NE(std::string(e.what()).find("while carb was working"), std::string::npos) << e.what();
      }
    };
    std::thread a(writer, "a"), b(writer, "b");
    a.join();
    b.join();
    const nlohmann::json side = read_provenance(csv);
    std::ifstream in(csv);
    std::string first, who;
    std::getline(in, first);
    std::getline(in, who);
    if (side[kCsvHashKey] == file_fnv1a64(csv).value()) {
      ++verified;
      EXPECT_EQ(side["kind"], "carb " + who) << "round " << round;
    }
  }
  EXPECT_GT(verified, 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace carb

namespace carb {
namespace {

// Every shipped dataset's sidecar records the hash of its CSV as it is committed: a re-run of its
// recorded command replaces it (an unedited output), and an edit to the CSV is told apart.
// Fifty-fourth hostile pass: a merge killed between its two renames left the new CSV beside the
// old sidecar (the new one staged as ".mg.json.carb-<pid>-..."), and every reader took the pair
// without a word. Readers now warn, once per file and content, and name the staged sidecar.
TEST(DataProvenance, ACsvThatIsNotItsSidecarsIsReadWithAWarningNamingTheStagedOne) {
  const fs::path dir = fs::temp_directory_path() / "carb_provenance_mismatch_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> warnings;
  const WarningHandler before = set_warning_handler([&](const std::string& w) { warnings.push_back(w); });
  const fs::path csv = dir / "mg.csv";
  std::ifstream shipped(fs::path(CARB_SOURCE_DIR) / "data" / "cpu-2t.csv");
  std::string head, row1, row2;
  std::getline(shipped, head), std::getline(shipped, row1), std::getline(shipped, row2);
  const std::string old_text = head + "\n" + row1 + "\n", new_text = head + "\n" + row2 + "\n";
  write_csv_with_provenance(csv, old_text, {{"kind", "carb dataset"}});
  EXPECT_FALSE(provenance_mismatch(csv, read_provenance(csv)));
  (void)read_dataset_csv(csv);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  // What the killed run left: its CSV renamed into place, its sidecar still staged.
  write_csv_with_provenance(dir / "staged.csv", new_text, {{"kind", "carb dataset"}});
  fs::rename(dir / "staged.json", dir / ".mg.json.carb-4242-abcdef");
  fs::rename(dir / "staged.csv", csv);
  const auto said = provenance_mismatch(csv, read_provenance(csv));
  ASSERT_TRUE(said);
  EXPECT_NE(said->find("mg.csv is not the CSV its provenance mg.json was written with"), std::string::npos) << *said;
  EXPECT_NE(said->find(".mg.json.carb-4242-abcdef (move it to"), std::string::npos) << *said;
  (void)read_dataset_csv(csv);
  (void)read_dataset_csv(csv);  // once per file and content
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings.front(), *said);
  // `data info` says it too (a hostile tester: it summarised the pair without a word).
  new_warning_round();  // as a new command
  (void)dataset_info(csv);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings.back(), *said);
  // A rerun writing there names it too (ninety-sixth hostile pass: only "changed since carb wrote it,
  // or a run writing it was killed ... pass --force").
  try {
    check_dataset_output(csv, false, "carb dataset");
    ADD_FAILURE() << "the pair a killed run left was replaced without --force";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("still staged as " + (dir / ".mg.json.carb-4242-abcdef").string() +
                                         "; move it to " + (dir / "mg.json").string()),
              std::string::npos) << e.what();
  }
  // A staged sidecar of other content is not offered; the mismatch is still told.
  fs::remove(dir / ".mg.json.carb-4242-abcdef");
  std::ofstream(dir / ".mg.json.carb-99-zzzzzz") << R"({"csv_fnv1a64": "0000000000000000"})";
  const auto alone = provenance_mismatch(csv, read_provenance(csv));
  ASSERT_TRUE(alone);
  EXPECT_EQ(alone->find("carb-99"), std::string::npos) << *alone;
  set_warning_handler(before);
  fs::remove_all(dir);
}

TEST(DatasetOutput, AUsersFileWhereTheSidecarGoesIsRefusedInPlainWords) {
  // Hundred-and-third hostile pass: "(--force replaces only carb's own a provenance file there)".
  const fs::path dir = fs::temp_directory_path() / ("carb_side_words_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "side.json") << R"({"mine": 1})";
  try {
    check_dataset_output(dir / "side.csv", false, "carb dataset");
    ADD_FAILURE() << "a user's side.json would have been replaced";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), (dir / "side.json").string() +
                                         " exists and is not a provenance file carb wrote; move it away, or choose "
                                         "another --out (--force replaces only carb's own provenance file there)");
  }
  std::ifstream in(dir / "side.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), R"({"mine": 1})");
  fs::remove_all(dir);
}

TEST(ShippedProvenance, EverySidecarHoldsTheHashOfItsCsv) {
  int checked = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(CARB_SOURCE_DIR) / "data")) {
    if (e.path().extension() != ".json") continue;
    std::filesystem::path csv = e.path();
    csv.replace_extension(".csv");
    if (!std::filesystem::exists(csv)) continue;
    const nlohmann::json prov = read_provenance(csv);
    if (!prov.is_object() || prov.value("kind", "").rfind("carb", 0) != 0) continue;
    ASSERT_TRUE(prov.contains(kCsvHashKey)) << e.path();
    EXPECT_EQ(prov[kCsvHashKey], file_fnv1a64(csv).value_or("")) << csv << " changed since its sidecar was written";
    // And the sidecar's own hash (an annotated sidecar is told apart: twentieth hostile pass).
    EXPECT_TRUE(prov.contains(kSidecarHashKey)) << e.path();
    EXPECT_FALSE(sidecar_edited(prov)) << e.path() << " changed since it was sealed";
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

}  // namespace
}  // namespace carb
