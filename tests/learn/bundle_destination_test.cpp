// Tests of where a model bundle may be written: carb replaces its own bundles atomically and
// refuses to remove anything it did not write (train --out once emptied a user's directory).
#include "carb/bundle_destination.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "carb/error.hpp"
#include "carb/warning.hpp"
#include "learn/checksum_file.hpp"
#include "carb/model.hpp"
#include "temp_dir_test.hpp"
#include "util/stop_signal.hpp"
#include "util/temp_owner.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

class BundleDestinationTest : public TempDirTest {
 protected:
  BundleDestinationTest() : TempDirTest("carb_bundle_dest_") {}

  // A finished bundle as a training run would leave it: a manifest naming its files.
  // A bundle as carb writes one: a sealed manifest naming a checksummed learner file.
  void fake_bundle(const fs::path& dir, const std::string& marker, const std::string& platform = "") {
    fs::create_directories(dir);
    nlohmann::json man = {{"format", "carb-model"}, {"models", {{"m", {{"learners", {{{"file", "m.0.x.model"}}}}}}}}};
    if (!platform.empty()) man["platform"] = platform;
    const std::string body = man.dump();
    man["manifest_fnv1a64"] =
        detail::hex64(detail::fnv1a64(reinterpret_cast<const unsigned char*>(body.data()), body.size()));
    std::ofstream(dir / "manifest.json") << man.dump(1);
    detail::write_checksummed(dir / "m.0.x.model", std::vector<unsigned char>(marker.begin(), marker.end()));
  }
  std::string model_text(const fs::path& f) {
    const auto b = detail::read_checksummed(f);
    return {b.begin(), b.end()};
  }
  void stage(BundleDestination& d, const std::string& marker) { fake_bundle(d.staging(), marker); }
  std::string read(const fs::path& f) {
    std::ifstream in(f);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  std::set<std::string> entries() {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.insert(e.path().filename().string());
    return out;
  }
};

TEST_F(BundleDestinationTest, RefusesADirectoryHoldingTheUsersFiles) {
  const fs::path out = dir_ / "work";
  fs::create_directories(out);
  std::ofstream(out / "train.csv") << "platform,family\n";
  std::ofstream(out / "notes.txt") << "my notes";
  EXPECT_THROW(BundleDestination(out, false), InputError);
  EXPECT_EQ(read(out / "notes.txt"), "my notes");
  EXPECT_TRUE(fs::exists(out / "train.csv"));
  EXPECT_EQ(entries(), std::set<std::string>{"work"});  // no staging directory left behind
}

// With --force the bundle goes there, and what it replaces that carb did not write is kept beside
// it, not deleted (fifty-fifth hostile pass: train --force deleted a directory of the user's notes).
TEST_F(BundleDestinationTest, RefusesARegularFileUnlessForced) {
  const fs::path out = dir_ / "model";
  std::ofstream(out) << "not a bundle";
  EXPECT_THROW(BundleDestination(out, false), InputError);
  EXPECT_EQ(read(out), "not a bundle");
  BundleDestination d(out, true);
  stage(d, "new");
  d.commit();
  EXPECT_EQ(model_text(out / "m.0.x.model"), "new");
  EXPECT_EQ(read(dir_ / "model.earlier"), "not a bundle");
}

TEST_F(BundleDestinationTest, ForceKeepsTheUsersFilesItReplacesButNotAnEarlierBundle) {
  const fs::path out = dir_ / "model";
  fs::create_directories(out / "sub");
  std::ofstream(out / "notes.txt") << "my notes";
  std::ofstream(out / "sub" / "more.txt") << "more";
  std::vector<std::string> said;
  const WarningHandler before = set_warning_handler([&](const std::string& w) { said.push_back(w); });
  {
    BundleDestination d(out, true);
    stage(d, "new");
    d.commit();
  }
  EXPECT_EQ(model_text(out / "m.0.x.model"), "new");
  EXPECT_EQ(read(dir_ / "model.earlier" / "notes.txt"), "my notes");
  EXPECT_EQ(read(dir_ / "model.earlier" / "sub" / "more.txt"), "more");
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("held what is not a carb model bundle's own files, which --force replaced; what was there is kept at"),
            std::string::npos) << said[0];
  // Replacing carb's own bundle keeps nothing, with or without --force.
  {
    BundleDestination d(out, true);
    stage(d, "newer");
    d.commit();
  }
  set_warning_handler(before);
  EXPECT_EQ(model_text(out / "m.0.x.model"), "newer");
  EXPECT_FALSE(fs::exists(dir_ / "model.earlier-1"));
  EXPECT_EQ(said.size(), 1u);
}

TEST_F(BundleDestinationTest, RefusesABundleIntoWhichTheUserPutFiles) {
  const fs::path out = dir_ / "model";
  fake_bundle(out, "old");
  std::ofstream(out / "README.txt") << "what this model is";
  EXPECT_THROW(BundleDestination(out, false), InputError);
  EXPECT_EQ(read(out / "README.txt"), "what this model is");
}

