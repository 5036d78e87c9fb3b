// `carb characterize`: scaling ratios per knob, family and precision comparisons, efficiency
// per batch tier and energy-latency divergence of one measured dataset.
#include <iostream>
#include <nlohmann/json.hpp>

#include "carb/characterize.hpp"
#include "cli.hpp"

namespace carb::cli {
namespace {

struct CharacterizeOpts {
  std::filesystem::path data;
  std::string format;
  double sm_threshold = -1;
};

Registrar reg(
    {"characterize",
     "Characterize a dataset: scaling per knob, family/precision ratios, J/ms/MB per GFLOP per batch "
     "tier, energy-latency divergence",
     [](CLI::App& app) {
       auto o = std::make_shared<CharacterizeOpts>();
       app.add_option("--data", o->data, "dataset CSV")->required()->check(CLI::ExistingFile);
       app.add_option("--sm-threshold", o->sm_threshold,
                      "avg_sm_util (%) splitting low/high SM rows (default: the median)")
           ->check(in_range(0.0, 100.0));
       add_format(app, o->format, {"table", "json", "md"});
       app.callback([o] {
         CharacterizeOptions co;
         if (o->sm_threshold >= 0) co.sm_threshold = o->sm_threshold;
         const Characterization ch = characterize(read_dataset_csv(o->data), co);
         if (o->format == "json")
           std::cout << json_text(ch.to_json(), 2) << '\n';
         else if (o->format == "md")
           render_characterization_md(ch, std::cout);
         else
           render_characterization_table(ch, std::cout);
       });
     }});

}  // namespace
}  // namespace carb::cli
