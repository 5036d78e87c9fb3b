// `carb space`: list presets, enumerate or count a configuration space.
#include <iostream>
#include <nlohmann/json.hpp>

#include "carb/arch.hpp"
#include "carb/text_table.hpp"
#include "config_flags.hpp"

namespace carb::cli {
namespace {

struct SpaceOpts {
  SourceFlags src;
  bool list = false, count = false;
  std::string format;
  CLI::Option* format_opt = nullptr;
};

void run_space(const SpaceOpts& o) {
  // Thirtieth hostile pass: `--list --format csv` printed the table as if CSV had been asked for.
  if (o.list && o.format == "csv" && o.format_opt->count() > 0)
    throw InputError("--list prints a table or JSON (--format table|json); --format csv lists configurations");
  // Seventy-second hostile pass: `--list --count` and `--list --preset tiny` listed the presets, the
  // other flags ignored.
  if (o.list && (o.count || o.src.given() || !o.src.shard_spec.empty()))
    throw InputError("--list lists the presets; it takes no --preset, --configs, --shard or --count");
  if (o.list) {
    nlohmann::json j = nlohmann::json::array();
    TextTable t({"preset", "configs", "description"});
    for (const auto& p : presets()) {
      auto n = enumerate(p).size();
      j.push_back({{"name", p.name}, {"configs", n}, {"description", p.description}});
      t.add({p.name, std::to_string(n), p.description});
    }
    if (o.format == "json") std::cout << json_text(j, 2) << '\n';
    else t.print(std::cout);
    return;
  }
  auto cs = o.src.load();
  if (o.count) {
    if (o.format == "json") std::cout << json_text(nlohmann::json{{"count", cs.size()}}, -1) << '\n';
    else std::cout << cs.size() << '\n';
    return;
  }
  if (o.format == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& c : cs) j.push_back(config_to_json(c));
    std::cout << json_text(j, 1) << '\n';
  } else if (o.format == "table") {
    TextTable t({kConfigColumns.begin(), kConfigColumns.end()});
    for (const auto& c : cs)
      t.add({to_string(c.family), std::to_string(c.depth), format_width(c.width), std::to_string(c.resolution),
             std::to_string(c.batch), to_string(c.precision)});
    t.print(std::cout);
  } else {
    write_configs_csv(cs, std::cout);
  }
}

Registrar reg({"space", "List presets; enumerate or count a configuration space (as CSV, JSON or a table)",
               [](CLI::App& app) {
                 auto o = std::make_shared<SpaceOpts>();
                 o->src.add(app);
                 app.add_flag("--list", o->list, "list the presets with their sizes");
                 app.add_flag("--count", o->count, "print only the number of configurations");
                 o->format_opt = add_format(app, o->format, {"csv", "json", "table"});
                 app.callback([o] { run_space(*o); });
               }});

}  // namespace
}  // namespace carb::cli
