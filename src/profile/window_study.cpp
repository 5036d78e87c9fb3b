// The window study: one long trace per configuration, cut afterwards into windows of each
// nominal length, each evaluated with plain reads and tick-aligned, against the whole trace.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "carb/dataset.hpp"
#include "carb/meter.hpp"
#include "data/csv.hpp"
#include "carb/error.hpp"
#include "device_identity.hpp"
#include "carb/profiler.hpp"
#include "carb/warning.hpp"
#include "data/keep_earlier.hpp"
#include "energy_window.hpp"
#include "progress.hpp"
#include "store_lock.hpp"
#include "util/temp_owner.hpp"

namespace carb {
namespace {

constexpr const char* kHeader = kWindowStudyHeader;

std::vector<CounterChange> counter_of(const EnergyTrace& t) {
  std::vector<CounterChange> c;
  for (std::size_t i = 0; i < t.counter_t_s.size() && i < t.counter_j.size(); ++i)
    c.push_back({t.counter_t_s[i], t.counter_j[i]});
  return c;
}

// Energy per pass over passes (a, b] (pass a's end to pass b's end; a = -1 is the trace's start).
void add_window(std::vector<WindowStudyRow>& out, const EnergyTrace& t, const std::vector<CounterChange>& c,
                WindowStudyRow base, long a, long b) {
  const double from = a < 0 ? t.start_s : t.pass_end_s[a], to = t.pass_end_s[b];
  base.start_s = from - t.start_s;
  base.seconds = to - from;
  base.passes = static_cast<int>(b - a);
  if (!base.reference)
    if (auto r = read_between(c, from, to)) {
      WindowStudyRow row = base;
      row.method = "reads";
      row.ticks = r->ticks;
      row.energy_per_pass_j = r->joules / row.passes;
      out.push_back(row);
    }
  if (auto k = tick_aligned(c, from, to)) {
    WindowStudyRow row = base;
    row.method = "ticks";
    row.ticks = k->ticks;
    row.energy_per_pass_j = k->watts() * base.seconds / row.passes;
    out.push_back(row);
  }
}

std::string rows_text(const std::vector<WindowStudyRow>& rows) {
  std::ostringstream out;
  for (const auto& r : rows) {
    const Config& k = r.config;
    csv::write_row(out, {to_string(k.family), std::to_string(k.depth), format_width(k.width),
                         std::to_string(k.resolution), std::to_string(k.batch), to_string(k.precision),
                         std::to_string(r.repeat), extra_number(r.window_s), r.reference ? "1" : "0", r.method,
                         extra_number(r.start_s), extra_number(r.seconds), std::to_string(r.passes),
                         std::to_string(r.ticks), extra_number(r.energy_per_pass_j)});
  }
  return out.str();
}

// "family,depth,width,resolution,batch,precision,repeat": a trace's identity in the CSV.
std::string trace_id(const std::vector<std::string>& f) {
  std::string id;
  for (std::size_t i = 0; i < 7 && i < f.size(); ++i) id += (i ? "," : "") + f[i];
  return id;
}

std::string trace_id(const Config& c, int repeat) {
  return trace_id({to_string(c.family), std::to_string(c.depth), format_width(c.width), std::to_string(c.resolution),
                   std::to_string(c.batch), to_string(c.precision), std::to_string(repeat)});
}

}  // namespace

std::vector<WindowStudyRow> study_windows(const EnergyTrace& t, int repeat, const std::vector<double>& windows_s) {
  std::vector<WindowStudyRow> out;
  if (t.status != Status::ok || t.pass_end_s.empty()) return out;
  const auto c = counter_of(t);
  WindowStudyRow base;
  base.config = t.config;
  base.repeat = repeat;
  const long n = static_cast<long>(t.pass_end_s.size());
  base.reference = true;
  base.window_s = t.pass_end_s.back() - t.start_s;
  add_window(out, t, c, base, -1, n - 1);
  base.reference = false;
  for (double w : windows_s) {
    base.window_s = w;
    long a = -1;  // consecutive windows, each the fewest passes that last at least w
    for (long b = 0; b < n; ++b) {
      const double from = a < 0 ? t.start_s : t.pass_end_s[a];
      if (t.pass_end_s[b] - from < w) continue;
      add_window(out, t, c, base, a, b);
      a = b;
    }
  }
  return out;
}

bool looks_like_window_study(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string first;
  std::getline(in, first);
  return first == kHeader;
}

WindowStudySummary run_window_study(const std::vector<Config>& configs, const WindowStudyOptions& o) {
  namespace fs = std::filesystem;
  if (o.out.empty() || !o.out.has_filename()) throw InputError("--out needs a file name");
  if (!(o.trace_s > 0) || o.repeats < 1 || o.warmup < 0) throw InputError("the trace length and repeats must be positive");
  for (double w : o.windows_s)
    if (!(w > 0 && w < o.trace_s))
      throw InputError("every window must be longer than 0 and shorter than the trace (" + extra_number(o.trace_s) +
                       " s), not " + extra_number(w));
  // What is at both names before the checks: each write replaces only that, then only what the
  // previous write left, so a file moved onto --out or its sidecar during the checks or the study is
  // kept (with an error). Thirty-seventh hostile pass: taken after the checks and the lock, it took
  // in a file moved there in between, which the first write then replaced (exit 0).
  const fs::path side(o.out.string() + ".json");
  std::optional<csv::FileId> out_was = csv::file_id(o.out), side_was = csv::file_id(side);
  std::error_code ec;
  const auto st = fs::status(o.out, ec);
  const bool exists = st.type() != fs::file_type::not_found;
  if (exists && st.type() == fs::file_type::directory) throw InputError(o.out.string() + " is a directory; give a file");
  check_not_an_input(o.out, o.inputs);
  check_not_a_link(o.out, o.force);  // a link would be replaced, its target left stale
  check_not_a_provenance(o.out, /*study_output=*/true);
  check_not_a_link(o.out.string() + ".json", o.force);
  const bool resume = exists && looks_like_window_study(o.out);
  if (exists && !resume && !o.force)
    throw InputError(o.out.string() + " exists and is not a window study carb wrote; choose another --out, or pass "
                     "--force to replace it");
  // The provenance sidecar beside it is replaced too: only one that carb wrote, unless forced.
  if (fs::is_directory(side, ec))
    throw InputError(side.string() + ", where the provenance of " + o.out.filename().string() +
                     " goes, is a directory; move it away, or choose another --out");
  const auto side_kind = [&] {
    std::ifstream in(side);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    return j.is_object() && j.contains("kind") && j["kind"].is_string() ? j["kind"].get<std::string>() : std::string();
  };
  // Thirty-fifth hostile pass: --force replaced a sidecar that was no provenance at all. Thirty-sixth:
  // nor another file's provenance. A study's sidecar is its --out with ".json" added, a dataset's or
  // plan's its CSV's name with ".csv" replaced, so `--out h200` meets h200.csv's sidecar. --force is
  // for --out, which the user named; at the sidecar's name it replaces only a study's provenance.
  if (fs::exists(side, ec)) {
    const std::string kind = side_kind();
    const bool carbs = std::find(kProvenanceKinds.begin(), kProvenanceKinds.end(), kind) != kProvenanceKinds.end();
    if (kind != kWindowStudyKind)
      throw InputError(side.string() + ", where the provenance of " + o.out.filename().string() + " goes, holds " +
                       (carbs ? "the provenance of a " + kind + " (" + side.stem().string() +
                                    ".csv's), another file's"
                              : std::string("a file carb did not write")) +
                       " (--force replaces only a window study's own provenance there); move it away, or choose "
                       "another --out");
    // Twenty-second hostile pass: with its CSV moved away (archived), the sidecar of an earlier study
    // was replaced, its only provenance. (A study writes its sidecar only once its CSV exists, so a
    // killed run leaves no sidecar without a CSV.)
    if (!exists && !o.force)
      throw InputError(side.string() + " describes a " + o.out.filename().string() + " that is no longer beside it "
                       "(moved or deleted?), and is its only provenance; move it with its CSV, choose another --out, "
                       "or pass --force to replace it");
  }
  // Thirty-eighth hostile pass: a name too long for the temporary beside it failed after the first
  // trace, and every resume the same way; checked before any work, as the dataset writers do.
  detail::check_temp_name_fits(o.out, ".carb-");
  detail::check_temp_name_fits(side, ".carb-");
  // One study per file at a time (twenty-first hostile pass: two resumed on one file kept only one's rows).
  const StoreLock lock(o.out, "window study " + o.out.string(), "carb meter --study", "--out");
  std::string text = std::string(kHeader) + "\n";
  std::set<std::string> done;
  if (resume) {
    const auto rows = csv::read_file(o.out);
    std::ostringstream kept;
    for (std::size_t k = 1; k < rows.size(); ++k) {
      done.insert(trace_id(rows[k].fields));
      csv::write_row(kept, rows[k].fields);
    }
    text += kept.str();
  }
  Protocol p;
  p.warmup = o.warmup;
  auto backend = make_backend(o.backend, p);
  for (const auto& c : configs) backend->check(c);
  if (!backend->traces_energy())
    throw InputError("the window study needs an energy counter it can trace; the " + o.backend +
                     " backend has none here");
  // A review of the GPU script: an H100 resumed the H200's study, its traces added to the ones that
  // decide the H200's energy window. Every run recorded in the sidecar names its device; checked
  // before the meter check's seconds are spent.
  const nlohmann::json platform_info = backend->platform_info();
  if (resume) {
    std::ifstream in(side);
    const nlohmann::json recorded = nlohmann::json::parse(in, nullptr, false);
    const nlohmann::json here = {{"backend", o.backend}, {"platform_info", platform_info}};
    const std::string what = o.out.string() + " records its traces";
    const std::string instead = "its traces would be added to the other device's; give another --out";
    detail::require_recorded_device(recorded, here, what, instead);
    if (recorded.is_object() && recorded.contains("resumed") && recorded["resumed"].is_array())
      for (const auto& run : recorded["resumed"]) detail::require_recorded_device(run, here, what, instead);
  }
  const MeterCheck meter = backend->check_meter(2.0);
  if (meter.meter == "none")
    throw InputError("the window study needs an energy counter; the " + o.backend + " backend has none here (" +
                     meter.note + ")");
  nlohmann::json prov = {{"kind", kWindowStudyKind},
                         {"backend", o.backend},
                         {"trace_s", o.trace_s},
                         {"windows_s", o.windows_s},
                         {"repeats", o.repeats},
                         {"warmup", o.warmup},
                         {"platform_info", platform_info},
                         {"meter_check", meter.to_json()}};
  if (!o.command_line.empty()) prov["command"] = o.command_line;
  // A resumed study keeps the provenance of the run that measured its first rows and adds this one.
  if (resume) {
    std::ifstream in(side);
    nlohmann::json first = nlohmann::json::parse(in, nullptr, false);
    if (first.is_object() && first.value("kind", "") == kWindowStudyKind) {
      first["resumed"].push_back(prov);
      prov = first;
    }
  }
  // The sidecar goes down with the CSV (after it, so it never describes a CSV that is not there).
  bool side_written = false;
  const auto write_side = [&] {
    // A path that is not UTF-8 is recorded with U+FFFD, not thrown on after the CSV is written.
    if (!side_written)
      (void)csv::write_text_atomic(side, prov.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                                   side_was);
    side_written = true;
  };
  // Fifty-eighth hostile pass: --force replaced a file that was no study, or a study's only
  // provenance with its CSV moved away, with nothing kept. It keeps them first, as the dataset
  // outputs do (data/keep_earlier.hpp); once the backend and its meter are known to work
  // (fifty-ninth: a run refused for want of an energy counter had kept a needless copy).
  if (o.force && ((exists && !resume) || (!exists && fs::is_regular_file(side, ec)))) {
    const auto study_side = [](const fs::path& k) { return fs::path(k.string() + ".json"); };
    if (exists) {
      detail::keep_file_force_replaces(o.out, o.out.filename().string() + " is not a window study carb wrote", side,
                                       study_side);
    } else {
      const fs::path kept = detail::keep_earlier_copies({}, side, [&](int n) {
        return std::make_pair(fs::path(), study_side(detail::earlier_name(o.out, o.out.extension().string(), n)));
      }).second;
      warn(side.string() + " held the only provenance of a window study whose CSV is gone, which --force replaces; "
           "it is kept as " + kept.string());
    }
  }
  if (resume) write_side();
  WindowStudySummary s;
  Progress bar("window study", configs.size() * o.repeats, o.progress);
  // Repeat-major: a study cut short (a lease's end) has every configuration once before any twice.
  std::set<std::string> failed;
  for (int r = 1; r <= o.repeats; ++r)
    for (const auto& c : configs) {
      bar.tick(config_key(c) + " #" + std::to_string(r));
      if (done.count(trace_id(c, r))) {
        ++s.skipped;
        continue;
      }
      if (failed.count(config_key(c))) continue;  // its other repeats would fail the same way
      const EnergyTrace t = backend->trace_energy(c, p, o.trace_s);
      backend->settle();
      if (t.status != Status::ok) {
        failed.insert(config_key(c));
        s.failures.push_back(config_key(c) + ": " + to_string(t.status) + ": " + t.error);
        continue;
      }
      const auto rows = study_windows(t, r, o.windows_s);
      text += rows_text(rows);
      out_was = csv::write_text_atomic(o.out, text, out_was);
      write_side();
      ++s.traces;
      s.rows += rows.size();
    }
  bar.finish();
  return s;
}

}  // namespace carb
