// `carb train` as a library function.
#include <chrono>
#include <filesystem>

#include "carb/drift.hpp"
#include "carb/error.hpp"
#include "carb/metrics.hpp"
#include "carb/training.hpp"
#include "carb/training_record.hpp"

namespace carb {

Dataset read_datasets(const std::vector<std::filesystem::path>& files) {
  if (files.empty()) throw InputError("no dataset given (--data CSV)");
  Dataset all = read_dataset_csvs(files).ok_only();
  if (all.rows.empty()) {
    std::string names;
    for (const auto& f : files) names += (names.empty() ? "" : ", ") + f.string();
    throw InputError(names + ": no ok rows to train on");
  }
  return all;
}

namespace {

std::filesystem::path real_path(const std::filesystem::path& p) {
  std::error_code ec;
  const auto r = std::filesystem::weakly_canonical(std::filesystem::absolute(p), ec);
  return ec ? std::filesystem::absolute(p).lexically_normal() : r;
}

// --out that is, or holds, a training file: even with --force the bundle would replace the data
// it was trained on (train --out . --force once deleted the CSV and everything beside it).
void refuse_out_holding_inputs(const TrainJob& job) {
  const auto out = real_path(job.out);
  for (const auto& d : job.data) {
    const auto in = real_path(d);
    const auto rel = in.lexically_relative(out);
    if (in == out || (!rel.empty() && *rel.begin() != ".."))
      throw InputError("--out " + job.out.string() + " holds the training data " + d.string() +
                       "; write the model bundle elsewhere");
  }
}

}  // namespace

nlohmann::json run_train_job(const TrainJob& job) {
  if (job.out.empty()) throw InputError("--out DIR is required");
  refuse_out_holding_inputs(job);
  // Checked and staged before the work: an occupied or unwritable --out fails now, not after training.
  BundleDestination dest(job.out, job.force);
  const Dataset d = read_datasets(job.data);
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
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  nlohmann::json metrics = nlohmann::json::object();
  if (!test.rows.empty()) {
    auto pred = m.predict_columns(configs_of(test), telemetry_of(test));
    for (const auto& t : m.targets()) {
      std::vector<double> y;
      for (const auto& r : test.rows) y.push_back(*r.value(t));
      metrics[t] = fit_metrics(y, pred[t]).to_json();
    }
  }
  nlohmann::json weights, components;
  for (const auto& tm : m.target_models()) {
    for (std::size_t l = 0; l < tm.learners.size(); ++l) weights[tm.target][tm.learners[l]->kind()] = tm.weights[l];
    components[tm.target] = tm.components;
  }
  record_training_split(m, {job.options.seed, job.test_fraction, tr.size(), te.size()});
  auto& ex = m.manifest_extra();
  ex["test_metrics"] = metrics;
  ex["train_seconds"] = secs;
  std::vector<std::string> files;
  for (const auto& f : job.data) files.push_back(f.string());
  ex["data_files"] = files;
  m.save(dest);
  return {{"model", job.out.string()},   {"platform", m.platform()}, {"targets", m.targets()},
          {"train_rows", tr.size()},     {"test_rows", te.size()},   {"train_seconds", secs},
          {"blend_weights", weights},    {"test_metrics", metrics},  {"oof_components", components},
          {"data_hash", m.data_hash()},
          {"drift_reference_ms", reference ? nlohmann::json(*reference) : nlohmann::json(nullptr)}};
}

}  // namespace carb
