// Provenance sidecars: machine facts read from the running system (Linux /proc, uname)
// and atomic JSON files beside each dataset CSV.
#include "data/provenance.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "carb/error.hpp"
#include "data/csv.hpp"
#include "util/fnv.hpp"
#include "util/held_warnings.hpp"
#include "util/json_error.hpp"
#include "util/stop_signal.hpp"

namespace carb {
namespace {

// The value after "key<blanks>:" on the first line of a /proc file that starts with key.
std::string proc_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return "";
}

// MemTotal is in kB (KiB); a malformed value is left out rather than guessed.
std::optional<double> memory_total_kib() {
  std::istringstream mem(proc_field("/proc/meminfo", "MemTotal"));
  if (double kb = 0; mem >> kb && kb > 0) return kb;
  return std::nullopt;
}

}  // namespace

std::string protocol_of(const Record& r) {
  const auto it = r.extra.find("protocol_id");
  return it == r.extra.end() ? std::string() : it->second;
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf.data();
}

std::optional<double> machine_memory_mb() {
  const auto kib = memory_total_kib();
  return kib ? std::optional<double>(*kib * 1024.0 / 1e6) : std::nullopt;
}

nlohmann::json collect_machine_info() {
  nlohmann::json m;
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) == 0) m["hostname"] = host.data();
  if (const std::string cpu = proc_field("/proc/cpuinfo", "model name"); !cpu.empty()) m["cpu_model"] = cpu;
  if (const unsigned n = std::thread::hardware_concurrency(); n > 0) m["cores"] = n;
  // MiB under an MB name, as every sidecar so far has it (provenance.hpp).
  if (const auto kib = memory_total_kib()) m["memory_total_mb"] = *kib / 1024.0;
  if (utsname u{}; uname(&u) == 0)
    m["kernel"] = {
        {"sysname", u.sysname}, {"release", u.release}, {"version", u.version}, {"machine", u.machine}};
  m["date"] = utc_now_iso8601();
  return m;
}

std::filesystem::path provenance_path(const std::filesystem::path& csv) {
  std::filesystem::path p = csv;
  return p.replace_extension(".json");
}

std::optional<std::string> file_fnv1a64(const std::filesystem::path& f) {
  std::ifstream in(f, std::ios::binary);
  if (!in) return std::nullopt;
  std::uint64_t h = detail::kFnvOffsetBasis;
  std::array<char, 1 << 16> buf{};
  while (in.read(buf.data(), buf.size()) || in.gcount() > 0)
    h = detail::fnv1a64(reinterpret_cast<const unsigned char*>(buf.data()), static_cast<std::size_t>(in.gcount()), h);
  if (in.bad()) return std::nullopt;
  return detail::hex64(h);
}

std::string protocol_id_of(nlohmann::json settings) {
  for (const char* k : kProtocolRecordOnlyKeys) settings.erase(k);
  char buf[20];
  std::snprintf(buf, sizeof buf, "p%012llx", static_cast<unsigned long long>(detail::fnv1a64(settings.dump()) & 0xffffffffffffull));
  return buf;
}

std::filesystem::path staged_provenance_of(const std::filesystem::path& csv) {
  // The CSV is hashed only once a staged file is found: every dataset write asks, almost always of
  // a directory holding none.
  std::optional<std::optional<std::string>> now;
  const std::filesystem::path side = provenance_path(csv);
  const std::filesystem::path dir = side.has_parent_path() ? side.parent_path() : ".";
  const std::string prefix = "." + side.filename().string() + ".carb-";
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !it->is_regular_file(ec)) continue;
    if (!now) now = file_fnv1a64(csv);
    if (!*now) return {};
    std::ifstream in(it->path());
    const nlohmann::json staged = nlohmann::json::parse(in, nullptr, false);
    if (staged.is_object() && staged.value(kCsvHashKey, std::string()) == **now && !sidecar_edited(staged))
      return it->path();
  }
  return {};
}