TEST_F(BundleDestinationTest, ReplacesAnEarlierBundleAndLeavesSiblingsAlone) {
  const fs::path out = dir_ / "model";
  fake_bundle(out, "old");
  // Names the old implementation used for its own temp and backup directories, made by the user.
  for (const char* sibling : {"model.old", "model.tmp"}) {
    fs::create_directories(dir_ / sibling);
    std::ofstream(dir_ / sibling / "keep.txt") << sibling;
  }
  {
    BundleDestination d(out, false);
    stage(d, "new");
    d.commit();
  }
  EXPECT_EQ(model_text(out / "m.0.x.model"), "new");
  EXPECT_EQ(read(dir_ / "model.old" / "keep.txt"), "model.old");
  EXPECT_EQ(read(dir_ / "model.tmp" / "keep.txt"), "model.tmp");
  EXPECT_EQ(entries(), (std::set<std::string>{"model", "model.old", "model.tmp"}));
}

// Thirty-first hostile pass: `train --out models/h200` on CPU data replaced the H200 model without a
// word. Another platform's bundle needs --force; the same platform's is replaced as always.
// Thirty-fourth hostile pass: a file added to the bundle between the last check and the swap was
// deleted with the swapped-out bundle. What is swapped out is checked once more: holding a file carb
// did not write, it is kept as model.earlier; an unchanged one is the caller's to remove.
TEST_F(BundleDestinationTest, ASwappedOutBundleThatGainedFilesIsKept) {
  fake_bundle(dir_ / "old", "old");
  EXPECT_FALSE(detail::keep_changed_bundle(dir_ / "old", dir_ / "model", false));
  EXPECT_TRUE(fs::exists(dir_ / "old" / "manifest.json"));
  std::ofstream(dir_ / "old" / "notes.txt") << "my notes";
  EXPECT_TRUE(detail::keep_changed_bundle(dir_ / "old", dir_ / "model", false));
  EXPECT_EQ(read(dir_ / "model.earlier" / "notes.txt"), "my notes");
  EXPECT_FALSE(fs::exists(dir_ / "old"));
  fake_bundle(dir_ / "again", "again");
  std::ofstream(dir_ / "again" / "notes.txt") << "more notes";
  EXPECT_TRUE(detail::keep_changed_bundle(dir_ / "again", dir_ / "model", false));
  EXPECT_EQ(read(dir_ / "model.earlier-1" / "notes.txt"), "more notes");  // never over the first
  // Said as a warning, and of what was there, which may be the user's directory and no bundle
  // (fifty-fourth hostile pass: "the earlier bundle is kept" of a directory of notes).
  std::vector<std::string> said;
  const WarningHandler before = set_warning_handler([&](const std::string& w) { said.push_back(w); });
  fs::create_directories(dir_ / "users");
  std::ofstream(dir_ / "users" / "notes.txt") << "notes";
  EXPECT_TRUE(detail::keep_changed_bundle(dir_ / "users", dir_ / "model", false));
  set_warning_handler(before);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("what was there is kept at " + (dir_ / "model.earlier-2").string()), std::string::npos) << said[0];
  EXPECT_EQ(said[0].find("earlier bundle"), std::string::npos) << said[0];
}

