// Staging and atomic replacement of a model bundle directory (see carb/bundle_destination.hpp).
#include "carb/bundle_destination.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <nlohmann/json.hpp>
#include <set>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/warning.hpp"
#include "data/provenance.hpp"
#include "learn/checksum_file.hpp"
#include "learn/model_internal.hpp"
#include "util/special_file.hpp"
#include "util/stop_signal.hpp"
#include "util/temp_owner.hpp"

namespace carb {
namespace fs = std::filesystem;

namespace {

using detail::parent_of;

// Staging directories are named .NAME.carb-staging-PID-XXXXXX (util/temp_owner.hpp): a later run
// removes those whose process is gone and leaves another carb's alone.
constexpr const char* kStagingTag = ".carb-staging-";

// Every file a manifest names: the values of its "file" keys, wherever they sit.
void named_files(const nlohmann::json& j, std::set<std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "file" && it->is_string()) out.insert(it->get<std::string>());
      named_files(*it, out);
    }
  } else if (j.is_array()) {
    for (const auto& e : j) named_files(e, out);
  }
}

// A manifest whose own checksum verifies (the body without "manifest_fnv1a64", as bundle.cpp
// seals it): a hand-written one that merely says carb-model is the user's.
bool verified_manifest(const std::string& text, nlohmann::json* parsed = nullptr) {
  nlohmann::json man = nlohmann::json::parse(text, nullptr, false);
  if (parsed) *parsed = man;
  return man.is_object() && man.contains("format") && man["format"].is_string() &&
         man["format"].get<std::string>() == "carb-model" && manifest_checksum_verifies(std::move(man));
}

// What is not a regular file is no part of a bundle, and is never opened (a FIFO would block).
std::string read_text(const fs::path& f) {
  std::error_code ec;
  if (!fs::is_regular_file(f, ec)) return "";
  std::ifstream in(f, std::ios::binary);
  return {(std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()};
}

// A non-empty list of configuration keys, one per line, as a bundle's trained_configs.txt holds.
bool trained_list(const fs::path& f) {
  std::error_code ec;
  if (!fs::is_regular_file(f, ec)) return false;
  std::ifstream in(f);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line); ++n)
    if (!parse_config_key(line)) return false;
  return n > 0;
}

