// `carb predict`: predicted peak memory, energy and latency for configurations.
#include <algorithm>
#include <cmath>
#include <iostream>

#include "carb/prediction_io.hpp"
#include "carb/screen.hpp"
#include "carb/text_table.hpp"
#include "config_flags.hpp"

namespace carb::cli {
namespace {

struct PredictCmd {
  std::string model, format;
  SourceFlags src;
  ConfigFlags cfg;
  double confidence = 0;
};

void run(const PredictCmd& c) {
  if (!c.src.shard_spec.empty() && !c.src.given())
    throw InputError("--shard k/N splits a --preset or --configs list; give one, or drop --shard");
  if (c.src.given() && c.cfg.any_given())
    throw InputError("give either --preset/--configs or the single-configuration flags, not both");
  auto configs = c.src.given() ? c.src.load() : std::vector<Config>{c.cfg.config()};
  // A header-only --configs printed nothing and exited 0 (screen refuses the same file).
  if (configs.empty()) throw InputError("nothing to predict: no configurations were given");
  const CarbModel m = CarbModel::load(c.model);
  // A telemetry model answers from utilization measured for each configuration: the CSV's own
  // avg_sm_util and avg_mem_util columns (a shard of them would lose the pairing: not offered).
  std::vector<Telemetry> tel;
  if (m.schema().telemetry && !c.src.configs.empty() && c.src.shard_spec.empty()) {
    configs.clear();
    for (const Record& r : read_utilization_csv(c.src.configs)) {
      configs.push_back(r.config);
      tel.push_back({r.avg_sm_util, r.avg_mem_util});
    }
  }
  const std::optional<double> level = c.confidence > 0 ? std::optional<double>(c.confidence) : std::nullopt;
  const auto p = m.predict(configs, tel, level);
  // An unbounded interval inside the trained ranges: the level needs more training rows than the
  // model's batch regime has (seventeenth hostile pass: h200 at 0.99 printed [0, inf] without a word).
  // Thirty-sixth hostile pass: a cost at or below zero (a raw-target model's answer, inside the
  // trained ranges too) was printed unflagged, and its unbounded interval blamed on too few rows.
  const auto nonpositive = [](const Prediction& x) {
    return std::any_of(x.value.begin(), x.value.end(), [](const auto& tv) { return !within_any_budget(tv.second); });
  };
  const auto n_nonpositive = std::count_if(p.begin(), p.end(), nonpositive);
  if (n_nonpositive > 0)
    std::cerr << "note: " << n_nonpositive << " prediction" << (n_nonpositive == 1 ? " is" : "s are")
              << " at or below zero, which is no cost a configuration has (a raw-target model's sums can dip below "
                 "zero; an answer no device could measure, past 10 PFLOP/s or 5 TFLOP/J, is shown as 0): read them as "
                 "unknown; no budget accepts them"
              << (level ? " and their intervals are unbounded" : "") << "\n";
  const auto unbounded = [&](const Prediction& x) {
    return !nonpositive(x) &&
           std::any_of(x.interval.begin(), x.interval.end(), [](const auto& iv) { return std::isinf(iv.second.second); });
  };
  // Inside the ranges, per configuration: of an architecture never trained? A new network's interval
  // needs networks, not rows: counted apart when the model calibrates them.
  std::size_t unseen = 0, unbounded_inside = 0, unbounded_new = 0;
  const bool calibrated = m.calibrates_unseen_architectures();
  for (const Prediction& x : p) {
    if (!x.outside.empty()) continue;
    const bool new_architecture = !x.trained_architecture;
    unseen += new_architecture;
    if (unbounded(x)) ++(new_architecture && calibrated ? unbounded_new : unbounded_inside);
  }
  // The finite-sample rule: a level needs ceil(level / (1 - level)) draws, rows per regime or networks.
  const int needed = draws_needed(c.confidence);
  // Fifty-eighth hostile pass: outside the trained ranges, [0, inf] was printed without a word.
  const auto unbounded_outside =
      std::count_if(p.begin(), p.end(), [&](const Prediction& x) { return !x.outside.empty() && unbounded(x); });
  if (unbounded_outside > 0)
    std::cerr << "note: " << unbounded_outside << " prediction" << (unbounded_outside == 1 ? "" : "s")
              << " outside the trained ranges " << (unbounded_outside == 1 ? "has" : "have") << " no upper bound at "
              << fmt_num(c.confidence * 100, 3)
              << "%: " << unbounded_causes(c.confidence, m.unseen_calibration_networks())
              << "; read such an interval as unknown\n";
  if (unbounded_inside > 0)
    std::cerr << "note: " << unbounded_inside << " prediction" << (unbounded_inside == 1 ? "" : "s")
              << " inside the trained ranges " << (unbounded_inside == 1 ? "has" : "have") << " no upper bound at " << fmt_num(c.confidence * 100, 3)
              << "%: the model has too few training rows per batch regime to bound that level (a "
              << fmt_num(c.confidence * 100, 3) << "% interval needs " << needed
              << " per regime); a lower --confidence may bound them\n";
  if (level && unseen > 0)
    std::cerr << "note: " << unseen << " of " << p.size() << " configurations inside the trained ranges "
              << (unseen == 1 ? "is of an architecture" : "are of architectures")
              << " (family, depth, width, precision) the model never trained on: "
              << (calibrated
                      ? std::string(unseen == 1 ? "its interval is" : "their intervals are") +
                            " calibrated by holding whole architectures out of training"
                      : std::string("this model has no intervals calibrated for that (it predates them, or trained on "
                                    "fewer than 3 architectures), so ") +
                            (unseen == 1 ? "its interval" : "theirs") + " may hold the measurement less often than stated")
              << "\n";
  if (unbounded_new > 0)
    std::cerr << "note: " << unbounded_new << " prediction" << (unbounded_new == 1 ? "" : "s")
              << " inside the trained ranges, of architectures never trained, " << (unbounded_new == 1 ? "has" : "have")
              << " no upper bound at " << fmt_num(c.confidence * 100, 3) << "%: a new network's "
              << fmt_num(c.confidence * 100, 3) << "% interval needs " << needed << " trained networks, and the model has "
              << m.unseen_calibration_networks()
              << " (or its rows per batch regime are too few for that level); a lower --confidence may bound them\n";
  if (m.drift_reference_ms())
    std::cerr << "note: drift-corrected model: latency is predicted at the host speed where the reference network takes "
              << fmt_num(*m.drift_reference_ms()) << " ms\n";
  if (c.format == "json") {
    std::cout << predictions_to_json(p, m, level).dump(1) << '\n';
  } else if (c.format == "csv") {
    write_predictions_csv(p, m.targets(), std::cout, nullptr, level);
  } else {
    std::vector<std::string> head = {"configuration"};
    // The bounds' coverage beside each target (twenty-sixth hostile pass: the table did not say).
    for (const auto& t : m.targets())
      head.push_back(level ? t + " [" + fmt_num(*level * 100, 3) + "% interval]" : t);
    const bool any_outside = std::any_of(p.begin(), p.end(), [](const Prediction& x) { return !x.outside.empty(); });
    const bool any_new = std::any_of(p.begin(), p.end(), [](const Prediction& x) { return !x.trained_architecture; });
    if (any_new) head.push_back(kNewNetworkColumn);
    if (any_outside) head.push_back("outside the trained ranges (a guess)");
    TextTable t(head);
    for (const auto& x : p) {
      std::vector<std::string> row = {config_key(x.config)};
      for (const auto& tg : m.targets()) {
        std::string cell = fmt_num(x.value.at(tg));
        if (x.interval.count(tg))
          cell += " [" + fmt_num(x.interval.at(tg).first) + ", " + fmt_num(x.interval.at(tg).second) + "]";
        row.push_back(cell);
      }
      if (any_new) row.push_back(x.trained_architecture ? "" : "yes");
      if (any_outside) row.push_back(outside_text(x.outside));
      t.add(row);
    }
    t.print(std::cout);
  }
}

Registrar reg({"predict", "Predict peak memory, energy and latency of configurations with a trained model",
               [](CLI::App& app) {
                 auto c = std::make_shared<PredictCmd>();
                 app.add_option("--model", c->model, "model bundle directory (from carb train)")->required();
                 c->src.add(app);
                 c->cfg.add(app);
                 app.add_option("--confidence", c->confidence, "add split-conformal intervals at this coverage (0.8, 0.9, 0.95 or 0.99)")
                     ->check(confidence_level());
                 add_format(app, c->format, {"table", "csv", "json"});
                 app.callback([c] { run(*c); });
               }});

}  // namespace
}  // namespace carb::cli
