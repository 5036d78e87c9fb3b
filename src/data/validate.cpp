// Dataset-level checks behind `carb data validate`: rows that parse on their own but
// break the contract together (duplicates, partly measured targets) or by their status.
#include "data/validate.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <utility>

#include "carb/config.hpp"
#include "data/csv.hpp"

namespace carb {
namespace {

std::string at(const std::string& file, std::size_t line) { return file + ":" + std::to_string(line) + ": "; }

// The line a "file:line: ..." message points at; 0 for messages about the whole file.
std::size_t line_of(const std::string& msg, const std::string& file) {
  if (msg.size() <= file.size() || msg.compare(0, file.size(), file) != 0 || msg[file.size()] != ':')
    return 0;
  std::size_t line = 0;
  std::from_chars(msg.data() + file.size() + 1, msg.data() + msg.size(), line);
  return line;
}

// One platform+configuration must appear once: two rows would weigh it twice in training.
void check_duplicates(const Dataset& d, const std::string& file, const std::vector<std::size_t>& lines,
                      std::vector<std::string>& problems) {
  std::map<std::pair<std::string, std::string>, std::size_t> first;
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const Record& r = d.rows[i];
    const auto [it, fresh] = first.emplace(std::make_pair(r.platform, config_key(r.config)), lines[i]);
    if (!fresh)
      problems.push_back(at(file, lines[i]) + "duplicate of line " + std::to_string(it->second) +
                         " (platform '" + r.platform + "', " + it->first.second + ")");
  }
}

// A row's values must fit its status: a failed run has no latency or energy to report.
void check_row(const Record& r, const std::string& where, std::vector<std::string>& problems) {
  if (r.status == "ok" && !r.latency_ms) problems.push_back(where + "status ok but latency_ms is empty");
  if (r.status != "ok")
    for (const char* col : {"latency_ms", "energy_j"})
      if (r.value(col)) problems.push_back(where + "status " + r.status + " but " + col + " has a value");
  for (const char* col : {"avg_sm_util", "avg_mem_util"})
    if (const auto v = r.value(col); v && *v > 100)
      problems.push_back(where + col + " is " + csv::format_number(v) + ", above 100 percent");
}

// A target measured on some ok rows of a platform but not others means a meter failed
// part-way: learners would silently train on a biased subset.
void check_partial_targets(const Dataset& d, const std::string& file, const std::vector<std::size_t>& lines,
                           std::vector<std::string>& problems) {
  struct Count {
    std::size_t ok = 0, have = 0, first_missing = 0;
  };
  std::map<std::pair<std::string, std::string>, Count> counts;  // (platform, target)
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const Record& r = d.rows[i];
    if (r.status != "ok") continue;
    for (const char* t : {"peak_memory_mb", "energy_j"}) {  // empty latency is reported per row
      Count& c = counts[{r.platform, t}];
      ++c.ok;
      if (r.value(t))
        ++c.have;
      else if (!c.first_missing)
        c.first_missing = lines[i];
    }
  }
  for (const auto& [key, c] : counts)
    if (c.have > 0 && c.have < c.ok)
      problems.push_back(at(file, c.first_missing) + "platform '" + key.first + "' has " + key.second +
                         " on " + std::to_string(c.have) + " of " + std::to_string(c.ok) +
                         " ok rows (empty here first); measure all or none");
}

}  // namespace

std::vector<std::string> check_dataset(const Dataset& d, const std::string& file,
                                       const std::vector<std::size_t>& lines) {
  std::vector<std::string> problems;
  check_duplicates(d, file, lines, problems);
  for (std::size_t i = 0; i < d.rows.size(); ++i) check_row(d.rows[i], at(file, lines[i]), problems);
  check_partial_targets(d, file, lines, problems);
  return problems;
}

std::vector<std::string> validate_dataset_csv(const std::filesystem::path& path) {
  std::vector<std::string> problems;
  std::vector<std::size_t> lines;
  const Dataset d = read_dataset_csv(path, problems, &lines);
  const std::vector<std::string> more = check_dataset(d, path.string(), lines);
  problems.insert(problems.end(), more.begin(), more.end());
  // Row problems come from two passes; report them in file order.
  std::stable_sort(problems.begin(), problems.end(), [&](const std::string& a, const std::string& b) {
    return line_of(a, path.string()) < line_of(b, path.string());
  });
  return problems;
}

}  // namespace carb
