// The rule for dataset outputs (`data export | combine | merge --out`, and `plan --out`): carb
// replaces a CSV and its provenance sidecar that it wrote, and refuses to replace anything else unless told to
// with --force. Checked before any work, so a wrong --out costs nothing and destroys nothing.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <set>
#include <unordered_map>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/warning.hpp"
#include "data/csv.hpp"
#include "data/provenance.hpp"
#include "util/special_file.hpp"
#include "util/temp_owner.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

// A dataset CSV as the dataset reader takes one: its header (after a BOM and blank lines, quoted or
// not, CRLF or LF, in any order) names every core column. Fifty-sixth hostile pass: the exact header
// at byte 0 was asked for, and a round re-saved by a spreadsheet (BOM, CRLF) was destroyed by
// merge --force with nothing kept, and replaced by plan and report --force.
bool looks_like_dataset(const fs::path& f) {
  std::error_code ec;
  if (!fs::is_regular_file(f, ec)) return false;
  std::ifstream in(f, std::ios::binary);
  std::string head(64 * 1024, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  std::size_t start = head.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  while (start < head.size() && (head[start] == '\n' || head[start] == '\r')) ++start;
  bool quoted = false;
  std::size_t end = start;
  for (; end < head.size(); ++end) {
    if (head[end] == '"') quoted = !quoted;
    if (!quoted && (head[end] == '\n' || head[end] == '\r')) break;
  }
  try {
    const auto rows = csv::parse(std::string_view(head).substr(start, end - start), f.string());
    if (rows.empty()) return false;
    const std::set<std::string> names(rows.front().fields.begin(), rows.front().fields.end());
    for (const char* c : kDatasetColumns)
      if (!names.count(c)) return false;
    return true;
  } catch (const DataError&) {
    return false;
  }
}

// The kind a carb provenance document states, or "" for anything else.
std::string carb_kind(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string()) return "";
  const std::string kind = j["kind"].get<std::string>();
  for (const char* k : kProvenanceKinds)
    if (kind == k) return kind;
  return "";
}

std::string provenance_kind(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  return carb_kind(nlohmann::json::parse(in, nullptr, false));
}

bool looks_like_provenance(const fs::path& f) { return !provenance_kind(f).empty(); }

// What makes `f` a window study, or "" when it is none: its header, or its provenance beside it
// (`<f>.json`, the name with ".json" added). Fifty-ninth hostile pass: `report --force` and
// `plan --force` onto a study kept its rows as <stem>.earlier.csv without its provenance, which
// stayed beside the new file and described it (only `<stem>.json` was looked at).
std::string window_study_sign(const fs::path& f) {
  std::error_code ec;
  if (!fs::is_regular_file(f, ec)) return "";
  const fs::path side(f.string() + ".json");
  if (fs::is_regular_file(side, ec) && provenance_kind(side) == kWindowStudyKind)
    return "its provenance " + side.filename().string();
  std::ifstream in(f, std::ios::binary);
  std::string head(512, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const std::string first = head.substr(0, head.find_first_of("\r\n"));
  return first == kWindowStudyHeader ? "its header" : "";
}

void refuse_a_window_study(const fs::path& out) {
  if (const std::string sign = window_study_sign(out); !sign.empty())
    throw InputError(out.string() + " holds a window study (" + sign + " says so), measurements that only `carb meter "
                     "--study` adds to (--force does not change this); choose another --out");
}
}  // namespace

bool is_carb_provenance(const fs::path& f) { return looks_like_provenance(f); }
bool is_dataset_csv(const fs::path& f) { return looks_like_dataset(f); }

