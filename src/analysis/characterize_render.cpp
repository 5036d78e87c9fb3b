// Human renderings of a Characterization: one set of tables built from the struct, printed as
// markdown (headings + pipe tables) or as aligned text tables.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "carb/characterize.hpp"
#include "carb/text_table.hpp"

namespace carb {
namespace {

std::string num(double v, const std::string& suffix = "") { return fmt_num(v, 3) + suffix; }
std::string num(const std::optional<double>& v, const std::string& suffix = "") {
  return v ? num(*v, suffix) : "-";
}

NamedTable unavailable_table(const std::string& title, const Availability& sec) {
  return {title, {}, {}, "unavailable: " + sec.reason};
}

// A list of names as the renderings have always shown it: a compact JSON array.
template <class Names>
std::string name_list(const Names& names) {
  return nlohmann::json(names).dump();
}

// Fewer rows than this behind a mean, and a ratio of means is flagged as resting on a row or two.
constexpr int kFewRows = 3;

void scaling_tables(const ScalingSection& sec, std::vector<NamedTable>& out) {
  if (!sec.available) return out.push_back(unavailable_table("Scaling ratio per knob", sec));
  for (const auto& [fam, per_target] : sec.families) {
    NamedTable t{"Scaling ratio per knob (" + to_string(fam) + ")", {"target"}, {}, sec.definition};
    // Sixty-second hostile pass: pooled means compare different networks where the space leaves
    // some out at some levels; the matched table compares each network with itself.
    NamedTable m{"Scaling ratio per knob, matched (" + to_string(fam) + ")", {"target"}, {},
                 "mean at the knob's highest level / at its lowest (precision: the type the pooled means find "
                 "costliest / the cheapest, as in the pooled table), over only the configurations measured at both (every other knob equal); "
                 "(configurations)"};
    int thin_cells = 0, confounded_cells = 0, differing_cells = 0;
    for (Knob k : kKnobs) t.header.push_back(to_string(k)), m.header.push_back(to_string(k));
    for (const char* target : kTargets) {  // cascade order, not the map's alphabetical one
      const auto it = per_target.find(target);
      if (it == per_target.end()) continue;
      std::vector<std::string> row{target}, matched{target};
      for (const KnobScaling& ks : it->second) {
        // Fifty-eighth hostile pass: a ratio of two single rows (which differed in every other
        // knob) read like any other; only the JSON had the counts.
        const bool thin = ks.available && std::min(ks.min.n, ks.max.n) < kFewRows;
        thin_cells += thin;
        // Sixty-eighth: on the H200's 44 bottleneck rows, depth, width and precision changed
        // together, and each read 29.1x, one group against the other, as if each knob scaled so.
        const bool confounded = ks.pooled_confounded();
        confounded_cells += confounded;
        // Seventh of December: the same way as the matched ratio, by a different amount (cpu-2t's
        // basic latency 1.48x along depth, pooled, 2.65x matched) read like any other ratio.
        const bool differs = ks.pooled_size_differs();
        differing_cells += differs;
        row.push_back(ks.available ? num(ks.ratio, "x") + (thin ? "*" : "") + (confounded ? "!" : "") + (differs ? "~" : "")
                                   : "-");
        matched.push_back(ks.available && ks.matched_ratio
                              ? num(ks.matched_ratio, "x") + " (" + std::to_string(ks.matched_pairs) + ")"
                              : "-");
      }
      t.rows.push_back(row);
      m.rows.push_back(matched);
    }
    if (thin_cells > 0)
      t.note += "; * = its lowest or highest mean is of fewer than " + std::to_string(kFewRows) +
                " rows (the counts: --format json)";
    if (confounded_cells > 0)
      t.note += "; ! = no configuration was measured at both the knob's lowest and highest level, or those "
                "that were scale the other way: the ratio compares different configurations (other knobs "
                "changed with it), not this knob (the matched table does not)";
    if (differing_cells > 0)
      t.note += "; ~ = the pooled means change from the knob's lowest level to its highest (precision: from the "
                "cheapest type to the costliest) by a factor more than " + num(kPooledMatchedTolerance, "x") +
                " away from the matched ratio (this max / min ratio need not equal that change): configurations "
                "measured at one end only move the pooled means; read the matched table, with its count of "
                "configurations";
    out.push_back(t);
    out.push_back(m);
  }
}

void family_table(const FamilySection& sec, std::vector<NamedTable>& out) {
  if (!sec.available) return out.push_back(unavailable_table("Family comparison", sec));
  NamedTable t{"Family comparison",
               {"target", "basic mean", "bottleneck mean", "bottleneck/basic", "rows (basic, bottleneck)"},
               {},
               sec.definition};
  // Hundred-and-second hostile pass: a ratio of 1 bottleneck row against 3 basic ones read like one of
  // hundreds (the counts were in --format json only); marked as scaling and precision mark theirs.
  bool any_thin = false;
  for (const char* target : kTargets)
    if (const auto it = sec.targets.find(target); it != sec.targets.end() && it->second.available) {
      const FamilyRatio& f = it->second;
      const bool thin = f.n_basic < kFewRows || f.n_bottleneck < kFewRows;
      any_thin = any_thin || thin;
      t.rows.push_back({target, num(f.basic_mean), num(f.bottleneck_mean), num(f.ratio, "x") + (thin ? "*" : ""),
                        std::to_string(f.n_basic) + ", " + std::to_string(f.n_bottleneck)});
    }
  if (any_thin) t.note += "; * = a mean of fewer than " + std::to_string(kFewRows) + " rows on one side";
  out.push_back(t);
}

void precision_table(const PrecisionSection& sec, std::vector<NamedTable>& out) {
  if (!sec.available) return out.push_back(unavailable_table("Precision ratios", sec));
  NamedTable t{
      "Precision ratios", {"comparison", "target", "mean ratio", "min", "max", "pairs"}, {}, sec.definition};
  int thin_pairs = 0;
  for (const auto& cmp : sec.comparisons)
    for (const auto& [target, v] : cmp.targets) {
      if (v.available) {
        // Sixty-second hostile pass: a mean ratio of two pairs read like one of hundreds.
        const bool thin = v.pairs < kFewRows;
        thin_pairs += thin;
        t.rows.push_back({cmp.name(), target, num(v.mean_ratio, "x") + (thin ? "*" : ""), num(v.min_ratio),
                          num(v.max_ratio), std::to_string(v.pairs)});
      }
      else  // the reason, not only in --format json (hundred-and-second hostile pass)
        t.rows.push_back({cmp.name(), target, "-", "-", "-", "0 (" + v.reason + ")"});
    }
  if (thin_pairs > 0) t.note += "; * = a mean of fewer than " + std::to_string(kFewRows) + " pairs";
  out.push_back(t);
}

void efficiency_table(const EfficiencySection& sec, std::vector<NamedTable>& out) {
  NamedTable t{"Efficiency per batch tier (pooled)", {"metric"}, {}, sec.definition};
  // Twenty-fifth hostile pass: only the JSON said that rows past the last tier were left out.
  if (sec.rows_outside_tiers > 0)
    t.note += (t.note.empty() ? "" : "; ") + rows_past_tiers_note(sec.rows_outside_tiers);
  for (const auto& b : kBatchTiers) t.header.push_back("batch " + b.label());
  t.header.push_back("spread");
  // Fifty-eighth hostile pass: a tier's figure from one row read like one from hundreds.
  // One "rows" line when every metric has the same rows per tier, else one per metric.
  std::vector<std::pair<std::string, std::vector<std::string>>> counts;
  for (const EfficiencyMetric& m : sec.metrics) {
    if (!m.available) continue;
    std::vector<std::string> n;
    for (const auto& tier : m.tiers) n.push_back(std::to_string(tier.n));
    counts.emplace_back(m.name, n);
  }
  const bool same = std::all_of(counts.begin(), counts.end(), [&](const auto& c) { return c.second == counts[0].second; });
  for (const auto& [name, n] : counts) {
    std::vector<std::string> row{same ? std::string("rows") : "rows (" + name + ")"};
    row.insert(row.end(), n.begin(), n.end());
    row.push_back("-");
    t.rows.push_back(row);
    if (same) break;
  }
  for (const EfficiencyMetric& m : sec.metrics) {
    std::vector<std::string> row{m.name};
    if (!m.available) {
      row.resize(t.header.size(), "-");
      row.back() = m.reason;
    } else {
      for (const auto& tier : m.tiers) row.push_back(num(tier.pooled));
      row.push_back(num(m.spread, "x"));
    }
    t.rows.push_back(row);
  }
  out.push_back(t);
}

void divergence_tables(const DivergenceSection& sec, std::vector<NamedTable>& out) {
  if (!sec.available) return out.push_back(unavailable_table("Energy-latency divergence", sec));
  NamedTable t{"Energy-latency divergence",
               {"batch tier", "SM", "n", "mean energy J", "mean latency ms", "energy ratio", "latency ratio",
                "divergence"},
               {},
               sec.definition + " (SM threshold " + num(sec.sm_threshold) + "%, " +
                   (sec.threshold_given ? "given" : "median avg_sm_util") + ")"};
  // Hundred-and-second hostile pass: every ratio "-" with the reason in --format json only.
  if (!sec.baseline_note.empty()) t.note += "; " + sec.baseline_note;
  for (const auto& c : sec.cells)
    t.rows.push_back({c.tier.label(), to_string(c.sm), std::to_string(c.n), num(c.mean_energy_j),
                      num(c.mean_latency_ms), num(c.energy_ratio, "x"), num(c.latency_ratio, "x"),
                      num(c.divergence, "x")});
  out.push_back(t);
}

}  // namespace

std::vector<NamedTable> characterization_tables(const Characterization& ch) {
  std::vector<NamedTable> out;
  scaling_tables(ch.scaling, out);
  family_table(ch.family_comparison, out);
  precision_table(ch.precision, out);
  if (ch.efficiency.available)
    efficiency_table(ch.efficiency, out);
  else
    out.push_back(unavailable_table("Efficiency per batch tier", ch.efficiency));
  divergence_tables(ch.divergence, out);
  return out;
}

void render_characterization_md(const Characterization& ch, std::ostream& out) {
  const DatasetSummary& d = ch.dataset;
  out << "# Characterization\n\n"
      << d.ok_rows << " ok rows of " << d.rows << "; platforms: " << name_list(d.platforms)
      << "; targets: " << name_list(d.targets) << "\n";
  for (const auto& t : characterization_tables(ch)) {
    out << "\n## " << t.title << "\n\n";
    if (!t.note.empty()) out << "_" << t.note << "_\n\n";
    if (t.rows.empty()) continue;
    auto line = [&](const std::vector<std::string>& r) {
      out << '|';
      for (const auto& c : r) out << ' ' << c << " |";
      out << '\n';
    };
    line(t.header);
    line(std::vector<std::string>(t.header.size(), "---"));
    for (const auto& r : t.rows) line(r);
  }
}

void render_characterization_table(const Characterization& ch, std::ostream& out) {
  const DatasetSummary& d = ch.dataset;
  out << "characterization: " << d.ok_rows << " ok rows, platforms " << name_list(d.platforms) << ", targets "
      << name_list(d.targets) << "\n";
  for (const auto& t : characterization_tables(ch)) {
    out << "\n== " << t.title << " ==\n";
    if (t.rows.empty()) {
      out << t.note << '\n';
      continue;
    }
    // The definition travels with the numbers (seventeenth hostile pass: pooled-mean ratios on a
    // capped grid read as effects without it; markdown and JSON carried it, the table did not).
    if (!t.note.empty()) out << t.note << '\n';
    TextTable tt(t.header);
    for (const auto& r : t.rows) tt.add(r);
    tt.print(out);
  }
}

}  // namespace carb
