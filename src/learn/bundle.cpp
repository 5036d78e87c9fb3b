// The model bundle: a directory holding manifest.json and one file per fitted learner.
// The manifest records the schema version, feature names, platform, targets, blend weights,
// lambda, conformal half-widths, the training data's hash and metrics. Loading checks all of
// it and fails with one clear ModelError line on any mismatch or corruption.
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>

#include "carb/bundle_destination.hpp"
#include "carb/error.hpp"
#include "carb/model.hpp"
#include "checksum_file.hpp"
#include "conformal.hpp"
#include "model_internal.hpp"
#include "monotone.hpp"
#include "remeasurement.hpp"
#include "util/json_error.hpp"

namespace carb {
namespace fs = std::filesystem;

namespace {

nlohmann::json options_json(const TrainOptions& o) {
  nlohmann::json j = {{"learners", o.learners},
          {"n_trees", o.params.n_trees},
          {"max_depth", o.params.max_depth},
          {"max_leaves", o.params.max_leaves},
          {"learning_rate", o.params.learning_rate},
          {"threads", o.params.threads},
          {"folds", o.folds},
          {"blend_step", o.blend_step},
          {"correctors", o.correctors},
          {"corrector_max_batch", o.corrector_max_batch},
          {"lambda", o.lambda},
          {"cascade", o.cascade},
          {"use_telemetry", o.use_telemetry},
          {"log_target", o.log_target},
          {"normalize", o.normalize},
          {"seed", o.seed}};
  if (o.size_bins != 1) j["size_bins"] = o.size_bins;  // bundles of one bin read as before it
  return j;
}

// A whole-number option as T, refused unless training could have written it (a C++ tester: n_trees
// 1e12 wrapped to -727379968, folds 1e20 was an out-of-range conversion, 5.7 folds read as 5).
template <class T>
T whole_option(const nlohmann::json& j, const char* key, const std::string& where) {
  const auto& v = j.at(key);
  const bool fits = v.is_number_unsigned()   ? v.get<unsigned long long>() <= static_cast<unsigned long long>(std::numeric_limits<T>::max())
                    : v.is_number_integer() ? v.get<long long>() >= static_cast<long long>(std::numeric_limits<T>::min()) &&
                                                   v.get<long long>() <= static_cast<long long>(std::numeric_limits<T>::max())
                                             : false;
  if (!fits) throw ModelError(where + " has options no training writes (" + key + " " + v.dump() + ")");
  return v.is_number_unsigned() ? static_cast<T>(v.get<unsigned long long>()) : static_cast<T>(v.get<long long>());
}

TrainOptions options_from(const nlohmann::json& j, const std::string& where) {
  TrainOptions o;
  o.learners = j.at("learners").get<std::vector<std::string>>();
  o.params.n_trees = whole_option<int>(j, "n_trees", where), o.params.max_depth = whole_option<int>(j, "max_depth", where);
  o.params.max_leaves = whole_option<int>(j, "max_leaves", where);
  o.params.learning_rate = j.at("learning_rate"), o.params.threads = whole_option<int>(j, "threads", where);
  o.folds = whole_option<int>(j, "folds", where), o.blend_step = j.at("blend_step"), o.correctors = j.at("correctors");
  o.corrector_max_batch = whole_option<int>(j, "corrector_max_batch", where), o.lambda = j.at("lambda");
  o.cascade = j.at("cascade");
  o.use_telemetry = j.at("use_telemetry"), o.log_target = j.at("log_target");
  o.seed = whole_option<unsigned>(j, "seed", where);
  o.normalize = j.at("normalize").get<std::string>();
  // Checked in load_once before it is read (a value past int wrapped to 2: hundred-and-fifth pass).
  // Absent: one width per regime, as every bundle before the option was written (not today's default).
  o.size_bins = j.contains("size_bins") ? j.at("size_bins").get<int>() : 1;
  return o;
}

constexpr const char* kTrainedFile = "trained_configs.txt";
constexpr const char* kChecksumKey = "manifest_fnv1a64";
// A target's interval widths for architectures never trained (absent: the bundle predates them, or
// its data had too few architectures to calibrate them).
constexpr const char* kUnseenKey = "conformal_unseen_architecture";
constexpr const char* kRateKey = "extrapolation_rate";
constexpr const char* kMonotoneKey = "monotone_in";
constexpr const char* kFloorKey = "floor_outputs_alive";  // peak_memory_mb's (learn/memory_floor.hpp)
constexpr const char* kRemeasuredKey = "remeasured";
constexpr const char* kBySizeKey = "conformal_by_size";

// An unbounded width or rate is written null (JSON has no infinity) and read back as infinite.
nlohmann::json number_or_null(double v) { return std::isinf(v) ? nlohmann::json() : nlohmann::json(v); }
double null_as_infinity(const nlohmann::json& j) {
  return j.is_null() ? std::numeric_limits<double>::infinity() : j.get<double>();
}

// One value >= 0 per coverage level (null: infinite), never smaller at a higher level, as training
// writes the extrapolation rates and re-measurement spreads: fallen, a 90% interval lay inside the
// 80% one (sixty-fifth hostile pass, on a manifest with its checksum redone).
std::map<std::string, double> read_levels(const nlohmann::json& r, const std::string& where, const std::string& what) {
  if (!r.is_object() || r.size() != kConfidenceLevels.size())
    throw ModelError(where + "'s " + what + "s are not what training writes");
  std::map<std::string, double> out;
  double below = 0.0;
  for (double level : kConfidenceLevels) {
    const auto it = r.find(conformal_key(level));
    if (it == r.end() || !(it->is_null() || (it->is_number() && it->get<double>() >= 0 && std::isfinite(it->get<double>()))))
      throw ModelError(where + "'s " + what + " at level " + conformal_key(level) +
                       " is missing or neither a finite number >= 0 nor null (unbounded)");
    const double v = null_as_infinity(*it);
    if (v < below)
      throw ModelError(where + "'s " + what + " at level " + conformal_key(level) + " is below the " + what +
                       " of a lower level; training never writes that");
    out[conformal_key(level)] = below = v;
  }
  return out;
}

nlohmann::json widths_json(const ConformalWidths& widths) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [regime, levels] : widths)  // an unbounded width (too few rows) is null
    for (const auto& [level, half] : levels) out[to_string(regime)][level] = number_or_null(half);
  return out;
}

