// The HTML report document: page skeleton and style sheet, the shared HTML building blocks,
// and loading + atomic writing of the file.
#include <fstream>
#include <sstream>

#include "carb/error.hpp"
#include "data/csv.hpp"
#include "util/held_warnings.hpp"
#include "data/keep_earlier.hpp"
#include "data/provenance.hpp"
#include "report_html.hpp"
#include "svg.hpp"
#include "util/fnv.hpp"
#include "util/join.hpp"
#include "util/stop_signal.hpp"
#include "util/repeated_files.hpp"

namespace carb {
namespace report {

using svg::escape;

std::string card(const std::string& title, const std::string& body_html, bool wide) {
  return std::string("<div class=\"card") + (wide ? " wide" : "") + "\"><h3>" + escape(title) + "</h3>" +
         body_html + "</div>";
}

std::string html_table(const NamedTable& t, std::size_t max_rows) {
  std::string out = "<table><thead><tr>";
  for (const auto& h : t.header) out += "<th>" + escape(h) + "</th>";
  out += "</tr></thead><tbody>";
  const std::size_t n = max_rows ? std::min(max_rows, t.rows.size()) : t.rows.size();
  for (std::size_t i = 0; i < n; ++i) {
    out += "<tr>";
    for (const auto& c : t.rows[i]) out += "<td>" + escape(c) + "</td>";
    out += "</tr>";
  }
  out += "</tbody></table>";
  if (n < t.rows.size()) out += note(std::to_string(t.rows.size() - n) + " more rows not shown");
  if (!t.note.empty()) out += note(t.note);
  return out;
}

std::string note(const std::string& text) { return "<p class=\"note\">" + escape(text) + "</p>"; }
std::string warning(const std::string& text) { return "<p class=\"unavailable\">" + escape(text) + "</p>"; }

std::string target_label(const std::string& t) {
  if (t == "peak_memory_mb") return "peak memory (MB)";
  if (t == "energy_j") return "energy (J per batch)";
  if (t == "latency_ms") return "latency (ms per batch)";
  return t;
}

std::string target_color(const std::string& t) {
  if (t == "peak_memory_mb") return "#009E73";
  if (t == "energy_j") return "#D55E00";
  if (t == "latency_ms") return "#0072B2";
  return "#4B5563";
}

std::string target_short(const std::string& t) {
  if (t == "peak_memory_mb") return "memory";
  if (t == "energy_j") return "energy";
  if (t == "latency_ms") return "latency";
  return t;
}

std::string section(const std::string& id, const std::string& heading, const std::string& lead,
                    const std::vector<std::string>& cards) {
  std::string out = "<section id=\"" + escape(id) + "\"><h2>" + escape(heading) + "</h2>";
  if (!lead.empty()) out += "<p class=\"lead\">" + escape(lead) + "</p>";
  out += "<div class=\"grid\">";
  for (const auto& c : cards) out += c;
  return out + "</div></section>";
}

namespace {

// System fonts only: the file must render offline with nothing fetched.
constexpr const char* kStyle = R"(
*{box-sizing:border-box}
body{margin:0;background:#f3f4f6;color:#111827;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
header{background:#0f172a;color:#f8fafc;padding:22px 32px}
header h1{margin:0;font-size:24px;font-weight:650;letter-spacing:.2px}
header p{margin:4px 0 0;color:#cbd5e1;font-size:13px}
nav{background:#1e293b;padding:8px 32px;font-size:13px}
nav a{color:#e2e8f0;text-decoration:none;margin-right:18px}
main{max-width:1560px;margin:0 auto;padding:8px 32px 40px}
h2{font-size:20px;margin:30px 0 6px;padding-bottom:6px;border-bottom:2px solid #e5e7eb}
.lead{color:#4b5563;margin:4px 0 14px;max-width:1100px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px;align-items:start}
.card{background:#fff;border-radius:10px;box-shadow:0 1px 3px rgba(15,23,42,.08),0 1px 2px rgba(15,23,42,.04);padding:14px 16px;overflow-x:auto}
.card.wide{grid-column:1/-1}
.card h3{margin:0 0 8px;font-size:15px;font-weight:600;color:#1f2937}
svg.chart{display:block;max-width:100%;height:auto}
table{border-collapse:collapse;width:100%;font-size:12.5px}
th{text-align:left;background:#f8fafc;color:#374151;font-weight:600;border-bottom:1px solid #e5e7eb;padding:5px 8px;white-space:nowrap}
td{padding:4px 8px;border-bottom:1px solid #f1f5f9;font-variant-numeric:tabular-nums;white-space:nowrap}
tr:nth-child(even) td{background:#fcfcfd}
.note{color:#6b7280;font-size:12px;margin:8px 0 0}
.unavailable{color:#92400e;background:#fffbeb;border:1px solid #fde68a;padding:8px 10px;border-radius:6px;margin:6px 0}
.kpis{display:flex;flex-wrap:wrap;gap:12px}
.kpi{background:#f8fafc;border:1px solid #e5e7eb;border-radius:8px;padding:8px 14px;min-width:120px}
.kpi b{display:block;font-size:20px;color:#0f172a}
.kpi span{font-size:12px;color:#6b7280}
footer{color:#6b7280;font-size:12px;padding:16px 32px 32px;max-width:1560px;margin:0 auto}
)";

}  // namespace
}  // namespace report

std::string render_report_html(const ReportInputs& in) {
  using namespace report;
  if (in.datasets.empty()) throw InputError("report: give at least one dataset");
  std::string body, nav;
  for (std::size_t i = 0; i < in.datasets.size(); ++i) {
    body += dataset_section(in.datasets[i], i);
    nav += "<a href=\"#data-" + std::to_string(i) + "\">" + escape(in.datasets[i].name) + "</a>";
  }
  if (!in.models.empty()) {
    body += parity_section(in.datasets, in.models);
    nav += "<a href=\"#models\">models</a>";
  }
  if (in.datasets.size() > 1) {
    body += transfer_section(in.datasets, in.seed);
    nav += "<a href=\"#transfer\">transfer</a>";
  }
  if (in.screen) {
    body += screen_section(*in.screen);
    nav += "<a href=\"#screen\">screening</a>";
  }
  if (!in.curves.empty()) {
    body += curves_section(in.curves);
    nav += "<a href=\"#curves\">active profiling</a>";
  }
  std::string inputs = join(in.datasets, [](const auto& d) { return d.name; });
  for (const auto& m : in.models) inputs += ", model " + m.name;
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"generator\" content=\"carb\"><meta name=\"viewport\" "
         "content=\"width=device-width, initial-scale=1\"><title>" +
         escape(in.title) + "</title><style>" + kStyle + "</style></head><body><header><h1>" +
         escape(in.title) + "</h1><p>Inputs: " + escape(inputs) + "</p></header><nav>" + nav +
         "</nav><main>" + body +
         "</main><footer>Generated by carb 0.1.0. Every number is computed from the inputs named above; "
         "charts are inline SVG and the file needs no network access.</footer></body></html>\n";
}

namespace {

constexpr std::string_view kSealHead = "<!-- carb-report fnv1a64=";
constexpr std::string_view kSealTail = " -->\n";

// The last line of every report: the hash of everything above it. A report that still matches
// is exactly what carb wrote, and regenerating it loses nothing.
std::string seal(const std::string& html) {
  return std::string(kSealHead) + detail::hex64(detail::fnv1a64(html)) + std::string(kSealTail);
}

// Why the file at `out` may not be replaced without --force; "" when it is a report carb wrote,
// unchanged since (twelfth hostile pass: a report the user had annotated was regenerated over).
std::string report_replace_refusal(const std::filesystem::path& out, const std::filesystem::file_status& st) {
  const std::string not_ours = " exists and is not a report carb wrote";
  if (st.type() != std::filesystem::file_type::regular) return not_ours;
  std::error_code ec;
  const auto size = std::filesystem::file_size(out, ec);
  if (ec || size > (std::uintmax_t{1} << 30)) return not_ours;  // no report of carb's is a gigabyte
  std::ifstream f(out, std::ios::binary);
  std::string text(static_cast<std::size_t>(size), '\0');
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(f.gcount()));
  if (text.find("<meta name=\"generator\" content=\"carb\">") == std::string::npos) return not_ours;
  const std::size_t at = text.rfind(kSealHead);
  if (at == std::string::npos || text.compare(at, std::string::npos, seal(text.substr(0, at))) != 0)
    return " is a carb report that was changed since carb wrote it (or was written by an older carb)";
  return "";
}

// carb replaces only a report it wrote and nobody changed since, and never one of the report's
// inputs: `report --out` once overwrote the input CSV, a user's notes and a bundle's manifest.
// At the write (`at_write`), what --force overrides a refusal for is kept first as
// "<stem>.earlier<ext>" (fifty-eighth: `report --force` was the one output that destroyed a file
// carb did not write, notes or another tool's page, as its refusal said it would).
void check_report_output(const ReportOptions& o, bool at_write = false) {
  // Inputs, their provenance sidecars and anything inside an input bundle, however spelled.
  std::vector<std::filesystem::path> inputs(o.data.begin(), o.data.end());
  inputs.insert(inputs.end(), o.models.begin(), o.models.end());
  for (const auto& in : {o.screen, o.curves})
    if (in) inputs.push_back(*in);
  check_not_an_input(o.out, inputs);
  check_not_a_link(o.out, o.force);
  check_not_a_provenance(o.out);
  std::error_code ec;
  // A link (to a report or to nothing) under --force is kept as a link, whatever it points to.
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(o.out, ec))) {
    if (at_write) detail::keep_file_force_replaces(o.out, o.out.filename().string() + " is a symbolic link");
    return;
  }
  const auto st = std::filesystem::status(o.out, ec);
  if (st.type() == std::filesystem::file_type::not_found) return;
  // Hundred-and-second hostile pass: a folder was refused with "pass --force to replace it", which
  // then failed on the folder.
  if (st.type() == std::filesystem::file_type::directory)
    throw InputError(o.out.string() + " is a folder; give --out a file name (e.g. " +
                     (o.out / "report.html").string() + ")");
  const std::string why = report_replace_refusal(o.out, st);
  if (why.empty()) return;
  if (!o.force) throw InputError(o.out.string() + why + "; choose another --out, or pass --force to replace it");
  if (at_write) detail::keep_file_force_replaces(o.out, o.out.filename().string() + why);
}

}  // namespace

void write_report(const ReportOptions& o) {
  if (o.data.empty()) throw InputError("report: give at least one --data CSV");
  if (o.out.empty()) throw InputError("report: give --out FILE");
  // A dataset given twice was characterized as twice its rows and compared with itself as a
  // "transfer" (hostile tester); a model given twice drew its parity plots twice.
  detail::refuse_repeated_files(o.data, "--data");
  detail::refuse_repeated_files(o.models, "--model");
  check_report_output(o);
  // Checked before the work, so a wrong --out fails in milliseconds, not after rendering.
  if (std::error_code ec; o.out.has_parent_path() && !std::filesystem::is_directory(o.out.parent_path(), ec))
    throw InputError("cannot write " + o.out.string() + ": directory " + o.out.parent_path().string() +
                     " does not exist");
  // Thirtieth hostile pass: SIGINT/SIGTERM ended `report` by the signal, where `profile` and `train`
  // exit 130/143 saying what they kept. A signal now stops it before the write; the old report stays.
  detail::StopOnSignals signals;
  ReportInputs in;
  in.title = o.title;
  in.seed = o.seed;
  for (const auto& p : o.data) in.datasets.push_back({p.filename().string(), read_dataset_csv(p)});
  std::vector<CarbModel> models;
  models.reserve(o.models.size());
  for (const auto& p : o.models) models.push_back(CarbModel::load(p));
  for (std::size_t i = 0; i < models.size(); ++i)
    in.models.push_back({o.models[i].filename().string(), &models[i]});
  if (o.screen) {
    in.screen = nlohmann::json::parse(csv::read_text(*o.screen), nullptr, false);
    if (in.screen->is_discarded() || !in.screen->is_object())
      throw InputError(o.screen->string() +
                       ": not a JSON object (expected `carb screen --format json` output)");
    report::check_screen_document(*in.screen, o.screen->string());
  }
  if (o.curves) in.curves = read_curves_csv(*o.curves);
  const std::string html = render_report_html(in);
  detail::throw_if_stopped("report", "no report was written; what was at --out is unchanged");
  // Again at the write: what is at --out may have changed while the report was rendered, and the
  // write replaces only what this check found (thirty-fourth hostile pass: a file moved there
  // during the rendering was replaced).
  // Staged in full first: a write that cannot be made (a full disk) fails before --force keeps a copy
  // of what it would have replaced (fifty-eighth hostile pass, for the dataset outputs).
  const auto before = csv::file_id(o.out);
  csv::StagedText staged(o.out, html + seal(html));
  detail::HeldWarnings held;  // "kept as ...earlier.html" said once the report is written
  check_report_output(o, true);
  (void)staged.commit(before);
  held.release();
}

}  // namespace carb
