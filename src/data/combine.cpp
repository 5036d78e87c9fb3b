// Combining measuring rounds of the same configurations: per configuration, the median of every
// measured quantity over the rounds that measured it ok (see carb/combine.hpp for the rules).
#include "carb/combine.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/metrics.hpp"
#include "data/csv.hpp"
#include "data/device_facts.hpp"
#include "data/provenance.hpp"
#include "data/validate.hpp"
#include "util/stop_signal.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

constexpr const char* kValueColumns[] = {"latency_ms", "energy_j", "peak_memory_mb", "avg_sm_util", "avg_mem_util"};

// The values of a core column in the rounds that have one.
std::vector<double> values_of(const std::vector<const Record*>& ok, const char* column) {
  std::vector<double> v;
  for (const Record* r : ok)
    if (const auto x = r->value(column)) v.push_back(*x);
  return v;
}

std::optional<double> as_number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The median of decimal readings, kept decimal: the mean of the middle two of 0.1 and 0.2 is
// 0.15000000000000002 in binary, written so (a README walkthrough: a combined file's side columns
// carried 17 digits of noise the rounds never had). An odd count's median is one round's reading,
// kept as it is (a review: rounding it to 15 digits changed 1,331 readings); an even count's is the
// shortest decimal within two units in the last place of the binary mean.
double decimal_median(std::vector<double> v) {
  const double m = median(v);
  if (v.size() % 2 == 1 || !std::isfinite(m)) return m;
  const double ulp = std::nextafter(std::fabs(m), INFINITY) - std::fabs(m);
  char buf[40];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, m);
    const double d = std::strtod(buf, nullptr);
    if (std::fabs(d - m) <= 2 * ulp) return d;
  }
  return m;
}

// The median of a numeric extra column over the rounds that hold a number there (twenty-first
// hostile pass: with one round's cell empty, the first round's reference_ms stood beside the median
// latency of another round, and the answer depended on the order of the files); nullopt when no
// round holds a number, or a round holds text that is not one.
// The combined text of an extra column: the rounds' own text where they agree (thirty-fifth hostile
// pass: job ids, sample ids and hashes like 1234e56 were rewritten to 6 digits, 1.234e+59), else
// the median of numbers, written so that it reads back exactly; nullopt to keep the first round's.
std::optional<std::string> median_extra(const std::vector<const Record*>& ok, const std::string& name) {
  std::vector<double> v;
  std::set<std::string> texts;
  for (const Record* r : ok) {
    const auto it = r->extra.find(name);
    if (it == r->extra.end() || it->second.empty()) continue;
    texts.insert(it->second);
    const auto x = as_number(it->second);
    if (!x) return std::nullopt;
    v.push_back(*x);
  }
  if (v.empty() || texts.size() == 1) return std::nullopt;
  return csv::format_number(decimal_median(v));
}

// Columns that record how a row was measured, not what was measured: rounds must agree on them
// (twenty-eighth hostile pass: rounds at 1 and 2 threads under one protocol id were combined into
// a median of 1.5 threads).
constexpr const char* kSettingColumns[] = {"threads", "warmup"};

void check_rounds_agree_on_settings(const std::vector<const Record*>& ok) {
  for (const char* name : kSettingColumns) {
    const std::string* first = nullptr;
    for (const Record* r : ok) {
      const auto it = r->extra.find(name);
      if (it == r->extra.end() || it->second.empty()) continue;
      if (!first) first = &it->second;
      else if (as_number(*first) != as_number(it->second) || (!as_number(*first) && *first != it->second))
        throw InputError("the rounds of " + r->platform + " " + config_key(r->config) + " were measured with " +
                         name + " " + *first + " and " + it->second +
                         ": they measured different things; combine rounds measured alike");
    }
  }
}