// Fifty-fourth hostile pass: --out naming a link to a bundle was "not a model bundle directory".
TEST_F(BundleDestinationTest, ALinkToABundleIsNamedAsALinkAndOnlyTheLinkIsReplaced) {
  fake_bundle(dir_ / "real", "real");
  fs::create_directory_symlink("real", dir_ / "link");
  try {
    BundleDestination d(dir_ / "link", false);
    ADD_FAILURE() << "a link was taken for a bundle";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is a symbolic link (to real; give that path"), std::string::npos) << e.what();
  }
  BundleDestination d(dir_ / "link", true);
  stage(d, "new");
  d.commit();
  EXPECT_EQ(model_text(dir_ / "link" / "m.0.x.model"), "new");
  EXPECT_FALSE(fs::is_symlink(dir_ / "link"));
  EXPECT_EQ(model_text(dir_ / "real" / "m.0.x.model"), "real");
}

// Thirty-fifth hostile pass: `train --out model/manifest.json --force` made the manifest a directory;
// another platform's bundle with one byte of its manifest changed was replaced without --force; and
// another platform's bundle moved to --out just before the swap was deleted.
TEST_F(BundleDestinationTest, ABundlesFilesAndAnotherPlatformsDamagedBundleAreKept) {
  fake_bundle(dir_ / "model", "old", "h200");
  for (const char* name : {"manifest.json", "m.0.x.model"})
    EXPECT_THROW(BundleDestination(dir_ / "model" / name, true), InputError) << name;
  EXPECT_EQ(model_text(dir_ / "model" / "m.0.x.model"), "old");
  std::string man = read(dir_ / "model" / "manifest.json");
  const auto at = man.find("manifest_fnv1a64\": \"") + 20;
  man[at] = man[at] == '0' ? '1' : '0';  // no longer verifies, still names its platform
  std::ofstream(dir_ / "model" / "manifest.json") << man;
  BundleDestination d(dir_ / "model", false);
  EXPECT_THROW(d.check_platform("cpu-2t"), InputError);
  // The same check after the swap: another platform's model swapped out is kept, not deleted.
  fake_bundle(dir_ / "swapped", "h200's", "h200");
  EXPECT_FALSE(detail::keep_changed_bundle(dir_ / "swapped", dir_ / "b", false, "h200"));
  EXPECT_TRUE(detail::keep_changed_bundle(dir_ / "swapped", dir_ / "b", false, "cpu-2t"));
  EXPECT_EQ(model_text(dir_ / "b.earlier" / "m.0.x.model"), "h200's");
}

// Thirty-sixth hostile pass: with the platform key itself damaged ("plqtform", "platform"; "h200")
// or truncated away, the damaged bundle named no platform and another platform's was replaced
// without --force. A carb manifest that no longer says its platform may be anyone's.
TEST_F(BundleDestinationTest, ADamagedManifestThatNoLongerNamesItsPlatformNeedsForce) {
  fake_bundle(dir_ / "model", "old", "h200");
  const std::string man = read(dir_ / "model" / "manifest.json");
  const auto key = man.find("\"platform\"");
  ASSERT_NE(key, std::string::npos);
  std::string renamed = man, semicolon = man;
  renamed[key + 3] = 'q';
  semicolon[man.find(':', key)] = ';';
  // Thirty-ninth hostile pass: a platform emptied, or made a number or null, names none either.
  const auto value = man.find('"', man.find(':', key));
  const auto value_end = man.find('"', value + 1);
  const std::string emptied = man.substr(0, value) + "\"\"" + man.substr(value_end + 1);
  const std::string number = man.substr(0, value) + "5" + man.substr(value_end + 1);
  const std::string null = man.substr(0, value) + "null" + man.substr(value_end + 1);
  for (const std::string& damaged : {renamed, semicolon, man.substr(0, key), emptied, number, null,
                                     emptied.substr(0, emptied.find("\"\"") + 2)}) {
    ASSERT_NE(damaged.find("carb-model"), std::string::npos) << "the test needs a manifest that still says carb's";
    std::ofstream(dir_ / "model" / "manifest.json", std::ios::trunc) << damaged;
    BundleDestination d(dir_ / "model", false);
    try {
      d.check_platform("cpu-1t");
      ADD_FAILURE() << "a bundle of a platform its manifest no longer names was replaceable: " << damaged.size();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("of a platform its damaged manifest no longer names"), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(model_text(dir_ / "model" / "m.0.x.model"), "old");
    fs::remove_all(dir_ / "swapped");
    fs::copy(dir_ / "model", dir_ / "swapped");
    fs::remove_all(dir_ / "b.earlier");
    EXPECT_TRUE(detail::keep_changed_bundle(dir_ / "swapped", dir_ / "b", false, "cpu-1t"));
    EXPECT_EQ(model_text(dir_ / "b.earlier" / "m.0.x.model"), "old");
  }
  BundleDestination forced(dir_ / "model", true);
  EXPECT_NO_THROW(forced.check_platform("cpu-1t"));
}

TEST_F(BundleDestinationTest, AnotherPlatformsBundleNeedsForce) {
  const fs::path out = dir_ / "model";
  fake_bundle(out, "old", "h200");
  {
    BundleDestination d(out, false);
    EXPECT_THROW(d.check_platform("cpu-1t"), InputError);
    EXPECT_NO_THROW(d.check_platform("h200"));
  }
  EXPECT_EQ(model_text(out / "m.0.x.model"), "old");
  // Thirty-third hostile pass: one that arrives at --out during the work is kept too.
  const fs::path later = dir_ / "later";
  {
    BundleDestination d(later, false);
    d.check_platform("cpu-1t");
    stage(d, "new");
    fake_bundle(later, "arrived", "h200");
    EXPECT_THROW(d.commit(), InputError);
  }
  EXPECT_EQ(model_text(later / "m.0.x.model"), "arrived");
  BundleDestination forced(out, true);
  EXPECT_NO_THROW(forced.check_platform("cpu-1t"));
  BundleDestination fresh(dir_ / "new_model", false);
  EXPECT_NO_THROW(fresh.check_platform("cpu-1t"));
}

// `train --out .` from inside a bundle: the staging directory once went inside the bundle itself,
// and the swap was refused only after the training had run.
TEST_F(BundleDestinationTest, DotFromInsideTheBundleReplacesIt) {
  const fs::path out = dir_ / "model";
  fake_bundle(out, "old");
  const fs::path cwd = fs::current_path();
  fs::current_path(out);
  {
    BundleDestination d(".", false);
    EXPECT_EQ(fs::path(d.staging()).parent_path(), fs::canonical(dir_));
    stage(d, "new");
    d.commit();
  }
  fs::current_path(cwd);
  EXPECT_EQ(model_text(out / "m.0.x.model"), "new");
  EXPECT_EQ(entries(), (std::set<std::string>{"model"}));
}

// Sixty-sixth hostile pass: Model.save("b/sub") wrote a bundle inside the bundle b, and from then on
// b could not be replaced (a bundle below --out never is), with or without --force.
TEST_F(BundleDestinationTest, NoBundleIsWrittenInsideAnother) {
  const fs::path outer = dir_ / "b";
  fake_bundle(outer, "outer");
  fs::create_directories(outer / "deeper");
  for (const fs::path& inside : {outer / "sub", outer / "deeper" / "sub"})
    for (bool force : {false, true}) {
      try {
        BundleDestination d(inside, force);
        ADD_FAILURE() << inside << " was accepted";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("inside the model bundle " + fs::canonical(outer).string()),
                  std::string::npos)
            << e.what();
      }
    }
  EXPECT_FALSE(fs::exists(outer / "sub"));
  EXPECT_EQ(model_text(outer / "m.0.x.model"), "outer");
  // The bundle itself, and a sibling beside it, are fine.
  for (const fs::path& ok : {outer, dir_ / "sibling"}) {
    BundleDestination d(ok, true);
    stage(d, "new");
    d.commit();
    EXPECT_EQ(model_text(ok / "m.0.x.model"), "new");
  }
}

TEST_F(BundleDestinationTest, AFailedRunLeavesTheOldBundleAndNoStaging) {
  const fs::path out = dir_ / "model";
  fake_bundle(out, "old");
  {
    BundleDestination d(out, false);
    stage(d, "half-written");
  }  // destroyed without commit: training threw
  EXPECT_EQ(model_text(out / "m.0.x.model"), "old");
  EXPECT_EQ(entries(), std::set<std::string>{"model"});
}

// Thirteenth hostile pass: SIGINT while `carb train` wrote its files exited 0 with the bundle
// replaced. Inside a StopOnSignals scope a signal before the swap stops it; the old bundle stays.
TEST_F(BundleDestinationTest, ASignalBeforeTheSwapKeepsTheOldBundle) {
  const fs::path out = dir_ / "model";
  fake_bundle(out, "old");
  {
    detail::StopOnSignals signals;
    BundleDestination d(out, false);
    stage(d, "new");
    ASSERT_EQ(std::raise(SIGINT), 0);  // recorded, not delivered
    try {
      d.commit();
      ADD_FAILURE() << "the bundle was swapped in after a signal";
    } catch (const Interrupted& e) {
      EXPECT_EQ(e.signal_number, SIGINT);
    }
  }
  EXPECT_EQ(model_text(out / "m.0.x.model"), "old");
  EXPECT_EQ(entries(), std::set<std::string>{"model"});
  BundleDestination again(out, false);  // outside the scope nothing is recorded: it commits
  stage(again, "new");
  again.commit();
  EXPECT_EQ(model_text(out / "m.0.x.model"), "new");
}

TEST_F(BundleDestinationTest, AMissingParentFailsBeforeAnyWork) {
  EXPECT_THROW(BundleDestination(dir_ / "no" / "such" / "model", false), InputError);
}

TEST_F(BundleDestinationTest, RemovesOnlyStagingLeftByADeadProcess) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // a pid that no longer runs
  // The staging name carries the owner's pid (.NAME.carb-staging-PID-XXXXXX).
  const fs::path dead = dir_ / (".model.carb-staging-" + std::to_string(child) + "-dead01");
  const fs::path alive = dir_ / (".model.carb-staging-" + std::to_string(::getpid()) + "-live01");
  const fs::path foreign = dir_ / ".model.carb-staging-notapid";
  for (const auto& d : {dead, alive, foreign}) {
    fs::create_directories(d);
    std::ofstream(d / ".carb-staging") << "\n";  // the marker a staging directory is made with
  }
  const fs::path empty_dead = dir_ / (".model.carb-staging-" + std::to_string(child) + "-empty1");
  fs::create_directories(empty_dead);  // killed before the marker was written
  // Fourth hostile pass: a user's directory and file named like a dead writer's staging were removed.
  const fs::path users = dir_ / (".model.carb-staging-" + std::to_string(child) + "-abcdef");
  fs::create_directories(users);
  std::ofstream(users / "thesis.tex") << "precious";
  const fs::path users_file = dir_ / (".model.carb-staging-" + std::to_string(child) + "-zzzzzz");
  std::ofstream(users_file) << "precious2";
  // Fifth hostile pass: files named like a bundle's but holding the user's words, and a marker
  // planted below the top, made the directory carb's.
  const fs::path named_like = dir_ / (".model.carb-staging-" + std::to_string(child) + "-bbbbbb");
  fs::create_directories(named_like);
  std::ofstream(named_like / "manifest.json") << "my precious notes";
  std::ofstream(named_like / "trained_configs.txt") << "notes";
  const fs::path nested = dir_ / (".model.carb-staging-" + std::to_string(child) + "-cccccc");
  fs::create_directories(nested / "bundle");
  std::ofstream(nested / "bundle" / ".carb-staging") << "\n";
  std::ofstream(nested / "bundle" / "thesis.tex") << "precious";
  {
    BundleDestination d(dir_ / "model", false);
    stage(d, "new");
    d.commit();
  }
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_FALSE(fs::exists(empty_dead));
  EXPECT_TRUE(fs::exists(alive));    // another carb may be filling it right now
  EXPECT_TRUE(fs::exists(foreign));  // not a name carb makes: not carb's to remove
  // An unmarked directory under a dead writer's staging name that is not carb's own is what a swap
  // moved out of --out (hundred-and-twenty-first hostile pass): kept beside it, never removed.
  std::multiset<std::string> kept;
  for (const auto& e : fs::recursive_directory_iterator(dir_))
    if (e.is_regular_file() && e.path().string().find("/model.earlier") != std::string::npos)
      kept.insert(e.path().filename().string() + "=" + read(e.path()));
  EXPECT_EQ(kept.count("thesis.tex=precious"), 2u);  // users's and nested's
  EXPECT_EQ(kept.count("manifest.json=my precious notes"), 1u);
  EXPECT_EQ(std::count_if(kept.begin(), kept.end(), [](const std::string& k) { return k.ends_with("=precious2"); }), 1);
  EXPECT_FALSE(fs::exists(users));
  EXPECT_FALSE(fs::exists(users_file));
  EXPECT_FALSE(fs::exists(dir_ / "model" / ".carb-staging"));  // the marker never reaches the bundle
}