ConformalWidths read_widths(const nlohmann::json& j, const std::string& where) {
  ConformalWidths widths;
  if (!j.is_object()) throw ModelError(where + "'s conformal widths are not regimes");
  for (const auto& [regime, levels] : j.items()) {
    try {
      auto& w = widths[batch_regime_from(regime)];
      if (!levels.is_object()) throw ModelError(where + "'s conformal widths are not levels");
      for (const auto& [level, half] : levels.items())
        w[level] = null_as_infinity(half);
    } catch (const InputError& e) {
      throw ModelError(where + " has conformal widths of an " + e.what());
    }
  }
  return widths;
}

// Each regime's bins as training writes them: ascending finite cuts, the last unbounded (null),
// widths per level as read_levels reads them.
SizeBinnedWidths read_size_bins(const nlohmann::json& j, const std::string& where) {
  const std::string bad = where + "'s interval widths per predicted size are not what training writes";
  if (!j.is_object() || j.empty()) throw ModelError(bad);
  SizeBinnedWidths out;
  for (const auto& [regime, bins] : j.items()) {
    BatchRegime r;
    try {
      r = batch_regime_from(regime);
    } catch (const InputError& e) {
      throw ModelError(bad + " (" + e.what() + ")");
    }
    if (!bins.is_array() || bins.empty() || bins.size() > static_cast<std::size_t>(kMaxSizeBins)) throw ModelError(bad);
    double below = -std::numeric_limits<double>::infinity();
    for (std::size_t b = 0; b < bins.size(); ++b) {
      const auto& bin = bins[b];
      if (!bin.is_object() || bin.size() != 2 || !bin.contains("upto") || !bin.contains("widths")) throw ModelError(bad);
      const bool last = b + 1 == bins.size();
      const auto& upto = bin.at("upto");
      if (last ? !upto.is_null() : !(upto.is_number() && std::isfinite(upto.get<double>()) && upto.get<double>() > below))
        throw ModelError(bad + " (the cuts must rise, the last bin unbounded)");
      below = last ? below : upto.get<double>();
      out[r].push_back({null_as_infinity(upto), read_levels(bin.at("widths"), where, "interval width per predicted size")});
    }
  }
  return out;
}

std::string joined_lines(const std::vector<std::string>& keys) {
  std::string text;
  for (const auto& k : keys) text += k + '\n';
  return text;
}

// FNV-1a of a file's bytes ("" when it cannot be read: the comparison then fails).
std::string file_hash(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  if (!in) return "";
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return detail::hex64(detail::fnv1a64(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
}

std::string text_hash(const std::string& text) {
  return detail::hex64(detail::fnv1a64(reinterpret_cast<const unsigned char*>(text.data()), text.size()));
}

// The configurations the model trained on: one config_key per line, checked against the count and
// hash in the manifest, so that held-out validation cannot silently use a damaged list.
std::vector<std::string> read_trained(const fs::path& dir, const nlohmann::json& j) {
  const fs::path f = dir / j.at("file").get<std::string>();
  detail::require_bundle_file(f);
  std::ifstream in(f, std::ios::binary);
  if (!in) throw ModelError("model bundle " + dir.string() + " is missing " + f.filename().string());
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text_hash(text) != j.at("fnv1a64").get<std::string>())
    throw ModelError("corrupted " + f.string() + ": its checksum does not match the manifest");
  std::vector<std::string> keys;
  std::size_t at = 0;
  for (std::size_t nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1)
    keys.push_back(text.substr(at, nl - at));
  if (keys.size() != j.at("count").get<std::size_t>())
    throw ModelError("corrupted " + f.string() + ": " + std::to_string(keys.size()) + " configurations, manifest says " +
                     std::to_string(j.at("count").get<std::size_t>()));
  return keys;
}

void write_file(const fs::path& f, const std::string& text) { detail::write_durably(f, text.data(), text.size()); }

}  // namespace

