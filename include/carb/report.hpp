// The HTML report: one self-contained file (inline CSS and SVG, no scripts, no external
// references) with, per dataset, the characterization charts and tables; per model, parity
// plots and residuals by batch; transfer scatters between datasets of different platforms;
// and the screening funnel and Pareto front of a `carb screen --format json` document.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "carb/dataset.hpp"
#include "carb/model.hpp"

namespace carb {

struct ReportOptions {
  std::vector<std::filesystem::path> data;      // dataset CSVs (at least one)
  std::vector<std::filesystem::path> models;    // model bundle directories
  std::optional<std::filesystem::path> screen;  // output of `carb screen --format json`
  std::optional<std::filesystem::path> curves;  // learning curves (bench/active_learning --csv)
  std::filesystem::path out;                    // the HTML file to write
  unsigned seed = 42;                           // few-shot draws of the transfer section
  std::string title = "carb report";
  bool force = false;  // replace `out` even if it is not a report carb wrote (never an input)
};

struct NamedDataset {
  std::string name;  // shown in headings (the file name for the CLI)
  Dataset data;
};
struct NamedModel {
  std::string name;
  const CarbModel* model;
};

/// Everything a report shows, already loaded (the CLI loads files; tests pass synthetic data).
/// One row of an active-profiling learning curve (the CSV of `bench/active_learning_bench --csv`):
/// after `round`, a strategy under a seed had measured `rows` rows at a cumulative `cost_s`, and
/// its model scored `r2` / `mape` on the hidden rows for `target`.
struct CurvePoint {
  std::string strategy, target;
  unsigned seed = 0;
  int round = 0, rows = 0;
  double cost_s = 0, r2 = 0, mape = 0;
};

/// Reads such a CSV; DataError naming file, line and column for a missing column or a bad value.
std::vector<CurvePoint> read_curves_csv(const std::filesystem::path& file);

struct ReportInputs {
  std::string title = "carb report";
  std::vector<NamedDataset> datasets;
  std::vector<NamedModel> models;
  std::optional<nlohmann::json> screen;
  std::vector<CurvePoint> curves;  // empty: no active-profiling section
  unsigned seed = 42;
};

/// The report as one HTML document. Throws InputError when no dataset is given.
std::string render_report_html(const ReportInputs& in);

/// Loads the inputs, renders and writes `o.out` atomically (temp file + rename). Throws
/// DataError/ModelError/InputError naming the bad input.
void write_report(const ReportOptions& o);

}  // namespace carb
