// Cross-platform transfer: joins two datasets on configuration, fits y_B = a*y_A + b per
// target, ranks them against each other, and scores zero-shot and few-shot calibration.
#include "carb/transfer.hpp"

#include <algorithm>
#include <cmath>

#include <map>
#include <random>
#include <set>

#include "carb/error.hpp"
#include "carb/metrics.hpp"
#include "carb/prediction_io.hpp"
#include "carb/text_table.hpp"
#include "util/join.hpp"
#include "util/stop_signal.hpp"

namespace carb {
namespace {

std::map<std::string, const Record*> ok_by_key(const Dataset& d, const char* role) {
  std::map<std::string, const Record*> out;
  for (const auto& r : d.rows) {
    if (r.status != Status::ok) continue;
    const std::string key = network_key(r.config);  // joined by network: 0.251 is 0.25's
    if (!out.emplace(key, &r).second)
      throw DataError(std::string(role) + " dataset has configuration " + key +
                      " twice (pooled platforms? give one platform per dataset)");
  }
  return out;
}

std::set<std::string> platforms_of(const Dataset& d) {
  std::set<std::string> p;
  for (const auto& r : d.rows)
    if (r.status == Status::ok) p.insert(r.platform);
  return p;
}

// The first k of a seeded partial Fisher-Yates shuffle of 0..n-1 (calibration set), the rest
// after it (evaluation set). Written out, not std::shuffle, so draws match across std libraries.
std::vector<std::size_t> draw(std::size_t n, std::size_t k, std::mt19937_64& rng) {
  std::vector<std::size_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) idx[i] = i;
  for (std::size_t i = 0; i < k; ++i) std::swap(idx[i], idx[i + rng() % (n - i)]);
  return idx;
}

// Below this many common configurations a fit is said to rest on few (TransferResult::notes).
constexpr std::size_t kFewConfigurations = 10;
// Below this R² a line through the common configurations is said to explain little (TransferResult::notes).
constexpr double kPoorTransferR2 = 0.5;

// Few-shot calibration of `x` (source measurements or model predictions) onto the target's
// measurements `y`: per k, fit the line on k drawn pairs, score the rest, average over repeats.
std::vector<FewShotPoint> few_shot(const std::vector<double>& x, const std::vector<double>& y,
                                   const TransferOptions& o, const std::string& target) {
  std::vector<FewShotPoint> out;
  for (int k : o.ks) {
    const std::size_t n = x.size(), kk = static_cast<std::size_t>(k);
    if (k < 2 || kk >= n) {
      out.push_back({k, std::nullopt, std::nullopt, 0,
                     "needs 2 <= k < " + std::to_string(n) + " joined configurations"});
      continue;
    }
    // One stream per (target, k): adding a k or a target never changes the other draws.
    std::seed_seq seq{o.seed, static_cast<unsigned>(k),
                      static_cast<unsigned>(std::hash<std::string>{}(target))};
    std::mt19937_64 rng(seq);
    // Hundred-and-second hostile pass: "mean over 20 draws" of 3 configurations at k = 2, where only 3
    // calibration sets exist. C(n, k), counted up to the draws.
    double sets = 1;
    for (std::size_t i = 0; i < kk && sets < o.repeats; ++i) sets = sets * static_cast<double>(n - i) / static_cast<double>(i + 1);
    std::string note =
        sets < o.repeats ? "only " + fmt_num(std::round(sets), 6) + " distinct calibration sets of " + std::to_string(k) +
                               " in " + std::to_string(n) + ": the draws repeat them"
                         : "";
    // Hundred-and-seventeenth hostile pass: k = 55 of 56 scored each draw on one configuration,
    // printed like any other point.
    if (const std::size_t scored = n - kk; scored < kFewConfigurations)
      note += (note.empty() ? "" : "; ") + std::string("each draw scores only ") + std::to_string(scored) +
                  (scored == 1 ? " configuration" : " configurations") + ", the rest of " + std::to_string(n) +
                  ": its MAE and MAPE say little";
    double mae = 0, mape = 0, nonpositive = 0;
    for (int r = 0; r < o.repeats; ++r) {
      // Hundred-and-fourth hostile pass: Ctrl-C reached a Python caller only when every draw was done.
      detail::throw_if_stopped("transfer", "nothing was written");
      const auto idx = draw(n, kk, rng);
      std::vector<double> cx, cy, truth, pred;
      for (std::size_t i = 0; i < kk; ++i) cx.push_back(x[idx[i]]), cy.push_back(y[idx[i]]);
      const LineFit f = fit_line(cx, cy);
      for (std::size_t i = kk; i < n; ++i)
        truth.push_back(y[idx[i]]), pred.push_back(f.slope * x[idx[i]] + f.intercept);
      const FitMetrics m = fit_metrics(truth, pred);
      mae += m.mae;
      mape += m.mape;
      nonpositive += static_cast<double>(std::count_if(pred.begin(), pred.end(), [](double v) { return v <= 0; })) /
                     static_cast<double>(pred.size());
    }
    out.push_back({k, mae / o.repeats, mape / o.repeats, o.repeats, note, nonpositive / o.repeats});
  }
  return out;
}

// Source-platform telemetry of the joined configurations: the source model was trained with
// its own platform's utilization, so that is what it is fed (not the target's).
std::vector<Telemetry> telemetry_for(const Dataset& source, const std::vector<Config>& configs) {
  std::map<std::string, Telemetry> by_key;
  for (const auto& r : source.rows)
    if (r.status == Status::ok) by_key[network_key(r.config)] = {r.avg_sm_util, r.avg_mem_util};
  std::vector<Telemetry> out;
  for (const auto& c : configs) out.push_back(by_key[network_key(c)]);
  return out;
}

void add_model_sections(const JoinedTarget& j, const CarbModel& model, const std::vector<Telemetry>& tel,
                        const TransferOptions& o, TransferResult& res) {
  if (!model.has_target(j.target)) {
    ZeroShot z;
    z.available = false;
    z.reason = "the model does not predict " + j.target;
    res.zero_shot[j.target] = z;
    return;
  }
  const auto cols =
      model.predict_columns(j.configs, model.schema().telemetry ? tel : std::vector<Telemetry>{});
  const std::vector<double>& pred = cols.at(j.target);
  const FitMetrics m = fit_metrics(j.dest, pred);
  const double nonpositive = static_cast<double>(count_nonpositive(pred));
  res.zero_shot[j.target] = {true, "", m.mae, m.mape, m.r2, m.n, pred.empty() ? 0.0 : nonpositive / pred.size()};
  res.few_shot_model[j.target] = few_shot(pred, j.dest, o, j.target);
}

}  // namespace

