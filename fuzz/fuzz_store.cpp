// Fuzz target: importing a SQLite measurement store, as `carb data export` does (open it with
// carb::Store, read every row and protocol, write the dataset CSV).
//
// Two kinds of input:
//  - any input not starting with byte 0x01 is the database file itself (damaged, truncated or
//    foreign files; seeds are real stores), exercising Store's open/version/schema checks;
//  - an input starting with 0x01 is a list of rows that are inserted into a fresh, valid store
//    with plain SQL before carb reads it: one row per line, fields separated by TAB, in the
//    column order of `kColumns`; a field "i<n>" binds an integer, "r<x>" a real, "n" NULL, any
//    other text itself; a line starting with "P<TAB>" inserts a protocol (id, settings). Blind
//    byte mutation of a database rarely gets past SQLite's page checks; this mode puts arbitrary
//    values where carb's own reading code (families, precisions, extra_json, protocols) meets them.
// Opening and reading must succeed or throw carb::Error. What reads must export without loss:
// the CSV written from it tokenizes back to one record per stored row, each as wide as the header.
#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/store.hpp"
#include "data/csv.hpp"
#include "fuzz_common.hpp"

namespace {

namespace fs = std::filesystem;
using carb::fuzz::finding;

constexpr const char* kColumns[] = {
    "platform",       "config_key",  "protocol_id",  "family",     "depth",      "width",
    "resolution",     "batch",       "precision",    "status",     "latency_ms", "energy_j",
    "peak_memory_mb", "avg_sm_util", "avg_mem_util", "extra_json", "error_text"};
constexpr int kNumColumns = sizeof kColumns / sizeof kColumns[0];

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0;;) {
    const std::size_t end = s.find(sep, at);
    out.push_back(s.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    if (end == std::string_view::npos) return out;
    at = end + 1;
  }
}

void bind(sqlite3_stmt* st, int i, std::string_view f) {
  const std::string rest(f.empty() ? f : f.substr(1));
  if (f == "n")
    sqlite3_bind_null(st, i);
  else if (!f.empty() && f[0] == 'i')
    sqlite3_bind_int64(st, i, std::strtoll(rest.c_str(), nullptr, 10));
  else if (!f.empty() && f[0] == 'r')
    sqlite3_bind_double(st, i, std::strtod(rest.c_str(), nullptr));
  else
    sqlite3_bind_text(st, i, f.data(), static_cast<int>(f.size()), SQLITE_TRANSIENT);
}

// A row SQLite refuses (NOT NULL, UNIQUE) is simply not there: the store only ever holds what
// SQLite accepted, and that is what carb has to cope with.
void insert(sqlite3* db, const char* sql, const std::vector<std::string_view>& fields, int n) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) != SQLITE_OK) finding("harness SQL does not prepare");
  for (int i = 0; i < n && i < static_cast<int>(fields.size()); ++i)
    bind(st, i + 1, fields[static_cast<std::size_t>(i)]);
  sqlite3_step(st);
  sqlite3_finalize(st);
}

// Builds a valid empty store with carb itself, then writes the rows behind carb's back.
void fill_store(const fs::path& file, std::string_view rows) {
  { const carb::Store create(file); }
  sqlite3* db = nullptr;
  if (sqlite3_open(file.c_str(), &db) != SQLITE_OK) finding("cannot reopen the store carb just made");
  std::string sql = "INSERT INTO measurements (";
  for (int i = 0; i < kNumColumns; ++i) sql += std::string(i ? ", " : "") + kColumns[i];
  sql += ") VALUES (";
  for (int i = 0; i < kNumColumns; ++i) sql += std::string(i ? ", " : "") + "?";
  sql += ")";
  for (std::string_view line : split(rows, '\n')) {
    const auto fields = split(line, '\t');
    if (fields[0] == "P" && fields.size() >= 2)
      insert(db, "INSERT INTO protocols (id, settings) VALUES (?, ?)", {fields.begin() + 1, fields.end()}, 2);
    else
      insert(db, sql.c_str(), fields, kNumColumns);
  }
  sqlite3_close(db);
}

void import(const fs::path& file) {
  carb::Dataset d;
  try {
    const carb::Store store(file, carb::StoreAccess::read_only);  // as `carb data export` opens it
    d = store.to_dataset();
    (void)store.protocols();
    if (store.count() != d.rows.size()) finding("Store::count disagrees with the rows to_dataset read");
  } catch (const carb::Error&) {
    return;
  }
  std::ostringstream out;
  carb::write_dataset_csv(d, out);
  std::vector<carb::csv::Row> rows;
  try {
    rows = carb::csv::parse(out.str(), "export.csv");
  } catch (const carb::DataError& e) {
    finding(std::string("the CSV exported from a store does not tokenize: ") + e.what());
  }
  if (rows.size() != d.rows.size() + 1) finding("exporting a store lost or invented CSV records");
  for (const auto& r : rows)
    if (r.fields.size() != rows.front().fields.size())
      finding("an exported CSV record is not as wide as its header");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path file = carb::fuzz::scratch_dir() / "store.db";
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(file.string() + suffix);
  const std::string_view bytes = carb::fuzz::as_text(data, size);
  if (!bytes.empty() && bytes[0] == '\x01')
    fill_store(file, bytes.substr(1));
  else
    carb::fuzz::write_bytes(file, bytes);
  import(file);
  return 0;
}