Record combine_ok_rounds(const std::vector<const Record*>& ok) {
  check_rounds_agree_on_settings(ok);
  Record out = *ok.front();
  for (const Record* r : ok)  // a column only a later round has (it was left empty)
    for (const auto& [name, text] : r->extra)
      if (auto& mine = out.extra[name]; mine.empty()) mine = text;
  for (const char* c : kValueColumns) {
    const auto v = values_of(ok, c);
    out.set_value(c, v.empty() ? std::nullopt : std::optional<double>(decimal_median(v)));
  }
  for (auto& [name, text] : out.extra)
    if (name != "protocol_id" && std::find(std::begin(kSettingColumns), std::end(kSettingColumns), name) ==
                                     std::end(kSettingColumns))
      if (const auto m = median_extra(ok, name)) text = *m;
  const auto lat = values_of(ok, "latency_ms");
  const auto [lo, hi] = std::minmax_element(lat.begin(), lat.end());
  out.extra["rounds"] = std::to_string(ok.size());
  if (lat.size() >= 2 && *lo > 0)
    out.extra["latency_round_spread"] = extra_number(*hi / *lo - 1);
  else
    out.extra.erase("latency_round_spread");  // empty, like every quantity that was not measured
  return out;
}

// Rounds of different protocols measure different things; their median would mean nothing.
void check_one_protocol(const std::vector<Dataset>& rounds, const std::vector<fs::path>& files) {
  std::map<std::string, std::map<std::string, std::string>> seen;  // platform -> protocol id -> file
  for (std::size_t i = 0; i < rounds.size(); ++i)
    for (const Record& r : rounds[i].rows)
      if (const std::string id = protocol_of(r); !id.empty()) seen[r.platform].emplace(id, files[i].string());
  for (const auto& [platform, ids] : seen)
    if (ids.size() > 1)
      throw InputError("platform '" + platform + "' was measured under protocol " + ids.begin()->first + " in " +
                       ids.begin()->second + " and " + std::next(ids.begin())->first + " in " +
                       std::next(ids.begin())->second + ": combine rounds of one protocol");
}

// The combined record of a protocol is the last round's, with the lasting device facts (the memory)
// an earlier round's record has and it lacks. Rounds on two devices are refused: their medians
// would be of no one machine (a hostile tester: an Intel round combined with AMD ones took the
// Intel record without a word); other settings that differ are said.
void keep_last_record(const std::string& id, const nlohmann::json& settings, const std::string& file,
                      nlohmann::json& protocols, std::map<std::string, std::string>& recorded_in,
                      std::vector<std::string>& warnings) {
  nlohmann::json next = settings;
  if (protocols.contains(id)) {
    nlohmann::json& earlier = protocols[id];
    const std::string was = detail::measuring_device(earlier), is = detail::measuring_device(next);
    if (!was.empty() && !is.empty() && was != is)
      throw InputError(recorded_in[id] + " was measured on '" + was + "' and " + file + " on '" + is +
                       "' under protocol " + id + ": combine rounds of one device");
    detail::add_lasting_device_facts(next, earlier);
    detail::add_lasting_device_facts(earlier, next);
    if (detail::measuring_settings(earlier) != detail::measuring_settings(next))
      warnings.push_back("protocol '" + id + "' has different settings in " + recorded_in[id] + " and " + file +
                         "; the combined file records " + file + "'s");
  }
  protocols[id] = std::move(next);
  recorded_in[id] = file;
}

// Rounds of one platform: a combined dataset holds one (as any dataset). Checked per round, naming
// the rounds (seventy-second hostile pass: checked on the combined rows, the error named the output
// file twice, which did not exist yet, and not the round of the other platform).
void check_one_platform(const std::vector<Dataset>& rounds, const std::vector<fs::path>& files) {
  std::optional<std::pair<std::string, std::size_t>> first;  // platform, round
  for (std::size_t i = 0; i < rounds.size(); ++i)
    for (const Record& r : rounds[i].rows) {
      if (!first) first.emplace(r.platform, i);
      if (r.platform != first->first)
        throw DataError(files[i].string() + " (" + config_key(r.config) + ") is platform '" + r.platform + "', but " +
                         files[first->second].string() + " is platform '" + first->first +
                         "': combine rounds of one platform");
    }
}