void CarbModel::save(const fs::path& dir, bool force) const {
  require_trained();  // before anything at `dir` is looked at
  // The files it was trained from, and the re-measurement that calibrated its spread (a review:
  // Python's save(force=True) could move a re-measurement inside `dir` away).
  std::vector<fs::path> data(record_.data_files.begin(), record_.data_files.end());
  data.insert(data.end(), record_.remeasured_files.begin(), record_.remeasured_files.end());
  BundleDestination dest(dir, force, data);
  dest.check_platform(platform_);
  save(dest);
}

void CarbModel::save(BundleDestination& dest) const {
  const fs::path& tmp = dest.staging();
  nlohmann::json man = {{"format", "carb-model"},
                        {"schema_version", opts_.size_bins > 1 ? kBundleSchemaVersion : kBundleSchemaVersionOneWidth},
                        {"platform", platform_},
                        {"targets", targets_},
                        {"telemetry", schema_.telemetry},
                        {"feature_names", schema_.names},
                        {"options", options_json(opts_)},
                        {"data_hash", data_hash_},
                        {"extra", record_.to_json()}};
  if (drift_reference_ms_) man["drift_correction"] = {{"reference_ms", *drift_reference_ms_}};
  if (!device_.empty()) {
    nlohmann::json& d = man["device"] = nlohmann::json::object();
    if (device_.memory_mb) d["memory_mb"] = *device_.memory_mb;
    if (device_.power_limit_w) d["power_limit_w"] = *device_.power_limit_w;
  }
  if (!envelope_.empty()) man["envelope"] = envelope_.to_json();
  if (knows_trained_) {
    const std::string text = joined_lines(trained_configs_);
    write_file(tmp / kTrainedFile, text);
    man["trained_configs"] = {{"file", kTrainedFile}, {"count", trained_configs_.size()}, {"fnv1a64", text_hash(text)}};
  }
  for (const auto& tm : models_) {
    nlohmann::json t = {{"upstream", tm.upstream}, {"weights", tm.weights}, {"conformal", widths_json(tm.conformal)},
                        {"components", tm.oof.to_json()}};
    if (!tm.conformal_unseen.empty())
      t[kUnseenKey] = {{"networks", tm.unseen_networks}, {"widths", widths_json(tm.conformal_unseen)}};
    for (const auto& [regime, bins] : tm.conformal_by_size)
      for (const SizeBin& b : bins) {
        nlohmann::json widths = nlohmann::json::object();
        for (const auto& [level, half] : b.half) widths[level] = number_or_null(half);
        t[kBySizeKey][to_string(regime)].push_back({{"upto", number_or_null(b.upto)}, {"widths", widths}});
      }
    for (const auto& [level, rate] : tm.extrapolation_rate) t[kRateKey][level] = number_or_null(rate);
    if (tm.estimate) t["estimate"] = tm.estimate->to_json();
    if (!tm.monotone_in.empty()) t[kMonotoneKey] = tm.monotone_in;
    if (tm.target == "peak_memory_mb") t[kFloorKey] = tm.floor_outputs_alive;
    if (!tm.remeasured_spread.empty()) {
      t[kRemeasuredKey] = {{"pairs", tm.remeasured_pairs}, {"spread", nlohmann::json::object()}};
      for (const auto& [level, q] : tm.remeasured_spread) t[kRemeasuredKey]["spread"][level] = number_or_null(q);
    }
    for (std::size_t l = 0; l < tm.learners.size(); ++l) {
      const std::string file = tm.target + "." + std::to_string(l) + "." + tm.learners[l]->kind() + ".model";
      tm.learners[l]->save(tmp / file);
      t["learners"].push_back({{"kind", tm.learners[l]->kind()}, {"file", file}, {"fnv1a64", file_hash(tmp / file)}});
    }
    if (tm.corrector) {
      const std::string file = tm.target + ".corrector.model";
      tm.corrector->save(tmp / file);
      t["corrector"] = {{"kind", tm.corrector->kind()}, {"file", file}, {"fnv1a64", file_hash(tmp / file)}};
    }
    man["models"][tm.target] = t;
  }
  // The checksum covers the manifest's content (its canonical dump without this key): blend
  // weights, conformal widths and options change predictions as much as any learner file does.
  // A training file named in another encoding is recorded with U+FFFD (forty-seventh hostile pass:
  // a Latin-1 byte ended `train` as an internal error).
  constexpr auto replace = nlohmann::json::error_handler_t::replace;
  man[kChecksumKey] = text_hash(man.dump(-1, ' ', false, replace));
  write_file(tmp / "manifest.json", man.dump(1, ' ', false, replace) + '\n');
  // Every reader loads a bundle through the same checks: one they would refuse is never swapped in
  // over a working one (twenty-first hostile pass: a --raw-target model predicting negative energy
  // at a trained configuration was saved, exit 0, and every reader then called it "altered").
  try {
    (void)CarbModel::load(tmp);
  } catch (const ModelError& e) {
    // What a reader says of a bundle it finds so ("it was altered; retrain it") is not what happened
    // here: this one was just trained (thirty-fifth hostile pass). Name the check, and the way out.
    std::string why = e.what();
    const std::string reader_advice = ": it was altered; retrain it";
    if (why.size() > reader_advice.size() && why.compare(why.size() - reader_advice.size(), reader_advice.size(), reader_advice) == 0)
      why.resize(why.size() - reader_advice.size());
    const std::string named = "model bundle " + tmp.string() + " ";
    if (why.rfind(named, 0) == 0) why = "it " + why.substr(named.size());
    throw ModelError("the trained model fails the checks every reader applies, so it was not written (" + why + ")" +
                     (opts_.log_target ? std::string() : "; a --raw-target model can predict costs below zero: train without --raw-target, or with other learners"));
  }
  dest.commit();
}