std::optional<std::string> provenance_mismatch(const std::filesystem::path& csv, const nlohmann::json& sidecar) {
  if (!sidecar.is_object() || !sidecar.contains(kCsvHashKey) || !sidecar[kCsvHashKey].is_string()) return std::nullopt;
  const auto now = file_fnv1a64(csv);
  if (!now || *now == sidecar[kCsvHashKey].get<std::string>()) return std::nullopt;
  const std::filesystem::path side = provenance_path(csv);
  std::string text = csv.string() + " is not the CSV its provenance " + side.filename().string() +
                     " was written with (its hash differs): it was edited since carb wrote it, or a run writing "
                     "both was killed between them, so the protocol facts its rows are checked against may not be theirs";
  // A run killed between its two renames left the sidecar it was writing staged beside it.
  if (const auto staged = staged_provenance_of(csv); !staged.empty())
    text += "; the provenance a killed run wrote for it is " + staged.string() + " (move it to " + side.string() +
            " to pair them again)";
  return text;
}

namespace {
std::string text_fnv1a64(std::string_view text) {
  return detail::hex64(detail::fnv1a64(reinterpret_cast<const unsigned char*>(text.data()), text.size()));
}
}  // namespace

bool sidecar_edited(const nlohmann::json& sidecar) {
  if (!sidecar.is_object() || !sidecar.contains(kSidecarHashKey)) return false;
  nlohmann::json body = sidecar;
  body.erase(kSidecarHashKey);
  return sidecar[kSidecarHashKey] != text_fnv1a64(body.dump());
}