// Hundred-and-twenty-first hostile pass: `train --out u --force` killed between the swap and keeping
// what it replaced left the user's files under the hidden staging name, which reads as carb's
// scratch, and no later run said so. The next run keeps them beside --out and says where.
TEST_F(BundleDestinationTest, WhatAKilledSwapMovedOutIsKeptBesideAndSaid) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  fake_bundle(dir_ / "model", "new");  // the swap put the new bundle in
  const fs::path swapped = dir_ / (".model.carb-staging-" + std::to_string(child) + "-swap01");
  fs::create_directories(swapped);
  std::ofstream(swapped / "p.txt") << "precious";  // what --out held, unmarked after the swap
  const fs::path aside = dir_ / (".model.carb-staging-" + std::to_string(child) + "-old-aside1");
  fs::create_directories(aside / "bundle");
  std::ofstream(aside / "bundle" / "q.txt") << "precious too";  // the same without renameat2
  // A file and a link at --out are swapped out as one (a review: they stayed hidden).
  const fs::path file = dir_ / (".model.carb-staging-" + std::to_string(child) + "-file01");
  std::ofstream(file) << "a file of mine";
  const fs::path link = dir_ / (".model.carb-staging-" + std::to_string(child) + "-link01");
  fs::create_symlink("/etc/hostname", link);
  std::vector<std::string> said;
  const WarningHandler before = set_warning_handler([&](const std::string& w) { said.push_back(w); });
  { BundleDestination d(dir_ / "model", false); }
  set_warning_handler(before);
  EXPECT_EQ(model_text(dir_ / "model" / "m.0.x.model"), "new");
  EXPECT_FALSE(fs::exists(swapped));
  EXPECT_FALSE(fs::exists(aside));
  EXPECT_FALSE(fs::exists(fs::symlink_status(file)));
  EXPECT_FALSE(fs::exists(fs::symlink_status(link)));
  std::map<std::string, std::string> kept;
  std::size_t links = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir_)) {
    if (e.path().string().find("/model.earlier") == std::string::npos) continue;
    if (e.is_symlink())
      links += fs::read_symlink(e.path()) == "/etc/hostname";
    else if (e.is_regular_file())
      kept[read(e.path())] = e.path().filename().string();
  }
  EXPECT_EQ(kept["precious"], "p.txt");
  EXPECT_EQ(kept["precious too"], "q.txt");
  EXPECT_TRUE(kept.count("a file of mine"));
  EXPECT_EQ(links, 1u);
  ASSERT_EQ(said.size(), 4u);
  for (const auto& w : said) EXPECT_NE(w.find("an interrupted run had moved what was at "), std::string::npos) << w;
  for (const auto& w : said) EXPECT_NE(w.find("; it is kept at " + (dir_ / "model.earlier").string()), std::string::npos) << w;
}

