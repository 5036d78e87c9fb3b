// `carb train` as a library function.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "carb/drift.hpp"
#include "carb/error.hpp"
#include "carb/metrics.hpp"
#include "carb/text_table.hpp"
#include "carb/training.hpp"
#include "carb/prediction_io.hpp"
#include "data/provenance.hpp"
#include "data/validate.hpp"
#include "remeasurement.hpp"
#include "util/join.hpp"
#include "util/stop_signal.hpp"
#include "util/repeated_files.hpp"

namespace carb {

namespace {

// Every row of the --data files, failed ones too (said, not trained on).
Dataset read_all_rows(const std::vector<std::filesystem::path>& files) {
  if (files.empty()) throw InputError("no dataset given (--data CSV)");
  // The same file twice was "duplicate of line 2 (and 1957 more problems)" (eightieth hostile pass).
  detail::refuse_repeated_files(files, "");
  return read_dataset_csvs(files);
}

Dataset ok_rows_of(const Dataset& all, const std::vector<std::filesystem::path>& files) {
  Dataset ok = all.ok_only();
  if (ok.rows.empty())
    throw InputError(join(files, [](const auto& f) { return f.string(); }) + ": no ok rows (none measured ok) to learn from or score");
  return ok;
}

// Forty-first hostile pass: an oom row at batch 1 beside the same network ok at batch 16 was
// dropped without a word. Failed rows are no costs to learn from, but they are said, and so is a
// failure that a larger batch of the same network contradicts (memory another process held).
std::string failed_rows_note(const Dataset& all) {
  std::map<std::string, int> largest_ok;  // platform + network without the batch -> largest ok batch
  const auto key = [](const Record& r) {
    Config c = r.config;
    c.batch = 1;
    return r.platform + '\n' + network_key(c);
  };
  for (const Record& r : all.rows)
    if (r.status == Status::ok) largest_ok[key(r)] = std::max(largest_ok[key(r)], r.config.batch);
  std::size_t failed = 0, contradicted = 0;
  std::string first;
  for (const Record& r : all.rows) {
    if (r.status == Status::ok) continue;
    ++failed;
    const auto it = largest_ok.find(key(r));
    if (r.status == Status::oom && it != largest_ok.end() && it->second >= r.config.batch && contradicted++ == 0)
      first = config_key(r.config) + " oom, batch " + std::to_string(it->second) + " ok";
  }
  if (!failed) return "";
  std::string note = std::to_string(failed) + " row" + (failed == 1 ? "" : "s") + " measured as oom or error " +
                     (failed == 1 ? "is" : "are") + " not trained on (no cost to learn)";
  if (contradicted)
    note += "; " + std::to_string(contradicted) + " of them ran out of memory where a larger batch of the same network " +
            "ran ok (first: " + first + "): memory something else held, not the configuration's";
  return note;
}

std::string remeasured_names(const TrainJob& job) {
  return "--remeasured " + join(job.remeasured, [](const auto& f) { return f.string(); });
}

}  // namespace

namespace {

// Whether `round`, an entry of a combined dataset's provenance (`data` its CSV), records the file
// `f`: by its path as resolved, by the hash of its bytes (as combine read them, or as the round's
// own sidecar recorded them), or, for older combines that recorded neither, by the path as typed,
// relative to where they ran: tried from here, beside the data and from the data's parent
// directory (a repository's root).
bool round_is(const nlohmann::json& round, const std::filesystem::path& f, const std::optional<std::string>& hash,
              const nlohmann::json& f_provenance, const std::filesystem::path& data) {
  if (!round.is_object()) return false;
  const auto text = [](const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? std::optional(j[key].get<std::string>())
                                                                  : std::nullopt;
  };
  const auto resolved = text(round, kResolvedPathKey);
  const auto hashed = text(round, kCsvHashKey);
  const nlohmann::json none;
  const nlohmann::json& embedded = round.contains("provenance") ? round["provenance"] : none;
  const auto own_hash = text(embedded, kCsvHashKey);
  if (resolved && *resolved == resolved_path(f).string()) return true;
  if (hash && ((hashed && *hashed == *hash) || (own_hash && *own_hash == *hash))) return true;
  // Ninety-fourth hostile pass: an older combine records no hash, and its rounds moved to a folder
  // not named as typed passed as independent runs. The round's own provenance, which the combine
  // copied, is the file's if the export that wrote it is the same one (its time, command and store).
  bool same_export = f_provenance.is_object() && embedded.is_object();
  for (const char* key : {"exported_at", "command", "source_db"})
    same_export = same_export && text(embedded, key) && text(embedded, key) == text(f_provenance, key);
  if (same_export) return true;
  const auto typed = text(round, "file");
  if (resolved || hashed || own_hash || !typed) return false;
  const std::filesystem::path named = *typed;
  const auto dir = std::filesystem::absolute(data).parent_path();
  std::error_code ec;
  for (const auto& base : {std::filesystem::path(), dir, dir.parent_path()})
    if (std::filesystem::equivalent(named.is_absolute() ? named : base / named, f, ec)) return true;
  return false;
}

}  // namespace

// Seventy-fifth hostile pass: a round combined into the data (cpu-2t-round1.csv into cpu-2t.csv)
// passed as an independent run, though the data's median holds it. A combined dataset's sidecar
// names its rounds.
void check_remeasurement_files(const std::vector<std::filesystem::path>& remeasured,
                               const std::vector<std::filesystem::path>& data) {
  for (const auto& f : remeasured)
    for (const auto& d : data)
      if (std::error_code ec; std::filesystem::equivalent(f, d, ec))
        throw InputError(f.string() + " is given as the data and as the re-measurement: a re-measurement is another run");
  for (const auto& d : data) {
    nlohmann::json prov;
    try {
      prov = read_provenance(d);
    } catch (const Error&) {
      continue;  // the data's own reading says what is wrong with it
    }
    if (!prov.is_object() || !prov.contains("rounds") || !prov["rounds"].is_array()) continue;
    for (const auto& f : remeasured) {
      const auto hash = file_fnv1a64(f);
      nlohmann::json own;
      try {
        own = read_provenance(f);
      } catch (const Error&) {
        // its own reading says what is wrong with its sidecar
      }
      for (const auto& round : prov["rounds"])
        if (round_is(round, f, hash, own, d))
          throw InputError(f.string() + " is one of the rounds " + d.string() +
                           " combines (its provenance says so): the data's median holds it, so it is no independent "
                           "run; give a run that is not in the data");
    }
  }
}

namespace {
// Seventy-eighth hostile pass: a model trained on the export of a campaign stopped early (a preset
// in grid order: its small networks only) said nothing of it. What the export recorded is said.
std::vector<std::string> unfinished_campaign_notes(const std::vector<std::filesystem::path>& files) {
  std::vector<std::string> notes;
  for (const auto& f : files) {
    std::optional<std::pair<std::size_t, std::size_t>> c;
    try {
      c = recorded_campaign(read_provenance(f), provenance_path(f).string());
    } catch (const Error&) {
      continue;  // `data validate` says what is wrong with the sidecar
    }
    if (c && c->second > 0)
      notes.push_back(f.string() + " is the export of an unfinished campaign: " + std::to_string(c->second) + " of the " +
                      std::to_string(c->first) + " configurations its runs were given had no row then, so the model "
                      "learns from a partial sample of what was planned");
  }
  return notes;
}
}  // namespace

DeviceLimits device_limits_of(const std::vector<std::filesystem::path>& files, const Dataset& d,
                              std::optional<double> memory_mb, std::vector<std::string>* notes) {
  DeviceLimits out;
  out.memory_mb = memory_mb;
  std::set<std::string> protocols;
  const Record* largest = nullptr;
  for (const Record& r : d.rows) {
    protocols.insert(protocol_of(r));
    // A peak that is no number compares with nothing (a review: {NaN, 100} hid the 100).
    if (r.peak_memory_mb && std::isfinite(*r.peak_memory_mb) && (!largest || *r.peak_memory_mb > *largest->peak_memory_mb))
      largest = &r;
  }
  // A hostile tester: 141 (GiB typed as MB) was taken on data whose rows measured up to 4,207 MB on
  // that device, and the model then said measured configurations would not fit.
  // A review: a model without memory took a device memory and said every row fits.
  if (memory_mb && !largest)
    throw InputError("the data has no peak_memory_mb, so the model predicts no memory a device's memory could judge; "
                     "leave --device-memory-mb out");
  if (memory_mb && largest && *largest->peak_memory_mb > *memory_mb)
    throw InputError("the device's memory, " + fmt_num(*memory_mb, 6) + " MB, is below the " +
                     fmt_num(*largest->peak_memory_mb, 6) + " MB of peak memory the data measured on it (" +
                     config_key(largest->config) + "): give it in MB (1 GiB = 1073.74 MB)");
  std::map<std::string, double> recorded_memory;  // by protocol
  for (const auto& f : files) {
    ProtocolFactsById facts;
    try {
      facts = recorded_protocol_facts(f);
    } catch (const Error&) {
      continue;  // the data's own reading says what is wrong with its sidecar
    }
    for (const auto& [id, fact] : facts) {
      if (!protocols.count(id)) continue;
      if (notes)
        for (const std::string& u : fact.unusable)
          notes->push_back(f.string() + "'s provenance for protocol " + id + ": " + u +
                           "; the model does not record it");
      if (fact.power_limit_w) out.power_limit_w = std::max(out.power_limit_w.value_or(0), *fact.power_limit_w);
      if (fact.memory_mb) recorded_memory[id] = std::max(recorded_memory[id], *fact.memory_mb);
    }
  }
  // Not given: the memory the provenance records of the device every row ran on (the cpu backend's
  // machine; a hostile tester: a CPU model recommended a batch of 4.4 TB). The most where protocols
  // differ, as for the power limit: a configuration is said not to fit only where none would hold it.
  if (!memory_mb && largest && !recorded_memory.empty() && recorded_memory.size() == protocols.size()) {
    double most = 0;
    for (const auto& [id, mb] : recorded_memory) most = std::max(most, mb);
    if (*largest->peak_memory_mb <= most)
      out.memory_mb = most;
    else if (notes)
      notes->push_back("the device's memory the data's provenance records, " + fmt_num(most, 6) + " MB, is below the " +
                       fmt_num(*largest->peak_memory_mb, 6) + " MB of peak memory the data measured (" +
                       config_key(largest->config) + "), so the model does not record it and says of no "
                       "configuration that it would not fit; give the device's memory with --device-memory-mb");
  }
  // Out of any device's range in a sidecar (edited, or damaged) is the provenance's fault, not a flag's
  // (a review: "the device's memory (MB) must be between ..." for 1e300 no one gave): not recorded.
  const auto in_range_or_said = [&](std::optional<double>& v, bool given, const char* what, const char* key,
                                    double lo, double hi) {
    if (!v || given || (*v >= lo && *v <= hi)) return;
    if (notes)
      notes->push_back("the data's provenance records a device " + std::string(what) + " of " + fmt_num(*v, 6) +
                       " (platform_info." + key + "), outside " + fmt_num(lo) + " to " + fmt_num(hi) +
                       ": the model does not record it");
    v.reset();
  };
  in_range_or_said(out.memory_mb, memory_mb.has_value(), "memory (MB)", "device_memory_mb", kMinDeviceMemoryMb,
                   kMaxDeviceMemoryMb);
  in_range_or_said(out.power_limit_w, false, "power limit (W)", "power_limit_w", kMinDevicePowerW, kMaxDevicePowerW);
  out.check();
  return out;
}

Dataset read_datasets(const std::vector<std::filesystem::path>& files, std::vector<std::string>* notes) {
  const Dataset all = read_all_rows(files);
  if (notes) {
    if (std::string note = failed_rows_note(all); !note.empty()) notes->push_back(std::move(note));
    for (auto& note : unfinished_campaign_notes(files)) notes->push_back(std::move(note));
  }
  return ok_rows_of(all, files);
}

TrainSummary run_train_job(const TrainJob& job) {
  if (job.out.empty()) throw InputError("--out DIR is required");
  // Checked and staged before the work: an occupied or unwritable --out fails now, not after training.
  // Never over the training data, even with --force (the destination refuses a --out holding it).
  // The re-measurement is an input too (seventy-fifth hostile pass: `--out DIR --force` moved the
  // re-measurement inside DIR away, and the bundle recorded a file that was gone).
  std::vector<std::filesystem::path> inputs = job.data;
  inputs.insert(inputs.end(), job.remeasured.begin(), job.remeasured.end());
  BundleDestination dest(job.out, job.force, inputs);
  // Nor an input or its provenance sidecar (thirteenth hostile pass: `--out d.json --force`
  // replaced the training data's provenance with a bundle), the guard every other writer uses.
  check_not_an_input(job.out, inputs);
  // The re-measurement is read and checked before the work too.
  if (!job.remeasured.empty() && job.drift_correct)
    throw InputError("--remeasured with --drift-correct is not implemented: a drift-corrected model learned latency "
                     "at one host speed; give one");
  check_remeasurement_files(job.remeasured, job.data);
  std::optional<Dataset> again;
  if (!job.remeasured.empty()) {
    again = read_all_rows(job.remeasured).ok_only();
    if (again->rows.empty()) throw InputError(remeasured_names(job) + ": no ok rows to compare with the data");
  }
  // SIGINT/SIGTERM stop the fits at the next one and remove the staging directory (dest's
  // destructor); main exits 128 + signal. A second signal ends the process at once.
  detail::StopOnSignals signals;
  const Dataset all = read_all_rows(job.data);
  const std::string failed_note = failed_rows_note(all);
  const Dataset d = ok_rows_of(all, job.data);
  if (!d.rows.empty()) dest.check_platform(d.rows.front().platform);
  std::vector<std::string> device_notes;
  const DeviceLimits device = device_limits_of(job.data, d, job.device_memory_mb, &device_notes);  // refused now
  if (again) {
    try {  // named: with several files, which one
      check_remeasurement(d, *again);
      for (const auto& tm : kTargets)
        if (d.rows.front().value(tm)) remeasured_spread(d, *again, tm);  // too few pairs: now, not after the work
    } catch (const InputError& e) {
      throw InputError(remeasured_names(job) + ": " + e.what());
    }
  }
  std::vector<std::size_t> tr, te;
  split_indices(d.rows.size(), job.test_fraction, job.options.seed, tr, te);
  Dataset train = subset(d, tr), test = subset(d, te);
  std::optional<double> reference;
  if (job.drift_correct) {  // the typical host speed comes from the training rows alone
    reference = median_reference_ms(train);
    train = drift_corrected(train, *reference), test = drift_corrected(test, *reference);
  }
  const auto t0 = std::chrono::steady_clock::now();
  CarbModel m = CarbModel::train(train, job.options);
  if (reference) m.set_drift_reference_ms(*reference);
  m.set_device_limits(device);
  // Against every row of the campaign, held-out ones too: a measurement against a measurement.
  if (again) m.calibrate_remeasurement(d, *again);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  TrainSummary s;
  if (!failed_note.empty()) s.warnings.push_back(failed_note);
  for (auto& note : device_notes) s.warnings.push_back(std::move(note));
  for (auto& note : unfinished_campaign_notes(job.data)) s.warnings.push_back(std::move(note));
  if (reference)
    if (const std::string note = drift_left_out_note(d, *reference); !note.empty()) s.warnings.push_back(note);
  if (!test.rows.empty()) {
    auto pred = m.predict_columns(configs_of(test), telemetry_of(test));
    for (const auto& t : m.targets()) {
      std::vector<double> y;
      for (const auto& r : test.rows) y.push_back(*r.value(t));
      s.test_metrics[t] = fit_metrics(y, pred[t]);
    }
    // As evaluate says it of the same rows (twenty-eighth hostile pass: only evaluate did).
    if (const auto note = guesses_note(m, configs_of(test)); !note.empty()) s.warnings.push_back(note);
  }
  bool any_corrector = false;
  for (const auto& tm : m.target_summaries()) {
    for (std::size_t l = 0; l < tm.learners.size(); ++l) s.blend_weights[tm.target][tm.learners[l]] = tm.weights[l];
    s.oof_components[tm.target] = tm.oof;
    any_corrector = any_corrector || tm.corrector;
  }
  // Thirty-third hostile pass: --lambda changed nothing when every corrector was dropped, and
  // nothing said so (the manifest records the options asked for). Said when a corrector setting was
  // asked for: on the shipped data no target keeps one, which is no news at the defaults.
  const TrainOptions defaults;
  const bool asked = job.options.lambda != defaults.lambda || job.options.corrector_max_batch != defaults.corrector_max_batch;
  if (job.options.correctors && asked && !any_corrector) {
    std::size_t low = 0;
    for (const auto& r : train.rows) low += r.config.batch <= job.options.corrector_max_batch;
    const auto need = static_cast<std::size_t>(4 * job.options.folds);
    s.warnings.push_back(
        "no target kept a low-batch corrector (" +
        (low < need ? std::to_string(low) + " training rows have batch <= " +
                          std::to_string(job.options.corrector_max_batch) + ", fewer than the " +
                          std::to_string(need) + " one needs"
                    : std::string("out of fold, none lowered its target's error")) +
        "), so --lambda changes nothing");
  }
  TrainingRecord record;
  // The rows trained on and scored: a drift correction leaves out rows it cannot trust.
  record.split = TrainingSplit{job.options.seed, job.test_fraction, train.rows.size(), test.rows.size()};
  record.test_metrics = s.test_metrics;
  record.train_seconds = secs;
  // Absolute: a bundle loaded elsewhere must still know which files it was trained from (eighteenth
  // hostile pass: a relative "data/x.csv" resolved against another directory, and save(force=True)
  // replaced the directory holding the real one).
  for (const auto& f : job.data) record.data_files.push_back(std::filesystem::absolute(f).lexically_normal().string());
  for (const auto& f : job.remeasured)
    record.remeasured_files.push_back(std::filesystem::absolute(f).lexically_normal().string());
  m.set_training_record(std::move(record));
  detail::throw_if_stopped("training", "no model bundle was written");  // and again before the swap
  m.save(dest);
  s.model = job.out;
  s.platform = m.platform();
  s.targets = m.targets();
  s.train_rows = train.rows.size(), s.test_rows = test.rows.size();
  s.train_seconds = secs;
  s.data_hash = m.data_hash();
  s.drift_reference_ms = reference;
  s.device = device;
  s.device_memory_given = job.device_memory_mb.has_value();
  for (const auto& tm : m.target_summaries())
    if (const auto q = tm.remeasured_spread.find("0.9"); q != tm.remeasured_spread.end()) {
      s.remeasured_factor_90[tm.target] = std::exp(q->second);
      s.remeasured_pairs = tm.remeasured_pairs;
    }
  return s;
}

nlohmann::json TrainSummary::to_json() const {
  nlohmann::json weights, metrics = nlohmann::json::object(), components;
  for (const auto& [t, w] : blend_weights) weights[t] = w;
  for (const auto& [t, f] : test_metrics) metrics[t] = f.to_json();
  for (const auto& [t, c] : oof_components) components[t] = c.to_json();
  return {{"model", model.string()},     {"platform", platform},   {"targets", targets},
          {"train_rows", train_rows},    {"test_rows", test_rows}, {"train_seconds", train_seconds},
          {"blend_weights", weights},    {"test_metrics", metrics}, {"oof_components", components},
          {"data_hash", data_hash},              {"warnings", warnings},
          {"drift_reference_ms", drift_reference_ms ? nlohmann::json(*drift_reference_ms) : nlohmann::json(nullptr)},
          {"device", device_json(device)},
          // Where the memory came from, as the table says it (a review: only the table did).
          {"device_memory_from", !device.memory_mb ? nlohmann::json(nullptr)
                                 : device_memory_given ? nlohmann::json("given")
                                                       : nlohmann::json("provenance")},
          {"remeasured", remeasured_factor_90.empty() ? nlohmann::json(nullptr)
                                                      : nlohmann::json{{"pairs", remeasured_pairs},
                                                                       {"factor_90", remeasured_factor_90}}}};
}

}  // namespace carb
