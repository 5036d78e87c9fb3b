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
struct ReportInputs {
  std::string title = "carb report";
  std::vector<NamedDataset> datasets;
  std::vector<NamedModel> models;
  std::optional<nlohmann::json> screen;
  unsigned seed = 42;
};

/// The report as one HTML document. Throws InputError when no dataset is given.
std::string render_report_html(const ReportInputs& in);

/// Loads the inputs, renders and writes `o.out` atomically (temp file + rename). Throws
/// DataError/ModelError/InputError naming the bad input.
void write_report(const ReportOptions& o);

}  // namespace carb