// Seventeenth hostile pass: a carb in another PID namespace (a container, another node) took a live
// writer's staging directory for a dead one's by its pid and removed it. The owner holds an flock
// on it; a held directory stays, whatever its pid says.
TEST_F(BundleDestinationTest, AStagingDirectoryHeldByALiveOwnerIsKeptWhateverItsPid) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // the pid this process sees as gone
  const fs::path held = dir_ / (".model.carb-staging-" + std::to_string(child) + "-held01");
  fs::create_directories(held);
  std::ofstream(held / ".carb-staging") << "\n";
  const int fd = detail::hold_temp(held);  // as a live owner elsewhere holds it
  ASSERT_GE(fd, 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t other = ::fork();  // another process looks, as another carb would
  if (other == 0) {
    { BundleDestination d(dir_ / "model", false); }
    const char ok = fs::exists(held) ? 'k' : 'r';
    (void)!::write(pipe_fds[1], &ok, 1);
    ::_exit(0);
  }
  ::waitpid(other, nullptr, 0);
  char seen = 0;
  ASSERT_EQ(::read(pipe_fds[0], &seen, 1), 1);
  EXPECT_EQ(seen, 'k') << "a held staging directory was removed";
  ::close(fd);
  { BundleDestination d(dir_ / "model", false); }  // released: a dead owner's now
  EXPECT_FALSE(fs::exists(held));
  ::close(pipe_fds[0]), ::close(pipe_fds[1]);
}

// Eighteenth hostile pass: a bundle records its training files; one recorded relative ("data/x.csv")
// by an older carb, loaded from another directory, let save(force=True) replace the directory that
// held the real x.csv. A file of that name in the destination counts as the training data.
TEST_F(BundleDestinationTest, ADirectoryHoldingARelativelyRecordedTrainingFileIsRefusedEvenWithForce) {
  fs::create_directories(dir_ / "elsewhere");
  std::ofstream(dir_ / "elsewhere" / "x.csv") << "platform,family\n";
  EXPECT_THROW(BundleDestination(dir_ / "elsewhere", true, {fs::path("data/x.csv")}), InputError);
  EXPECT_TRUE(fs::exists(dir_ / "elsewhere" / "x.csv"));
  EXPECT_NO_THROW(BundleDestination(dir_ / "model", true, {fs::path("data/x.csv")}));
}

