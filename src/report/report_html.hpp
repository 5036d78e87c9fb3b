// Internals of the HTML report: the HTML building blocks (cards, tables, notes) and one
// function per report section. Every section returns HTML that is already escaped.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "carb/characterize.hpp"
#include "carb/report.hpp"
#include "carb/screen.hpp"

namespace carb::report {

/// A card of the grid; wide cards span the whole row (tables with many columns).
std::string card(const std::string& title, const std::string& body_html, bool wide = false);
/// A table; rows past max_rows (0 = all) are left out with a note saying how many.
std::string html_table(const NamedTable& t, std::size_t max_rows = 0);
/// A muted paragraph, or an amber one for something that could not be shown.
std::string note(const std::string& text);
std::string warning(const std::string& text);
/// "energy (J per batch)" etc.; the name itself for anything else.
std::string target_label(const std::string& target);
/// One color per target across the whole report (memory green, energy vermillion, latency blue).
std::string target_color(const std::string& target);
/// Short names for legends: "energy", "latency", "memory".
std::string target_short(const std::string& target);
/// A section: heading, optional lead text, and its cards in a grid.
std::string section(const std::string& id, const std::string& heading, const std::string& lead,
                    const std::vector<std::string>& cards);

std::string dataset_section(const NamedDataset& d, std::size_t index);
std::string parity_section(const std::vector<NamedDataset>& ds, const std::vector<NamedModel>& models);
std::string transfer_section(const std::vector<NamedDataset>& ds, unsigned seed);
std::string screen_section(const nlohmann::json& screen);
/// Refuses (InputError naming `file` and the first bad field) a document that is not a screen
/// result: targets, stages with counts, Pareto rows with a buildable configuration and a finite,
/// plausible prediction of every target (its interval, if any, around it).
void check_screen_document(const nlohmann::json& doc, const std::string& file);
/// The document's "cost_falls_with_batch" entries (none in a document from before them); InputError
/// naming `file` for a malformed one (check_screen_document refuses the document for it).
std::vector<ScreenBatchInversions> screen_batch_inversions(const nlohmann::json& doc, const std::string& file);
std::string curves_section(const std::vector<CurvePoint>& curves);

}  // namespace carb::report
