// `carb evaluate`: the paper's evaluation tables for a trained model on measured data —
// held-out accuracy, baselines, leave-one-batch-tier-out, telemetry ablation, components,
// feature importance and the residual study.
#include <iostream>

#include "carb/evaluate.hpp"
#include "cli.hpp"
#include "util/stop_signal.hpp"

namespace carb::cli {
namespace {

struct EvaluateCmd {
  std::filesystem::path model;
  std::vector<std::string> data;
  unsigned seed = 0;
  double test_fraction = 0;
  EvaluateOptions opts;
  std::string format;
};

Registrar reg(
    {"evaluate",
     "Evaluate a model on measured data: held-out R2/MAE/RMSE/MAPE, FLOPs and latency baselines, "
     "leave-one-batch-tier-out, telemetry ablation, components, importance, residual study, interval coverage",
     [](CLI::App& app) {
       auto c = std::make_shared<EvaluateCmd>();
       app.add_option("--model", c->model, "model bundle directory (from carb train)")->required();
       app.add_option("--data", c->data, "dataset CSV(s), the same as given to carb train")->required();
       auto* seed = app.add_option("--seed", c->seed, "split seed (default: the one the bundle recorded)");
       auto* frac = app.add_option("--test-fraction", c->test_fraction,
                                   "held-out share of rows, above 0 and below 1 (default: the one the bundle recorded)")
                        ->check(in_range(1e-6, 1 - 1e-6));
       app.add_flag("--external", c->opts.external,
                    "score every ok row of --data as held out (a file the model may not have seen); says how "
                    "many rows it trained on; skips the sections that need a training split");
       app.add_flag("--quick", c->opts.quick,
                    "skip the sections that retrain models (LOBTO, ablation, no-cascade)");
       app.add_option("--high-util", c->opts.high_util_threshold,
                      "residual study: avg_sm_util (%) above which a row is high-utilization")
           ->capture_default_str()
           ->check(in_range(0.0, 100.0));
       app.add_flag("--verbose", c->opts.verbose, "progress lines on stderr");
       add_format(app, c->format, {"table", "json"});
       app.callback([c, seed, frac] {
         if (*seed) c->opts.seed = c->seed;
         if (*frac) c->opts.test_fraction = c->test_fraction;
         std::vector<std::filesystem::path> files(c->data.begin(), c->data.end());
         // Ctrl-C stops it between sections with a line saying so (hundred-and-eleventh hostile pass:
         // it was killed without a word); one that came as it finished stops it before any output.
         const detail::StopOnSignals signals;
         const Evaluation e = run_evaluate(c->model, files, c->opts);
         detail::throw_if_stopped("evaluation", "nothing was written");
         if (c->format == "json")
           std::cout << json_text(e.to_json(), 2) << '\n';
         else
           render_evaluation_table(e, std::cout);
       });
     }});

}  // namespace
}  // namespace carb::cli
