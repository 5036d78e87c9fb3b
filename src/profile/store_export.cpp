// `carb data export`: the store's rows as one valid dataset CSV, with the protocols they were
// measured under and the exporting machine in its provenance sidecar.
#include "carb/store_export.hpp"

#include <map>
#include <set>
#include <utility>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/store.hpp"
#include "carb/warning.hpp"
#include "data/provenance.hpp"
#include "data/validate.hpp"
#include "planned.hpp"
#include "util/join.hpp"
#include "util/stop_signal.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

}  // namespace

nlohmann::json ExportSummary::to_json() const {
  return {{"rows", rows},
          {"platforms", platforms},
          {"csv", csv.string()},
          {"provenance", provenance.string()},
          {"planned", planned ? nlohmann::json(*planned) : nlohmann::json()},
          {"unmeasured", unmeasured ? nlohmann::json(*unmeasured) : nlohmann::json()}};
}

namespace {

// What an export may replace at --out; checked before the work and again at the write.
void check_export_destination(const ExportOptions& o) {
  check_dataset_output(o.out, o.force, kExportedKind);
  // Even with --force: the store would be replaced by its own export, or by the export's sidecar.
  check_not_an_input(o.out, {o.db}, InputKind::plain_files);
  check_not_an_input(provenance_path(o.out), {o.db}, InputKind::plain_files);
  // An export replaces only an earlier export of this store: every shipped dataset is an export, and
  // one of another store (8 CPU rows over 150 H200 rows) replaced it without --force.
  if (!o.force && fs::exists(o.out)) {
    const nlohmann::json before = read_provenance(o.out);
    const std::string source = before.is_object() && before.contains("source_db") && before["source_db"].is_string()
                                   ? before["source_db"].get<std::string>()
                                   : "";
    std::error_code ec;
    if (source.empty() || !fs::equivalent(source, o.db, ec) || ec)
      throw InputError(o.out.string() + " holds an export of " + (source.empty() ? "another store" : source) +
                       ", not of " + o.db.string() + "; choose another --out, or pass --force to replace it");
  }
}

// What the store's runs were given for the exported platforms and protocols, and how many of those
// configurations have no row (any status); nullopt where that is not known for every pair: a store
// made before carb recorded plans, or rows of a protocol whose runs were all older than the record.
std::optional<PlannedProgress> campaign_progress(const Store& store, const Dataset& exported) {
  std::map<std::pair<std::string, std::string>, std::set<std::string>> measured;
  for (const Record& r : exported.rows) measured[{r.platform, protocol_of(r)}].insert(network_key(r.config));
  PlannedProgress total;
  for (const auto& [pair, networks] : measured) {
    const auto p = planned_progress(store, pair.first, pair.second, networks);
    if (!p || p->planned == 0) return std::nullopt;
    total.planned += p->planned;
    total.unmeasured += p->unmeasured;
  }
  return total;
}

}  // namespace