namespace {

// "the manifest of the carb model bundle DIR" for a bundle's manifest, else "": carb wrote it, but
// it is no provenance (thirty-third hostile pass: refusals called one "a file carb did not write").
std::string bundle_manifest(const fs::path& f) {
  std::error_code ec;
  if (!fs::is_regular_file(f, ec)) return "";
  std::ifstream in(f, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  // A damaged manifest (truncated, a byte changed) still names its format (thirty-fifth hostile pass:
  // with it unparseable, report --force wrote over an intact learner file).
  const bool says = j.is_object() ? j.contains("format") && j["format"] == "carb-model"
                                  : j.is_discarded() && text.find("\"carb-model\"") != std::string::npos;
  if (!says) return "";
  return "the manifest of the carb model bundle " + (f.has_parent_path() ? f.parent_path() : fs::path(".")).string();
}

// The sidecars of every other name of `in`'s file in its directory (hard links, which resolve to
// themselves): with hl.csv a link to h200.csv, h200.json is hl.csv's provenance as much as hl.json.
std::vector<fs::path> sibling_sidecars(const fs::path& in) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_regular_file(in, ec) || fs::hard_link_count(in, ec) < 2 || ec) return out;
  const fs::path dir = in.has_parent_path() ? in.parent_path() : fs::path(".");
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2) && fs::equivalent(it->path(), in, e2) && !e2) out.push_back(provenance_path(it->path()));
  }
  return out;
}

// The CSV a provenance sidecar at `f` says it describes ("csv", a name beside it), or "".
fs::path described_csv(const fs::path& f) {
  std::error_code ec;
  if (!fs::is_regular_file(f, ec)) return {};
  std::ifstream in(f, std::ios::binary);
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (carb_kind(j).empty() || !j.contains("csv") || !j["csv"].is_string()) return {};
  const fs::path name = fs::path(j["csv"].get<std::string>()).filename();
  return name.empty() ? fs::path() : (f.has_parent_path() ? f.parent_path() / name : name);
}

// "carb's own provenance file" of "a provenance file" (it read "carb's own a provenance file":
// hundred-and-third hostile pass).
std::string owned(std::string_view what) {
  for (const std::string_view article : {"a ", "an "})
    if (what.substr(0, article.size()) == article) return "carb's own " + std::string(what.substr(article.size()));
  return "carb's own " + std::string(what);
}

// `forcible`: whether --force would replace such a file there (not at a sidecar's place, where it
// replaces only carb's own provenance: a hostile tester was told to pass --force, then refused).
void check_one(const fs::path& f, bool (*ours)(const fs::path&), const char* what, bool force, bool forcible = true) {
  std::error_code ec;
  check_not_a_link(f, force);
  const auto st = fs::status(f, ec);
  if (st.type() == fs::file_type::not_found) return;
  if (st.type() == fs::file_type::directory) throw InputError(f.string() + " is a directory; give a file to write");
  if (!force && (st.type() != fs::file_type::regular || !ours(f))) {
    if (const std::string manifest = bundle_manifest(f); !manifest.empty())
      throw InputError(f.string() + " is " + manifest + "; choose another --out");
    throw InputError(f.string() + " exists and is not " + what + " carb wrote; " +
                     (forcible ? "choose another --out, or pass --force to replace it"
                               : "move it away, or choose another --out (--force replaces only " +
                                     owned(what) + " there)"));
  }
}

}  // namespace

void check_not_an_input(const fs::path& out, const std::vector<fs::path>& inputs, InputKind kind) {
  // Compared by what the paths resolve to and by the files they are (hard links), so `./x`, a
  // symlink, a bare name run from inside a bundle (`--model . --out manifest.json`) or a link to an
  // input all count as the input. A dataset's provenance sidecar is part of it (a report replaced
  // h200.json with HTML; reached through a link to the CSV, the sidecar is the link target's).
  const fs::path o = resolved_path(out);
  auto refuse = [&](const fs::path& in, const std::string& what) {
    throw InputError(out.string() + " is " + what + " (" + in.string() +
                     "); write the result elsewhere, or the input would be lost");
  };
  for (const fs::path& in : inputs) {
    std::error_code ec;
    const fs::path i = resolved_path(in);
    if (o == i || (fs::equivalent(in, out, ec) && !ec)) refuse(in, "one of the inputs");
    if (fs::is_directory(i, ec)) {
      const fs::path rel = o.lexically_relative(i);
      if (!rel.empty() && *rel.begin() != "..") refuse(in, "inside an input directory");
      continue;
    }
    if (kind != InputKind::datasets) continue;
    // Thirty-ninth hostile pass: an input named through a hard link (hl.csv for h200.csv) had its
    // real sidecar, h200.json, replaced by --out h200.json --force.
    std::vector<fs::path> sidecars = sibling_sidecars(in);
    sidecars.push_back(provenance_path(in));
    sidecars.push_back(provenance_path(i));
    for (const fs::path& sidecar : sidecars)
      if (resolved_path(sidecar) == o || (fs::equivalent(sidecar, out, ec) && !ec))
        refuse(in, "the provenance file of an input");
    // And a sidecar that says it describes the input, wherever the link that names it lives.
    if (const fs::path csv = described_csv(out); !csv.empty() && fs::equivalent(csv, in, ec) && !ec)
      refuse(in, "the provenance file of an input");
  }
}

