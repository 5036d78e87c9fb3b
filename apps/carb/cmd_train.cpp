// `carb train`: fit the CARB cascade on measured data and save a model bundle.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "carb/error.hpp"
#include "carb/text_table.hpp"
#include "carb/training.hpp"
#include "cli.hpp"

namespace carb::cli {
namespace {

struct TrainCmd {
  TrainJob job;
  std::vector<std::string> data, remeasured;
  std::string format;
  bool no_correctors = false, no_cascade = false, raw_target = false, fast = false;
};

void print(const TrainSummary& s) {
  std::cout << "trained " << printable(s.platform) << " model on " << s.train_rows << " rows in " << fmt_num(s.train_seconds, 3)
            << " s -> " << printable(s.model.string()) << "\n";
  TextTable t({"target", "R2", "MAE", "RMSE", "MAPE %", "form", "blend weights"});
  for (const auto& [target, m] : s.test_metrics) {
    std::string w;
    if (const auto it = s.blend_weights.find(target); it != s.blend_weights.end())
      for (const auto& [k, v] : it->second) w += k + "=" + fmt_num(v, 2) + " ";
    const auto c = s.oof_components.find(target);
    t.add({target, fmt_num(m.r2, 4), fmt_num(m.mae, 4), fmt_num(m.rmse, 4), fmt_num(m.mape, 3),
           c == s.oof_components.end() ? "plain" : to_string(c->second.form.chosen), w});
  }
  if (s.test_rows == 0) {  // an empty table said nothing (nineteenth hostile pass)
    std::cout << "no rows held out (the test fraction leaves none of " << s.train_rows
              << " rows): no held-out accuracy to show\n";
    return;
  }
  std::cout << "held-out " << s.test_rows << " rows:\n";
  t.print(std::cout);
  if (!s.remeasured_factor_90.empty()) {
    std::cout << "intervals add the spread of an independent re-measurement (" << s.remeasured_pairs
              << " configurations measured in both runs; at 90%:";
    for (const auto& [target, f] : s.remeasured_factor_90) std::cout << " " << target << " x" << fmt_num(f, 3);
    std::cout << ")\n";
  }
  // What the bundle knows of its device (a hostile tester: nothing showed the power limit read from
  // the data's provenance, or that none was).
  // Nor that no memory was: a store begun by an older carb records none, and a model without one
  // passes any peak (a hostile tester).
  const bool energy = std::find(s.targets.begin(), s.targets.end(), "energy_j") != s.targets.end();
  std::cout << "device:";
  if (s.device.memory_mb)
    std::cout << " memory " << fmt_num(*s.device.memory_mb, 10)
              << (s.device_memory_given ? " MB (given)," : " MB (the data's provenance),");
  else
    std::cout << " memory unknown (the data's provenance records none for every row; --device-memory-mb gives it),";
  if (s.device.power_limit_w)
    std::cout << " power limit " << fmt_num(*s.device.power_limit_w, 10) << " W (the data's provenance)";
  else if (energy)
    std::cout << " no power limit (the data's provenance records none for its rows' protocol)";
  else
    std::cout << " no power limit (no energy to hold to one)";
  std::cout << '\n';
  for (const auto& w : s.warnings) std::cout << "warning: " << w << '\n';
}

Registrar reg({"train", "Train the CARB cascade (memory -> energy -> latency) on measured data; save a model bundle",
               [](CLI::App& app) {
                 auto c = std::make_shared<TrainCmd>();
                 auto& o = c->job.options;
                 app.add_option("--data", c->data, "dataset CSV(s) of one platform")->required();
                 app.add_option("--out", c->job.out,
                                "model bundle directory to write; an earlier carb bundle there is replaced "
                                "atomically, anything else is refused")
                     ->required();
                 app.add_flag("--force", c->job.force, "replace whatever is at --out, even if it is not a carb bundle");
                 app.add_option("--remeasured", c->remeasured,
                                "an independent re-measurement of some of the data's configurations (same "
                                "platform, at least 20 in common; another protocol is warned of): how far it lands from the data is "
                                "added to every interval, which then holds a new measurement, not only a held-out "
                                "row of the training campaign");
                 app.add_option("--device-memory-mb", c->job.device_memory_mb,
                                "the device's memory (e.g. the capacity a CUDA out-of-memory error states): "
                                "recorded in the bundle, so that predictions needing more are said not to fit "
                                "and recommend never picks them; by default the memory the data's provenance "
                                "records (the machine's, for the cpu backend; the power limit is read from there too)")
                     ->check(in_range(kMinDeviceMemoryMb, kMaxDeviceMemoryMb));
                 app.add_option("--seed", o.seed, "seed for the split, folds and learners")->capture_default_str();
                 app.add_flag("--drift-correct", c->job.drift_correct,
                              "learn latency corrected for host-speed drift, from the reference_ms column of data "
                              "profiled with --reference");
                 app.add_option("--test-fraction", c->job.test_fraction, "held-out share of rows")
                     ->capture_default_str()->check(in_range(0.0, 0.9));
                 app.add_option("--learners", o.learners, "learners to blend (space- or comma-separated)")->delimiter(',')->capture_default_str()
                     ->check(CLI::IsMember(learner_kinds()));
                 auto* trees = app.add_option("--trees", o.params.n_trees, "trees per learner (0 = paper defaults: 800/800/400)")
                     ->capture_default_str()->check(in_range(0, 100000));
                 app.add_option("--threads", o.params.threads, "threads for the learners")->capture_default_str()
                     ->check(in_range(1, 1024));
                 auto* folds = app.add_option("--folds", o.folds, "folds for out-of-fold predictions")->capture_default_str()
                     ->check(in_range(2, 50));
                 auto* lambda = app.add_option("--lambda", o.lambda, "damping of the low-batch corrector")->capture_default_str()
                     ->check(in_range(0.0, 1.0));
                 auto* max_batch = app.add_option("--corrector-max-batch", o.corrector_max_batch, "low-batch regime: batch <= this")
                     ->capture_default_str()->check(in_range(1, 1000000));
                 app.add_option("--size-bins", o.size_bins,
                                "interval widths per bin of the predicted value inside each batch regime (2: small "
                                "and large predictions apart, which held the H200's energy intervals near their "
                                "level in both halves; 1: one width per regime, as carb trained by default until "
                                "2026-12-06; README, \"Do intervals hold\")")
                     ->capture_default_str()->check(in_range(1, kMaxSizeBins));
                 auto* no_corr = app.add_flag("--no-correctors", c->no_correctors, "skip the low-batch residual correctors")
                     ->excludes(lambda)
                     ->excludes(max_batch);
                 app.add_flag("--fast", c->fast,
                              "for planning rounds and quick looks: " + std::to_string(kFastTrees) + " trees per learner, " +
                                  std::to_string(kFastFolds) + " folds, no correctors (about 5x faster; README, "
                                  "\"Training speed\", for what it costs)")
                     ->excludes(trees)->excludes(folds)->excludes(no_corr)->excludes(lambda)->excludes(max_batch);
                 app.add_flag("--no-cascade", c->no_cascade, "predict every target from the features alone");
                 app.add_flag("--telemetry", o.use_telemetry, "use telemetry features (needed again at predict time)");
                 app.add_flag("--raw-target", c->raw_target, "learn the raw target instead of its log");
                 app.add_option("--normalize", o.normalize,
                                "learn each target as a ratio to its fitted analytic estimate (FLOPs, bytes, "
                                "layers), so predictions past the trained ranges follow the physics: on | off | "
                                "auto (an out-of-fold comparison chooses per target)")
                     ->capture_default_str()
                     ->check(CLI::IsMember({"auto", "on", "off"}));
                 app.add_flag("--verbose", o.verbose, "progress lines on stderr");
                 add_format(app, c->format, {"table", "json"});
                 app.callback([c] {
                   for (const auto& d : c->data) c->job.data.emplace_back(d);
                   for (const auto& d : c->remeasured) c->job.remeasured.emplace_back(d);
                   auto& opt = c->job.options;
                   opt.correctors = !c->no_correctors, opt.cascade = !c->no_cascade, opt.log_target = !c->raw_target;
                   // The ratio form is a log-space form: a forced "on" was silently ignored (twentieth pass).
                   if (c->raw_target && opt.normalize == "on")
                     throw InputError("--normalize on learns log(y / estimate), which --raw-target turns off; give one");
                   if (c->fast) make_fast(opt);
                   // As --help says: the learners too (a hostile tester: --seed 1 and 2 gave byte-identical
                   // learners, seeded 42 whatever was asked).
                   opt.params.seed = opt.seed;
                   std::error_code ec;
                   const bool here = std::filesystem::weakly_canonical(c->job.out, ec) == std::filesystem::current_path(ec);
                   auto s = run_train_job(c->job);
                   if (c->format == "json") std::cout << json_text(s.to_json(), 2) << '\n';
                   else print(s);
                   // The bundle is swapped in whole, so a shell standing in the old one stands in a
                   // removed directory until it enters the path again.
                   if (here) std::cerr << "note: the bundle in the current directory was replaced; `cd .` to see it\n";
                 });
               }});

}  // namespace
}  // namespace carb::cli
