// `carb data info STORE.db` (store_info.hpp): a store's rows and campaigns, read without changing it.
#include "carb/store_info.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/store.hpp"
#include "carb/text_table.hpp"
#include "data/csv.hpp"
#include "data/provenance.hpp"
#include "planned.hpp"

namespace carb {

bool is_sqlite_file(const std::filesystem::path& file) { return csv::starts_as_sqlite(file); }

StoreInfo store_info(const std::filesystem::path& db) {
  // As export: a typo must not read as an empty store (Store would create one, were it not read-only).
  if (!std::filesystem::exists(db)) throw InputError(db.string() + ": no such measurement store");
  const Store store(db, StoreAccess::read_only);
  StoreInfo info;
  info.db = db;
  std::map<std::pair<std::string, std::string>, StoreCampaign> by_pair;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> networks;
  const auto campaign = [&](const std::string& platform, const std::string& protocol) -> StoreCampaign& {
    StoreCampaign& c = by_pair[{platform, protocol}];
    c.platform = platform, c.protocol_id = protocol;
    return c;
  };
  for (const Record& r : store.to_dataset().rows) {
    ++info.rows;
    const std::string protocol = protocol_of(r);
    StoreCampaign& c = campaign(r.platform, protocol);
    ++(r.status == Status::ok ? c.ok : r.status == Status::oom ? c.oom : c.error);
    networks[{r.platform, protocol}].insert(network_key(r.config));
  }
  // A run stopped before its first row planned a campaign that has none yet.
  for (const auto& [platform, protocol] : store.planned_pairs()) campaign(platform, protocol);
  const nlohmann::json settings = store.protocols();
  for (auto& [pair, c] : by_pair) {
    if (const auto p = planned_progress(store, pair.first, pair.second, networks[pair]); p && p->planned > 0)
      c.planned = p->planned, c.unmeasured = p->unmeasured;
    // The runs that planned it (a hostile tester: the first run's command was named as the one that
    // resumes the campaign after a --replan had dropped its configurations from the plan).
    c.commands = store.plan_commands(pair.first, pair.second);
    if (c.commands.empty() && settings.contains(c.protocol_id) && settings[c.protocol_id].is_object() &&
        settings[c.protocol_id].contains("command") && settings[c.protocol_id]["command"].is_string())
      c.commands.push_back(settings[c.protocol_id]["command"].get<std::string>());
    info.campaigns.push_back(c);
  }
  return info;
}

nlohmann::json StoreInfo::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const StoreCampaign& c : campaigns)
    list.push_back({{"platform", c.platform},
                    {"protocol_id", c.protocol_id},
                    {"ok", c.ok},
                    {"oom", c.oom},
                    {"error", c.error},
                    {"planned", c.planned ? nlohmann::json(*c.planned) : nlohmann::json()},
                    {"unmeasured", c.unmeasured ? nlohmann::json(*c.unmeasured) : nlohmann::json()},
                    {"commands", c.commands}});
  return {{"store", db.string()}, {"rows", rows}, {"campaigns", list}};
}

std::string format_store_info(const StoreInfo& info) {
  std::ostringstream out;
  out << info.db.string() << ": a measurement store, " << info.rows << " row" << (info.rows == 1 ? "" : "s") << "\n\n";
  TextTable t({"platform", "protocol", "ok", "oom", "error", "planned", "unmeasured"});
  const auto count = [](const std::optional<std::size_t>& n) { return n ? std::to_string(*n) : std::string("-"); };
  for (const StoreCampaign& c : info.campaigns)
    t.add({c.platform, c.protocol_id, std::to_string(c.ok), std::to_string(c.oom), std::to_string(c.error),
           count(c.planned), count(c.unmeasured)});
  t.print(out);
  bool unknown = false;
  for (const StoreCampaign& c : info.campaigns) {
    unknown = unknown || !c.planned;
    if (!c.unmeasured || *c.unmeasured == 0) continue;
    out << "\n" << c.platform << " (" << c.protocol_id << "): " << *c.unmeasured << " of " << *c.planned
        << " configurations its runs were given have no row yet";
    if (!c.commands.empty()) {
      const std::size_t shown = std::min<std::size_t>(c.commands.size(), 3);
      out << "; " << (c.commands.size() == 1 ? "the run that planned it" : "the runs that planned it");
      if (shown < c.commands.size()) out << " (the last " << shown << " of " << c.commands.size() << ")";
      out << ":";
      for (std::size_t i = c.commands.size() - shown; i < c.commands.size(); ++i) out << "\n  " << c.commands[i];
      out << "\n(run again, a run measures only what it was given and lacks)";
    }
    out << "\n";
  }
  if (unknown) out << "\n(-: the store was made before carb recorded what its runs were given)\n";
  return out.str();
}

}  // namespace carb
