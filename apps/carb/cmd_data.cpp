// `carb data`: export a measurement store to a dataset CSV (+ provenance), merge datasets,
// summarize or validate one. Each sub-subcommand parses its flags and calls the library.
#include <iostream>
#include <nlohmann/json.hpp>

#include "carb/combine.hpp"
#include "carb/data_ops.hpp"
#include "carb/store_export.hpp"
#include "carb/store_info.hpp"
#include "carb/error.hpp"
#include "cli.hpp"

namespace carb::cli {
namespace {

struct DataOpts {
  ExportOptions exp;
  std::string platform, protocol;
  bool force = false;
  std::vector<std::filesystem::path> inputs;
  std::filesystem::path out, csv;
  std::string format;
};

void add_export(CLI::App& data, const std::shared_ptr<DataOpts>& o) {
  auto* app =
      data.add_subcommand("export", "Write a measurement store's rows as a dataset CSV plus provenance JSON");
  app->add_option("--db", o->exp.db, "SQLite measurement store")->required();
  app->add_option("--out", o->exp.out, "dataset CSV to write (its provenance goes beside it as .json)")
      ->required();
  app->add_option("--platform", o->platform, "export only this platform's rows");
  app->add_option("--protocol", o->protocol, "export only rows measured under this protocol id (protocol_id column)");
  app->add_flag("--force", o->exp.force, "replace --out even if it is not a dataset CSV carb wrote; what was there is kept first as STEM.earlier.csv");
  add_format(*app, o->format, {"table", "json"});
  app->callback([o] {
    if (!o->platform.empty()) o->exp.platform = o->platform;
    if (!o->protocol.empty()) o->exp.protocol = o->protocol;
    o->exp.command_line = command_line();
    const ExportSummary s = export_store(o->exp);
    if (o->format == "json")
      std::cout << json_text(s.to_json(), 2) << '\n';
    else
      std::cout << "exported " << s.rows << " rows to " << printable(s.csv.string()) << " (provenance "
                << printable(s.provenance.string()) << ")\n";
  });
}

void add_combine(CLI::App& data, const std::shared_ptr<DataOpts>& o) {
  auto* app = data.add_subcommand(
      "combine",
      "Combine measuring rounds of the same configurations: per configuration, the median over the rounds "
      "that measured it ok, with `rounds` and `latency_round_spread` (largest latency over smallest, minus 1) columns. Every numeric column is its own "
      "median, so a row's latency_cv, latency_std_ms, timed_s and passes summarise the rounds and need not "
      "agree with its latency_ms as one round's do");
  app->add_option("--out", o->out, "combined dataset CSV to write")->required();
  app->add_flag("--force", o->force, "replace --out even if it is not a dataset CSV carb wrote; what was there is kept first as STEM.earlier.csv");
  app->add_option("rounds", o->inputs, "dataset CSVs of the same protocol, one per measuring round (two or more)")
      ->required()
      ->check(CLI::ExistingFile);
  add_format(*app, o->format, {"table", "json"});
  app->callback([o] {
    const CombineSummary s = combine_rounds(o->inputs, o->out, command_line(), o->force);
    if (o->format == "json")
      std::cout << json_text(s.to_json(), 2) << '\n';
    else
      std::cout << "combined " << s.rounds << " rounds into " << s.rows_out << " rows in " << printable(s.csv.string()) << " ("
                << s.combined << " measured ok in two or more rounds)\n";
    for (const auto& w : s.warnings) std::cerr << "warning: " << printable(w) << '\n';
  });
}

void add_merge(CLI::App& data, const std::shared_ptr<DataOpts>& o) {
  auto* app = data.add_subcommand(
      "merge", "Merge dataset CSVs; a platform+configuration seen twice keeps its first ok row (a failed row only when no input measured it ok)");
  app->add_option("--out", o->out, "merged dataset CSV to write")->required();
  app->add_flag("--force", o->force, "replace --out even if it is not a dataset CSV carb wrote; what was there is kept first as STEM.earlier.csv");
  app->add_option("inputs", o->inputs, "dataset CSVs, in priority order")
      ->required()
      ->check(CLI::ExistingFile);
  add_format(*app, o->format, {"table", "json"});
  app->callback([o] {
    const MergeSummary s = merge_datasets(o->inputs, o->out, command_line(), o->force);
    if (o->format == "json") {
      std::cout << json_text(s.to_json(), 2) << '\n';
      return;
    }
    std::cout << "merged " << s.rows_in << " rows into " << s.rows_out << " in " << printable(s.csv.string()) << " ("
              << s.dropped << " duplicates dropped)\n";
    for (const auto& w : s.warnings()) std::cerr << "carb: warning: " << printable(w) << '\n';
  });
}

void add_info(CLI::App& data, const std::shared_ptr<DataOpts>& o) {
  auto* app = data.add_subcommand(
      "info", "Summarize a dataset CSV (rows per platform/status/family/precision, ranges, targets, and how "
              "many problems `data validate` lists) or a measurement store (rows per platform and protocol, and how many configurations its runs were "
              "given still have no row)");
  app->add_option("file", o->csv, "dataset CSV, or a measurement store (carb profile --db)")
      ->required()
      ->check(CLI::ExistingFile);
  add_format(*app, o->format, {"table", "json"});
  app->callback([o] {
    const bool store = is_sqlite_file(o->csv);
    if (o->format == "json") {
      std::cout << json_text(store ? store_info(o->csv).to_json() : dataset_info(o->csv).to_json(), 2) << "\n";
      return;
    }
    // Every line escaped (thirteenth hostile pass: an ESC in the file name or a header reached the
    // terminal from here, as from no other command).
    const std::string text = store ? format_store_info(store_info(o->csv)) : format_dataset_info(dataset_info(o->csv));
    for (std::size_t at = 0, nl; at < text.size(); at = nl + 1) {
      nl = text.find('\n', at);
      if (nl == std::string::npos) nl = text.size();
      std::cout << printable(std::string_view(text).substr(at, nl - at)) << '\n';
    }
  });
}

void add_validate(CLI::App& data, const std::shared_ptr<DataOpts>& o) {
  auto* app = data.add_subcommand("validate",
                                  "Check a dataset CSV and list every problem with its line; exit 1 if any");
  // A file that cannot be read (missing, a directory) is listed as its one problem, as the library
  // and Python's carb.validate list it (hundred-and-eleventh hostile pass: the CLI alone refused it
  // before reading, with no document).
  app->add_option("csv", o->csv, "dataset CSV")->required();
  add_format(*app, o->format, {"table", "json"});
  app->callback([o] {
    const std::vector<std::string> problems = validate_dataset_csv(o->csv);
    if (o->format == "json")
      std::cout << nlohmann::json{{"file", o->csv.string()},
                                  {"valid", problems.empty()},
                                  {"problems", problems}}
                       .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                << '\n';
    else
      for (const auto& p : problems) std::cout << printable(p) << '\n';
    if (!problems.empty())
      throw DataError(o->csv.string() + ": " + std::to_string(problems.size()) + " problem" +
                      (problems.size() == 1 ? "" : "s"));
    if (o->format != "json") std::cout << printable(o->csv.string()) << ": valid\n";
  });
}

Registrar reg({"data", "Export, merge, summarize and validate measured datasets", [](CLI::App& app) {
                 auto o = std::make_shared<DataOpts>();
                 app.require_subcommand(1);
                 add_export(app, o);
                 add_merge(app, o);
                 add_combine(app, o);
                 add_info(app, o);
                 add_validate(app, o);
               }});

}  // namespace
}  // namespace carb::cli