void write_csv_with_provenance(const std::filesystem::path& csv, std::string_view text,
                               const nlohmann::json& provenance, const std::function<void()>& recheck) {
  // What is at both names before the check is what the writes may replace (the sidecar's too, though
  // it is written after the CSV): anything that differs from it at the write was not checked.
  const auto csv_before = csv::file_id(csv), side_before = csv::file_id(provenance_path(csv));
  // The sidecar's text is made before either file is written: whatever cannot be made must fail
  // with nothing written (forty-seventh hostile pass: a Latin-1 byte in an input's name made the
  // JSON dump throw after the CSV had replaced an earlier one, leaving it beside a stale sidecar).
  // A path or argument that is not UTF-8 is recorded with U+FFFD for each invalid byte; the inputs'
  // hashes, which is what later runs match them by, are exact.
  const auto dump = [](const nlohmann::json& j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  nlohmann::json p = provenance;
  p.erase(kSidecarHashKey);
  p[kCsvHashKey] = text_fnv1a64(text);
  p[kSidecarHashKey] = text_fnv1a64(dump(p, -1));
  const std::string side_text = dump(p, 2) + "\n";
  // Both written in full before either replaces anything (fifty-second hostile pass: a disk that
  // filled while the sidecar was written left the new CSV beside the old sidecar, which readers took).
  // The recheck (which may keep what --force replaces) once both are staged: a write that cannot be
  // staged (a full disk) fails before it, and leaves no kept copy of a file it did not replace, nor a
  // warning that it did (fifty-eighth hostile pass). But first when a killed run left the CSV's
  // provenance staged: staging removes it as a dead run's temporary, and the keep needs it
  // (sixty-first hostile pass).
  // What the recheck warns of (a file kept as <stem>.earlier.csv) is said once both are written: a
  // handler that raises (Python's warnings made errors) must not stop the write after the keep.
  detail::HeldWarnings held;
  // Ninety-sixth hostile pass: SIGINT/SIGTERM between the staging and the two renames left hidden
  // temporaries, or the new CSV beside the old sidecar (refused by the next run until --force). A
  // signal recorded before this point (a caller's scope opened when its work began) stops here with
  // nothing written; one during the write waits until both files are in place.
  detail::StopOnSignals signals;
  const std::string what = "writing " + csv.string(), kept = "nothing was written; what was at " + csv.string() +
                                                              " and its provenance is unchanged";
  detail::throw_if_stopped(what.c_str(), kept.c_str());
  const bool staged_first = recheck && !staged_provenance_of(csv).empty();
  if (staged_first) recheck();
  csv::StagedText side_staged(provenance_path(csv), side_text), csv_staged(csv, text);
  if (recheck && !staged_first) recheck();
  csv_staged.commit(csv_before);
  try {
    side_staged.commit(side_before);
  } catch (const csv::OutputChanged& e) {
    // Thirty-fourth hostile pass: "nothing was written", then "--force", which refuses a file that
    // is not carb's. The CSV is written; the file at the sidecar's name is someone else's.
    throw DataError(std::string(e.what()) + ". " + csv.string() + " was written, complete, without its provenance: " +
                    "move that file away and rerun the same command with --force to write both");
  } catch (const DataError& e) {
    // Twenty-seventh hostile pass: only the sidecar was named, and the next run then called the new
    // CSV "changed since carb wrote it, or a run writing it was killed".
    throw DataError(std::string(e.what()) + "; " + csv.string() + " was written, complete, but its provenance " +
                    "was not: rerun the same command with --force to write both");
  }
  held.release();
}

void write_dataset_with_provenance(const Dataset& d, const std::filesystem::path& csv, const nlohmann::json& provenance,
                                   const std::function<void()>& recheck) {
  std::ostringstream out;
  write_dataset_csv(d, out);
  write_csv_with_provenance(csv, out.str(), provenance, recheck);
}

std::optional<std::pair<std::size_t, std::size_t>> recorded_campaign(const nlohmann::json& sidecar,
                                                                     const std::string& sidecar_name) {
  if (!sidecar.is_object() || !sidecar.contains("campaign")) return std::nullopt;
  // Seventy-eighth hostile pass: an edited record was dropped without a word, and validate passed it.
  const nlohmann::json& c = sidecar["campaign"];
  const auto count = [&](const char* k) -> std::optional<std::size_t> {
    if (!c.is_object() || !c.contains(k) || !c[k].is_number_unsigned()) return std::nullopt;
    return c[k].get<std::size_t>();
  };
  const auto planned = count("planned"), unmeasured = count("unmeasured");
  if (!planned || !unmeasured || c.size() != 2 || *planned == 0 || *unmeasured > *planned)
    throw DataError(sidecar_name + ": its campaign record " + c.dump() +
                    " is none an export writes ({\"planned\": N, \"unmeasured\": M}, whole numbers, 0 <= M <= N, "
                    "N > 0): it was edited; export the store again, or remove the record");
  return std::pair{*planned, *unmeasured};
}

nlohmann::json read_provenance(const std::filesystem::path& csv) {
  const std::filesystem::path file = provenance_path(csv);
  std::error_code ec;
  const auto type = std::filesystem::status(file, ec).type();
  if (type == std::filesystem::file_type::not_found) return nullptr;
  // A directory opens as a stream on Linux and failed deep in the parser as an "internal error".
  if (type != std::filesystem::file_type::regular) throw DataError(file.string() + ": the provenance file is not a regular file");
  std::ifstream in(file);
  if (!in) throw DataError(file.string() + ": cannot read the provenance file");
  const std::string what = file.string() + " (the provenance sidecar of " + csv.filename().string() + ")";
  // Hundred-and-fourteenth hostile pass: `carb characterize --data X.csv --format json > X.json`
  // empties X's sidecar before carb runs, and every reader then said only "X.json: not valid JSON".
  if (in.peek() == std::char_traits<char>::eof())
    throw DataError(what + " is empty: a shell redirect such as `> " + file.filename().string() +
                    "` empties a file before the command runs. Restore it from where the dataset came from, or "
                    "move it aside to read the CSV without its provenance");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(what + ": not valid JSON: " + detail::json_error_text(e.what()));
  }
  // Refused like JSON that does not parse: `[]` there was read as no provenance at all, without a
  // word, where `{bad` was refused (sixty-eighth hostile pass).
  if (!j.is_object())
    throw DataError(file.string() + ": the provenance file is JSON but not an object, which is what carb writes there");
  return j;
}

}  // namespace carb