// Fortieth hostile pass: with train.csv a hard link to runs/h200.csv, `train --data train.csv --out
// runs --force` deleted runs/h200.json; with h2.json a link to prov/h200.json, `--out prov --force`
// deleted that. A directory holding the data or its sidecar, under any name, is refused even with
// --force.
TEST_F(BundleDestinationTest, ADirectoryHoldingTheTrainingDataUnderAnotherNameIsRefusedEvenWithForce) {
  fs::create_directories(dir_ / "runs");
  std::ofstream(dir_ / "runs" / "h200.csv") << "platform,family\n";
  std::ofstream(dir_ / "runs" / "h200.json") << "{}";
  fs::create_hard_link(dir_ / "runs" / "h200.csv", dir_ / "train.csv");
  EXPECT_THROW(BundleDestination(dir_ / "runs", true, {dir_ / "train.csv"}), InputError);
  fs::remove(dir_ / "runs" / "h200.csv");  // left: only the sidecar of a name the data had
  fs::create_hard_link(dir_ / "train.csv", dir_ / "runs" / "h200.csv");
  EXPECT_TRUE(fs::exists(dir_ / "runs" / "h200.json"));

  fs::create_directories(dir_ / "prov" / "sub");
  std::ofstream(dir_ / "h2.csv") << "platform,family\n";
  std::ofstream(dir_ / "prov" / "sub" / "h200.json") << "{}";
  fs::create_symlink(dir_ / "prov" / "sub" / "h200.json", dir_ / "h2.json");
  EXPECT_THROW(BundleDestination(dir_ / "prov", true, {dir_ / "h2.csv"}), InputError);
  EXPECT_TRUE(fs::exists(dir_ / "prov" / "sub" / "h200.json"));

  // A directory holding only a symbolic link to the data loses the link, not the data: allowed.
  fs::create_directories(dir_ / "links");
  fs::create_symlink(dir_ / "h2.csv", dir_ / "links" / "d.csv");
  EXPECT_NO_THROW(BundleDestination(dir_ / "links", true, {dir_ / "h2.csv"}));
}

// Eighteenth hostile pass: a private (0700) bundle became world-readable when retrained.
TEST_F(BundleDestinationTest, AReplacedBundleKeepsItsDirectorysMode) {
  {
    BundleDestination d(dir_ / "model", false);
    stage(d, "old");
    d.commit();
  }
  fs::permissions(dir_ / "model", fs::perms::owner_all);
  {
    BundleDestination d(dir_ / "model", false);
    stage(d, "new");
    d.commit();
  }
  EXPECT_EQ(model_text(dir_ / "model" / "m.0.x.model"), "new");
  EXPECT_EQ(fs::status(dir_ / "model").permissions() & fs::perms::all, fs::perms::owner_all);
}

// A hostile tester: a write-protected bundle (chmod a-w) was swapped out all the same (only its
// parent needs writing for that) and its files, which could then not be removed, stayed behind as a
// hidden full copy per run, without a word. Refused now, before any work, even with --force. Root
// may write anything, so as root the attempt is made as user 65534 (nobody) in a child process.
TEST_F(BundleDestinationTest, AWriteProtectedBundleIsNeverReplaced) {
  {
    BundleDestination d(dir_ / "model", false);
    stage(d, "old");
    d.commit();
  }
  const bool root = ::geteuid() == 0;
  if (root) {
    for (const fs::path& p : {dir_, dir_ / "model", dir_ / "model" / "manifest.json", dir_ / "model" / "m.0.x.model"}) {
      ASSERT_EQ(::chown(p.c_str(), 65534, 65534), 0) << p;
    }
  }
  fs::permissions(dir_ / "model", fs::perms::owner_write | fs::perms::group_write | fs::perms::others_write,
                  fs::perm_options::remove);
  // 0: both refused as write-protected; 1: one was not refused; 2: refused for another reason.
  const auto attempt = [&] {
    for (bool force : {false, true}) {
      try {
        BundleDestination d(dir_ / "model", force);
        stage(d, "new");
        d.commit();
        return 1;
      } catch (const InputError& e) {
        if (std::string(e.what()).find("it is write-protected; make it writable") == std::string::npos) return 2;
      }
    }
    return 0;
  };
  int outcome = -1;
  if (root) {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(::setgid(65534) == 0 && ::setuid(65534) == 0 ? attempt() : 3);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    outcome = WEXITSTATUS(status);
  } else {
    outcome = attempt();
  }
  EXPECT_EQ(outcome, 0);
  EXPECT_EQ(model_text(dir_ / "model" / "m.0.x.model"), "old");
  EXPECT_EQ(entries(), std::set<std::string>{"model"}) << "no staging copy left behind";
  fs::permissions(dir_ / "model", fs::perms::owner_write, fs::perm_options::add);
}

// Seventh hostile pass: with the marker at the top, everything in a dead writer's staging
// directory went (a user's thesis.tex, photos/); without it, an empty trained_configs.txt and a
// notes file saying carb-model counted as carb's. Only what carb writes there is carb's.
TEST_F(BundleDestinationTest, AStagingLeftoverHoldingAnythingElseIsLeftAlone) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const std::string prefix = ".model.carb-staging-" + std::to_string(child) + "-";
  const fs::path marked_users = dir_ / (prefix + "aaaaaa");
  fs::create_directories(marked_users / "photos");
  std::ofstream(marked_users / ".carb-staging") << "\n";
  std::ofstream(marked_users / "thesis.tex") << "precious";
  std::ofstream(marked_users / "photos" / "cat.jpg") << "precious";
  const fs::path empty_list = dir_ / (prefix + "bbbbbb");
  fs::create_directories(empty_list);
  std::ofstream(empty_list / "trained_configs.txt").flush();
  const fs::path notes = dir_ / (prefix + "cccccc");
  fs::create_directories(notes);
  std::ofstream(notes / "manifest.json") << R"({"format": "carb-model", "notes": "mine"})";
  const fs::path torn = dir_ / (prefix + "dddddd");  // killed mid-training: carb's, torn files and all
  fs::create_directories(torn);
  std::ofstream(torn / ".carb-staging") << "\n";
  std::ofstream(torn / "latency_ms.0.gbdt_depthwise.model") << "half writ";
  std::ofstream(torn / "manifest.json") << "{\"format\"";
  const fs::path finished = dir_ / (prefix + "eeeeee");  // killed just before or after the swap
  fake_bundle(finished, "old");
  {
    BundleDestination d(dir_ / "model", false);
    stage(d, "new");
    d.commit();
  }
  EXPECT_TRUE(fs::exists(marked_users / "thesis.tex"));
  EXPECT_TRUE(fs::exists(marked_users / "photos" / "cat.jpg"));
  // Unmarked and not carb's own: what a swap moved out of --out, kept beside it (hundred-and-twenty-
  // first hostile pass), whole.
  std::map<std::string, std::string> kept;
  for (const auto& e : fs::recursive_directory_iterator(dir_))
    if (e.is_regular_file() && e.path().string().find("/model.earlier") != std::string::npos)
      kept[e.path().filename().string()] = read(e.path());
  EXPECT_EQ(kept.count("trained_configs.txt"), 1u);
  EXPECT_EQ(kept["manifest.json"], R"({"format": "carb-model", "notes": "mine"})");
  EXPECT_FALSE(fs::exists(empty_list));
  EXPECT_FALSE(fs::exists(torn));
  EXPECT_FALSE(fs::exists(finished));
}