bool carb_model_file(const fs::path& f) {
  try {
    (void)detail::read_checksummed(f);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Made first thing in a staging directory and removed just before the swap: while it is there,
// the directory holds what carb is writing, possibly torn by a kill.
constexpr const char* kStagingMarker = ".carb-staging";

// What a killed `carb train` leaves under a staging name, and nothing else:
// - with the marker at the top, a bundle being written: the marker, manifest.json,
//   trained_configs.txt and .model files, any of them torn;
// - without it, finished bundle files (the new bundle just before the swap, or the old one after
//   it, possibly half removed, possibly under "bundle/" of an "old-" directory): a manifest whose
//   checksum verifies, a non-empty list of configuration keys, .model files with carb's trailer.
// A directory holding anything else (a user's thesis.tex beside a planted marker, a notes file
// named manifest.json) is not carb's to remove, whatever its name: it is left where it is.
bool staging_leftover(const fs::path& dir, bool top = true) {
  std::error_code ec;
  if (fs::symlink_status(dir, ec).type() != fs::file_type::directory) return false;
  // The marker counts only where carb makes it: at the top, never in an old bundle moved aside.
  const bool marked = top && fs::symlink_status(dir / kStagingMarker, ec).type() == fs::file_type::regular;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const auto type = fs::symlink_status(e.path(), ec).type();
    if (type == fs::file_type::directory && top && !marked && name == "bundle") {
      if (!staging_leftover(e.path(), false)) return false;
      continue;
    }
    if (type != fs::file_type::regular) return false;
    const bool model = fs::path(name).extension() == ".model";
    if (marked) {
      if (name == kStagingMarker || name == "manifest.json" || name == "trained_configs.txt" || model) continue;
      return false;
    }
    if (name == "trained_configs.txt" && trained_list(e.path())) continue;
    if (name == "manifest.json" && verified_manifest(read_text(e.path()))) continue;
    if (!model || !carb_model_file(e.path())) return false;
  }
  return !ec;
}

// Moves `old` to the first free name of "<dir>.earlier", "<dir>.earlier-1", ...; returns where it
// is now (`old` itself where no name could be had, which the caller's message then names).
fs::path keep_beside(const fs::path& old, const fs::path& dir) {
  for (int n = 0; n < 1000; ++n) {
    const fs::path name = dir.string() + ".earlier" + (n ? "-" + std::to_string(n) : std::string());
    if (::renameat2(AT_FDCWD, old.c_str(), AT_FDCWD, name.c_str(), RENAME_NOREPLACE) == 0) return name;
    // Without renameat2: a plain rename to a name that is free a moment before.
    std::error_code ec;
    if ((errno == EINVAL || errno == ENOSYS) && !fs::exists(fs::symlink_status(name, ec)) &&
        ::rename(old.c_str(), name.c_str()) == 0)
      return name;
    if (errno != EEXIST && errno != EINVAL && errno != ENOSYS) break;
  }
  return old;
}

// On a file system without renameat2, commit() moves the old bundle aside to an "old-" staging
// directory before it moves the new one in. A run killed between the two renames (or whose second
// rename failed) left nothing at `dir`, and the next run removed both as a dead writer's leftovers
// (seventeenth hostile pass). With nothing at `dir`, the newest finished bundle a dead writer moved
// aside goes back first.
void restore_moved_aside(const fs::path& dir) {
  std::error_code ec;
  if (fs::symlink_status(dir, ec).type() != fs::file_type::not_found) return;
  for (const fs::path& aside : detail::dead_owners_temps(dir, kStagingTag, "old-")) {
    // Whatever it moved there: a finished bundle, or (a review) the user's directory, file or link
    // that --force was replacing; with nothing at `dir` the swap never happened.
    if (fs::symlink_status(aside, ec).type() != fs::file_type::directory) continue;
    if (fs::symlink_status(aside / "bundle", ec).type() == fs::file_type::not_found) continue;
    if (::rename((aside / "bundle").c_str(), dir.c_str()) != 0)
      throw ModelError("cannot put back the bundle an interrupted run moved aside to " + (aside / "bundle").string() +
                       ": " + std::strerror(errno) + "; move it to " + dir.string() + " by hand");
    // Through the warning handler, as every message of the library (a hostile tester: straight to stderr).
    warn("put back what an interrupted run had moved aside to " + (aside / "bundle").string() + " at " + dir.string());
    fs::remove(aside, ec);  // empty now
    return;
  }
}

// A run killed right after the swap, before it kept or removed what the swap moved out, leaves what
// --out held under its staging name (unmarked: the marker goes just before the swap), or under
// "bundle/" of an "old-" one without renameat2. Carb's own finished files there are removed as any
// leftover; anything else (the user's directory that --force replaced) is kept at <dir>.earlier[-N],
// and said (hundred-and-twenty-first hostile pass: it stayed under the hidden staging name, which
// reads as carb's scratch, and no run ever said so).
void keep_swapped_out(const fs::path& dir) {
  std::error_code ec;
  for (const std::string kind : {"", "old-"})
    for (const fs::path& t : detail::dead_owners_temps(dir, kStagingTag, kind)) {
      // A file or link too: --force replaces one at --out (a review: they stayed hidden).
      const fs::path held = kind.empty() ? t : t / "bundle";
      if (fs::symlink_status(held, ec).type() == fs::file_type::not_found || staging_leftover(t)) continue;
      if (!kind.empty() && fs::symlink_status(t, ec).type() != fs::file_type::directory) continue;
      if (kind.empty() && fs::symlink_status(t, ec).type() == fs::file_type::directory &&
          fs::symlink_status(t / kStagingMarker, ec).type() == fs::file_type::regular)
        continue;
      const fs::path kept = keep_beside(held, dir);
      if (kept == held) {
        warn("an interrupted run left what was at " + dir.string() + " under " + held.string() +
             ", and carb could not move it beside " + dir.string() + "; move it back by hand");
        continue;
      }
      if (!kind.empty()) fs::remove(t, ec);  // empty now
      warn("an interrupted run had moved what was at " + dir.string() + " to " + held.string() + "; it is kept at " +
           kept.string());
    }
}

// Fortieth hostile pass: with train.csv a hard link to runs/h200.csv, `train --data train.csv --out
// runs --force` deleted runs/h200.json, the data's provenance; with h2.json a link to prov/h200.json,
// `--out prov --force` deleted it. Paths alone do not say what a directory holds: a file in `dir`
// that is the training data or its sidecar (the same file, by any name; a name of the data there
// brings its own sidecar beside it) is refused even with --force.
void refuse_holding_links(const fs::path& dir, const std::vector<fs::path>& keep) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec)) || keep.empty()) return;
  std::size_t seen = 0;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end && seen++ < 100000; it.increment(ec)) {
    std::error_code e;
    if (!it->is_regular_file(e) || it->is_symlink(e)) continue;
    for (const fs::path& k : keep) {
      std::error_code e2, e3;
      const bool data = fs::equivalent(it->path(), k, e2) && !e2;
      const bool sidecar = fs::equivalent(it->path(), provenance_path(k), e3) && !e3;
      if (data)
        throw InputError(dir.string() + " holds the training data " + k.string() + " under another name (" +
                         it->path().string() + "); write the model bundle elsewhere");
      if (sidecar)
        throw InputError(dir.string() + " holds the provenance file of the training data " + k.string() + " (" +
                         it->path().string() + "); write the model bundle elsewhere");
    }
  }
}