// A round counted twice would pass for two agreeing measurements (spread 0): refuse the same
// file under two names and two files with identical bytes alike.
void check_distinct_rounds(const std::vector<fs::path>& files) {
  std::map<std::string, std::string> by_path, by_content;  // canonical path / contents -> as given
  for (const fs::path& f : files) {
    std::error_code ec;
    const fs::path canon = fs::weakly_canonical(f, ec);
    const auto [p, fresh] = by_path.emplace(ec ? f.string() : canon.string(), f.string());
    if (!fresh)
      throw InputError(f.string() + " is given twice (also as " + p->second +
                       "): each round is a separate measurement");
    // Only a regular file is opened: a FIFO blocked this open for good (a review of the sixty-eighth
    // pass's fix); reading it below gives the error naming the problem, as for a directory.
    if (!fs::is_regular_file(f, ec)) continue;
    std::ifstream in(f, std::ios::binary);
    if (!in) continue;
    const auto [c, fresh_content] =
        by_content.emplace(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()),
                           f.string());
    if (!fresh_content)
      throw InputError(f.string() + " has the same contents as " + c->second +
                       ": the same round twice is not two measurements");
  }
}

// A round is one measurement: not an already combined file (it carries a `rounds` column and would
// count its rounds again), and not the same measurements as another round under a new layout (line
// endings, row order), which would pass for two rounds that agree exactly.
void check_rounds_are_measurements(const std::vector<Dataset>& rounds, const std::vector<fs::path>& files) {
  std::map<std::map<std::string, std::string>, std::size_t> seen;
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    if (std::find(rounds[i].extra_columns.begin(), rounds[i].extra_columns.end(), "rounds") !=
        rounds[i].extra_columns.end())
      throw InputError(files[i].string() + " is already a combination of rounds (it has a rounds column): give the "
                       "rounds it was made of instead");
    std::map<std::string, std::string> values;  // platform + configuration -> every measured value
    for (const Record& r : rounds[i].rows) {
      std::string v = to_string(r.status);
      for (const char* c : kValueColumns) v += "|" + csv::format_number(r.value(c));
      values[r.platform + '\n' + network_key(r.config)] = v;
    }
    // Rounds without an ok row measured no value to compare: two rounds out of memory at the same
    // configurations agree without being one (seventy-seventh hostile pass).
    const bool measured = std::any_of(rounds[i].rows.begin(), rounds[i].rows.end(),
                                      [](const Record& r) { return r.status == Status::ok; });
    if (!measured) continue;
    const auto [it, fresh] = seen.emplace(std::move(values), i);
    if (!fresh)
      throw InputError(files[i].string() + " holds exactly the measurements of " + files[it->second].string() +
                       ": the same round twice is not two measurements");
  }
}

// Digits of a number as written, leading zeros, sign, point and exponent aside ("0.0012" has 2).
std::size_t significant_digits(const std::string& text) {
  std::size_t n = 0;
  bool leading = true;
  for (char ch : text) {
    if (ch == 'e' || ch == 'E') break;
    if (!std::isdigit(static_cast<unsigned char>(ch))) continue;
    if (leading && ch == '0') continue;
    leading = false;
    ++n;
  }
  return n;
}

// Only a latency written with this many digits or more is evidence of a copy: rounded ones ("0.7")
// agree between independent rounds (a review: two hand-rounded rounds were refused as one).
// carb writes every measurement to its last digit.
constexpr std::size_t kCopyEvidenceDigits = 6;

