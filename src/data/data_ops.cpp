// `carb data` operations: duplicate-free merging that reports protocol disagreements, and
// dataset summaries (JSON for tools, tables for people). Store export: profile/store_export.cpp.
#include "carb/data_ops.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <unordered_set>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/text_table.hpp"
#include "carb/warning.hpp"
#include "data/device_facts.hpp"
#include "data/validate.hpp"
#include "data/provenance.hpp"
#include "util/join.hpp"
#include "util/stop_signal.hpp"
#include "util/repeated_files.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

// Folds one input's sidecar protocols into `all`; the same id with other settings is a
// conflict (the id should be a hash of the settings, so this means mixed-up files).
void merge_protocols(const nlohmann::json& prov, const std::string& file, nlohmann::json& all,
                     std::map<std::string, std::string>& source, std::vector<std::string>& conflicts) {
  if (!prov.is_object() || !prov.contains("protocols") || !prov["protocols"].is_object()) return;
  for (auto it = prov["protocols"].begin(); it != prov["protocols"].end(); ++it) {
    if (!all.contains(it.key())) {
      all[it.key()] = it.value();
      source[it.key()] = file;
      continue;
    }
    // A lasting fact of the device one record holds and the other lacks (an export made before carb
    // recorded the device's memory) is no other setting: the merged record has it, in either order
    // (thirty-first session: an older export first dropped the newer one's memory and was said to
    // have "different settings").
    nlohmann::json kept = all[it.key()], theirs = it.value();
    const bool gained = detail::add_lasting_device_facts(kept, theirs);
    detail::add_lasting_device_facts(theirs, kept);
    if (detail::measuring_settings(kept) == detail::measuring_settings(theirs)) {
      all[it.key()] = std::move(kept);
      // A conflict later names every input the kept record holds facts of (a hostile tester: a memory
      // taken from the second input was said to be the first's).
      if (gained) source[it.key()] += ", " + file;
    } else {
      conflicts.push_back("protocol '" + it.key() + "' has different settings in " + source[it.key()] +
                          " and " + file);
    }
  }
}

nlohmann::json count_map(const std::map<std::string, std::size_t>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

// min/max of one configuration knob over all rows.
template <class T, class F>
KnobRange<T> range_of(const Dataset& d, F get) {
  KnobRange<T> r{get(d.rows.front().config), get(d.rows.front().config)};
  for (const Record& x : d.rows) {
    r.min = std::min(r.min, get(x.config));
    r.max = std::max(r.max, get(x.config));
  }
  return r;
}

template <class T>
nlohmann::json range_json(const KnobRange<T>& r) {  // keeps int knobs int in the JSON
  return {{"min", r.min}, {"max", r.max}};
}

PlatformRows platform_rows(const Dataset& d, const std::string& platform) {
  PlatformRows p;
  for (const char* t : kTargets) p.ok_rows_with_value[t] = 0;
  for (const Record& r : d.rows) {
    if (r.platform != platform) continue;
    ++p.rows;
    ++p.status[to_string(r.status)];
    if (r.status != Status::ok) continue;
    ++p.ok_rows;
    for (const char* t : kTargets) p.ok_rows_with_value[t] += r.value(t) ? 1 : 0;
  }
  return p;
}

}  // namespace

nlohmann::json MergeSummary::to_json() const {
  return {{"rows_in", rows_in},     {"rows_out", rows_out}, {"dropped_duplicates", dropped},
          {"disagreeing_duplicates", disagreeing}, {"input_protocols", input_protocols},
          {"conflicts", conflicts}, {"replaced_in_earlier_output", replaced}, {"csv", csv.string()},  {"provenance", provenance.string()},
          {"warnings", warnings()}};
}

std::vector<std::string> MergeSummary::warnings() const {
  std::vector<std::string> out;
  if (disagreeing)
    out.push_back(std::to_string(disagreeing) + " of the dropped duplicates measured differently from the row kept (each "
                  "time the row of the input given first; the first such pair: " + first_disagreeing +
                  "); give the inputs in the order to prefer" +
                  // Ninety-fourth hostile pass: the advice led to a combine that refuses inputs of two protocols.
                  (input_protocols <= 1 ? ", or combine them as rounds with `carb data combine`"
                                        : " (`carb data combine` takes rounds of one protocol, which these are not)"));
  out.insert(out.end(), conflicts.begin(), conflicts.end());
  if (!replaced.empty())
    out.push_back("the earlier " + csv.string() + " was made from these inputs, and " + replaced +
                  " now hold another input's values: which duplicate is kept follows the inputs' order");
  return out;
}

