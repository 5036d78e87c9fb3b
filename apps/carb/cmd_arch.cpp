// `carb arch`: the analytic model of one configuration (params, MACs, activations, layers).
#include <iostream>

#include "carb/arch.hpp"
#include "carb/text_table.hpp"
#include "config_flags.hpp"

namespace carb::cli {
namespace {

struct ArchOpts {
  ConfigFlags cfg;
  std::string format;
};

void print_table(const NetworkSpec& s) {
  TextTable t({"layer", "kind", "output", "params", "MACs"});
  for (const auto& l : s.layers) {
    std::string shape;
    for (auto d : l.out_shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
    t.add({l.name, to_string(l.kind), shape, std::to_string(l.params), std::to_string(l.macs)});
  }
  t.print(std::cout);
  std::cout << "\n" << config_key(s.config) << ": params " << s.params << " (" << fmt_num(s.param_bytes() / 1e6)
            << " MB), MACs " << fmt_num(s.macs / 1e9) << " G, FLOPs " << fmt_num(s.flops() / 1e9)
            << " G, activations total " << fmt_num(s.activation_bytes_total() / 1e6) << " MB, max "
            << fmt_num(s.activation_bytes_max() / 1e6) << " MB, alive at once at most "
            << fmt_num(s.activation_bytes_peak() / 1e6) << " MB\n";
}

Registrar reg({"arch", "Analytic model of one configuration: layers, params, MACs, FLOPs (= 2 x MACs), activations",
               [](CLI::App& app) {
                 auto o = std::make_shared<ArchOpts>();
                 o->cfg.add(app);
                 add_format(app, o->format, {"table", "json"});
                 app.callback([o] {
                   auto spec = build_network_spec(o->cfg.config());
                   if (o->format == "json") std::cout << json_text(spec_to_json(spec), 1) << '\n';
                   else print_table(spec);
                 });
               }});

}  // namespace
}  // namespace carb::cli