// Fifty-first hostile pass: `train --out runs --force` deleted runs/cpu.db, a measurement store, as
// the refusal without --force had advised; and a file system mounted inside --out was emptied. What
// may be the only copy of measurements, or lies on another file system, is never removed with a
// directory carb replaces, --force or not. Empty when `dir` holds neither (not through links).
std::string precious_inside(const fs::path& dir) {
  std::error_code ec;
  struct stat top {};
  if (::lstat(dir.c_str(), &top) != 0 || !S_ISDIR(top.st_mode)) return "";
  std::size_t seen = 0;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end && seen++ < 100000; it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    if (st.st_dev != top.st_dev || (S_ISDIR(st.st_mode) && detail::is_mount_point(it->path()))) {
      it.disable_recursion_pending();
      return dir.string() + " holds " + it->path().string() +
             ", a mount point (another file system, whose files would be deleted with it)";
    }
    if (S_ISREG(st.st_mode) && detail::is_sqlite_file(it->path()))
      return dir.string() + " holds the SQLite database " + it->path().string() + " (a measurement store?)";
    // Fifty-third hostile pass: `train --out models --force` deleted models/cpu-2t and models/h200,
    // carb bundles of their own, as the refusal advised. A bundle below --out is never replaced.
    if (S_ISREG(st.st_mode) && it->path().filename() == "manifest.json" && it->path().parent_path() != dir &&
        verified_manifest(read_text(it->path())))
      return dir.string() + " holds the model bundle " + it->path().parent_path().string();
    // Fifty-second hostile pass: `train --out t4 --force` deleted t4/cpu-1t.csv and its provenance.
    if (S_ISREG(st.st_mode) && it->path().extension() == ".json" && is_carb_provenance(it->path()))
      return dir.string() + " holds " + it->path().string() + ", the provenance of measured data";
    // Fifty-fifth hostile pass: nor a dataset whose provenance is gone (train --force deleted one).
    // (Files named *.csv, any case: reading the head of every file of a large tree would be slow.)
    std::string ext = it->path().extension().string();
    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (S_ISREG(st.st_mode) && ext == ".csv" && is_dataset_csv(it->path()))
      return dir.string() + " holds " + it->path().string() + ", a dataset CSV (measurements)";
  }
  return "";
}

// Sixty-sixth hostile pass: Model.save("b/sub") put a bundle inside the bundle b, which no bundle
// may then replace (a bundle below --out is never replaced): b could not be trained again, with or
// without --force. A bundle is not written inside another.
void refuse_inside_a_bundle(const fs::path& dir) {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) return;
  for (fs::path up = real.parent_path(); !up.empty(); up = up.parent_path()) {
    if (fs::is_regular_file(up / "manifest.json", ec) && verified_manifest(read_text(up / "manifest.json")))
      throw InputError("cannot write model bundle " + dir.string() + " inside the model bundle " + up.string() +
                       " (a bundle holding another could never be replaced); choose a directory outside it");
    if (up == up.root_path()) break;
  }
}

