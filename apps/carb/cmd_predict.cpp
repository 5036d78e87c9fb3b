// `carb predict`: predicted peak memory, energy and latency for configurations.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include "carb/prediction_io.hpp"
#include "carb/prediction_notes.hpp"
#include "carb/screen.hpp"
#include "carb/text_table.hpp"
#include "config_flags.hpp"
#include "util/stop_signal.hpp"

namespace carb::cli {
namespace {

struct PredictCmd {
  std::string model, format;
  SourceFlags src;
  ConfigFlags cfg;
  double confidence = 0;
};

// Ninety-first hostile pass: a million configurations ran for minutes with nothing written and no
// word of progress, and a kill lost everything. They are predicted kPredictChunk at a time; a CSV
// is written as each chunk is answered, and from kProgressFrom configurations on, stderr says how
// far it has come (a terminal's line redrawn, a log's line every 30 s).
constexpr std::size_t kProgressFrom = 50000;

std::vector<Prediction> predict_in_chunks(const CarbModel& m, const std::vector<Config>& configs,
                                          const std::vector<Telemetry>& tel, std::optional<double> level, bool csv) {
  std::vector<Prediction> all;
  all.reserve(configs.size());
  // Ninety-sixth hostile pass: SIGINT/SIGTERM ended a streamed CSV between chunks with whole rows
  // and no word, an answer that looked complete. A signal now stops after the chunk being answered,
  // and says how much of the output there is (run() holds the signals).
  const bool tty = isatty(STDERR_FILENO) != 0, progress = configs.size() >= kProgressFrom;
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  if (progress && !tty)
    std::cerr << "carb predict: " << configs.size() << " configurations, " << kPredictChunk << " at a time\n";
  m.predict_chunked(configs, tel, level, [&](std::vector<Prediction>&& p, std::size_t at) {
    const std::size_t end = at + p.size();
    if (csv) {
      std::ostringstream rows;
      write_predictions_csv(p, m.targets(), rows, nullptr, level, held_device(m));
      const std::string text = rows.str();
      std::cout << (at == 0 ? text : text.substr(text.find('\n') + 1)) << std::flush;  // one header
    }
    all.insert(all.end(), std::make_move_iterator(p.begin()), std::make_move_iterator(p.end()));
    if (detail::stop_signal() != 0 && (end < configs.size() || !csv)) {  // a table: nothing printed yet
      if (progress && tty) std::cerr << '\n';
      // Ninety-eighth hostile pass: with standard output failing (a full disk, closed) it claimed the
      // answers it could not write.
      const std::string kept = !csv ? "nothing was written"
                               : std::cout.good()
                                   ? "the output is incomplete: it holds the answers for the first " + std::to_string(end) +
                                         " of " + std::to_string(configs.size()) + " configurations"
                                   : "standard output could not be written either: it holds none or part of the answers";
      detail::throw_if_stopped("predict", kept.c_str());
    }
    const auto now = std::chrono::steady_clock::now();
    if (!progress || (end < configs.size() && std::chrono::duration<double>(now - last).count() < (tty ? 0.2 : 30.0)))
      return true;
    last = now;
    const double s = std::chrono::duration<double>(now - start).count();
    std::cerr << (tty ? "\r" : "") << "carb predict: " << end << " of " << configs.size() << " configurations, "
              << fmt_num(s, 3) << " s" << (tty && end < configs.size() ? "" : "\n") << std::flush;
    return true;
  }, kPredictChunk);
  return all;
}

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
  // Held until the output is whole (hundred-and-first hostile pass: a JSON or table being written
  // when the signal came was cut mid-token, without a word): a signal stops the work between chunks,
  // before a JSON or table is written, or once the output is whole, and says which.
  const detail::StopOnSignals signals;
  const auto p = predict_in_chunks(m, configs, tel, level, c.format == "csv");
  std::ostringstream text;  // a JSON or table, built whole before a byte of it is written
  // Costs no configuration has, intervals with no upper bound and why, networks never measured: the
  // same count and words as Python's warnings (carb/prediction_notes.hpp).
  for (const PredictionNote& n : prediction_note_lines(count_prediction_notes(p, m), m, level, "--confidence"))
    std::cerr << "note: " << n.text << "\n";
  if (m.drift_reference_ms())
    std::cerr << "note: drift-corrected model: latency is predicted at the host speed where the reference network takes "
              << fmt_num(*m.drift_reference_ms()) << " ms\n";
  if (c.format == "json") {
    text << json_text(predictions_to_json(p, m, level), 1) << '\n';
  } else if (c.format == "csv") {
    // Written as predicted (predict_in_chunks).
  } else {
    std::vector<std::string> head = {"configuration"};
    // The bounds' coverage beside each target (twenty-sixth hostile pass: the table did not say).
    for (const auto& t : m.targets())
      head.push_back(level ? t + " [" + fmt_num(*level * 100, 3) + "% interval]" : t);
    const bool any_outside = std::any_of(p.begin(), p.end(), [](const Prediction& x) { return !x.outside.empty(); });
    const bool any_new = std::any_of(p.begin(), p.end(), [](const Prediction& x) { return !x.trained_architecture; });
    // Which rows the device notes count (a hostile tester: the table had only the count on stderr).
    const DeviceLimits device = held_device(m);
    const auto beyond = [&](const Prediction& x) { return beyond_device_text(x, device); };
    const bool any_beyond = std::any_of(p.begin(), p.end(), [&](const Prediction& x) { return !beyond(x).empty(); });
    if (any_new) head.push_back(kNewNetworkColumn);
    if (any_beyond) head.push_back("beyond the device");
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
      if (any_beyond) row.push_back(beyond(x));
      if (any_outside) row.push_back(outside_text(x.outside));
      t.add(row);
    }
    t.print(text);
  }
  if (c.format != "csv") {
    detail::throw_if_stopped("predict", "nothing was written");
    std::cout << text.str() << std::flush;
  }
  const std::string whole = "the output is whole: it holds the answers for all " + std::to_string(p.size()) +
                            " configurations";
  detail::throw_if_stopped("predict", std::cout.good() ? whole.c_str()
                                                       : "standard output could not be written either: it holds none "
                                                         "or part of the answers");
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
