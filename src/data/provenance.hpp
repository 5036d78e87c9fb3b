// Provenance sidecars: every dataset CSV travels with a JSON file saying where, when and
// how it was measured (docs/ARCHITECTURE.md, "Contracts").
#pragma once
#include <array>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "carb/dataset.hpp"

namespace carb {

/// The row's `protocol_id` column (the protocol it was measured under); empty when it has none.
std::string protocol_of(const Record& r);

/// The machine this process runs on: hostname, cpu_model, cores, memory_total_mb, kernel
/// (sysname, release, version, machine) and date (ISO-8601 UTC). A fact that cannot be read
/// is left out rather than guessed. memory_total_mb is /proc/meminfo's MemTotal in MiB (2^20
/// bytes), despite its name, as every sidecar written so far records it; machine_memory_mb is the
/// same in carb's MB.
nlohmann::json collect_machine_info();

/// This machine's memory (/proc/meminfo's MemTotal) in MB of 10^6 bytes, the unit of every
/// peak_memory_mb; nullopt when it cannot be read. The cpu backend records it as its device's
/// memory (platform_info.device_memory_mb).
std::optional<double> machine_memory_mb();

/// The current time as ISO-8601 UTC, e.g. "2024-05-01T12:34:56Z".
std::string utc_now_iso8601();

/// Where the sidecar of a CSV lives: beside it, same stem, ".json" (data/cpu2t.csv -> data/cpu2t.json).
std::filesystem::path provenance_path(const std::filesystem::path& csv);

/// The sidecar key holding the hash of the CSV as carb wrote it (carb's FNV-1a, 16 hex digits).
inline constexpr const char* kCsvHashKey = "csv_fnv1a64";
/// A merge's or combine's record of where an input was, absolute and with symlinks followed: the
/// "file" beside it is as typed, and a relative one names another file from another directory.
inline constexpr const char* kResolvedPathKey = "resolved_path";
/// The sidecar key holding the hash of the sidecar itself (its JSON without this key, dumped
/// compactly): a sidecar the user annotated is told from one carb wrote (seventeenth hostile pass:
/// notes added to e.json were lost on the next export).
inline constexpr const char* kSidecarHashKey = "provenance_fnv1a64";
/// True when `sidecar` records kSidecarHashKey and its content no longer matches it.
bool sidecar_edited(const nlohmann::json& sidecar);

/// The keys a protocol's recorded settings carry beside those its id is made from (profile/profiler.cpp
/// adds them to Protocol::to_json()): what ran it, not how it measured.
inline constexpr std::array<const char*, 4> kProtocolRecordOnlyKeys = {"backend", "platform_info", "command",
                                                                       "meter_check"};
/// The id a protocol's settings make, "p" and 12 hex digits of carb's FNV-1a of their canonical JSON
/// without kProtocolRecordOnlyKeys: Protocol::id(), and what recorded settings are checked against.
std::string protocol_id_of(nlohmann::json settings);

/// When `sidecar` (read from `csv`'s provenance) records a CSV hash that `csv`'s bytes no longer
/// have, one line saying so: the CSV was edited since carb wrote it, or a run writing the pair was
/// killed between the two renames (fifty-fourth hostile pass), and the protocol facts its rows are
/// checked against may not be theirs. Names the sidecar such a killed run left staged when its
/// hash is the CSV's. nullopt when they agree or nothing can be told.
std::optional<std::string> provenance_mismatch(const std::filesystem::path& csv, const nlohmann::json& sidecar);

/// The provenance a run killed between its two renames left staged beside `csv` for `csv` as it is
/// now (csv::StagedText's ".<name>.json.carb-<pid>-...", recording the CSV's hash, unedited); empty
/// when there is none (sixtieth hostile pass: a kill after the CSV's rename left it without any
/// provenance, and a --force rerun then removed the staged one as a stale temporary).
std::filesystem::path staged_provenance_of(const std::filesystem::path& csv);

/// carb's FNV-1a hash of a file's bytes as 16 hex digits; nullopt when it cannot be read.
std::optional<std::string> file_fnv1a64(const std::filesystem::path& f);

/// Writes `text` to `csv`, then its sidecar (pretty-printed JSON), each atomically, adding to the
/// sidecar kCsvHashKey: the hash of `text`, what this process wrote. (Hashing the file as it was
/// after the write let two writers racing on one --out pair one's CSV with the other's sidecar
/// under a matching hash: seventeenth hostile pass.) Throws DataError on I/O failure.
///
/// `recheck`, when given, runs just before the CSV is written: the command's rule for what `csv`
/// may replace, checked again at the end of the work, since the files there may have changed while
/// the command ran (thirty-third hostile pass). What it finds then is what the write may replace.
void write_csv_with_provenance(const std::filesystem::path& csv, std::string_view text,
                               const nlohmann::json& provenance, const std::function<void()>& recheck = {});
/// The same for a dataset, written as write_dataset_csv writes it.
void write_dataset_with_provenance(const Dataset& d, const std::filesystem::path& csv, const nlohmann::json& provenance,
                                   const std::function<void()>& recheck = {});

/// The campaign a store export recorded in its sidecar (`campaign`: {"planned", "unmeasured"}, the
/// configurations its runs were given and those with no row then), as {planned, unmeasured};
/// nullopt when the sidecar records none. Throws DataError naming `sidecar_name` when the record is
/// one no export writes: not an object of those two whole numbers, planned 0, unmeasured above it.
std::optional<std::pair<std::size_t, std::size_t>> recorded_campaign(const nlohmann::json& sidecar,
                                                                     const std::string& sidecar_name);

/// Reads the sidecar of `csv`; JSON null when there is none. Throws DataError
/// naming the file when it exists but is not a regular file or not valid JSON.
nlohmann::json read_provenance(const std::filesystem::path& csv);

}  // namespace carb