// Two independent timings never agree to every digit. Rounds that hold the same latency (and energy)
// at every configuration measured ok in both are one measurement twice (hundred-and-thirty-first
// hostile pass: an export of a store part-way and another after it finished, or the first lines
// of a round, combined as rounds that agree exactly, spread 0); refused. Where only some agree so,
// a round was exported from the same store as another after part of it was measured again: said.
void check_rounds_measured_apart(const std::vector<Dataset>& rounds, const std::vector<fs::path>& files,
                                 std::vector<std::string>& warnings) {
  using Timing = std::pair<std::string, std::string>;  // latency_ms, energy_j as written
  std::vector<std::map<std::string, std::pair<Timing, const Record*>>> timed(rounds.size());
  for (std::size_t i = 0; i < rounds.size(); ++i)
    for (const Record& r : rounds[i].rows) {
      if (r.status != Status::ok || !r.latency_ms) continue;
      std::string latency = csv::format_number(r.latency_ms);
      if (significant_digits(latency) >= kCopyEvidenceDigits)
        timed[i][r.platform + '\n' + network_key(r.config)] = {{std::move(latency), csv::format_number(r.energy_j)}, &r};
    }
  for (std::size_t j = 1; j < rounds.size(); ++j)
    for (std::size_t i = 0; i < j; ++i) {
      std::size_t shared = 0, same = 0;
      const Record* first = nullptr;
      for (const auto& [key, timing] : timed[j]) {
        const auto other = timed[i].find(key);
        if (other == timed[i].end()) continue;
        ++shared;
        if (other->second.first == timing.first && same++ == 0) first = timing.second;
      }
      if (same == 0) continue;
      const std::string example = config_key(first->config) + ", latency_ms " + csv::format_number(first->latency_ms);
      if (same == shared)
        throw InputError(files[j].string() + " holds the same measurements as " + files[i].string() +
                         (shared == 1 ? std::string(" at the one configuration both measured ok (")
                                      : " at all " + std::to_string(shared) + " configurations both measured ok (first: ") +
                         example +
                         " in both): a part of one round, or two exports of one store, is not another round");
      warnings.push_back(std::to_string(same) + " of the " + std::to_string(shared) + " configurations measured ok in " +
                         files[i].string() + " and " + files[j].string() + " hold the same measurement in both (first: " +
                         example + "): not measured again between them (exports of one store?), they count as two "
                         "rounds that agree exactly");
    }
}

}  // namespace

nlohmann::json CombineSummary::to_json() const {
  return {{"rounds", rounds},     {"rows_out", rows_out},           {"combined", combined},
          {"csv", csv.string()}, {"provenance", provenance.string()}, {"warnings", warnings}};
}