void refuse_precious_inside(const fs::path& dir) {
  if (const std::string why = precious_inside(dir); !why.empty())
    throw InputError(why + ", which no model bundle replaces (--force does not change this); move it out, or choose "
                     "another --out");
}

void refuse_holding(const fs::path& dir, const std::vector<fs::path>& keep) {
  const auto out = resolved_path(dir);
  std::error_code ec;
  for (const auto& k : keep) {
    const auto in = resolved_path(k);
    const auto rel = in.lexically_relative(out);
    // A relative path recorded by an older carb says nothing of where it was resolved: a file of
    // that name directly in `dir` counts as the training data too.
    const bool same_name = k.is_relative() && fs::exists(out / k.filename(), ec);
    if (in == out || (!rel.empty() && *rel.begin() != "..") || same_name)
      throw InputError(dir.string() + " holds the training data " + k.string() + "; write the model bundle elsewhere");
    // Nor its provenance sidecar (twenty-first hostile pass: Python save("tr.json", force=True)).
    fs::path side = in;
    side.replace_extension(".json");
    if (in.extension() == ".csv" && out == side)
      throw InputError(dir.string() + " is the provenance file of an input (the training data " + k.string() +
                       "); write the model bundle elsewhere");
  }
  refuse_holding_links(dir, keep);
}

// The stat of an existing directory at `dir` (not through a link).
bool exists_with_mode(const fs::path& dir, struct stat& st) {
  return ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}


// The platform a bundle's manifest names, verified or not: a damaged manifest (a byte changed) still
// says whose model the directory holds (thirty-fifth hostile pass: another platform's bundle with
// one edited byte was replaced without --force, its 11 files deleted). "" when there is no carb
// manifest; kUnknownPlatform when a damaged one no longer says (thirty-sixth hostile pass: with the
// key itself damaged, or truncated away, another platform's bundle was replaced without --force).
constexpr const char* kUnknownPlatform = "\x01unknown";
std::string manifest_platform(const fs::path& dir) {
  const std::string text = read_text(dir / "manifest.json");
  nlohmann::json man;
  const bool verified = verified_manifest(text, &man);
  if (verified || (man = nlohmann::json::parse(text, nullptr, false)).is_object()) {
    // carb writes a non-empty platform into every manifest (the datasets' check refuses an empty
    // one), so a carb-model manifest whose platform is empty or not a string no longer names it,
    // verified or not (thirty-ninth hostile pass: "platform": "" was replaced without --force).
    const bool says_carb = verified || (man.contains("format") && man["format"] == "carb-model");
    if (man.contains("platform")) {
      const auto& p = man["platform"];
      if (p.is_string() && !p.get<std::string>().empty()) return p.get<std::string>();
      return says_carb ? kUnknownPlatform : "";
    }
    return !verified && says_carb ? kUnknownPlatform : "";
  }
  // Unparseable (truncated): the first "platform": "..." in the text.
  static const std::regex named("\"platform\"\\s*:\\s*\"([^\"]*)\"");
  std::smatch m;
  if (std::regex_search(text, m, named) && !m[1].str().empty()) return m[1].str();
  return text.find("\"carb-model\"") != std::string::npos ? kUnknownPlatform : "";
}

// "of platform 'x'", or what is known of a damaged manifest that does not say.
std::string platform_phrase(const std::string& there) {
  return there == kUnknownPlatform ? std::string("of a platform its damaged manifest no longer names")
                                   : "of platform '" + there + "'";
}

}  // namespace