namespace {

std::unique_ptr<Learner> load_learner(const fs::path& dir, const nlohmann::json& j, const TrainOptions& o) {
  // Each file's own checksum catches damage; this one, in the checksummed manifest, catches a
  // whole learner file copied in from another bundle (it loaded and changed the answers).
  const fs::path f = dir / j.at("file").get<std::string>();
  detail::require_bundle_file(f);
  if (file_hash(f) != j.at("fnv1a64").get<std::string>())
    throw ModelError(f.string() + " is not the file this bundle's manifest names (its hash differs): the bundle "
                     "was altered; retrain it");
  auto l = make_learner(j.at("kind").get<std::string>(), o.params);
  l->load(dir / j.at("file").get<std::string>());
  return l;
}

// One set of conformal widths as training writes it. Half-widths live in log space: e^20 is a
// factor of 5e8, far past any interval training writes (a forged 1e300 gave [0, inf]). Every level
// predict may ask for must be there.
void check_widths(const ConformalWidths& widths, const std::string& where, const TrainOptions& o) {
  for (const auto& [regime, levels] : widths)
    for (const auto& [level, half] : levels)
      // (Raw-target models keep their widths in the target's units: a cap meant for log space
      // refused every --raw-target bundle.)
      if (std::isnan(half) || half < 0 || (std::isfinite(half) && o.log_target && half > 20))
        throw ModelError(where + " has a conformal half-width of " + std::to_string(half) + " (" +
                         to_string(regime) + ", " + level + ")");
  if (!widths.count(BatchRegime::all)) throw ModelError(where + " has no conformal widths for all batches");
  // Exactly the levels training writes, and wider at higher coverage (a forged 0.99 width narrower
  // than the 0.8 one gave a narrower interval at higher confidence).
  for (const auto& [regime, levels] : widths) {
    if (levels.size() != 4) throw ModelError(where + " has conformal levels training never writes (" + to_string(regime) + ")");
    double previous = 0;
    for (double l : kConfidenceLevels) {
      const std::string level = conformal_key(l);
      const auto it = levels.find(level);
      if (it == levels.end())
        throw ModelError(where + " has no conformal width at level " + level + " (" + to_string(regime) + ")");
      if (it->second < previous)
        throw ModelError(where + "'s conformal width at level " + level + " is narrower than at a lower level (" +
                         to_string(regime) + ")");
      previous = it->second;
    }
  }
}

// Values no training run writes: the checksum already catches damage, this catches a manifest
// edited by hand and re-checksummed (weights that do not sum to 1, an inverted interval).
void check_meaningful(const TargetModel& tm, const TrainOptions& o, const fs::path& dir) {
  const std::string where = "model bundle " + dir.string() + ": " + tm.target;
  double sum = 0;
  for (double w : tm.weights) {
    if (!std::isfinite(w) || w < 0) throw ModelError(where + " has a blend weight of " + std::to_string(w));
    sum += w;
  }
  if (std::abs(sum - 1) > 1e-6) throw ModelError(where + "'s blend weights sum to " + std::to_string(sum) + ", not 1");
  check_widths(tm.conformal, where, o);
  if (!tm.conformal_unseen.empty()) {
    check_widths(tm.conformal_unseen, where + "'s unseen-architecture", o);
    if (tm.unseen_networks < kMinCalibrationNetworks)
      throw ModelError(where + "'s unseen-architecture widths claim " + std::to_string(tm.unseen_networks) +
                       " networks; training calibrates them on " + std::to_string(kMinCalibrationNetworks) + " or more");
    // The same regimes as the trained widths (a dropped regime fell back on "all", narrower than a
    // trained architecture's), never narrower, and unbounded exactly where training leaves them so:
    // where the trained width is, or where the networks are too few for the level.
    if (tm.conformal_unseen.size() != tm.conformal.size())
      throw ModelError(where + "'s unseen-architecture widths have other batch regimes than its trained widths");
    for (const auto& [regime, levels] : tm.conformal_unseen)
      for (const auto& [level, half] : levels) {
        const auto r = tm.conformal.find(regime);
        const std::string at = " at level " + level + " (" + to_string(regime) + ")";
        if (r == tm.conformal.end() || half < r->second.at(level))
          throw ModelError(where + "'s unseen-architecture conformal width" + at +
                           " is narrower than a trained architecture's, or has no counterpart");
        const bool unbounded = std::isinf(r->second.at(level)) || tm.unseen_networks < min_networks_for(std::stod(level));
        if (std::isinf(half) != unbounded)
          throw ModelError(where + "'s unseen-architecture conformal width" + at + (unbounded ? " is bounded" : " is unbounded") +
                           " where training leaves it " + (unbounded ? "unbounded" : "bounded"));
      }
  }
  // Bins of the regimes training widths have, one set per size_bins > 1 and none otherwise, each
  // within the log-space cap of the widths.
  if (tm.conformal_by_size.empty() != (o.size_bins == 1))
    throw ModelError(where + (o.size_bins == 1 ? " has interval widths per predicted size its options never asked for"
                                               : " has no interval widths per predicted size; its options ask for them"));
  // Every regime of the widths has its bins (one dropped fell back on the regime's width), and a
  // bin is unbounded at a level exactly where its regime is: a bin has fewer rows than its regime,
  // and takes the regime's width where its own cannot bound the level (hundred-and-fifth hostile
  // pass: a bounded 99% bin under an unbounded regime, and the reverse, loaded).
  if (!tm.conformal_by_size.empty() && tm.conformal_by_size.size() != tm.conformal.size())
    throw ModelError(where + "'s interval widths per predicted size do not cover its batch regimes");
  for (const auto& [regime, bins] : tm.conformal_by_size) {
    if (!tm.conformal.count(regime) || bins.size() > static_cast<std::size_t>(o.size_bins))
      throw ModelError(where + "'s interval widths per predicted size do not match its regimes or size_bins");
    for (const SizeBin& b : bins)
      for (const auto& [level, half] : b.half) {
        const std::string at = " (" + std::string(to_string(regime)) + ", " + level + ", per predicted size)";
        if (std::isfinite(half) && o.log_target && half > 20)
          throw ModelError(where + " has a conformal half-width of " + std::to_string(half) + at);
        if (std::isinf(half) != std::isinf(tm.conformal.at(regime).at(level)))
          throw ModelError(where + "'s interval width" + at + (std::isinf(half) ? " is unbounded" : " is bounded") +
                           " where its batch regime's is " + (std::isinf(half) ? "bounded" : "unbounded") +
                           "; training never writes that");
      }
  }
  // Training records why a raw-target model's form is plain: a log_target flipped in the options
  // (predictions read as costs where the learners answer logs) contradicts that record.
  if (!o.log_target != (tm.oof.form.why == "raw target"))
    throw ModelError(where + "'s form record contradicts the bundle's log_target option");
  if (tm.estimate && tm.estimate->target() != tm.target)
    throw ModelError(where + " has the analytic estimate of " + tm.estimate->target());
  if (tm.estimate && (!tm.oof.form.estimate || tm.oof.form.estimate->to_json() != tm.estimate->to_json()))
    throw ModelError(where + "'s analytic estimate is not the one its form choice recorded");
  for (const auto& scored : tm.oof.learners) {
    const std::string& kind = scored.first;  // (a structured binding: clang 14 cannot capture it)
    if (std::none_of(tm.learners.begin(), tm.learners.end(), [&](const auto& l) { return l->kind() == kind; }))
      throw ModelError(where + " records out-of-fold scores of a learner it does not have (" + kind + ")");
  }
  const bool ratio = tm.oof.form.chosen == TargetForm::ratio;
  if (ratio != tm.estimate.has_value())
    throw ModelError(where + (ratio ? " learned a ratio to an analytic estimate the manifest lacks"
                                    : " has an analytic estimate but learned the plain target"));
}

// The cascade as training writes it: known targets, each once, in cascade order, each fed only by
// the targets before it. A hand-edited list once ended in "internal error: map::at".
void check_cascade(const std::vector<std::string>& targets, const nlohmann::json& models, const fs::path& dir) {
  const std::string where = "model bundle " + dir.string();
  if (targets.empty()) throw ModelError(where + " has no targets");
  std::size_t last = 0;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const auto it = std::find(kTargets.begin(), kTargets.end(), targets[i]);
    if (it == kTargets.end()) throw ModelError(where + " names an unknown target '" + targets[i] + "'");
    const auto pos = static_cast<std::size_t>(it - kTargets.begin());
    if (i > 0 && pos <= last) throw ModelError(where + " lists its targets out of cascade order or twice");
    last = pos;
    if (!models.contains(targets[i])) throw ModelError(where + " has no model for its target " + targets[i]);
  }
  // Nor a model for a target it does not list: training writes one per target, and such an entry
  // was read by nothing, its edits (a monotone knob) loading without a word (sixty-ninth hostile pass).
  for (const auto& [name, model] : models.items())
    if (std::find(targets.begin(), targets.end(), name) == targets.end())
      throw ModelError(where + " has a model for '" + name + "', which is not one of its targets");
  for (std::size_t i = 0; i < targets.size(); ++i) {
    for (const auto& up : models.at(targets[i]).at("upstream")) {
      const auto u = std::find(targets.begin(), targets.begin() + static_cast<std::ptrdiff_t>(i), up.get<std::string>());
      if (u == targets.begin() + static_cast<std::ptrdiff_t>(i))
        throw ModelError(where + ": " + targets[i] + " is fed by '" + up.get<std::string>() +
                         "', which is not a target predicted before it");
    }
  }
}