CombineSummary combine_rounds(const std::vector<fs::path>& files, const fs::path& out,
                              const std::string& command_line, bool force) {
  if (files.size() < 2) throw InputError("combine needs at least two measuring rounds");
  // SIGINT/SIGTERM from here on stop the command before its write, nothing written (ninety-sixth
  // hostile pass: they ended it wherever it was, leaving temporaries).
  detail::StopOnSignals signals;
  check_not_an_input(out, files);
  check_not_an_input(provenance_path(out), files);
  check_distinct_rounds(files);
  check_dataset_output(out, force, kCombinedKind);
  std::vector<Dataset> rounds;
  nlohmann::json sources = nlohmann::json::array(), protocols = nlohmann::json::object();
  std::map<std::string, std::string> recorded_in;  // protocol id -> the round whose record is kept
  std::vector<std::string> record_warnings;
  for (const fs::path& f : files) {  // everything is read before `out` is written: out may be an input
    rounds.push_back(read_dataset_csv(f));
    const nlohmann::json prov = read_provenance(f);
    if (prov.is_object() && prov.contains("protocols") && prov["protocols"].is_object())
      for (const auto& [id, settings] : prov["protocols"].items())
        keep_last_record(id, settings, f.string(), protocols, recorded_in, record_warnings);
    sources.push_back({{"file", f.string()}, {kResolvedPathKey, resolved_path(f).string()}, {"rows", rounds.back().rows.size()},
                     {kCsvHashKey, file_fnv1a64(f).value_or("")}, {"provenance", prov}});
  }
  check_one_platform(rounds, files);
  check_one_protocol(rounds, files);
  check_rounds_are_measurements(rounds, files);
  CombineSummary s;
  s.warnings = record_warnings;
  check_rounds_measured_apart(rounds, files, s.warnings);

  std::vector<std::string> order;  // platform + configuration, first-seen order
  std::map<std::string, std::vector<const Record*>> rows;
  std::map<const Record*, std::size_t> round_of;  // which file a row came from, for messages
  Dataset combined;
  for (const Dataset& d : rounds) {
    combined.add_extra_columns(d.extra_columns);
    for (const Record& r : d.rows) {
      round_of[&r] = static_cast<std::size_t>(&d - rounds.data());
      // By network: a round that wrote the width as 0.251 measured 0.25's network (its median is
      // taken with the others; the first round's spelling is kept).
      const std::string key = r.platform + '\n' + network_key(r.config);
      if (!rows.count(key)) order.push_back(key);
      rows[key].push_back(&r);
    }
  }
  combined.add_extra_columns({"rounds", "latency_round_spread"});

  std::size_t disagreeing = 0;
  std::string first_disagreeing;
  // Each combined row named by the rounds it was made of (seventy-seventh hostile pass: a round
  // without energy was blamed on the output, never written, "empty here").
  std::vector<std::string> where;
  const auto made_of = [&](const std::vector<const Record*>& from) {
    std::string names;
    for (const Record* r : from) names += (names.empty() ? "" : " and ") + files[round_of.at(r)].string();
    return "the row of " + from.front()->platform + " " + config_key(from.front()->config) + " combined from " + names;
  };
  for (const auto& key : order) {
    std::vector<const Record*> ok;
    for (const Record* r : rows[key])
      if (r->status == Status::ok) ok.push_back(r);
    where.push_back(made_of(ok.empty() ? rows[key] : ok));
    if (ok.empty()) {
      combined.rows.push_back(*rows[key].front());
      combined.rows.back().extra["rounds"] = "0";
      continue;
    }
    if (ok.size() >= 2) ++s.combined;
    combined.rows.push_back(combine_ok_rounds(ok));
    const auto spread = combined.rows.back().extra.find("latency_round_spread");
    if (spread != combined.rows.back().extra.end() && std::strtod(spread->second.c_str(), nullptr) > kMaxRoundSpread &&
        disagreeing++ == 0)
      first_disagreeing = combined.rows.back().platform + " " + config_key(combined.rows.back().config) +
                          ", latency_round_spread " + spread->second;
  }
  // Seventy-seventh hostile pass: rounds of different configurations were "combined" without a word.
  if (s.combined == 0 && !combined.rows.empty()) {
    const bool any_ok = std::any_of(combined.rows.begin(), combined.rows.end(),
                                    [](const Record& r) { return r.status == Status::ok; });
    s.warnings.push_back(any_ok ? "no configuration was measured ok in two or more of the rounds: nothing was combined, "
                                  "the rows are each round's own (rounds of different configurations are merged with "
                                  "`carb data merge`)"
                                : "no round measured any configuration ok: the rows are the rounds' failures, "
                                  "with nothing to combine");
  }
  if (disagreeing)
    s.warnings.push_back(std::to_string(disagreeing) + " row" + (disagreeing == 1 ? "" : "s") +
                         " combine rounds whose latencies are more than " +
                         extra_number(kMaxRoundSpread + 1) + " times apart (first: " + first_disagreeing +
                         "): their median means little; look for a round measured in other units or on a loaded host");
  // The result must be one valid dataset like any other (rounds of two platforms would not be).
  throw_dataset_problems(check_dataset(combined, where, protocol_facts_of(protocols)), "");  // out is not written
  s.rounds = files.size();
  s.rows_out = combined.rows.size();
  // Checked at the write, again: what is at `out` may have changed while the rounds were read.
  const auto check_out = [&] {
    keep_what_force_replaces(out, force, [&](bool f) {
      check_dataset_output(out, f, kCombinedKind);
      check_output_keeps_rows(out, combined, f);
      check_output_keeps_sources(out, combined, files, f);
    });
  };
  detail::throw_if_stopped("data combine", "nothing was written; what was at --out is unchanged");
  write_dataset_with_provenance(combined, out, {{"kind", kCombinedKind},
                         {"csv", out.filename().string()},
                         {"rows", s.rows_out},
                         {"rule", "per platform + configuration: median over the rounds that measured it ok, every numeric "
                                  "column its own median (latency_cv, latency_std_ms, timed_s and passes summarise "
                                  "the rounds and need not agree with latency_ms as one round's do)"},
                         {"command", command_line},
                         {"combined_at", utc_now_iso8601()},
                         {"protocols", protocols},
                         {"rounds", sources}}, check_out);
  s.csv = out;
  s.provenance = provenance_path(out);
  return s;
}

}  // namespace carb
