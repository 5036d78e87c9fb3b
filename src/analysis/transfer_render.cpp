// The edges of a TransferResult: the `carb transfer --format json` document and the text tables.
#include <nlohmann/json.hpp>
#include <ostream>

#include "carb/text_table.hpp"
#include "carb/transfer.hpp"

namespace carb {
namespace {

using nlohmann::json;

json few_shot_json(const std::vector<FewShotPoint>& points) {
  json out = json::array();
  for (const auto& p : points) {
    json e = {{"k", p.k}, {"repeats", p.repeats}};
    e["mae"] = p.mae ? json(*p.mae) : json(nullptr);
    e["mape"] = p.mape ? json(*p.mape) : json(nullptr);
    if (!p.note.empty()) e["note"] = p.note;
    if (p.mae) e["nonpositive_share"] = p.nonpositive_share;
    out.push_back(std::move(e));
  }
  return out;
}

json fit_json(const TransferFit& f) {
  if (!f.available) return {{"available", false}, {"reason", f.reason}, {"n", f.n}};
  return {{"slope", f.slope}, {"intercept", f.intercept}, {"r2", f.r2}, {"spearman", f.spearman}, {"n", f.n}};
}

json zero_shot_json(const ZeroShot& z) {
  if (!z.available) return {{"available", false}, {"reason", z.reason}};
  return {{"mae", z.mae}, {"mape", z.mape}, {"r2", z.r2}, {"n", z.n}, {"nonpositive_share", z.nonpositive_share}};
}

void few_shot_table(const std::map<std::string, std::vector<FewShotPoint>>& sec,
                    const std::map<std::string, TransferFit>& fits, const std::string& what, int repeats,
                    std::ostream& out) {
  out << "\n" << what << " (mean over " << repeats << " draws)\n";
  TextTable f({"target", "k", "mae", "mape %", "note"});
  for (const auto& [t, points] : sec)
    for (const auto& p : points)  // a "-" says why (tenth hostile pass: only JSON said it)
      f.add({t, std::to_string(p.k), p.mae ? fmt_num(*p.mae) : "-", p.mape ? fmt_num(*p.mape) : "-", p.table_note()});
  f.print(out);
  // A target without a fit has no draws either: said, not an empty table (seventy-seventh hostile pass).
  for (const auto& [t, fit] : fits)
    if (!fit.available && !sec.count(t)) out << t << ": none (" << fit.reason << ")\n";
}

}  // namespace

std::string FewShotPoint::table_note(int digits) const {
  if (!mae) return note;
  std::string out = note;
  if (nonpositive_share > 0)
    out += (out.empty() ? "" : "; ") + fmt_num(100 * nonpositive_share, digits) + "% of predictions <= 0, scored as they are";
  return out;
}

json TransferResult::to_json() const {
  json doc = {{"source", {{"platforms", source_platforms}}},
              {"target", {{"platforms", target_platforms}}},
              {"seed", seed},
              {"repeats", repeats},
              {"targets", json::object()},
              {"few_shot", json::object()}};
  for (const auto& [t, f] : targets) doc["targets"][t] = fit_json(f);
  for (const auto& [t, points] : few_shot) doc["few_shot"][t] = few_shot_json(points);
  doc["notes"] = notes;
  if (model) {
    doc["model"] = {{"platform", model->platform}, {"targets", model->targets}};
    if (!model->note.empty()) doc["model"]["note"] = model->note;
    doc["zero_shot"] = json::object();
    doc["few_shot_model"] = json::object();
    for (const auto& [t, z] : zero_shot) doc["zero_shot"][t] = zero_shot_json(z);
    for (const auto& [t, points] : few_shot_model) doc["few_shot_model"][t] = few_shot_json(points);
  }
  return doc;
}

void render_transfer_table(const TransferResult& r, std::ostream& out) {
  out << "transfer " << json(r.source_platforms).dump() << " -> " << json(r.target_platforms).dump()
      << "\n";
  for (const auto& n : r.notes) out << "note: " << n << '\n';
  out << '\n';
  TextTable fits({"target", "n", "slope", "intercept", "r2", "spearman"});
  for (const auto& [t, f] : r.targets)
    if (f.available)
      fits.add({t, std::to_string(f.n), fmt_num(f.slope), fmt_num(f.intercept), fmt_num(f.r2),
                fmt_num(f.spearman)});
  fits.print(out);
  // A target with no fit says why here too, not only in --format json (one common configuration
  // printed an empty table and nothing else).
  for (const auto& [t, f] : r.targets)
    if (!f.available) out << t << ": no fit (" << f.reason << ")\n";
  if (r.model) {
    out << "\nzero-shot (model trained on " << r.model->platform << ")\n";
    if (!r.model->note.empty()) out << "note: " << r.model->note << '\n';
    TextTable z({"target", "mae", "mape %", "r2", "note"});
    for (const auto& [t, v] : r.zero_shot)
      if (v.available)
        z.add({t, fmt_num(v.mae), fmt_num(v.mape), fmt_num(v.r2),
               v.nonpositive_share > 0 ? fmt_num(100 * v.nonpositive_share, 3) + "% of predictions <= 0, scored as they are"
                                       : ""});
    z.print(out);
    for (const auto& [t, v] : r.zero_shot)
      if (!v.available) out << t << ": no zero-shot score (" << v.reason << ")\n";
  }
  few_shot_table(r.few_shot, r.targets, "few-shot calibration of the source measurements", r.repeats, out);
  if (r.model)
    few_shot_table(r.few_shot_model, r.targets, "few-shot calibration of the model's predictions", r.repeats, out);
}

}  // namespace carb
