// The dataset CSV contract (docs/ARCHITECTURE.md): reading with every problem located
// by file, line and column, and writing atomically with numbers that round-trip exactly.
#include "carb/dataset.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <span>
#include <sstream>
#include <unordered_map>

#include "carb/error.hpp"
#include "data/csv.hpp"
#include "data/platform_name.hpp"
#include "util/warn_once.hpp"

namespace carb {

std::string to_string(Status s) {
  switch (s) {
    case Status::ok: return "ok";
    case Status::oom: return "oom";
    case Status::error: return "error";
  }
  return "error";
}

std::optional<Status> parse_status(std::string_view s) {
  for (Status st : kStatuses)
    if (s == to_string(st)) return st;
  return std::nullopt;
}

namespace {

constexpr std::array<const char*, 5> kValueColumns = {"latency_ms", "energy_j", "peak_memory_mb",
                                                      "avg_sm_util", "avg_mem_util"};

// Maps a value column name to the member holding it, so value/set_value and the CSV code
// share one list instead of five hand-written branches each.
template <class R>
auto* value_slot(R& r, std::string_view column) {
  if (column == "latency_ms") return &r.latency_ms;
  if (column == "energy_j") return &r.energy_j;
  if (column == "peak_memory_mb") return &r.peak_memory_mb;
  if (column == "avg_sm_util") return &r.avg_sm_util;
  if (column == "avg_mem_util") return &r.avg_mem_util;
  throw InputError("unknown value column '" + std::string(column) +
                   "' (expected latency_ms, energy_j, peak_memory_mb, avg_sm_util or avg_mem_util)");
}

// Runs one check and turns a DataError into a collected problem, so that a single bad
// field does not hide the others on the same row.
template <class F>
bool attempt(std::vector<std::string>& problems, F&& check) {
  try {
    check();
    return true;
  } catch (const DataError& e) {
    problems.emplace_back(e.what());
    return false;
  }
}

struct Header {
  std::unordered_map<std::string, std::size_t> index;
  std::vector<std::string> names;
  std::vector<std::size_t> extra;  // indices of non-core columns, in file order
};

// Reads the header row; false when it is unusable (missing or repeated columns).
bool read_header(const csv::Row& row, const std::string& file, std::span<const char* const> required,
                 Header& h, std::vector<std::string>& problems) {
  const std::size_t before = problems.size();
  h.names = row.fields;
  for (std::size_t i = 0; i < row.fields.size(); ++i) {
    const std::string& name = row.fields[i];
    const std::string at = file + ":" + std::to_string(row.line) + ": ";
    if (name.empty())
      problems.push_back(at + "header field " + std::to_string(i + 1) + " has no column name");
    else if (!h.index.emplace(name, i).second)
      problems.push_back(at + "column '" + name + "' appears twice in the header");
  }
  for (const char* col : required)
    if (!h.index.contains(col))
      problems.push_back(file + ":" + std::to_string(row.line) + ": missing required column '" + col + "'");
  const std::set<std::string> core(kDatasetColumns.begin(), kDatasetColumns.end());
  for (std::size_t i = 0; i < h.names.size(); ++i)
    if (!core.contains(h.names[i])) h.extra.push_back(i);
  return problems.size() == before;
}

csv::Where where(const Header& h, const std::string& file, const csv::Row& row, const char* column) {
  const std::size_t i = h.index.at(column);
  return {file, row.line, i, column};
}

// The six configuration fields, then the space's own rules (carb::validate).
std::optional<Config> parse_config(const Header& h, const std::string& file, const csv::Row& row,
                                   std::vector<std::string>& problems) {
  Config c;
  const auto field = [&](const char* col) -> const std::string& { return row.fields[h.index.at(col)]; };
  const auto named = [&](const char* col, auto parse) {
    try {
      return parse(field(col));
    } catch (const InputError& e) {  // parse_family/precision name the values; add the place
      throw DataError(where(h, file, row, col).str() + ": " + e.what());
    }
  };
  bool ok = attempt(problems, [&] { c.family = named("family", parse_family); });
  ok &= attempt(problems, [&] { c.depth = csv::parse_int(field("depth"), where(h, file, row, "depth")); });
  ok &= attempt(problems, [&] { c.width = csv::parse_number(field("width"), where(h, file, row, "width")); });
  ok &= attempt(problems, [&] {
    c.resolution = csv::parse_int(field("resolution"), where(h, file, row, "resolution"));
  });
  ok &= attempt(problems, [&] { c.batch = csv::parse_int(field("batch"), where(h, file, row, "batch")); });
  ok &= attempt(problems, [&] { c.precision = named("precision", parse_precision); });
  if (!ok) return std::nullopt;
  try {
    validate(c);
  } catch (const InputError& e) {
    problems.push_back(file + ":" + std::to_string(row.line) + ": " + e.what());
    return std::nullopt;
  }
  return c;
}

// What is wrong with each platform name a file holds, judged once per name (a file holds one
// platform, on hundreds of thousands of rows), and the names with spaces around them, which are
// said, not refused (read_dataset_csv): carb's profiler made such names until 2026-12-07, and their
// stores must still export to a file that reads back (a review).
struct PlatformNames {
  std::map<std::string, std::string, std::less<>> problem;
  std::set<std::string> spaced;
  const std::string& problem_of(const std::string& name) {
    auto it = problem.find(name);
    if (it == problem.end()) {
      it = problem.emplace(name, detail::platform_name_problem(name)).first;
      if (it->second == detail::kSpacedPlatform) spaced.insert(name);
    }
    return it->second;
  }
};

// Platform, status and the measured values; the config is parsed by parse_config.
bool parse_measurement(const Header& h, const std::string& file, const csv::Row& row, Record& r,
                       std::vector<std::string>& problems, PlatformNames& names) {
  const std::size_t before = problems.size();
  r.platform = row.fields[h.index.at("platform")];
  if (const std::string& why = names.problem_of(r.platform); why == "is empty")
    problems.push_back(where(h, file, row, "platform").str() + ": platform is empty");
  else if (!why.empty() && why != detail::kSpacedPlatform)
    problems.push_back(where(h, file, row, "platform").str() + ": platform " + csv::show(r.platform) + " " + why);
  const std::string& status = row.fields[h.index.at("status")];
  if (const auto st = parse_status(status))
    r.status = *st;
  else
    problems.push_back(where(h, file, row, "status").str() + ": status " + csv::show(status) +
                       " is not ok, oom or error");
  for (const char* col : kValueColumns) {
    attempt(problems, [&] {
      const csv::Where at = where(h, file, row, col);
      const auto v = csv::parse_optional_number(row.fields[at.field], at);
      if (v && *v < 0)
        throw DataError(at.str() + ": a measured quantity cannot be negative, got " +
                        csv::show(row.fields[at.field]));
      r.set_value(col, v);
    });
  }
  return problems.size() == before;
}

bool field_count_ok(const Header& h, const std::string& file, const csv::Row& row,
                    std::vector<std::string>& problems) {
  if (row.fields.size() == h.names.size()) return true;
  problems.push_back(file + ":" + std::to_string(row.line) + ": expected " + std::to_string(h.names.size()) +
                     " fields as in the header, found " + std::to_string(row.fields.size()));
  return false;
}

// Hundred-and-thirty-first hostile pass: " cpu-2t" passed for cpu-2t's rows, and `data merge` then
// refused the two as platforms apart. Said once per file and platform in a warning round.
void warn_of_spaced_platforms(const PlatformNames& names, const std::string& file) {
  for (const std::string& p : names.spaced)
    detail::warn_once(file, file + ": platform " + csv::show(p) + " " + std::string(detail::kSpacedPlatform) +
                                ": a platform of its own, apart from any without them (`carb profile` refuses such a "
                                "name since 2026-12-07)");
}

std::vector<csv::Row> read_rows(const std::filesystem::path& file, std::vector<std::string>& problems) {
  std::vector<csv::Row> rows;
  attempt(problems, [&] { rows = csv::read_file(file, problems); });
  if (problems.empty() && rows.empty()) problems.push_back(file.string() + ": empty file (no header row)");
  return rows;
}

void throw_first(const std::vector<std::string>& problems) {
  if (!problems.empty()) throw DataError(problems.front());
}

}  // namespace

std::optional<double> Record::value(std::string_view column) const { return *value_slot(*this, column); }

void Record::set_value(std::string_view column, std::optional<double> v) { *value_slot(*this, column) = v; }

void Dataset::add_extra_columns(const std::vector<std::string>& names) {
  for (const auto& c : names)
    if (std::find(extra_columns.begin(), extra_columns.end(), c) == extra_columns.end()) extra_columns.push_back(c);
}

Dataset Dataset::ok_only() const {
  Dataset d;
  d.extra_columns = extra_columns;
  std::copy_if(rows.begin(), rows.end(), std::back_inserter(d.rows),
               [](const Record& r) { return r.status == Status::ok; });
  return d;
}

bool Dataset::has_column(std::string_view column) const {
  // No ok rows at all means nothing was measured, so the target is not "present".
  bool any = false;
  for (const Record& r : rows) {
    if (r.status != Status::ok) continue;
    if (!r.value(column)) return false;
    any = true;
  }
  return any;
}

Dataset read_dataset_csv(const std::filesystem::path& file, std::vector<std::string>& problems,
                         std::vector<std::size_t>* lines) {
  Dataset d;
  const std::string name = file.string();
  // Record by record as the text is parsed (a 300,000-row file's parsed fields, all held before the
  // first record was made, were most of the reader's memory).
  Header h;
  bool header_seen = false, header_ok = false;
  std::vector<std::size_t> by_name;  // h.extra sorted by column name
  std::optional<std::size_t> problems_before_rows;  // after the text's own (UTF-8) problems
  PlatformNames platforms;
  const auto each = [&](csv::Row&& row) {
    if (!header_seen) {
      header_seen = true;
      problems_before_rows = problems.size();
      header_ok = read_header(row, name, kDatasetColumns, h, problems);
      if (header_ok) {
        for (std::size_t i : h.extra) d.extra_columns.push_back(h.names[i]);
        // Each row's side columns are added in name order: appended, never shifted.
        by_name = h.extra;
        std::sort(by_name.begin(), by_name.end(),
                  [&](std::size_t a, std::size_t b) { return h.names[a] < h.names[b]; });
      }
      return;
    }
    if (!header_ok || !field_count_ok(h, name, row, problems)) return;
    Record r;
    const auto config = parse_config(h, name, row, problems);
    const bool measured = parse_measurement(h, name, row, r, problems, platforms);
    if (!config || !measured) return;
    r.config = *config;
    // Empty extra fields are absent, like empty values: never invent a placeholder.
    r.extra.reserve(static_cast<std::size_t>(
        std::count_if(h.extra.begin(), h.extra.end(), [&](std::size_t i) { return !row.fields[i].empty(); })));
    for (std::size_t i : by_name)
      if (!row.fields[i].empty()) r.extra.emplace(h.names[i], std::move(row.fields[i]));
    d.rows.push_back(std::move(r));
    if (lines) lines->push_back(row.line);
  };
  try {
    csv::read_file_each(file, problems, each);
  } catch (const DataError& e) {
    // A file that cannot be tokenized is that one problem and no rows, wherever the fault lies:
    // what was read before it is dropped, as when the whole text was parsed first.
    if (problems_before_rows) problems.resize(*problems_before_rows);
    problems.emplace_back(e.what());
    if (lines) lines->clear();
    return Dataset{};
  }
  if (!header_seen && problems.empty()) problems.push_back(name + ": empty file (no header row)");
  warn_of_spaced_platforms(platforms, name);
  return d;
}

void write_dataset_csv(const Dataset& d, std::ostream& out) {
  // Extra columns: the declared ones first, then any a record carries that were not declared,
  // so nothing a record holds is silently dropped.
  const std::set<std::string> core(kDatasetColumns.begin(), kDatasetColumns.end());
  std::vector<std::string> extra;
  std::set<std::string> seen(core);
  for (const std::string& c : d.extra_columns)
    if (seen.insert(c).second) extra.push_back(c);
  for (const Record& r : d.rows)
    for (const auto& [k, v] : r.extra)
      if (seen.insert(k).second) extra.push_back(k);

  std::vector<std::string> fields(kDatasetColumns.begin(), kDatasetColumns.end());
  fields.insert(fields.end(), extra.begin(), extra.end());
  csv::write_row(out, fields);
  for (const Record& r : d.rows) {
    const Config& c = r.config;
    fields = {r.platform,
              to_string(c.family),
              std::to_string(c.depth),
              format_width(c.width),
              std::to_string(c.resolution),
              std::to_string(c.batch),
              to_string(c.precision),
              to_string(r.status)};
    for (const char* col : kValueColumns) fields.push_back(csv::format_number(r.value(col)));
    for (const std::string& k : extra) {
      const auto it = r.extra.find(k);
      fields.push_back(it == r.extra.end() ? std::string() : it->second);
    }
    csv::write_row(out, fields);
  }
}

std::string extra_number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

void write_dataset_csv(const Dataset& d, const std::filesystem::path& file) {
  std::ostringstream out;
  write_dataset_csv(d, out);
  csv::write_text_atomic(file, out.str());
}

namespace {

// The configurations of CSV rows read from `name` (header first), each listed once.
std::vector<Config> configs_of_rows(const std::vector<csv::Row>& rows, const std::string& name) {
  std::vector<std::string> problems;
  Header h;
  read_header(rows.front(), name, kConfigColumns, h, problems);
  throw_first(problems);
  std::vector<Config> out;
  std::unordered_map<std::string, std::pair<std::size_t, Config>> first_line;  // a repeated configuration was screened twice
  for (std::size_t k = 1; k < rows.size(); ++k) {
    if (!field_count_ok(h, name, rows[k], problems)) break;
    const auto c = parse_config(h, name, rows[k], problems);
    throw_first(problems);
    // By network: 0.25 and 0.251 build the same channels, and profile measured the network twice.
    const auto [it, fresh] = first_line.emplace(network_key(*c), std::pair{rows[k].line, *c});
    if (!fresh)
      throw DataError(name + ":" + std::to_string(rows[k].line) + ": " + config_key(*c) + " repeats line " +
                      std::to_string(it->second.first) + same_network_as(*c, it->second.second) +
                      "; list each configuration once");
    out.push_back(*c);
  }
  throw_first(problems);
  return out;
}

}  // namespace

std::vector<Config> read_configs_csv(const std::filesystem::path& file) {
  std::vector<std::string> problems;
  const std::vector<csv::Row> rows = read_rows(file, problems);
  throw_first(problems);
  return configs_of_rows(rows, file.string());
}

std::vector<std::string> read_config_platforms_csv(const std::filesystem::path& file) {
  std::vector<std::string> problems;
  const std::vector<csv::Row> rows = read_rows(file, problems);
  throw_first(problems);
  const std::size_t n = configs_of_rows(rows, file.string()).size();
  std::vector<std::string> out(n);
  const auto& head = rows.front().fields;
  const auto col = std::find(head.begin(), head.end(), "platform");
  if (col == head.end()) return out;
  const auto at = static_cast<std::size_t>(col - head.begin());
  for (std::size_t k = 1; k < rows.size() && k - 1 < n; ++k)
    if (at < rows[k].fields.size()) out[k - 1] = rows[k].fields[at];
  return out;
}

std::vector<Record> read_utilization_csv(const std::filesystem::path& file) {
  std::vector<std::string> problems;
  const std::string name = file.string();
  const std::vector<csv::Row> rows = read_rows(file, problems);
  throw_first(problems);
  const std::vector<Config> configs = configs_of_rows(rows, name);  // checked as read_configs_csv does
  Header h;
  static constexpr std::array<const char*, 2> kUtil = {"avg_sm_util", "avg_mem_util"};
  read_header(rows.front(), name, kUtil, h, problems);
  throw_first(problems);
  std::vector<Record> out(configs.size());
  for (std::size_t k = 1; k < rows.size() && k - 1 < out.size(); ++k) {
    Record& r = out[k - 1];
    r.config = configs[k - 1];
    for (const char* col : kUtil) {
      const csv::Where at = where(h, name, rows[k], col);
      const double v = csv::parse_number(rows[k].fields[at.field], at);
      const ColumnBounds* b = plausible_bounds(col);
      if (!b->contains(v))
        throw DataError(at.str() + ": " + col + " is " + csv::format_number(v) + ", outside " + b->describe());
      r.set_value(col, v);
    }
  }
  return out;
}

Dataset with_one_width_per_network(Dataset d) {
  std::map<std::string, double> first;  // channels -> the first width that builds them
  for (Record& r : d.rows) {
    r.config.width = first.emplace(width_channels(r.config.width), r.config.width).first->second;
  }
  return d;
}

void write_configs_csv(const std::vector<Config>& cs, std::ostream& out) {
  csv::write_row(out, {kConfigColumns.begin(), kConfigColumns.end()});
  for (const Config& c : cs)
    csv::write_row(out, {to_string(c.family), std::to_string(c.depth), format_width(c.width),
                         std::to_string(c.resolution), std::to_string(c.batch), to_string(c.precision)});
}

}  // namespace carb