nlohmann::json read_manifest(const fs::path& dir) {
  if (dir.empty()) throw ModelError("no model bundle at an empty path");
  const fs::path f = dir / "manifest.json";
  std::error_code ec;
  if (fs::exists(f, ec) && !fs::is_regular_file(f, ec)) detail::require_bundle_file(f);
  std::ifstream in(f);
  if (!in) throw ModelError("no model bundle at " + dir.string() + " (missing manifest.json)");
  try {
    auto man = nlohmann::json::parse(in);
    if (man.value("format", "") != "carb-model") throw ModelError(f.string() + " is not a carb model manifest");
    // The version as written: a whole number training wrote, not one read into an int (hundred-and-
    // tenth hostile pass: 4.9 and 2^32 + 4 loaded as 4, true was named 1, a missing one -1).
    const std::string reads = " (this carb reads versions " + std::to_string(kBundleSchemaVersionOneWidth) + " and " +
                              std::to_string(kBundleSchemaVersion) + ")";
    const std::string bundle = "model bundle " + dir.string();
    if (!man.contains("schema_version")) throw ModelError(bundle + " has no schema version" + reads + ": retrain it");
    const auto& version = man.at("schema_version");
    const std::string written = detail::json_error_text(version.dump());  // a long value shortened
    if (!version.is_number_integer())
      throw ModelError(bundle + " has schema version " + written + ", not an integer as training writes it" + reads +
                       ": retrain it");
    if (version.is_number_unsigned() ? version.get<std::uint64_t>() > static_cast<std::uint64_t>(kBundleSchemaVersion)
                                     : version.get<std::int64_t>() > kBundleSchemaVersion)
      throw ModelError(bundle + " has schema version " + written + ", from a newer carb" + reads +
                       ": use that carb, or retrain it with this one");
    if (version.get<std::int64_t>() < kBundleSchemaVersionOneWidth)
      throw ModelError(bundle + " has schema version " + written + reads + ": retrain it");
    if (!man.contains(kChecksumKey) || !man[kChecksumKey].is_string())
      throw ModelError("corrupted model manifest " + f.string() + ": its checksum is missing");
    if (!manifest_checksum_verifies(man))
      throw ModelError("corrupted model manifest " + f.string() + ": its checksum does not match its content");
    man.erase(kChecksumKey);
    return man;
  } catch (const nlohmann::json::exception& e) {
    throw ModelError("corrupted model manifest " + f.string() + ": " + detail::json_error_text(e.what()));
  }
}

}  // namespace