std::string bundle_replace_refusal(const fs::path& dir) {
  std::error_code ec;
  const auto st = fs::symlink_status(dir, ec);
  if (ec || st.type() == fs::file_type::not_found) return "";
  // Fifty-fourth hostile pass: a link to a bundle was called "not a model bundle directory".
  if (st.type() == fs::file_type::symlink)
    return dir.string() + " is a symbolic link" +
           (fs::is_directory(dir, ec) ? " (to " + fs::read_symlink(dir, ec).string() + "; give that path to retrain what is there)"
                                      : std::string()) +
           ", not a model bundle directory (replacing it replaces the link, never what it points to)";
  if (st.type() != fs::file_type::directory) return dir.string() + " exists and is not a model bundle directory";
  const std::string text = read_text(dir / "manifest.json");
  // A manifest counts only when its own checksum verifies: a hand-written one naming the user's
  // files ({"format": "carb-model", "x": {"file": "thesis.tex"}}) must not make them carb's.
  // (format 5, or a manifest that is not an object, is simply not carb's: no exception here.)
  nlohmann::json man;
  const bool is_bundle = verified_manifest(text, &man);
  const bool says_carb = man.is_object() ? man.contains("format") && man["format"].is_string() &&
                                              man["format"].get<std::string>() == "carb-model"
                                        : man.is_discarded() && text.find("\"carb-model\"") != std::string::npos;
  std::set<std::string> ours;
  if (is_bundle) named_files(man, ours);
  // A bundle whose manifest is damaged (it still says carb-model, its checksum fails) is carb's own
  // when every other file is one carb writes: trained_configs.txt, and .model files that carry
  // carb's checksum trailer. Retraining into it is how a user repairs it. A manifest.json of the
  // user's, or .model files of other tools (an XGBoost model, a tokenizer.model), never count.
  const bool damaged_bundle = !is_bundle && says_carb;
  const auto is_ours = [&](const std::string& name) {
    if (name == "manifest.json" || ours.count(name)) return true;
    if (!damaged_bundle) return false;
    if (name == "trained_configs.txt") return true;
    return fs::path(name).extension() == ".model" && carb_model_file(dir / name);
  };
  std::string foreign;
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if ((is_bundle || damaged_bundle) && is_ours(name) && e.is_regular_file(ec)) continue;
    if (n++ < 3) foreign += (foreign.empty() ? "" : ", ") + name;
  }
  if (n == 0) return "";  // a bundle of only its own files, or an empty directory
  if (n > 3) foreign += ", ...";
  return dir.string() + (is_bundle || damaged_bundle ? " holds files carb did not write (" : " is not a model bundle (it holds ") +
         foreign + ")";
}

bool detail::keep_changed_bundle(const fs::path& old, const fs::path& dir, bool force, const std::string& platform) {
  // Thirty-fourth hostile pass: a file added to the bundle in the millisecond between the last check
  // and the swap was deleted with the old bundle; thirty-fifth: so was another platform's bundle
  // moved there then. The swapped-out directory is checked once more; holding anything carb did not
  // write, or another platform's model, it is kept under a name of its own, and carb says where.
  std::string why;
  if (!precious_inside(old).empty())
    why = "gained a measurement store or a mount point";
  else if (force) {
    // Fifty-fifth hostile pass: `train --force` deleted a directory of the user's notes, as the
    // refusal said it would. --force puts the bundle there; what it replaces that carb did not
    // write (the user's files, a file of theirs) is kept, not deleted.
    if (bundle_replace_refusal(old).empty()) return false;
    why = "held what is not a carb model bundle's own files, which --force replaced";
  }
  else if (const std::string there = platform.empty() ? "" : manifest_platform(old); !there.empty() && there != platform)
    why = "was replaced by the model " + platform_phrase(there);
  else if (!bundle_replace_refusal(old).empty())
    why = "gained files";
  if (why.empty()) return false;
  const fs::path kept = keep_beside(old, dir);
  // What was there may be the user's directory, not a bundle (fifty-fourth hostile pass).
  warn(dir.string() + " " + why + (force ? "" : " while carb worked") + "; what was there is kept at " + kept.string());
  return true;
}

namespace {
// Removes the bundle `dir` held before the swap, now at `earlier`; what cannot be removed is said,
// not left behind without a word (a hostile tester found one hidden full copy per run).
void remove_earlier(const fs::path& dir, const fs::path& earlier) {
  std::error_code ec;
  fs::remove_all(earlier, ec);
  if (ec && fs::exists(earlier, ec))
    warn("the earlier bundle at " + dir.string() + " was replaced, but its files could not be removed: they are "
         "left at " + earlier.string());
}
}  // namespace