fs::path resolved_path(const fs::path& p) {
  std::error_code ec;
  const fs::path a = fs::absolute(p, ec);
  if (ec) return p.lexically_normal();
  const fs::path r = fs::weakly_canonical(a, ec);
  return ec ? a.lexically_normal() : r;
}

void check_output_keeps_rows(const fs::path& csv, const Dataset& next, bool force, KeepRule rule) {
  std::error_code ec;
  if (force || !fs::exists(csv, ec)) return;
  // The earlier output may be the only copy of measurements whose store or rounds are gone: a
  // fresh store profiled at the old store's path replaced an 8-row export with a 1-row one, and a
  // merge of the same configurations as errors, or without energy, emptied every measured value.
  std::vector<std::string> problems;
  const Dataset before = read_dataset_csv(csv, problems);
  if (!problems.empty())
    throw InputError(csv.string() + " holds rows carb cannot read back (" + problems.front() +
                     "); choose another --out, or pass --force to replace it");
  std::unordered_map<std::string, const Record*> kept;
  for (const Record& r : next.rows) kept.emplace(r.platform + '\n' + config_key(r.config), &r);
  std::size_t lost = 0;
  std::string first;
  for (const Record& r : before.rows) {
    const auto it = kept.find(r.platform + '\n' + config_key(r.config));
    std::string what;
    if (it == kept.end()) {
      what = "";
    } else if (r.status == Status::ok && it->second->status != Status::ok) {
      what = " (ok there, " + to_string(it->second->status) + " here)";
    } else {
      const Record& n = *it->second;
      for (const ColumnBounds& b : kPlausibleBounds)  // every measured column
        if (r.value(b.column) && !n.value(b.column)) what = " (its " + std::string(b.column) + " would be empty)";
      // Nor any column the earlier row recorded (eleventh hostile pass: a merge without the
      // reference_ms, latency_cv, passes ... columns replaced one with them; drift correction
      // reads reference_ms). Their values may change, as a re-combine's medians do.
      for (const auto& [col, v] : r.extra) {
        const auto e = n.extra.find(col);
        if (what.empty() && !v.empty() && (e == n.extra.end() || e->second.empty()))
          what = " (its " + col + " would be empty)";
      }
      // A combined row of fewer rounds knows less than the one it would replace.
      const auto rounds = r.extra.find("rounds"), now = n.extra.find("rounds");
      if (what.empty() && rounds != r.extra.end() && now != n.extra.end() &&
          std::strtod(now->second.c_str(), nullptr) < std::strtod(rounds->second.c_str(), nullptr))
        what = " (" + rounds->second + " rounds there, " + now->second + " here)";
      // A store never rewrites a committed row: an export whose row differs in anything (a value,
      // the protocol, a column it had) is the export of another store, a fresh round profiled at
      // the old one's path, and the earlier round's measurements would be gone.
      if (what.empty() && rule == KeepRule::same_rows) {
        for (const ColumnBounds& b : kPlausibleBounds)
          if (r.value(b.column) != n.value(b.column)) what = " (its " + std::string(b.column) + " differs)";
        if (r.status != n.status) what = " (its status differs)";
        for (const auto& [col, v] : r.extra) {
          const auto e = n.extra.find(col);
          const std::string now_v = e == n.extra.end() ? std::string() : e->second;  // empty = not recorded
          if (now_v != v) what = " (its " + col + " differs)";
        }
      }
      if (what.empty()) continue;
    }
    if (lost++ == 0) first = r.platform + " " + config_key(r.config) + what;
  }
  if (lost)
    throw InputError(csv.string() + " holds " + std::to_string(lost) + " measured configuration" + (lost == 1 ? "" : "s") +
                     " that this output would lose (first: " + first +
                     "); choose another --out, or pass --force to replace it");
}

