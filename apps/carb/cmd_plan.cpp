// `carb plan`: which configurations to measure next, and in what order (see carb/plan.hpp).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <memory>
#include <set>
#include <string>

#include "carb/dataset.hpp"
#include "carb/model.hpp"
#include "carb/plan.hpp"
#include "carb/text_table.hpp"
#include "config_flags.hpp"
#include "progress_line.hpp"
#include "util/repeated_files.hpp"
#include "util/stop_signal.hpp"

namespace carb::cli {
namespace {

struct PlanCmd {
  std::string model, out, strategy, spread = "units", format = "table", util = "all";
  std::vector<std::string> exclude;
  SourceFlags src;
  PlanOptions o;
  long long count = 0;
  double budget_s = 0;
  bool force = false;
};

void run(PlanCmd& c, CLI::App& app) {
  if (app.count("--count") == 0 && app.count("--budget-s") == 0)
    throw InputError("say how much to plan: give --count N or --budget-s SECONDS (or both)");
  if (app.count("--count")) c.o.count = static_cast<std::size_t>(c.count);
  if (app.count("--budget-s")) c.o.budget_s = c.budget_s;
  // Without a model: stratified, which started the simulated loop above random (R² 0.9748 against
  // 0.9730 at 50 rows, 5 seeds) where maximin's corners fell below it (0.9675).
  if (c.strategy.empty()) c.strategy = c.model.empty() ? "stratified" : "uncertainty";
  c.o.strategy = parse_plan_strategy(c.strategy);
  c.o.spread = parse_spread_space(c.spread);
  // The library sees values, so a flag given at its default value passed where any other was
  // refused (ninety-seventh hostile pass: --diversity 1 without a model); the CLI sees the flag.
  if (c.o.strategy != PlanStrategy::uncertainty && c.o.strategy != PlanStrategy::uncertainty_per_cost)
    for (const char* flag : {"--diversity", "--spread"})
      if (app.count(flag))
        throw InputError(std::string(flag) + " weighs the model's uncertainty, which only the uncertainty strategies "
                         "rank by; " + to_string(c.o.strategy) + " would ignore it: leave it out");
  // Without a model no row has a predicted latency, so nothing is priced: the protocol's flags
  // would change nothing (twenty-fourth hostile pass: --warmup 50 was taken and ignored).
  if (c.model.empty())
    for (const char* flag : {"--backend", "--warmup", "--min-passes", "--max-passes", "--max-timed-s", "--cooldown",
                             "--reference", "--min-energy-window", "--util-window", "--util"})
      if (app.count(flag))
        throw InputError(std::string(flag) + " prices the measuring time from a model's predicted latency; without "
                         "--model the plan has no costs: give --model or leave it out");
  // The windows only the cuda backend measures: given for cpu, they would price nothing.
  c.o.protocol.util_sample = util_share(c.util);
  for (const char* flag : {"--min-energy-window", "--util-window", "--util"})
    if (app.count(flag) && c.o.backend != "cuda")
      throw InputError(std::string(flag) + " prices a window only the cuda backend measures; give --backend cuda or "
                       "leave it out");

  std::vector<std::filesystem::path> inputs(c.exclude.begin(), c.exclude.end());
  detail::refuse_repeated_files(inputs, "--exclude");  // ninety-seventh hostile pass: taken silently
  if (!c.model.empty()) inputs.emplace_back(c.model);
  if (!c.src.configs.empty()) inputs.emplace_back(c.src.configs);
  check_plan_output(c.out, inputs, c.force);

  const auto candidates = c.src.load();
  if (candidates.empty()) throw InputError("nothing to plan: no candidate configurations were given; " + c.out + " was not written");
  std::unique_ptr<CarbModel> model;
  if (!c.model.empty()) model = std::make_unique<CarbModel>(CarbModel::load(c.model));
  // Measured on the platform being planned, when the model says which (thirty-third hostile pass:
  // cpu-2t rows in --exclude were counted as already measured for an h200 plan without a word).
  std::vector<Config> measured;
  for (const auto& f : c.exclude) {
    const auto m = read_configs_csv(f);
    const auto platforms = read_config_platforms_csv(f);
    std::size_t other = 0;
    std::set<std::string> which;
    for (std::size_t i = 0; i < m.size(); ++i) {
      if (model && !platforms[i].empty() && platforms[i] != model->platform()) {
        ++other, which.insert(platforms[i]);
        continue;
      }
      measured.push_back(m[i]);
    }
    if (other > 0) {
      std::string names;
      for (const auto& p : which) names += (names.empty() ? "'" : ", '") + printable(p) + "'";
      std::cerr << "note: " << other << " row" << (other == 1 ? "" : "s") << " of " << printable(f) << " (platform "
                << names << ") " << (other == 1 ? "is" : "are") << " not of the model's platform '"
                << printable(model->platform()) << "' and " << (other == 1 ? "was" : "were")
                << " not counted as measured\n";
    }
  }
  // Progress on stderr once choosing takes more than a second (a space-filling plan of 50,000 rows
  // among 100,000 candidates took half a minute without a word): a terminal's line redrawn, a log's
  // line every 30 s.
  PlanOptions o = c.o;
  // SIGINT/SIGTERM stop the choosing at the next row, nothing written (ninety-sixth hostile pass:
  // they ended it without a word).
  detail::StopOnSignals signals;
  ProgressLine tell("plan", "no plan was written; what was at --out is unchanged");
  o.progress = [&](std::size_t planned, std::size_t wanted) {
    tell([&] { return std::to_string(planned) + " of at most " + std::to_string(wanted) + " rows chosen"; });
  };
  // And while the model predicts the candidates, before the first row (a minute for 100,000 of them).
  o.scoring = [&](const char* pass, std::size_t predicted, std::size_t of) {
    tell([&] {
      return std::to_string(predicted) + " of " + std::to_string(of) + " candidates predicted (" + pass + ")";
    });
  };
  const Plan p = make_plan(candidates, measured, model.get(), o);
  tell.finish(std::to_string(p.rows.size()) + " rows chosen");
  if (p.priced) {
    std::string unknown;
    if (const std::string w = model_protocol_departure(*model, c.o.protocol, c.o.backend, &unknown); !w.empty())
      std::cerr << "carb: warning: " << printable(w) << '\n';
    else if (!unknown.empty())  // a hostile tester: "settings match" and "could not check" looked alike
      std::cerr << "note: " << printable(unknown) << ": the plan's protocol settings are not compared with those "
                << "the model's data was measured with\n";
  }
  // An empty plan is one `profile --plan` refuses: say why here, and keep an earlier plan at --out.
  if (p.rows.empty())
    throw InputError(p.over_device_memory > 0 && p.excluded + p.over_device_memory == p.candidates
                         ? "nothing to plan: of the " + std::to_string(p.candidates) + " candidates, " +
                               std::to_string(p.excluded) + " are excluded or trained on and the other " +
                               std::to_string(p.over_device_memory) + " would not fit the device's memory; " + c.out +
                               " was not written"
                     : p.excluded == p.candidates
                         ? "nothing to plan: all " + std::to_string(p.candidates) +
                               " candidates are excluded or trained on; " + c.out + " was not written"
                         // Thirty-sixth hostile pass: when no candidate's time could be predicted at all, the
                         // budget was blamed.
                         : p.unknown_cost + p.excluded == p.candidates
                             ? "nothing to plan: the measuring time of none of the " +
                                   std::to_string(p.unknown_cost) + " candidates can be predicted (the model's "
                                   "latency is at or below zero, or not a number, for each), so none fits a --budget-s; " +
                                   c.out + " was not written"
                             : "nothing to plan: no candidate fits within --budget-s " + fmt_num(c.budget_s) + " s" +
                                   (c.o.build_s > 0 ? " with --build-s " + fmt_num(c.o.build_s) + " s for its network"
                                                    : std::string()) +
                                   "; " + c.out + " was not written");
  // What --force replaces that the checks without it refused is kept beside it (fifty-seventh hostile pass).
  write_plan_csv(p, std::filesystem::path(c.out), command_line(), [&] {
    keep_what_force_replaces(c.out, c.force, [&](bool f) { check_plan_output(c.out, inputs, f); });
  });
  if (c.format == "json") {
    nlohmann::json j = p.to_json();
    j["out"] = c.out;
    std::cout << json_text(j, 1) << '\n';
    return;
  }
  // A README walkthrough: "(1566 already measured)" counted the model's training split, not every
  // row measured; what the count holds is said.
  const std::string out_because = c.model.empty() ? " already measured"
                                  : c.exclude.empty() ? " the model trained on"
                                                      : " measured or trained on";
  std::cout << "planned " << p.rows.size() << " of " << p.candidates << " configurations (" << p.excluded
            << out_because << ") by " << to_string(p.strategy);
  if (std::isfinite(p.total_cost_s)) std::cout << ", predicted measuring time " << fmt_num(p.total_cost_s, 4) << " s";
  else if (c.model.empty() == false)
    std::cout << ", predicted measuring time unknown (" << p.planned_unknown_cost() << " of the planned rows' latency is not "
              << "positive)";
  std::cout << " -> " << printable(c.out) << '\n';
  // What the time counts (hundred-and-seventeenth hostile pass: a plan of 0.045 s took 0.58 s to
  // measure, most of it the networks' builds and the profiler's own work, without a word).
  if (std::isfinite(p.total_cost_s) && c.o.build_s <= 0)
    std::cout << "note: the predicted measuring time counts each row's warm-up, timed passes and cool-down at the "
                 "model's latency; building each network and the profiler's own work per configuration are not "
                 "counted (--build-s prices a build; on a CPU they can take longer than small rows' passes)\n";
  if (p.over_device_memory)
    std::cout << "note: " << p.over_device_memory << " candidate" << (p.over_device_memory == 1 ? " was" : "s were")
              << " left out: the model predicts more peak memory than its device has (" << fmt_num(*model->device_limits().memory_mb, 10)
              << " MB), so measuring would spend time on an out-of-memory row\n";
  if (p.unknown_cost)
    std::cout << "note: " << p.unknown_cost << " candidate" << (p.unknown_cost == 1 ? " was" : "s were")
              << " passed over: the model predicts no positive latency for them, so their measuring time is unknown "
                 "and cannot be counted against --budget-s\n";
  if (p.nonpositive_predictions)
    std::cout << "note: the model predicts a cost at or below zero for " << p.nonpositive_predictions << " of the "
              << p.candidates - p.excluded << " candidates (" << p.planned_nonpositive() << " of them planned): an "
              << "impossible value, so there their score says where the model is wrong, not how unsure it is\n";
  // A hostile tester: basic-200-w8-r1024-b4096 was planned first at a predicted 2.1e8 s (6.6 years) of
  // measuring on a 2-core VM, with the generic outside note alone.
  if (const auto slow = p.rows_longer_than(3600); !slow.empty()) {
    const auto longest = *std::max_element(slow.begin(), slow.end(), [&](std::size_t a, std::size_t b) {
      return p.rows[a].cost_s < p.rows[b].cost_s;
    });
    const double s = p.rows[longest].cost_s;
    std::cout << "note: " << slow.size() << " of the " << p.rows.size() << " planned rows "
              << (slow.size() == 1 ? "is predicted to take more than an hour to measure ("
                                   : "are predicted to take more than an hour each to measure (the longest, ")
              << config_key(p.rows[longest].config) << ", " << fmt_num(s, 3) << " s, about "
              << (s >= 86400 * 2 ? fmt_num(s / 86400, 3) + " days" : fmt_num(s / 3600, 3) + " hours")
              << (c.budget_s ? "): leave such configurations out of the space, or lower --budget-s\n"
                             : "): leave such configurations out of the space, or give --budget-s to keep the plan "
                               "within a time\n");
  }
  if (const std::size_t n = p.rows_outside())
    std::cout << "note: " << n << " of the " << p.rows.size() << " planned rows " << (n == 1 ? "lies" : "lie")
              << " outside the ranges the model trained on (its "
              << "\"outside\" column): their predicted latency and cost are guesses\n";
}

Registrar reg({"plan", "Choose the configurations to measure next: most informative per second of measuring",
               [](CLI::App& app) {
                 auto c = std::make_shared<PlanCmd>();
                 app.add_option("--model", c->model,
                                "model bundle (from carb train) whose uncertainty and latency guide the plan; "
                                "without one the plan stratifies the space");
                 c->src.add(app);
                 app.add_option("--count", c->count, "rows to plan at most")->check(in_range(1, 1e9));
                 app.add_option("--budget-s", c->budget_s, "predicted seconds of measuring at most (needs --model)")
                     ->check(in_range(1e-9, 1e12));
                 app.add_option("--build-s", c->o.build_s,
                                "seconds to build a network, counted once per architecture in the plan (as `profile "
                                "--group-architectures` measures it; about 2.8 on the H200; needs --model): in each "
                                "row's cost and against --budget-s; rows are ranked by their own cost, since a build "
                                "serves every later row of its network")
                     ->capture_default_str()->check(in_range(0.0, 1e6));
                 app.add_option("--exclude", c->exclude,
                                "CSV(s) of configurations already measured (a dataset, a plan or a configuration "
                                "list): never planned");
                 app.add_option("--strategy", c->strategy,
                                "uncertainty | uncertainty-per-cost | space-filling | stratified | random (default: "
                                "uncertainty with --model, stratified without)")
                     ->check(CLI::IsMember(plan_strategy_names()));
                 app.add_option("--spread", c->spread, "measure the model's spread in the targets' units or in log space")
                     ->capture_default_str()->check(CLI::IsMember({"units", "log"}));
                 app.add_option("--diversity", c->o.diversity,
                                "near-duplicate radius in typical spacings of the candidates (0 = off)")
                     ->capture_default_str()->check(in_range(0.0, 100.0));
                 app.add_option("--seed", c->o.seed, "seed for the random order and for ties")->capture_default_str();
                 auto& p = c->o.protocol;
                 app.add_option("--backend", c->o.backend, "backend the plan will be measured on (cpu | cuda)")
                     ->capture_default_str()->check(CLI::IsMember({"cpu", "cuda"}));
                 app.add_option("--warmup", p.warmup, "the protocol's warm-up passes")->capture_default_str()->check(in_range(0, 100000));
                 app.add_option("--min-passes", p.min_passes, "the protocol's timed passes at least")->capture_default_str()->check(in_range(1, 1000000));
                 app.add_option("--max-passes", p.max_passes, "the protocol's timed passes at most")->capture_default_str()->check(in_range(1, 1000000));
                 app.add_option("--max-timed-s", p.max_timed_s, "the protocol's timing limit per configuration (0 = off)")->capture_default_str()->check(in_range(0.0, 1e6));
                 app.add_option("--cooldown", p.cooldown_s, "the protocol's pause between configurations")->capture_default_str()->check(in_range(0.0, 3600.0));
                 app.add_flag("--reference", p.reference, "the protocol times the reference network before every pass");
                 // Twenty-third hostile pass: cuda rows were priced with profile's default windows, whatever
                 // the campaign would measure under.
                 app.add_option("--min-energy-window", p.min_energy_window_s, "the protocol's energy window at least, s (cuda)")->capture_default_str()->check(in_range(0.0, 3600.0));
                 app.add_option("--util-window", p.util_window_s, "the protocol's utilization window, s (cuda)")->capture_default_str()->check(in_range(0.0, 3600.0));
                 app.add_option("--util", c->util, "the protocol's utilization sampling: all | none | sample:P (cuda; as profile's)")->capture_default_str();
                 app.add_option("--out", c->out, "plan CSV to write, with its provenance beside it as .json (never an input; an earlier plan carb wrote is replaced, an edited one only with --force)")->required();
                 app.add_flag("--force", c->force, "replace whatever is at --out, even if it is not a plan");
                 add_format(app, c->format, {"table", "json"});
                 app.callback([c, &app] { run(*c, app); });
               }});

}  // namespace
}  // namespace carb::cli