BundleDestination::BundleDestination(fs::path dir, bool force, const std::vector<fs::path>& keep)
    : dir_(std::move(dir)), force_(force) {
  if (dir_.empty()) throw InputError("no model bundle directory given");
  refuse_holding(dir_, keep);
  if (!dir_.has_filename()) dir_ = dir_.parent_path();  // "models/x/" names models/x
  // "." or ".." (train --out . from inside a bundle) name a directory whose parent is not the path's
  // parent: the staging directory went inside the bundle and the swap was refused after training.
  if (const auto f = dir_.filename(); f == "." || f == "..") {
    std::error_code ec;
    const fs::path real = fs::weakly_canonical(fs::absolute(dir_), ec);
    if (!ec) dir_ = real;
  }
  detail::refuse_special_file(dir_);
  check_not_a_bundle_file(dir_);  // even with --force: a bundle's manifest made a directory broke it
  check_not_a_provenance(dir_);
  const fs::path parent = parent_of(dir_);
  std::error_code ec;
  if (!fs::is_directory(parent, ec))
    throw InputError("cannot write model bundle " + dir_.string() + ": directory " + parent.string() +
                     " does not exist");
  refuse_inside_a_bundle(dir_);
  restore_moved_aside(dir_);
  keep_swapped_out(dir_);
  refuse_precious_inside(dir_);
  if (!force_)
    if (const std::string why = bundle_replace_refusal(dir_); !why.empty())
      throw InputError(why + "; choose another --out, or pass --force (force=True in Python) to put the bundle there "
                       "(what is there now is then kept beside it as " + dir_.filename().string() + ".earlier)");
  // A write-protected bundle (chmod a-w) was swapped out all the same, as only its parent needs
  // writing for that, and its files, which could then not be removed, stayed behind under a hidden
  // staging name, a full copy per run and no word of it (a hostile tester). Its owner's "keep this"
  // is kept, --force or not (root, whom no mode stops, removes it as it would any). A link is
  // replaced as a link, which its target's mode does not protect; a read-only mount is refused here,
  // not at the swap after the work.
  if (fs::symlink_status(dir_, ec).type() == fs::file_type::directory &&
      ::faccessat(AT_FDCWD, dir_.c_str(), W_OK, AT_EACCESS) != 0 && (errno == EACCES || errno == EROFS))
    throw InputError("cannot replace " + dir_.string() + ": " +
                     (errno == EROFS ? std::string("it is on a read-only file system; choose another --out")
                                     : std::string("it is write-protected; make it writable (chmod u+w) to replace "
                                                   "it, or choose another --out")));
  detail::remove_stale_temps(dir_, kStagingTag, [](const fs::path& p) { return staging_leftover(p); });
  std::string tmpl = detail::owned_temp_template(dir_, kStagingTag);
  if (!::mkdtemp(tmpl.data()))
    throw InputError("cannot write model bundle " + dir_.string() + ": cannot create a directory in " +
                     parent.string() + ": " + std::strerror(errno));
  staging_ = tmpl;
  hold_fd_ = detail::hold_temp(staging_);  // a live owner, whatever namespace looks at the pid
  std::ofstream(staging_ / kStagingMarker).put('\n');
  // mkdtemp makes 0700; the bundle is swapped in under this directory, and a bundle is meant to be
  // read by others as a plain mkdir would allow.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(staging_.c_str(), 0777 & ~mask);
}


void BundleDestination::check_platform(const std::string& platform) {
  platform_ = platform;  // checked again at commit(): the directory may change during the work
  if (force_) return;
  if (const std::string there = manifest_platform(dir_); !there.empty() && there != platform)
    throw InputError(dir_.string() + " holds the model " + platform_phrase(there) + ", and this one is of '" + platform +
                     "'; choose another --out, or pass --force (force=True in Python) to replace it");
}

BundleDestination::~BundleDestination() {
  if (hold_fd_ >= 0) ::close(hold_fd_);
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(staging_, ec);
}