namespace {

// The identities of the files an output was made from, as its sidecar records them (merge's
// "inputs", combine's "rounds"): where each one was and the hashes known for it.
struct Source {
  fs::path name;      // as typed, for messages
  fs::path resolved;  // absolute; empty when only a relative name was recorded
  std::vector<std::string> hashes;
};

std::vector<Source> recorded_sources(const nlohmann::json& prov) {
  std::vector<Source> out;
  if (!prov.is_object()) return out;
  for (const char* key : {"inputs", "rounds"}) {
    if (!prov.contains(key) || !prov[key].is_array()) continue;
    for (const nlohmann::json& e : prov[key]) {
      if (!e.is_object()) continue;
      Source s;
      if (e.contains("file") && e["file"].is_string()) s.name = e["file"].get<std::string>();
      // Forty-first hostile pass: a relative name recorded as typed ("r.csv") matched any r.csv
      // in the directory the next merge ran from. An older sidecar's relative name says nothing
      // about where the file was, so only its hash can find it.
      if (e.contains(kResolvedPathKey) && e[kResolvedPathKey].is_string())
        s.resolved = e[kResolvedPathKey].get<std::string>();
      else if (s.name.is_absolute())
        s.resolved = s.name;
      // The input's own bytes when they were read; only a sidecar written before carb recorded
      // those has just the hash the input's sidecar claimed, which may have been stale then
      // (forty-third hostile pass: the bytes it named were never merged, yet vouched for a file).
      for (const nlohmann::json* h : {&e, e.contains("provenance") ? &e["provenance"] : nullptr})
        if (s.hashes.empty() && h && h->is_object() && h->contains(kCsvHashKey) && (*h)[kCsvHashKey].is_string() &&
            !(*h)[kCsvHashKey].get<std::string>().empty())
          s.hashes.push_back((*h)[kCsvHashKey]);
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace

std::string check_output_keeps_sources(const fs::path& csv, const Dataset& next, const std::vector<fs::path>& inputs,
                                       bool force) {
  std::error_code ec;
  if (force || !fs::exists(csv, ec) || !fs::exists(provenance_path(csv), ec)) return "";
  // Fortieth hostile pass: `merge cpu-1t.csv --out all.csv`, the input deleted, then `merge
  // extra/cpu-1t-ref.csv --out all.csv` replaced every value of all.csv (the same configurations,
  // other measurements) with exit 0. A re-merge or re-combine may change values only when it is
  // made from what the earlier output was made from (more rounds, an input that grew): each of its
  // recorded inputs, found among these by path or by hash.
  std::vector<std::string> problems;
  const Dataset before = read_dataset_csv(csv, problems);
  if (!problems.empty()) return "";  // check_output_keeps_rows refuses it
  std::unordered_map<std::string, const Record*> now;
  for (const Record& r : next.rows) now.emplace(r.platform + '\n' + config_key(r.config), &r);
  // A file that grew only adds configurations: a store never rewrites a committed row, and a new
  // round is a new file (forty-second hostile pass: a round overwritten while another was added, or
  // a plain input replaced by a combined one, passed as "more rounds"). So any changed value, or
  // status (a measured failure is a result too: an oom row became another input's error), counts.
  std::size_t changed = 0;
  std::string first;
  for (const Record& r : before.rows) {
    const auto it = now.find(r.platform + '\n' + config_key(r.config));
    if (it == now.end()) continue;
    std::string what = r.status != it->second->status ? "status" : "";
    for (const ColumnBounds& b : kPlausibleBounds) {
      const auto was = r.value(b.column), is = it->second->value(b.column);
      // The same number printed otherwise (0.64097036 and 0.6409703600000001, a median taken again)
      // is no change: it named the first changed row by a last-bit difference (hundred-and-thirty-fourth
      // hostile pass), the real changes lying in other columns.
      if (what.empty() && was && is && std::abs(*was - *is) > 1e-12 * std::max(std::abs(*was), std::abs(*is)))
        what = b.column;
    }
    // And every other column both hold (forty-ninth hostile pass: another input matching only in
    // the measured columns replaced every row's reference_ms and load_avg_1m, exit 0).
    for (const auto& [column, text] : r.extra) {
      const auto is = it->second->extra.find(column);
      if (what.empty() && !text.empty() && is != it->second->extra.end() && !is->second.empty() && is->second != text)
        what = column;
    }
    if (!what.empty() && changed++ == 0) first = r.platform + " " + config_key(r.config) + " " + what;
  }
  if (!changed) return "";
  std::set<std::string> hashes;
  std::set<fs::path> paths;
  for (const fs::path& in : inputs) {
    paths.insert(resolved_path(in));
    // Only the bytes there now (forty-second hostile pass: a stale sidecar's hash vouched for
    // another CSV copied over its file).
    if (const auto h = file_fnv1a64(in)) hashes.insert(*h);
  }
  for (const Source& s : recorded_sources(read_provenance(csv))) {
    bool same_bytes = false;
    for (const std::string& h : s.hashes) same_bytes = same_bytes || hashes.count(h);
    const bool same_place = !s.resolved.empty() && paths.count(resolved_path(s.resolved));
    const std::string name = s.name.empty() ? std::string("an input") : s.name.string();
    // Hundred-and-fifteenth hostile pass: the README's own `data combine --out data/cpu-2t.csv` with
    // the four rounds it was made from was told round 1 "is not among these inputs": its sidecar,
    // written before carb recorded inputs' places and bytes, cannot say whether it is.
    if (!same_bytes && s.hashes.empty() && s.resolved.empty())
      throw InputError(csv.string() + " was made from " + name + ", but its provenance (written by an older carb) " +
                       "records neither where that file was nor its bytes, so carb cannot tell whether it is among " +
                       "these inputs, and the measured values of " + std::to_string(changed) + " of its rows would " +
                       "change (first: " + first + "); write to another --out and compare, or pass --force to " +
                       "replace it");
    if (!same_bytes && !same_place)
      throw InputError(csv.string() + " was made from " + name +
                       ", which is not among these inputs, and the measured values of " + std::to_string(changed) +
                       " of its rows would be replaced by other measurements (first: " + first +
                       "); choose another --out, or pass --force to replace it");
    // Forty-first hostile pass: the same path with other contents (overwritten with cp, exported
    // again from another store, a symlink pointed elsewhere) passed as the same input.
    if (!same_bytes)
      throw InputError(csv.string() + " was made from " + name + ", which has changed since, and the measured values of " +
                       std::to_string(changed) + " of its rows would be replaced (first: " + first +
                       "); choose another --out, or pass --force to replace it");
  }
  return std::to_string(changed) + " row" + (changed == 1 ? "" : "s") + " (first: " + first + ")";
}

void check_dataset_output(const fs::path& csv, bool force, const std::string& kind) {
  check_sealed_csv_output(csv, force, kind, looks_like_dataset, "a dataset CSV");
}

void check_sealed_csv_output(const fs::path& csv, bool force, const std::string& kind,
                             bool (*ours)(const fs::path&), const char* what) {
  if (csv.empty() || !csv.has_filename()) throw InputError("--out needs a file name");
  // The sidecar is the --out with its extension replaced by .json: without ".csv" it would be
  // another file's sidecar (--out h200 replaced h200.csv's), or the CSV itself (--out x.json).
  if (csv.filename() == ".csv") throw InputError("--out .csv needs a name before .csv");
  if (csv.extension() != ".csv")
    throw InputError("--out " + csv.string() + " must end in .csv (its provenance goes beside it as " +
                     provenance_path(csv).filename().string() + ")");
  const fs::path dir = csv.has_parent_path() ? csv.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw InputError("cannot write " + csv.string() + ": directory " + dir.string() +
                                                   " does not exist");
  refuse_a_window_study(csv);
  check_one(csv, ours, what, force);
  check_one(provenance_path(csv), looks_like_provenance, "a provenance file", force, false);
  // Fifty-second hostile pass: `plan --out cpu-2t.csv --force` replaced a measured dataset and its
  // provenance with a plan, as the refusal without --force advised. Only a dataset's own kinds of
  // output (export, merge, combine, each with its checks of what it keeps) replace one.
  const auto measured = [](const std::string& k) { return k == kExportedKind || k == kCombinedKind || k == kMergedKind; };
  if (!measured(kind) && looks_like_dataset(csv))
    throw InputError(csv.string() + " holds a dataset CSV (measurements; its provenance " +
                     provenance_path(csv).filename().string() + " is " +
                     (fs::exists(provenance_path(csv), ec) ? "beside it" : "gone") + "), which a " + kind +
                     " never replaces (--force does not change this); choose another --out");
  if (std::error_code e; !measured(kind) && fs::is_regular_file(provenance_path(csv), e))
    if (const std::string there = provenance_kind(provenance_path(csv)); measured(there))
      throw InputError(provenance_path(csv).string() + " is the provenance of a " + there +
                       ", measurements that a " + kind + " never replaces (--force does not change this); choose "
                       "another --out");
  // Thirtieth hostile pass: `merge --out results.csv --force` replaced results.json, a measurement
  // store, with the merge's provenance; its rows were gone. --force is for --out, which the user
  // named: at the sidecar's name, which they did not, it replaces only a provenance carb wrote.
  // Thirty-sixth hostile pass: nor another file's provenance. A window study names its sidecar by
  // adding ".json" to its --out, so study `h200`'s h200.json sits where h200.csv's goes; --force
  // replaced it, that study's only record of its meter check and GPU.
  if (const fs::path side = provenance_path(csv); fs::exists(side, ec) && provenance_kind(side) == kWindowStudyKind)
    throw InputError(side.string() + ", where the provenance of " + csv.filename().string() +
                     " goes, holds the provenance of the window study " + (csv.parent_path() / csv.stem()).string() +
                     ", another file's (--force replaces only this output's own provenance there); move it away, or "
                     "choose another --out");
  if (const fs::path side = provenance_path(csv); force && fs::exists(side, ec) && !looks_like_provenance(side))
    throw InputError(side.string() + ", where the provenance of " + csv.filename().string() + " goes, holds " +
                     (bundle_manifest(side).empty() ? std::string("a file carb did not write") : bundle_manifest(side)) +
                     " (--force replaces only carb's own provenance there); move it away, or choose another --out");
  detail::check_temp_name_fits(csv, ".carb-");
  detail::check_temp_name_fits(provenance_path(csv), ".carb-");
  // A dataset of another kind, or one whose sidecar is gone, may hold measurements kept nowhere
  // else (combine --out over a measuring round destroyed it); a sidecar of another kind describes
  // a dataset that may still exist elsewhere, even where this CSV does not.
  if (force) return;
  const bool has_sidecar = fs::exists(provenance_path(csv), ec);
  // Read once: check_one above refused a sidecar that is not a carb document.
  const nlohmann::json prov = has_sidecar ? read_provenance(csv) : nlohmann::json();
  const std::string there = carb_kind(prov);
  if (!fs::exists(csv, ec)) {
    if (has_sidecar && there != kind)
      throw InputError(provenance_path(csv).string() + " is the provenance of a " + there +
                       ", not of an earlier output of this command; choose another --out, or pass --force to replace it");
    // Eighteenth hostile pass: with its CSV moved away (archived), a sidecar (and the notes in it)
    // was replaced without a word; it is the only provenance that CSV has.
    if (has_sidecar)
      throw InputError(provenance_path(csv).string() + " describes a " + csv.filename().string() +
                       " that is no longer beside it (moved or deleted?), and is its only provenance; move it with "
                       "its CSV, choose another --out, or pass --force to replace it");
    return;
  }
  if (there != kind)
    throw InputError(csv.string() + " holds " +
                     (there.empty() ? std::string(what) + " without its provenance file" : "a " + there) +
                     ", not an earlier output of this command; choose another --out, or pass --force to replace it");
  // Thirteenth hostile pass: a latency the user corrected by hand in a merge's output, and a row
  // marked error, were merged over without a word. The sidecar holds the CSV's hash as carb wrote it.
  // A sidecar without the hash (an older carb's output) cannot tell an edit from none, so it is
  // refused like a missing sidecar (fourteenth hostile pass: an edit to such an output was lost).
  if (!prov.is_object() || !prov.contains(kCsvHashKey) || !prov[kCsvHashKey].is_string())
    throw InputError(csv.string() + "'s provenance " + provenance_path(csv).filename().string() +
                     " does not record the CSV's hash (an older carb wrote it), so an edit cannot be told from "
                     "none; choose another --out, or pass --force to replace it");
  // Twentieth hostile pass: a sidecar without its own hash (an older carb's; the shipped ones were
  // sealed since) cannot tell notes a user added from none, and they were lost on a re-combine.
  if (!prov.contains(kSidecarHashKey))
    throw InputError(provenance_path(csv).string() + " does not record its own hash (an older carb wrote it), so "
                     "notes added to it cannot be told from none; choose another --out, or pass --force to replace it");
  if (sidecar_edited(prov))
    throw InputError(provenance_path(csv).string() + " was edited since carb wrote it (notes added?), and replacing " +
                     csv.string() + " would replace it too; choose another --out, or pass --force to replace both");
  if (prov[kCsvHashKey] != file_fnv1a64(csv).value_or("")) {
    // Ninety-sixth hostile pass: a run killed between its two renames left the CSV's own provenance
    // staged beside it, and this refusal did not say so (only `data info` did).
    if (const fs::path staged = staged_provenance_of(csv); !staged.empty())
      throw InputError(csv.string() + " was written by a run killed before its provenance: that provenance is "
                       "still staged as " + staged.string() + "; move it to " + provenance_path(csv).string() +
                       " to keep the pair, or pass --force to replace both");
    throw InputError(csv.string() + " was changed since carb wrote it, or a run writing it was killed (its hash "
                     "differs from the one in " + provenance_path(csv).filename().string() +
                     "); choose another --out, or pass --force to replace it");
  }
}

void check_not_a_link(const fs::path& out, bool force) {
  detail::refuse_special_file(out);
  std::error_code ec;
  // Replacing a symbolic link replaces the link, not what it points to: the target would be left
  // stale (a link to a report), or a dangling link would become a file (thirteenth hostile pass).
  if (!force && fs::symlink_status(out, ec).type() == fs::file_type::symlink)
    throw InputError(out.string() + " is a symbolic link; carb would replace the link, not its target; give the "
                     "target's path, or pass --force to replace the link");
  check_not_a_bundle_file(out);
}

void check_not_a_provenance(const fs::path& out, bool study_output) {
  // Fifty-first hostile pass: `report --out cpu-1t.json --force` made cpu-1t.csv's sidecar an HTML
  // page (every reader then refused the dataset, and its meter and host records were gone), and
  // `train --out cpu-1t.json --force` made it a bundle directory.
  fs::path p = out;
  if (!p.has_filename()) p = p.parent_path();
  std::error_code ec;
  if (!fs::is_regular_file(p, ec)) return;
  if (!study_output) refuse_a_window_study(p);
  // Fifty-second hostile pass: nor the file such a provenance describes (`report --out y/cpu-2t.csv
  // --force` made a measured dataset an HTML page beside its now stale sidecar).
  if (const fs::path side = provenance_path(p); p.extension() == ".csv" && fs::is_regular_file(side, ec)) {
    // By its place beside the CSV, whatever name the sidecar records (a dataset copied under
    // another name keeps its sidecar's record of the first).
    if (const std::string kind = provenance_kind(side); !kind.empty())
      throw InputError(out.string() + " is the " + kind + " its provenance " + side.string() +
                       " describes, which only that file's own output replaces (--force does not change this); "
                       "choose another --out");
  }
  if (looks_like_dataset(p))
    throw InputError(out.string() + " holds a dataset CSV without its provenance, measurements that only a dataset's "
                     "own kinds of output replace (--force does not change this); choose another --out");
  const std::string kind = provenance_kind(p);
  if (kind.empty()) return;
  const fs::path csv = described_csv(p);
  throw InputError(out.string() + " is the provenance of " +
                   (csv.empty() ? "a " + kind : "the " + kind + " " + csv.string()) +
                   ", its only record of how it was made, which only that file's own output replaces (--force "
                   "does not change this); choose another --out");
}

void check_not_a_bundle_file(const fs::path& out) {
  // Thirty-fourth hostile pass: `report --out model/manifest.json --force` broke the bundle;
  // thirty-fifth: `train --out model/manifest.json --force` made the manifest a directory.
  std::error_code ec;
  fs::path p = out;
  if (!p.has_filename()) p = p.parent_path();  // "model/manifest.json/" names the same file
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const std::string name = p.filename().string();
  const bool bundle_name = name == "manifest.json" || name == "trained_configs.txt" || p.extension() == ".model";
  if (bundle_name && fs::exists(fs::symlink_status(p, ec)) && !bundle_manifest(dir / "manifest.json").empty())
    throw InputError(out.string() + " is a file of the carb model bundle " + dir.string() +
                     ", which replacing it would break (--force does not take a bundle apart); choose another --out");
}

}  // namespace carb
