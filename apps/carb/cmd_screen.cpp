// `carb screen`: two-stage deployment screening of a configuration space against budgets.
#include <filesystem>
#include <iostream>
#include <limits>

#include "carb/screen.hpp"
#include "carb/text_table.hpp"
#include "config_flags.hpp"
#include "progress_line.hpp"

namespace carb::cli {
namespace {

struct ScreenCmd {
  SourceFlags src;
  std::string capacity;
  std::string source_model, target_model, rank_by, validate_csv, format;
  bool include_trained = false;
  int top_k = static_cast<int>(ScreenOptions::kDefaultTopK);
  double energy_max = 0, latency_max = 0, memory_max = 0, confidence = 0;
  CLI::Option *top_k_opt = nullptr, *energy_opt = nullptr, *latency_opt = nullptr, *memory_opt = nullptr,
              *confidence_opt = nullptr;
};

void run(const ScreenCmd& c) {
  ScreenOptions o;
  o.rank_by = c.rank_by;
  // With one model --top-k cuts only when given; with two the shortlist defaults to 100.
  if (c.top_k_opt->count() > 0 || !c.target_model.empty()) o.top_k = static_cast<std::size_t>(c.top_k);
  if (c.energy_opt->count() > 0) o.budgets["energy_j"] = c.energy_max;
  if (c.latency_opt->count() > 0) o.budgets["latency_ms"] = c.latency_max;
  if (c.memory_opt->count() > 0) o.budgets["peak_memory_mb"] = c.memory_max;
  if (c.confidence_opt->count() > 0) o.confidence = c.confidence;
  const auto configs = c.src.load();
  // Ninety-seventh hostile pass: one bundle as both stages was a "two-stage screen" with rho 1 and its
  // shortlist cut to 100 for nothing (transfer refuses the same data twice).
  const auto resolved = [](const std::string& p) {
    std::error_code ec;
    const auto r = std::filesystem::weakly_canonical(std::filesystem::absolute(p, ec), ec);
    return ec ? std::filesystem::path(p) : r;
  };
  if (!c.target_model.empty() && resolved(c.source_model) == resolved(c.target_model))
    throw InputError("--target-model is the --source-model (" + c.source_model + "): a two-stage screen re-scores the "
                     "shortlist with another platform's model; leave --target-model out to screen with one");
  const CarbModel source = CarbModel::load(c.source_model);
  std::optional<CarbModel> target;
  if (!c.target_model.empty()) target = CarbModel::load(c.target_model);
  std::optional<Dataset> measured;
  if (!c.validate_csv.empty()) measured = read_dataset_csv(c.validate_csv);
  o.validate = measured ? &*measured : nullptr;
  o.validate_include_trained = c.include_trained;
  o.capacity = parse_capacity(c.capacity);
  // SIGINT/SIGTERM stop it as the models predict the space (most of a large screen's time), exit 130
  // with a line saying so, as `carb plan` and Python's carb.screen (it ended by the signal's default).
  detail::StopOnSignals signals;
  ProgressLine tell("screen", "nothing was written");
  o.progress = [&](std::size_t predicted, std::size_t of) {
    tell([&] { return std::to_string(predicted) + " of " + std::to_string(of) + " configurations predicted"; });
  };
  const ScreenResult r = screen(configs, source, target ? &*target : nullptr, o);
  tell.finish(std::to_string(configs.size()) + " configurations predicted");
  // As predict says it (twenty-fifth hostile pass: screen judged latency budgets on drift-corrected
  // predictions without a word).
  for (const CarbModel* m : std::initializer_list<const CarbModel*>{&source, target ? &*target : nullptr})
    if (m && m->drift_reference_ms() && m->has_target("latency_ms"))
      std::cerr << "note: drift-corrected model (" << printable(m->platform()) << "): latency is predicted, and "
                << "budgets judged, at the host speed where the reference network takes "
                << fmt_num(*m->drift_reference_ms()) << " ms\n";
  if (c.format == "json")
    std::cout << json_text(r.to_json(), 1) << '\n';
  else if (c.format == "csv")
    write_screen_csv(r, std::cout), print_screen_summary(r, std::cerr);
  else
    print_screen_table(r, std::cout);
}

Registrar reg(
    {"screen",
     "Screen a configuration space: rank with a source model, re-score the top K with a target model, "
     "apply budgets, print the Pareto set",
     [](CLI::App& app) {
       auto c = std::make_shared<ScreenCmd>();
       c->src.add(app);
       app.add_option("--source-model", c->source_model, "model bundle that ranks the whole space (stage 1)")
           ->required();
       app.add_option("--target-model", c->target_model,
                      "model bundle of the deployment platform that re-scores the shortlist (stage 2)");
       app.add_option("--rank-by", c->rank_by,
                      "energy | latency | memory (lower is better); default: energy when the models predict "
                      "it, else latency");
       c->top_k_opt = app.add_option("--top-k", c->top_k,
                                     "shortlist size (default 100 with --target-model; with one model "
                                     "no cut unless given)")
                          ->check(in_range(1, std::numeric_limits<int>::max()));
       c->energy_opt = app.add_option("--energy-max", c->energy_max, "energy budget, J per batch")->check(in_range(1e-9, 1e15));
       c->latency_opt = app.add_option("--latency-max", c->latency_max, "latency budget, ms per batch")->check(in_range(1e-9, 1e15));
       c->memory_opt = app.add_option("--memory-max", c->memory_max, "peak memory budget, MB")->check(in_range(1e-9, 1e15));
       c->confidence_opt = app.add_option("--confidence", c->confidence,
                                          "accept only when the upper bound at this coverage "
                                          "(0.8, 0.9, 0.95, 0.99) meets every budget")
                               ->check(confidence_level());
       auto* validate = app.add_option("--validate", c->validate_csv,
                      "dataset CSV measured on the target platform: check the budget decisions on the "
                      "configurations the target model did not train on");
       app.add_flag("--validate-include-trained", c->include_trained,
                    "also validate on configurations the model trained on (optimistic)")
           ->needs(validate);
       app.add_option("--capacity", c->capacity,
                      "also maximize this capacity in the Pareto set: gflops (forward GFLOPs per image) "
                      "or params; without it the set minimizes the costs alone")
           ->check(CLI::IsMember({"gflops", "params"}));
       add_format(app, c->format, {"table", "json", "csv"});
       app.callback([c] { run(*c); });
     }});

}  // namespace
}  // namespace carb::cli