void BundleDestination::commit() {
  // A signal while the files were written (inside a StopOnSignals scope, as `carb train` runs)
  // still stops before the swap: the earlier bundle stays, the staging directory goes. Thirteenth
  // hostile pass: a SIGINT during the save exited 0 with the bundle replaced.
  detail::throw_if_stopped("training", "no model bundle was written");
  std::error_code ec;
  fs::remove(staging_ / kStagingMarker, ec);  // from here on the directory holds only the bundle
  if (const int d = ::open(staging_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
    // Its entries on disk before the swap (the files were flushed as written); a disk that cannot
    // flush them keeps the old bundle.
    const int synced = ::fsync(d), err = errno;
    ::close(d);
    if (synced != 0)
      throw ModelError("cannot flush the new bundle to disk before replacing " + dir_.string() + ": " +
                       std::strerror(err) + "; the earlier bundle is kept");
  }
  // A bundle being replaced keeps its directory's mode and, for root, its owner (eighteenth hostile
  // pass: a private 0700 bundle of another user became root's and world-readable).
  if (struct stat old {}; exists_with_mode(dir_, old)) {
    ::chmod(staging_.c_str(), old.st_mode & 07777);
    if (::geteuid() == 0) {
      (void)::chown(staging_.c_str(), old.st_uid, old.st_gid);
      for (const auto& e : fs::directory_iterator(staging_, ec)) (void)::chown(e.path().c_str(), old.st_uid, old.st_gid);
    }
  }
  if (const std::string why = precious_inside(dir_); !why.empty())
    throw InputError(why + " (it changed while carb worked), which no model bundle replaces; the new bundle was not "
                     "written");
  if (!force_)
    if (const std::string why = bundle_replace_refusal(dir_); !why.empty())
      throw InputError(why + " (it changed while carb worked); the new bundle was not written");
  // Thirty-third hostile pass: another platform's bundle moved to --out while `train` ran was swapped
  // out and deleted; the platform was checked only when training began.
  if (!force_ && !platform_.empty()) {
    try {
      check_platform(platform_);
    } catch (const InputError& e) {
      throw InputError(std::string(e.what()) + " (it changed while carb worked); the new bundle was not written");
    }
  }
  const bool exists = fs::symlink_status(dir_, ec).type() != fs::file_type::not_found;
  // After the swap the staging name holds the old bundle; a run killed while removing it leaves a
  // directory whose name names a dead process, which the next run cleans.
  const unsigned flags = exists ? RENAME_EXCHANGE : RENAME_NOREPLACE;
  if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, dir_.c_str(), flags) != 0) {
    if (errno != EINVAL && errno != ENOSYS)
      throw ModelError("cannot move the new bundle to " + dir_.string() + ": " + std::strerror(errno));
    // A file system without renameat2: move the old one aside under a unique, marked name first.
    // A crash between the two renames leaves the old bundle there, and the next run puts it back
    // (restore_moved_aside); a failed second rename puts it back at once.
    fs::path aside;
    if (exists) {
      std::string tmpl = detail::owned_temp_template(dir_, kStagingTag, "old-");
      if (!::mkdtemp(tmpl.data()))
        throw ModelError("cannot replace " + dir_.string() + ": " + std::strerror(errno));
      aside = fs::path(tmpl) / "bundle";
      if (::rename(dir_.c_str(), aside.c_str()) != 0) {
        const int err = errno;
        fs::remove(aside.parent_path(), ec);
        throw ModelError("cannot replace " + dir_.string() + ": " + std::strerror(err));
      }
    }
    if (::rename(staging_.c_str(), dir_.c_str()) != 0) {
      const int err = errno;
      if (exists && ::rename(aside.c_str(), dir_.c_str()) == 0) fs::remove(aside.parent_path(), ec);
      throw ModelError("cannot move the new bundle to " + dir_.string() + ": " + std::strerror(err) +
                       (exists && fs::exists(aside, ec) ? "; the earlier bundle is at " + aside.string() : ""));
    }
    committed_ = true;
    if (exists && detail::keep_changed_bundle(aside, dir_, force_, platform_)) {
      fs::remove(aside.parent_path(), ec);  // empty once the bundle is kept elsewhere
      return;
    }
    if (exists) remove_earlier(dir_, aside.parent_path());
    return;
  }
  committed_ = true;
  if (exists && detail::keep_changed_bundle(staging_, dir_, force_, platform_)) return;
  if (exists) remove_earlier(dir_, staging_);
}


}  // namespace carb