ExportSummary export_store(const ExportOptions& o) {
  // Store() would create an empty database; a typo in --db must not look like an empty store.
  if (!fs::exists(o.db)) throw InputError(o.db.string() + ": no such measurement store");
  // SIGINT/SIGTERM from here on stop the command before its write, nothing written (ninety-sixth
  // hostile pass: they ended it wherever it was, leaving temporaries).
  detail::StopOnSignals signals;
  check_export_destination(o);
  const Store store(o.db, StoreAccess::read_only);  // export never changes the file it reads
  Dataset all = store.to_dataset();
  Dataset d;
  d.extra_columns = all.extra_columns;
  std::set<std::string> platforms, seen_platforms, protocol_ids;
  for (Record& r : all.rows) {
    seen_platforms.insert(r.platform);
    if (o.platform && r.platform != *o.platform) continue;
    if (o.protocol && protocol_of(r) != *o.protocol) continue;
    platforms.insert(r.platform);
    protocol_ids.insert(protocol_of(r));
    d.rows.push_back(std::move(r));
  }
  if (d.rows.empty())
    throw InputError(
        o.db.string() + ": no rows" + (o.platform ? " for platform '" + *o.platform + "'" : "") +
        (o.protocol ? " under protocol " + *o.protocol : "") +
        (seen_platforms.empty() ? "" : " (platforms in the store: " + join(seen_platforms) + ")"));
  std::vector<std::string> where;
  for (const Record& r : d.rows) where.push_back(o.db.string() + " (" + r.platform + " " + config_key(r.config) + ")");
  const auto problems = check_dataset(d, where, protocol_facts_of(store.protocols()));
  if (!problems.empty() && platforms.size() > 1)
    throw InputError(o.db.string() + " holds rows of " + std::to_string(platforms.size()) + " platforms (" +
                     join(platforms) + "): export one at a time with --platform NAME");
  if (!problems.empty() && protocol_ids.size() > 1)
    throw InputError(o.db.string() + " holds rows of " + std::to_string(protocol_ids.size()) + " protocols (" +
                     join(protocol_ids) + "): export one at a time with --protocol ID (and --platform)");
  throw_dataset_problems(problems, "");  // o.out is not written
  // Every row's protocol settings go into the provenance: rows of a protocol the store has no
  // settings for would be exported with nothing to say how they were measured.
  const nlohmann::json settings = store.protocols();
  for (const auto& id : protocol_ids)
    if (!settings.contains(id) || !settings[id].is_object() || settings[id].empty())
      throw MeasureError(o.db.string() + ": rows name protocol '" + id + "', whose settings the store does not hold");
  // Checked at the write, again: what is at --out may have changed while the store was read.
  const auto check_out = [&] {
    keep_what_force_replaces(o.out, o.force, [&](bool f) {
      ExportOptions as = o;
      as.force = f;
      check_export_destination(as);
      check_output_keeps_rows(o.out, d, f, KeepRule::same_rows);
    });
  };

  const nlohmann::json stored = store.protocols();
  nlohmann::json protocols = nlohmann::json::object();
  for (const auto& id : protocol_ids) protocols[id] = stored[id];
  const auto progress = campaign_progress(store, d);
  nlohmann::json prov = {
      {"kind", kExportedKind},
      {"csv", o.out.filename().string()},
      {"rows", d.rows.size()},
      {"platforms", platforms},
      {"source_db", fs::absolute(o.db).string()},
      {"platform_filter", o.platform ? nlohmann::json(*o.platform) : nlohmann::json()},
      {"command", o.command_line},
      {"exported_at", utc_now_iso8601()},
      // The exporting machine; each protocol's settings describe the measuring one.
      {"exported_on", collect_machine_info()},
      {"protocols", protocols}};
  if (progress) prov["campaign"] = {{"planned", progress->planned}, {"unmeasured", progress->unmeasured}};
  detail::throw_if_stopped("data export", "nothing was written; what was at --out is unchanged");
  write_dataset_with_provenance(d, o.out, prov, check_out);
  // Said once the file is written, as what it holds: an export is a fine thing to take of a
  // campaign under way, as long as nobody reads it as the whole campaign.
  if (progress && progress->unmeasured > 0)
    warn(o.out.string() + " holds an unfinished campaign: " + std::to_string(progress->unmeasured) + " of the " +
         std::to_string(progress->planned) + " configurations its runs were given have no row in " + o.db.string() +
         " (a run stopped before them; `carb data info " + o.db.string() + "` names the runs that planned them, "
         "each of which measures only what it lacks when run again), so read this export as a partial sample of "
         "what was planned");
  ExportSummary summary;
  summary.rows = d.rows.size();
  summary.platforms.assign(platforms.begin(), platforms.end());
  summary.csv = o.out;
  summary.provenance = provenance_path(o.out);
  if (progress) summary.planned = progress->planned, summary.unmeasured = progress->unmeasured;
  return summary;
}

}  // namespace carb