MergeSummary merge_datasets(const std::vector<fs::path>& inputs, const fs::path& out,
                            const std::string& command_line, bool force) {
  if (inputs.empty()) throw InputError("merge needs at least one input dataset");
  detail::refuse_repeated_files(inputs, "");  // ninety-seventh hostile pass: "1958 duplicates dropped"
  // SIGINT/SIGTERM from here on stop the command before its write, nothing written (ninety-sixth
  // hostile pass: they ended it wherever it was, leaving temporaries).
  detail::StopOnSignals signals;
  check_not_an_input(out, inputs);
  check_not_an_input(provenance_path(out), inputs);
  check_dataset_output(out, force, kMergedKind);
  MergeSummary s;
  Dataset merged;
  std::unordered_map<std::string, std::size_t> seen;  // platform + '\n' + network key -> merged row
  std::vector<std::string> where;                     // each merged row's source, for messages
  nlohmann::json protocols = nlohmann::json::object(), sources = nlohmann::json::array();
  std::map<std::string, std::string> protocol_source;
  std::set<std::string> input_protocols;
  for (const fs::path& in : inputs) {
    Dataset d = read_dataset_csv(in);  // everything is read before `out` is written: out may be an input
    const nlohmann::json prov = read_provenance(in);
    merge_protocols(prov, in.string(), protocols, protocol_source, s.conflicts);
    sources.push_back({{"file", in.string()}, {kResolvedPathKey, resolved_path(in).string()}, {"rows", d.rows.size()},
                       {kCsvHashKey, file_fnv1a64(in).value_or("")},
                       {"provenance", prov}});
    s.rows_in += d.rows.size();
    for (const Record& r : d.rows)
      if (const auto id = r.extra.find("protocol_id"); id != r.extra.end() && !id->second.empty())
        input_protocols.insert(id->second);
    merged.add_extra_columns(d.extra_columns);
    for (Record& r : d.rows) {
      const auto [it, fresh] = seen.emplace(r.platform + '\n' + network_key(r.config), merged.rows.size());  // 0.251 is 0.25's network
      const auto source = [&] { return in.string() + " (" + r.platform + " " + config_key(r.config) + ")"; };
      if (fresh) {
        where.push_back(source());
        merged.rows.push_back(std::move(r));
        continue;
      }
      ++s.dropped;
      // A measurement that succeeded beats one that failed, wherever it comes (fifteenth hostile
      // pass: an error row of the first input dropped the ok measurement of the second).
      Record& kept = merged.rows[it->second];
      if (kept.status == Status::ok && r.status == Status::ok) {
        bool differs = false;
        for (const ColumnBounds& b : kPlausibleBounds) differs = differs || kept.value(b.column) != r.value(b.column);
        if (differs && s.disagreeing++ == 0) s.first_disagreeing = "kept " + where[it->second] + ", dropped " + source();
      }
      if (kept.status != Status::ok && r.status == Status::ok) {
        where[it->second] = source();  // before r is moved from
        kept = std::move(r);
      }
    }
  }
  for (const auto& [id, settings] : protocols.items()) input_protocols.insert(id);
  s.input_protocols = input_protocols.size();
  // The result must be one valid dataset like any other: rows of two protocols or platforms would
  // be refused by every reader, so refuse them here, where the user can still choose.
  throw_dataset_problems(check_dataset(merged, where, protocol_facts_of(protocols)), "");  // out is not written

  s.rows_out = merged.rows.size();
  // Checked at the write, again: what is at `out` may have changed while the inputs were read.
  const auto check_out = [&] {
    keep_what_force_replaces(out, force, [&](bool f) {
      check_dataset_output(out, f, kMergedKind);
      check_output_keeps_rows(out, merged, f);
      const auto replaced = check_output_keeps_sources(out, merged, inputs, f);
      if (f == force) s.replaced = replaced;
    });
  };
  detail::throw_if_stopped("data merge", "nothing was written; what was at --out is unchanged");
  write_dataset_with_provenance(merged, out, {{"kind", kMergedKind},
                         {"csv", out.filename().string()},
                         {"rows", s.rows_out},
                         {"dropped_duplicates", s.dropped},
                         {"conflicts", s.conflicts},
                         {"command", command_line},
                         {"merged_at", utc_now_iso8601()},
                         {"protocols", protocols},
                         {"inputs", sources}}, check_out);
  s.csv = out;
  s.provenance = provenance_path(out);
  return s;
}