bool manifest_checksum_verifies(nlohmann::json manifest) {
  if (!manifest.is_object() || !manifest.contains(kChecksumKey) || !manifest[kChecksumKey].is_string()) return false;
  const std::string stored = manifest[kChecksumKey].get<std::string>();
  manifest.erase(kChecksumKey);
  return text_hash(manifest.dump()) == stored;
}

namespace {
// The inode a bundle directory's name stands for now (0 when it cannot be read).
ino_t inode_of(const fs::path& dir) {
  struct stat st {};
  return ::stat(dir.c_str(), &st) == 0 ? st.st_ino : 0;
}
}  // namespace

CarbModel CarbModel::load(const fs::path& dir) {
  const ino_t before = inode_of(dir);
  try {
    return load_once(dir);
  } catch (const ModelError&) {
    // train swaps a whole bundle directory in at once; a load that read the old manifest and then
    // a new file found a checksum mismatch in a sound bundle (seventeenth hostile pass: 2 of 128
    // reads during swaps). The name now stands for another directory: read that one.
    if (before == 0 || inode_of(dir) == before) throw;
    return load_once(dir);
  }
}

CarbModel CarbModel::load_once(const fs::path& dir) {
  const auto man = read_manifest(dir);
  CarbModel m;
  try {
    m.platform_ = man.at("platform");
    m.targets_ = man.at("targets").get<std::vector<std::string>>();
    check_cascade(m.targets_, man.at("models"), dir);
    m.schema_ = FeatureSchema::make(man.at("telemetry").get<bool>());
    if (man.at("feature_names").get<std::vector<std::string>>() != m.schema_.names)
      throw ModelError("model bundle " + dir.string() + " was trained on other features than this carb builds");
    // Training writes size_bins only as 2 to kMaxSizeBins: anything else is said as written, before
    // it is read as an int (hundred-and-fifth hostile pass: 2^32 + 2 loaded as 2, and 0 or "2" were
    // blamed on the widths).
    const bool binned = man.at("options").is_object() && man.at("options").contains("size_bins");
    if (binned) {
      const auto& b = man.at("options").at("size_bins");
      if (!b.is_number_integer() || b.get<long long>() < 2 || b.get<long long>() > kMaxSizeBins)
        throw ModelError("model bundle " + dir.string() + " has options no training writes (size_bins " + b.dump() +
                         "; training writes it only as a whole number from 2 to " + std::to_string(kMaxSizeBins) + ")");
    }
    // Training writes version 4 only with interval widths per predicted size (model.hpp); version 3
    // may hold them too, as carb wrote every bundle of the default two bins on 2026-12-06.
    if (man.at("schema_version").get<int>() == kBundleSchemaVersion && !binned)
      throw ModelError("model bundle " + dir.string() + " has schema version " + std::to_string(kBundleSchemaVersion) +
                       " but its options do not ask for interval widths per predicted size, which only that version "
                       "is written for");
    m.opts_ = options_from(man.at("options"), "model bundle " + dir.string());
    if (!(m.opts_.lambda >= 0 && m.opts_.lambda <= 1))
      throw ModelError("model bundle " + dir.string() + " has corrector damping " + std::to_string(m.opts_.lambda));
    // What training refuses is no bundle of it, said before anything is built from it (a C++ tester:
    // threads -5 or a learning rate of 0 loaded to InputError, "invalid learner parameter").
    check_bundle_options(m.opts_, dir);
    m.data_hash_ = man.at("data_hash");
    m.record_ = TrainingRecord::from_json(man.at("extra"));
    if (man.contains("drift_correction"))
      m.drift_reference_ms_ = man.at("drift_correction").at("reference_ms").get<double>();
    if (m.drift_reference_ms_ && !(*m.drift_reference_ms_ > 0 && std::isfinite(*m.drift_reference_ms_)))
      throw ModelError("model bundle " + dir.string() + " has a drift reference of " +
                       std::to_string(*m.drift_reference_ms_) + " ms");
    if (man.contains("device")) {
      const auto& d = man.at("device");
      if (!d.is_object()) throw ModelError("model bundle " + dir.string() + "'s device record is not an object");
      for (const auto& [key, value] : d.items())  // a misspelt key dropped its limit without a word
        if (key != "memory_mb" && key != "power_limit_w")
          throw ModelError("model bundle " + dir.string() + "'s device record has '" + key + "', which training never writes");
      const auto number = [&](const char* key) -> std::optional<double> {
        if (!d.contains(key)) return std::nullopt;
        if (!d.at(key).is_number()) throw ModelError("model bundle " + dir.string() + "'s device " + key + " is not a number");
        return d.at(key).get<double>();
      };
      m.device_ = {number("memory_mb"), number("power_limit_w")};
      try {
        m.device_.check();
      } catch (const InputError& e) {
        throw ModelError("model bundle " + dir.string() + ": " + e.what());
      }
    }
    if (man.contains("envelope")) m.envelope_ = TrainedEnvelope::from_json(man.at("envelope"));
    if (man.contains("trained_configs")) {
      m.trained_configs_ = read_trained(dir, man.at("trained_configs"));
      m.knows_trained_ = true;
      m.index_trained();
    }
    for (const auto& t : m.targets_) {
      const auto& j = man.at("models").at(t);
      TargetModel tm;
      tm.target = t;
      tm.upstream = j.at("upstream").get<std::vector<std::string>>();
      tm.weights = j.at("weights").get<std::vector<double>>();
      const std::string where = "model bundle " + dir.string() + ": " + t;
      tm.conformal = read_widths(j.at("conformal"), where);
      if (j.contains(kUnseenKey)) {
        const auto& u = j.at(kUnseenKey);
        if (!u.is_object() || !u.contains("networks") || !u.at("networks").is_number_integer() || !u.contains("widths"))
          throw ModelError(where + "'s unseen-architecture widths are not what training writes");
        tm.unseen_networks = u.at("networks").get<int>();
        tm.conformal_unseen = read_widths(u.at("widths"), where);
        if (tm.conformal_unseen.empty()) throw ModelError(where + " has an empty set of unseen-architecture widths");
      }
      // One rate >= 0 per coverage level, as training writes them: a missing level would fall
      // back on 1, a negative one would narrow intervals past the data below the in-grid width.
      // null is an infinite rate (no widening held enough held-out rows): unbounded past the data.
      if (j.contains(kRateKey)) tm.extrapolation_rate = read_levels(j.at(kRateKey), where, "extrapolation rate");
      if (j.contains(kBySizeKey)) tm.conformal_by_size = read_size_bins(j.at(kBySizeKey), where);
      if (j.contains(kRemeasuredKey)) {
        const auto& r = j.at(kRemeasuredKey);
        if (!r.is_object() || r.size() != 2 || !r.contains("pairs") || !r.at("pairs").is_number_unsigned() ||
            !r.contains("spread") || r.at("pairs").get<std::size_t>() < kMinRemeasuredPairs)
          throw ModelError(where + "'s re-measurement spread is not what training writes");
        tm.remeasured_pairs = r.at("pairs").get<std::size_t>();
        tm.remeasured_spread = read_levels(r.at("spread"), where, "re-measurement spread");
        // Seventy-fifth hostile pass: a finite spread at a level its pairs cannot bound (training
        // writes null there) loaded, as did a spread on a drift-corrected model (training refuses).
        for (double level : kConfidenceLevels) {
          const double n = static_cast<double>(tm.remeasured_pairs);  // finite_sample_quantile's rule
          if (std::ceil((n + 1) * level) > n && std::isfinite(tm.remeasured_spread.at(conformal_key(level))))
            throw ModelError(where + "'s re-measurement spread at level " + conformal_key(level) + " is bounded by " +
                             std::to_string(tm.remeasured_pairs) + " configurations, which cannot bound it");
        }
        if (m.drift_reference_ms_)
          throw ModelError(where + " has a re-measurement spread and a drift correction; training never writes both");
      }
      tm.oof = OofComponents::from_json(j.at("components"));
      if (j.contains("estimate")) tm.estimate = AnalyticEstimate::from_json(j.at("estimate"));
      if (j.contains(kMonotoneKey)) {
        const auto& k = j.at(kMonotoneKey);
        const bool strings = k.is_array() && !k.empty() &&
                             std::all_of(k.begin(), k.end(), [](const nlohmann::json& e) { return e.is_string(); });
        if (!strings || !valid_monotone_knobs(tm.monotone_in = k.get<std::vector<std::string>>()))
          throw ModelError(where + "'s monotone knobs are not what training writes (of batch, resolution, depth, width, in that order, each once)");
      }
      if (j.contains(kFloorKey)) {
        const auto& f = j.at(kFloorKey);
        if (!f.is_boolean() || (f.get<bool>() && tm.target != "peak_memory_mb"))
          throw ModelError(where + "'s " + kFloorKey + " is not what training writes (true or false, for peak_memory_mb)");
        tm.floor_outputs_alive = f.get<bool>();
      }
      for (const auto& lj : j.at("learners")) {
        // The name carries the position and kind (target.N.kind.model) and the kinds are the
        // options' learners in order: reordered entries would give one learner another's weight.
        const std::size_t l = tm.learners.size();
        const std::string kind = l < m.opts_.learners.size() ? m.opts_.learners[l] : "";
        if (lj.at("kind").get<std::string>() != kind ||
            lj.at("file").get<std::string>() != t + "." + std::to_string(l) + "." + kind + ".model")
          throw ModelError("model bundle " + dir.string() + ": " + t + "'s learner " + std::to_string(l) +
                           " is not the " + (kind.empty() ? "learner" : kind) + " training wrote there");
        tm.learners.push_back(load_learner(dir, lj, m.opts_));
      }
      if (tm.learners.size() != m.opts_.learners.size())
        throw ModelError("model bundle " + dir.string() + ": " + t + " has " + std::to_string(tm.learners.size()) +
                         " learners, its options name " + std::to_string(m.opts_.learners.size()));
      std::vector<std::string> before;  // what training feeds a target: every target before it, in order
      if (m.opts_.cascade)
        for (const auto& u : m.targets_) {
          if (u == t) break;
          before.push_back(u);
        }
      if (tm.upstream != before)
        throw ModelError("model bundle " + dir.string() + ": " + t + "'s cascade inputs are not the targets before it");
      if (j.contains("corrector")) tm.corrector = load_learner(dir, j.at("corrector"), m.opts_);
      if (tm.learners.size() != tm.weights.size())
        throw ModelError("model bundle " + dir.string() + ": " + t + " has " + std::to_string(tm.learners.size()) +
                         " learners but " + std::to_string(tm.weights.size()) + " weights");
      check_meaningful(tm, m.opts_, dir);
      if (j.contains("corrector") &&
          (j.at("corrector").at("kind") != "gbdt_leafwise" && j.at("corrector").at("kind") != "xgb_lossguide"))
        throw ModelError("model bundle " + dir.string() + ": " + t + "'s corrector is not a leaf-wise booster");
      m.models_.push_back(std::move(tm));
    }
    // Training calibrates every target or none, for new architectures (on one target only, the
    // others answered with trained widths while predict said the model had none) and past the data
    // (the hold-outs are the data's; without its own rates, a target widened at the old rate 1).
    const auto all_or_none = [&](const auto& has, const std::string& what) {
      const auto n = std::count_if(m.models_.begin(), m.models_.end(), has);
      if (n != 0 && static_cast<std::size_t>(n) != m.models_.size())
        throw ModelError("model bundle " + dir.string() + ": only " + std::to_string(n) + " of its " +
                         std::to_string(m.models_.size()) + " targets have " + what);
      return n != 0;
    };
    const bool calibrated =
        all_or_none([](const TargetModel& tm) { return !tm.conformal_unseen.empty(); }, "unseen-architecture widths");
    all_or_none([](const TargetModel& tm) { return !tm.extrapolation_rate.empty(); }, "extrapolation rates");
    all_or_none([](const TargetModel& tm) { return !tm.remeasured_spread.empty(); }, "re-measurement spreads");
    if (calibrated && std::any_of(m.models_.begin(), m.models_.end(), [&](const TargetModel& tm) {
          return tm.unseen_networks != m.models_.front().unseen_networks;
        }))
      throw ModelError("model bundle " + dir.string() + ": its targets' unseen-architecture widths claim different networks");
    if (calibrated && m.knows_trained_) {  // as many networks as it trained on (more would bound levels it cannot)
      std::set<std::string> networks;
      for (const auto& k : m.trained_configs_)
        if (const auto c = parse_config_key(k)) networks.insert(calibration_network_key(*c));
      if (static_cast<int>(networks.size()) != m.models_.front().unseen_networks)
        throw ModelError("model bundle " + dir.string() + ": its unseen-architecture widths claim " +
                         std::to_string(m.models_.front().unseen_networks) + " networks; it trained on " +
                         std::to_string(networks.size()));
    }
  } catch (const nlohmann::json::exception& e) {
    throw ModelError("corrupted model manifest in " + dir.string() + ": " + detail::json_error_text(e.what()));
  }
  check_loaded_model(m, man, dir);
  return m;
}

}  // namespace carb