// Seventeenth hostile pass: without renameat2 (NFS, SMB), commit moves the old bundle aside, then the
// new one in. Killed between the two, it left no bundle at --out; the next run removed the old bundle
// and the finished new one as a dead writer's leftovers. The old one is put back first now.
TEST_F(BundleDestinationTest, ABundleMovedAsideByAKilledRunIsPutBack) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const std::string prefix = ".model.carb-staging-" + std::to_string(child) + "-";
  const fs::path aside = dir_ / (prefix + "old-aaaaaa");
  fake_bundle(aside / "bundle", "old");
  const fs::path finished_new = dir_ / (prefix + "bbbbbb");  // its marker already removed
  fake_bundle(finished_new, "newer");
  ASSERT_FALSE(fs::exists(dir_ / "model"));
  {
    std::vector<std::string> said;  // through the warning handler (a hostile tester: straight to stderr)
    const WarningHandler before = set_warning_handler([&](const std::string& w) { said.push_back(w); });
    BundleDestination d(dir_ / "model", false);
    set_warning_handler(before);
    ASSERT_EQ(said.size(), 1u);
    EXPECT_NE(said[0].find("put back what an interrupted run had moved aside"), std::string::npos);
    ASSERT_TRUE(fs::exists(dir_ / "model" / "m.0.x.model"));
    EXPECT_EQ(model_text(dir_ / "model" / "m.0.x.model"), "old");
    EXPECT_FALSE(fs::exists(aside));
    EXPECT_FALSE(fs::exists(finished_new));
    stage(d, "new");
    d.commit();
  }
  EXPECT_EQ(model_text(dir_ / "model" / "m.0.x.model"), "new");
  // With a bundle at --out, a moved-aside one is what a run killed after the second rename left.
  fake_bundle(aside / "bundle", "older");
  { BundleDestination d(dir_ / "model", false); }
  EXPECT_EQ(model_text(dir_ / "model" / "m.0.x.model"), "new");
  EXPECT_FALSE(fs::exists(aside));
}

// A review: without renameat2 a killed --force run moves the user's directory aside before its bundle
// goes in; with nothing at --out the swap never happened, and what was there goes back there.
TEST_F(BundleDestinationTest, WhatAKilledRunMovedAsideGoesBackWhereNothingReplacedIt) {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const fs::path aside = dir_ / (".model.carb-staging-" + std::to_string(child) + "-old-aaaaaa");
  fs::create_directories(aside / "bundle");
  std::ofstream(aside / "bundle" / "notes.txt") << "mine";
  std::vector<std::string> said;
  const WarningHandler before = set_warning_handler([&](const std::string& w) { said.push_back(w); });
  EXPECT_THROW(BundleDestination(dir_ / "model", false), InputError);  // the user's again: force to replace
  set_warning_handler(before);
  EXPECT_EQ(read(dir_ / "model" / "notes.txt"), "mine");
  EXPECT_FALSE(fs::exists(aside));
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("put back what an interrupted run had moved aside to"), std::string::npos) << said[0];
}

// A hand-written manifest naming the user's files once made them carb's to delete (second hostile
// pass): only a manifest whose own checksum verifies counts.
TEST_F(BundleDestinationTest, AForgedManifestDoesNotMakeTheUsersFilesCarbs) {
  const fs::path out = dir_ / "fv";
  fs::create_directories(out);
  std::ofstream(out / "thesis.tex") << "precious";
  std::ofstream(out / "manifest.json") << R"({"format": "carb-model", "x": {"file": "thesis.tex"}})";
  EXPECT_NE(bundle_replace_refusal(out), "");
  EXPECT_THROW(BundleDestination(out, false), InputError);
  EXPECT_EQ(read(out / "thesis.tex"), "precious");
}

TEST_F(BundleDestinationTest, ADamagedBundleMayBeRetrainedInPlace) {
  const fs::path out = dir_ / "model";
  fake_bundle(out, "old");
  std::ofstream(out / "manifest.json") << "{\"format\": \"carb-model\", trunc";
  EXPECT_EQ(bundle_replace_refusal(out), "");
  std::ofstream(out / "notes.txt") << "x";
  EXPECT_NE(bundle_replace_refusal(out), "");
}