namespace {
// What `data export` recorded of the campaign (store_export.hpp), when the sidecar says it; a
// sidecar that cannot be read says nothing here (`data validate` is where it is refused), and an
// edited record is warned of (seventy-eighth hostile pass: dropped without a word).
std::optional<CampaignProgress> exported_campaign(const fs::path& csv) {
  nlohmann::json prov;
  try {
    prov = read_provenance(csv);
  } catch (const Error&) {
    return std::nullopt;
  }
  try {
    if (const auto c = recorded_campaign(prov, provenance_path(csv).string())) return CampaignProgress{c->first, c->second};
  } catch (const DataError& e) {
    warn(e.what());
  }
  return std::nullopt;
}
}  // namespace

namespace {

// Per protocol the rows name, the device its record names and that device's memory (what `carb
// train` reads as the device's memory): none is said where the sidecar holds no record of it.
std::vector<MeasuringDevice> measuring_devices(const Dataset& d, const nlohmann::json& recorded,
                                               const ProtocolFactsById& facts) {
  std::set<std::string> ids;
  for (const Record& r : d.rows)
    if (const std::string id = protocol_of(r); !id.empty()) ids.insert(id);
  std::vector<MeasuringDevice> out;
  for (const std::string& id : ids) {
    if (!recorded.is_object()) continue;  // no sidecar (or none readable): nothing recorded to say
    if (!recorded.contains(id)) {  // a hostile tester: rows of a protocol the sidecar lacks went unsaid
      out.push_back({id, "", std::nullopt, false, ""});
      continue;
    }
    const auto fact = facts.find(id);
    MeasuringDevice m{id, detail::measuring_device(recorded[id]), std::nullopt, true, ""};
    if (fact != facts.end()) {
      m.memory_mb = fact->second.memory_mb;
      for (const std::string& u : fact->second.unusable)
        if (u.find("device_memory_mb") != std::string::npos) m.memory_unusable = u;
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

DatasetInfo dataset_info(const fs::path& csv) {
  // A summary of any well-formed file, also one that readers refuse (two platforms, duplicates):
  // `data info` is how a user sees what is in it.
  std::vector<std::string> problems;
  std::vector<std::size_t> lines;
  const Dataset d = read_dataset_csv(csv, problems, &lines);
  throw_dataset_problems(problems, csv.string());
  // What every reader of the file warns of (a CSV no longer the one its provenance was written with,
  // a provenance edited or left staged by a killed run), `data info` says too: a hostile tester found
  // it silent where merge, train and validate pointed at the killed run's provenance. A sidecar they
  // refuse outright is said and the CSV summarised: info shows what is there.
  ProtocolFactsById facts;
  nlohmann::json recorded;  // the sidecar's protocol records
  try {
    facts = recorded_protocol_facts(csv);
    if (const nlohmann::json prov = read_provenance(csv); prov.is_object() && prov.contains("protocols"))
      recorded = prov["protocols"];
  } catch (const Error& e) {
    warn(std::string(e.what()) + " (`carb data validate` refuses it; the summary is of the CSV alone)");
  }
  DatasetInfo info;
  info.file = csv;
  info.rows = d.rows.size();
  // Everything readers refuse the file for, counted as `data validate` lists it (hundred-and-ninth
  // hostile pass: a file of 736 problems summarised with only its 7 duplicates said).
  info.problems = file_problems(csv, d, lines, facts).size();
  info.extra_columns = d.extra_columns;
  std::set<std::string> platforms;
  std::set<std::pair<std::string, std::string>> networks;  // (platform, network_key) seen
  for (const Record& r : d.rows) {
    if (!networks.emplace(r.platform, network_key(r.config)).second) ++info.duplicates;
    ++info.status[to_string(r.status)];
    ++info.family[to_string(r.config.family)];
    ++info.precision[to_string(r.config.precision)];
    platforms.insert(r.platform);
  }
  for (const auto& p : platforms) info.platforms[p] = platform_rows(d, p);
  info.campaign = exported_campaign(csv);
  info.devices = measuring_devices(d, recorded, facts);
  if (!d.rows.empty()) {
    info.depth = range_of<int>(d, [](const Config& c) { return c.depth; });
    info.width = range_of<double>(d, [](const Config& c) { return c.width; });
    info.resolution = range_of<int>(d, [](const Config& c) { return c.resolution; });
    info.batch = range_of<int>(d, [](const Config& c) { return c.batch; });
  }
  return info;
}

nlohmann::json DatasetInfo::to_json() const {
  nlohmann::json j = {{"file", file.string()},
                      {"rows", rows},
                      {"status", count_map(status)},
                      {"family", count_map(family)},
                      {"precision", count_map(precision)},
                      {"extra_columns", extra_columns},
                      {"duplicates", duplicates},
                      {"problems", problems},
                      {"platforms", nlohmann::json::object()}};
  for (const auto& [name, p] : platforms) {
    nlohmann::json targets = nlohmann::json::object();
    for (const auto& [t, n] : p.ok_rows_with_value) targets[t] = {{"ok_rows_with_value", n}, {"ok_rows", p.ok_rows}};
    j["platforms"][name] = {{"rows", p.rows}, {"status", count_map(p.status)}, {"targets", targets}};
  }
  if (depth) j["depth"] = range_json(*depth);
  if (width) j["width"] = range_json(*width);
  if (resolution) j["resolution"] = range_json(*resolution);
  if (batch) j["batch"] = range_json(*batch);
  j["campaign"] = campaign ? nlohmann::json{{"planned", campaign->planned}, {"unmeasured", campaign->unmeasured}}
                           : nlohmann::json();
  j["devices"] = nlohmann::json::array();
  for (const auto& m : devices)
    j["devices"].push_back({{"protocol_id", m.protocol_id},
                            {"recorded", m.recorded},
                            {"device", m.device.empty() ? nlohmann::json() : nlohmann::json(m.device)},
                            {"memory_mb", m.memory_mb ? nlohmann::json(*m.memory_mb) : nlohmann::json()},
                            {"memory_unusable", m.memory_unusable.empty() ? nlohmann::json() : nlohmann::json(m.memory_unusable)}});
  return j;
}

std::string format_dataset_info(const DatasetInfo& info) {
  std::ostringstream out;
  out << info.file.string() << ": " << info.rows << " rows\n\n";
  TextTable t({"platform", "rows", "ok", "oom", "error", "peak_memory_mb", "energy_j", "latency_ms"});
  for (const auto& [name, p] : info.platforms) {
    std::vector<std::string> row = {name, std::to_string(p.rows)};
    for (const char* st : {"ok", "oom", "error"}) {
      const auto it = p.status.find(st);
      row.push_back(std::to_string(it == p.status.end() ? 0 : it->second));
    }
    for (const char* t_name : kTargets)
      row.push_back(std::to_string(p.ok_rows_with_value.at(t_name)) + "/" + std::to_string(p.ok_rows));
    t.add(std::move(row));
  }
  t.print(out);
  const auto counts = [&](const char* key, const std::map<std::string, std::size_t>& m) {
    const std::string s = join(m, [](const auto& kv) { return kv.first + " " + std::to_string(kv.second); });
    out << "  " << key << ": " << (s.empty() ? "-" : s) << "\n";
  };
  out << "\n";
  counts("status", info.status);
  counts("family", info.family);
  counts("precision", info.precision);
  const auto range = [&](const char* key, const auto& r) {
    if (r) out << "  " << key << ": " << fmt_num(double(r->min)) << " .. " << fmt_num(double(r->max)) << "\n";
  };
  range("depth", info.depth);
  range("width", info.width);
  range("resolution", info.resolution);
  range("batch", info.batch);
  if (!info.extra_columns.empty()) {
    out << "  extra columns: " << join(info.extra_columns) << "\n";
  }
  for (const auto& m : info.devices) {
    if (!m.recorded) {
      out << "  measured under protocol " << m.protocol_id << ", which the sidecar does not record\n";
      continue;
    }
    std::string device = m.device.empty() ? "a device its record does not name" : m.device;
    for (std::size_t at = 0; (at = device.find_first_of("\r\n", at)) != std::string::npos;)  // one line each
      device.replace(at, 1, device[at] == '\n' ? "\\n" : "\\r");
    out << "  measured on: " << device << ", "
        << (m.memory_mb ? fmt_num(*m.memory_mb, 10) + " MB of memory"
            : m.memory_unusable.empty() ? std::string("its memory not recorded")
                                        : "its memory unusable (" + m.memory_unusable + ")")
        << " (protocol " << m.protocol_id << ")\n";
  }
  // Fifteenth-pass leftover: a file every reader refuses for its duplicates looked fine here.
  if (info.duplicates > 0)
    out << "  duplicates: " << info.duplicates << (info.duplicates == 1 ? " row repeats" : " rows repeat")
        << " an earlier row's network (readers refuse the file; carb data validate lists them)\n";
  if (info.problems > 0)
    out << "  problems: " << info.problems << (info.duplicates > 0 ? " (the duplicates included)" : "")
        << ": readers refuse the file; carb data validate lists them\n";
  if (info.campaign && info.campaign->unmeasured > 0)
    out << "  unfinished campaign: when exported, " << info.campaign->unmeasured << " of the "
        << info.campaign->planned << " configurations its runs were given had no row (a partial sample)\n";
  else if (info.campaign)
    out << "  campaign: all " << info.campaign->planned << " configurations its runs were given had a row when exported\n";
  return out.str();
}

}  // namespace carb