std::vector<JoinedTarget> join_targets(const Dataset& source, const Dataset& dest) {
  const auto a = ok_by_key(source, "source"), b = ok_by_key(dest, "target");
  std::size_t common = 0;
  std::vector<JoinedTarget> out;
  for (const char* t : kTargets) {
    JoinedTarget j{t, {}, {}, {}};
    for (const auto& [key, ra] : a) {
      auto it = b.find(key);
      if (it == b.end()) continue;
      if (std::string_view(t) == kTargets[0])
        ++common;  // by value: a pointer compare fails across shared libraries
      auto va = ra->value(t), vb = it->second->value(t);
      if (!va || !vb) continue;
      j.configs.push_back(ra->config);
      j.source.push_back(*va);
      j.dest.push_back(*vb);
    }
    if (!j.configs.empty()) out.push_back(std::move(j));
  }
  if (common == 0)
    throw DataError("the datasets share no configuration (source " + std::to_string(a.size()) +
                    " ok rows, target " + std::to_string(b.size()) + " ok rows)");
  if (out.empty())
    throw DataError("the datasets share " + std::to_string(common) +
                    " configurations but no target is measured on both");
  return out;
}

TransferResult transfer(const Dataset& source, const Dataset& dest, const TransferOptions& o,
                        const CarbModel* model) {
  if (o.repeats < 1) throw InputError("transfer: repeats must be at least 1");
  // Twentieth hostile pass: k = 5 given twice printed its rows twice (the CLI's check, here so that
  // every caller has it).
  if (std::set<int>(o.ks.begin(), o.ks.end()).size() != o.ks.size())
    throw InputError("transfer: a calibration set size k is listed twice");
  // Seventy-sixth hostile pass: NaN source latencies were joined, and a Spearman of them reported.
  for (const auto& [d, which] : {std::pair<const Dataset*, const char*>{&source, "source"}, {&dest, "target"}}) {
    try {
      check_learnable_rows(*d);
    } catch (const DataError& e) {
      throw DataError(std::string("the ") + which + " data's " + e.what());
    }
  }
  const auto joined = join_targets(source, dest);
  // Seventy-second hostile pass: a copy of the source (refused under its own path) fitted y = x,
  // R² 1, as if two platforms agreed perfectly. Two rounds of one platform differ; a copy does not.
  if (platforms_of(source) == platforms_of(dest) &&
      std::all_of(joined.begin(), joined.end(), [](const JoinedTarget& j) { return j.source == j.dest; })) {
    std::set<std::string> common;
    for (const auto& j : joined)
      for (const auto& c : j.configs) common.insert(network_key(c));
    throw InputError("the " + std::to_string(common.size()) + " configuration" + (common.size() == 1 ? "" : "s") +
                     " both datasets measured " + (common.size() == 1 ? "holds" : "hold") + " the same values on the same platform (the same file, or one "
                     "holding the other's rows?): a platform compared with its own measurements fits y = x by construction");
  }
  TransferResult res;
  res.source_platforms = platforms_of(source);
  res.target_platforms = platforms_of(dest);
  // Hundred-and-second hostile pass: a platform against its own re-measurement (values rounded, or
  // another day's run under another protocol) read as a transfer with slope 1 and R² 1.
  if (res.source_platforms == res.target_platforms) {
    const auto protocols = [](const Dataset& d) {
      std::set<std::string> out;
      for (const auto& r : d.rows)
        if (r.status == Status::ok) {
          const auto it = r.extra.find("protocol_id");
          out.insert(it == r.extra.end() || it->second.empty() ? "none recorded" : it->second);
        }
      return out;
    };
    const auto pa = protocols(source), pb = protocols(dest);
    res.notes.push_back("both datasets measure " + join(res.source_platforms) +
                        ": this compares two measurements of one platform (their repeatability), not a transfer "
                        "between platforms" +
                        (pa != pb ? "; their protocols differ (" + join(pa) + " against " + join(pb) + ")" : ""));
  }
  res.seed = o.seed;
  res.repeats = o.repeats;
  // A target one side measured and the other did not is said, not dropped (seventy-seventh hostile
  // pass: h200 -> cpu-1t left energy out without a word).
  for (const char* t : kTargets) {
    if (std::any_of(joined.begin(), joined.end(), [&](const JoinedTarget& j) { return j.target == t; })) continue;
    const auto measures = [&](const Dataset& d) {
      return std::any_of(d.rows.begin(), d.rows.end(), [&](const Record& r) { return r.status == Status::ok && r.value(t); });
    };
    const bool in_source = measures(source), in_dest = measures(dest);
    if (!in_source && !in_dest) continue;
    TransferFit f;
    f.available = false;
    f.reason = !in_dest ? "the target data has no " + std::string(t) + ": the source alone measured it"
               : !in_source ? "the source data has no " + std::string(t) + ": the target alone measured it"
                            : "no configuration has " + std::string(t) + " measured on both";
    res.targets[t] = f;
  }
  if (model) {
    res.model = TransferModel{model->platform(), model->targets(), ""};
    if (!res.source_platforms.count(model->platform()))
      res.model->note = "the model was trained on " + model->platform() + ", not on a source platform";
    if (const auto ref = model->drift_reference_ms(); ref && model->has_target("latency_ms"))
      res.model->note += std::string(res.model->note.empty() ? "" : "; ") +
                         "it learned latency corrected for host drift (reference " + fmt_num(*ref) +
                         " ms): its zero-shot latency is compared with the raw measurements";
    // A model of the target platform scored on the target's own rows (twenty-fourth hostile pass:
    // a zero-shot R² of 0.9985 from 522 of 653 rows it trained on, said nowhere).
    if (res.target_platforms.count(model->platform()) && !joined.empty() && model->knows_trained_configs()) {
      std::size_t seen = 0;
      for (const auto& c : joined.front().configs) seen += model->trained_on(c);
      // "Mostly" only where most are (hundred-and-fourth hostile pass: said of 87 of 653).
      const std::size_t n = joined.front().configs.size();
      if (seen > 0)
        res.model->note += std::string(res.model->note.empty() ? "" : "; ") + "it trained on the target's own " +
                           "measurements of " + std::to_string(seen) + " of the " + std::to_string(n) +
                           " joined configurations, so " +
                           (2 * seen > n ? "its zero-shot scores are mostly in-sample"
                                         : "those of its zero-shot scores are in-sample");
    }
    // Thirty-third hostile pass: a model trained on fp16 only was scored zero-shot and few-shot on
    // fp32 configurations, guesses every one, and nothing said so (evaluate and screen do).
    std::map<std::string, Config> scored;
    for (const auto& j : joined)
      for (const auto& c : j.configs) scored.emplace(config_key(c), c);
    std::vector<Config> configs;
    for (const auto& [key, c] : scored) configs.push_back(c);
    if (const std::string note = guesses_note(*model, configs); !note.empty())
      res.model->note += std::string(res.model->note.empty() ? "" : "; ") + note;
  }
  for (const auto& j : joined) {
    // Fifty-seventh hostile pass: two configurations were "r2 1, spearman 1", which any two points
    // give: a line through them says nothing of how the platforms relate.
    if (j.configs.size() < 3) {
      TransferFit f;
      f.n = j.configs.size();
      f.available = false;
      f.reason = j.configs.size() == 1
                     ? "only one configuration measured on both"
                     : "only two configurations measured on both: a line fits any two exactly (R² 1, rank "
                       "correlation ±1), so it would say nothing; measure a third";
      res.targets[j.target] = f;
      continue;
    }
    LineFit f = fit_line(j.source, j.dest);
    // A source that never varies defines no slope (0/0); fit_line's 0 is only the least-squares
    // fallback the few-shot draws need (fourteenth hostile pass: the table printed slope 0).
    const bool constant = std::all_of(j.source.begin(), j.source.end(), [&](double v) { return v == j.source.front(); });
    if (constant) f.slope = kUndefined;
    res.targets[j.target] = {j.configs.size(),          true, "", f.slope, f.intercept, f.r2,
                             spearman(j.source, j.dest)};
    // Three or four points fit a line closely whatever the platforms do (left by the hundred-and-
    // second hostile pass: three configurations were printed as a fit with nothing but n beside it).
    if (j.configs.size() < kFewConfigurations)
      res.notes.push_back(j.target + "'s line rests on only " + std::to_string(j.configs.size()) +
                          " configurations measured on both: its slope, R² and rank correlation may change with "
                          "each one more; " + std::to_string(kFewConfigurations) + " or more make a fit worth reading");
    // A line that explains little of the target was printed as a fit like any other (noted and left
    // by earlier sessions): the few-shot calibrations below inherit it.
    if (!constant && std::isfinite(f.r2) && f.r2 < kPoorTransferR2)
      res.notes.push_back(j.target + "'s line explains little of the target (R² " + fmt_num(f.r2) + " over " +
                          std::to_string(j.configs.size()) + " configurations measured on both): the source's " +
                          j.target + " does not predict the target's on a line, and the few-shot calibrations "
                          "rest on that line");
    res.few_shot[j.target] = few_shot(j.source, j.dest, o, j.target);
    // Seventy-seventh hostile pass: scored without a word, as if the source told the target apart.
    if (constant)
      for (FewShotPoint& p : res.few_shot[j.target])
        if (p.mae) p.note = "the source never varies: each fit learns an offset only" + (p.note.empty() ? "" : "; " + p.note);
    if (model) add_model_sections(j, *model, telemetry_for(source, j.configs), o, res);
    // Hundred-and-second hostile pass: a target that never varies scored MAE 0, MAPE 0 as if the
    // calibration had learned it; any offset fits a constant.
    if (std::all_of(j.dest.begin(), j.dest.end(), [&](double v) { return v == j.dest.front(); }))
      for (auto* sec : {&res.few_shot, &res.few_shot_model})
        if (auto it = sec->find(j.target); it != sec->end())
          for (FewShotPoint& p : it->second)
            if (p.mae)
              p.note = "the target never varies: an offset fits it exactly, which says nothing of a transfer" +
                       (p.note.empty() ? "" : "; " + p.note);
  }
  return res;
}

}  // namespace carb