// The third hostile pass: any manifest.json made every *.model in the directory carb's, so
// `train --out` deleted another tool's churn.model and tokenizer.model. Now a damaged manifest
// must still say carb-model, and a .model file counts only with carb's checksum trailer.
TEST_F(BundleDestinationTest, OtherToolsModelFilesAreNeverCarbs) {
  const fs::path out = dir_ / "app";
  fs::create_directories(out);
  std::ofstream(out / "manifest.json") << R"({"name": "my app"})";
  std::ofstream(out / "churn.model") << "my xgboost model";
  EXPECT_NE(bundle_replace_refusal(out), "");
  std::ofstream(out / "manifest.json") << "CACHE MANIFEST\n";
  EXPECT_NE(bundle_replace_refusal(out), "");
  std::ofstream(out / "manifest.json") << R"({"format": 5})";  // once an exception: internal error
  EXPECT_NE(bundle_replace_refusal(out), "");
  std::ofstream(out / "manifest.json") << R"({"format": "carb-model", "damaged": )";
  EXPECT_NE(bundle_replace_refusal(out), "") << "a damaged carb manifest does not make churn.model carb's";
  EXPECT_THROW(BundleDestination(out, false), InputError);
  EXPECT_EQ(read(out / "churn.model"), "my xgboost model");
}


// Fifty-first hostile pass: `train --out runs --force` deleted runs/cpu.db, a measurement store, as
// the refusal without --force advised, and a file system mounted inside --out was emptied. Neither
// goes with a replaced directory, --force or not; a swapped-out bundle that gained one is kept.
TEST_F(BundleDestinationTest, AMeasurementStoreInsideIsNeverRemovedEvenWithForce) {
  const std::string sqlite("SQLite format 3\0rest of the header", 35);
  fs::create_directories(dir_ / "runs" / "round1");
  std::ofstream(dir_ / "runs" / "round1" / "cpu.db", std::ios::binary) << sqlite;
  for (const bool force : {false, true}) {
    try {
      BundleDestination d(dir_ / "runs", force);
      ADD_FAILURE() << "a directory holding a store was taken, force " << force;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("holds the SQLite database"), std::string::npos) << what;
      EXPECT_NE(what.find("round1/cpu.db"), std::string::npos) << what;
      EXPECT_EQ(what.find("pass --force"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(read(dir_ / "runs" / "round1" / "cpu.db"), sqlite);
  EXPECT_EQ(entries(), std::set<std::string>{"runs"});  // no staging directory left behind

  // A store put into the bundle while training ran: the swap is refused, the store kept.
  fake_bundle(dir_ / "model", "old");
  {
    BundleDestination d(dir_ / "model", true);
    stage(d, "new");
    std::ofstream(dir_ / "model" / "late.db", std::ios::binary) << sqlite;
    EXPECT_THROW(d.commit(), InputError);
  }
  EXPECT_EQ(read(dir_ / "model" / "late.db"), sqlite);
  EXPECT_EQ(model_text(dir_ / "model" / "m.0.x.model"), "old");
  // And one that arrives after that check, in the swapped-out bundle, keeps it under a name of its own.
  fake_bundle(dir_ / "old", "old");
  std::ofstream(dir_ / "old" / "late.db", std::ios::binary) << sqlite;
  EXPECT_TRUE(detail::keep_changed_bundle(dir_ / "old", dir_ / "kept", true));
  EXPECT_EQ(read(dir_ / "kept.earlier" / "late.db"), sqlite);
}

// Fifty-third hostile pass: `train --out models --force` deleted models/cpu-2t and models/h200.
TEST_F(BundleDestinationTest, ABundleInsideIsNeverRemovedEvenWithForce) {
  fake_bundle(dir_ / "models" / "cpu-2t", "a");
  fake_bundle(dir_ / "models" / "team" / "h200", "b");
  try {
    BundleDestination d(dir_ / "models", true);
    ADD_FAILURE() << "a directory of bundles was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("holds the model bundle"), std::string::npos) << e.what();
  }
  EXPECT_EQ(model_text(dir_ / "models" / "cpu-2t" / "m.0.x.model"), "a");
  EXPECT_EQ(model_text(dir_ / "models" / "team" / "h200" / "m.0.x.model"), "b");
  // A bundle's own manifest, at the top, is what --out replaces as always.
  fake_bundle(dir_ / "model", "old");
  BundleDestination d(dir_ / "model", false);
  stage(d, "new");
  d.commit();
  EXPECT_EQ(model_text(dir_ / "model" / "m.0.x.model"), "new");
}

TEST_F(BundleDestinationTest, AMountInsideIsNeverRemovedEvenWithForce) {
  fs::create_directories(dir_ / "ws" / "vol");
  if (::geteuid() != 0 || std::system(("mount -t tmpfs -o size=64k tmpfs '" + (dir_ / "ws" / "vol").string() +
                                       "' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "mounting a tmpfs needs root";
  std::ofstream(dir_ / "ws" / "vol" / "data.txt") << "important";
  std::string what;
  try {
    BundleDestination d(dir_ / "ws", true);
  } catch (const InputError& e) {
    what = e.what();
  }
  EXPECT_NE(what.find("a mount point"), std::string::npos) << what;
  EXPECT_EQ(read(dir_ / "ws" / "vol" / "data.txt"), "important");
  EXPECT_EQ(std::system(("umount '" + (dir_ / "ws" / "vol").string() + "'").c_str()), 0);
}
}  // namespace
}  // namespace carb
