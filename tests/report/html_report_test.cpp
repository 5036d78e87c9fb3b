// Tests of the HTML report: self-contained (no URL, no script), well formed, with the sections its
// inputs allow and explicit notes for those they do not; escaping; atomic writing; bad inputs.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <optional>
#include <tuple>

#include "analysis/synthetic_datasets.hpp"
#include "carb/error.hpp"
#include "carb/warning.hpp"
#include "carb/model.hpp"
#include "carb/report.hpp"
#include "carb/screen.hpp"
#include "carb/text_table.hpp"
#include "report/report_html.hpp"
#include "screen/screen_test_util.hpp"
#include "report/markup_check.hpp"

namespace carb {
namespace {

using testing::count_of;
using testing::markup_problem;
using testing::synthetic_affine_copy;
using testing::synthetic_grid;

ReportInputs synthetic_inputs(bool energy) {
  ReportInputs in;
  in.datasets.push_back({"synthetic-a.csv", synthetic_grid(energy, true)});
  return in;
}

void expect_self_contained(const std::string& html) {
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(markup_problem(html), "");
}

TEST(Report, OneDatasetHasCharacterizationChartsAndTables) {
  const std::string html = render_report_html(synthetic_inputs(true));
  expect_self_contained(html);
  for (const char* s : {"Scaling with depth", "Scaling with batch", "J per GFLOP by batch tier",
                        "Energy-latency divergence", "Precision ratios", "<table>"})
    EXPECT_NE(html.find(s), std::string::npos) << s;
  EXPECT_GE(count_of(html, "<svg"), 8u);
  EXPECT_EQ(html.find("Cross-platform transfer"), std::string::npos);  // one dataset: no transfer
}

// Sixty-eighth hostile pass: the H200's "Scaling with resolution" drew bottleneck memory falling 17x
// where the configurations measured at both ends rise 2.01x: the 8 rows of its largest network were
// all at resolution 32. A curve no configuration at both ends backs, or one going the other way
// from those that are, is left out, said so.
TEST(Report, AScalingCurveThatDrawsOtherKnobsIsLeftOut) {
  Dataset d;
  for (int r : {32, 64, 96}) {  // one network at every resolution, memory rising with it
    d.rows.push_back(testing::synthetic_record("p", Config{Family::bottleneck, 101, 1.0, r, 1, Precision::fp16}, 1.0, {}, {}));
    d.rows.back().peak_memory_mb = 100.0 + r;
  }
  for (int k = 0; k < 4; ++k) {  // the largest network at resolution 32 only: pooled means fall
    d.rows.push_back(testing::synthetic_record("p", Config{Family::bottleneck, 200, 4.0, 32, 1 << k, Precision::fp32}, 1.0, {}, {}));
    d.rows.back().peak_memory_mb = 2000.0 * (1 << k);
  }
  ReportInputs in;
  in.datasets.push_back({"two.csv", d});
  const std::string html = render_report_html(in);
  const auto card = [&](const std::string& title) {
    const auto at = html.find("<h3>" + title + "</h3>");
    return at == std::string::npos ? std::string() : html.substr(at, html.find("</div>", at) - at);
  };
  const std::string resolution = card("Scaling with resolution");
  ASSERT_FALSE(resolution.empty());
  // Memory's curve is left out; latency's (1 ms everywhere, the same as matched) is drawn.
  EXPECT_NE(resolution.find("1 curve left out: no configuration measured at both the smallest and largest resolution"),
            std::string::npos) << resolution;
  EXPECT_NE(resolution.find("<svg"), std::string::npos);
  // Along depth no configuration was measured at both ends: nothing to draw, and said why.
  const std::string depth = card("Scaling with depth");
  EXPECT_EQ(depth.find("<svg"), std::string::npos) << depth;
  EXPECT_NE(depth.find("2 curves left out"), std::string::npos) << depth;
  // The grid measures every network at every level: nothing left out.
  EXPECT_EQ(render_report_html(synthetic_inputs(true)).find("left out: no configuration"), std::string::npos);
}

// Seventh of December: a curve going the matched way by another amount is drawn, and said: one
// network at batches 1 and 64 (latency 1 and 10 ms), another at batch 1 only (2 ms).
TEST(Report, AScalingCurveOfAnotherSizeThanTheMatchedOneIsDrawnAndSaid) {
  Dataset d;
  for (const auto& [depth, batch, ms] : {std::tuple{18, 1, 1.0}, std::tuple{18, 64, 10.0}, std::tuple{34, 1, 2.0}}) {
    d.rows.push_back(testing::synthetic_record("p", Config{Family::basic, depth, 1.0, 32, batch, Precision::fp32}, ms, {}, {}));
    d.rows.back().peak_memory_mb = 100.0 * batch;  // memory: 64x both ways
  }
  ReportInputs in;
  in.datasets.push_back({"one-end.csv", d});
  const std::string html = render_report_html(in);
  const auto at = html.find("<h3>Scaling with batch</h3>");
  ASSERT_NE(at, std::string::npos);
  const std::string batch = html.substr(at, html.find("</div>", at) - at);
  EXPECT_NE(batch.find("<svg"), std::string::npos) << batch;
  EXPECT_NE(batch.find("1 curve drawn changes from the smallest to the largest batch by a factor more than 1.25x away "
                       "from that of the configurations measured at both"),
            std::string::npos)
      << batch;
  EXPECT_EQ(render_report_html(synthetic_inputs(true)).find("by a factor more than"), std::string::npos);
}

TEST(Report, MissingEnergySaysUnavailable) {
  const std::string html = render_report_html(synthetic_inputs(false));
  expect_self_contained(html);
  EXPECT_NE(html.find("unavailable: no energy_j values in this dataset"), std::string::npos);
}

TEST(Report, TwoPlatformsAddTransferWithTheFitLine) {
  ReportInputs in = synthetic_inputs(true);
  in.datasets.push_back({"synthetic-b.csv", synthetic_affine_copy(in.datasets[0].data, 2, 3, "synthetic-b")});
  const std::string html = render_report_html(in);
  expect_self_contained(html);
  EXPECT_NE(html.find("Cross-platform transfer"), std::string::npos);
  EXPECT_NE(html.find("fit y = 2x + 3"), std::string::npos);
  EXPECT_NE(html.find("Few-shot calibration"), std::string::npos);
}

TEST(Report, SamePlatformTwiceHasNoTransferFit) {
  ReportInputs in = synthetic_inputs(true);
  in.datasets.push_back(in.datasets[0]);
  const std::string html = render_report_html(in);
  EXPECT_NE(html.find("(two measurements of one platform, not a transfer)"), std::string::npos);
  EXPECT_EQ(html.find("fit y ="), std::string::npos);
}

// Hundred-and-second hostile pass: beside a real transfer, a same-platform pair was left out without
// a word; datasets without an ok row were "the same platform"; a target without a fit vanished from
// the tables while `carb transfer` said why.
TEST(Report, EveryPairAndTargetLeftOutIsSaid) {
  ReportInputs in = synthetic_inputs(true);
  const Dataset a = in.datasets[0].data;
  in.datasets.push_back({"synthetic-b.csv", synthetic_affine_copy(a, 2, 3, "synthetic-b")});
  in.datasets.push_back({"again.csv", a});
  std::string html = render_report_html(in);
  EXPECT_NE(html.find("fit y = 2x + 3"), std::string::npos);
  EXPECT_NE(html.find("not compared: "), std::string::npos);
  EXPECT_NE(html.find("(two measurements of one platform, not a transfer)"), std::string::npos);
  // A target the second platform did not measure: a row with the reason.
  Dataset no_energy = synthetic_affine_copy(a, 2, 3, "synthetic-c");
  for (Record& r : no_energy.rows) r.energy_j.reset();
  ReportInputs two = synthetic_inputs(true);
  two.datasets.push_back({"synthetic-c.csv", no_energy});
  html = render_report_html(two);
  EXPECT_NE(html.find("no fit: the target data has no energy_j"), std::string::npos);
  // A source that never varies: no fit line with an undefined slope in its legend.
  Dataset flat = synthetic_affine_copy(a, 2, 3, "synthetic-e");
  ReportInputs constant = synthetic_inputs(true);
  for (Record& r : constant.datasets[0].data.rows) r.latency_ms = 5.0;
  constant.datasets.push_back({"synthetic-e.csv", flat});
  html = render_report_html(constant);
  EXPECT_EQ(html.find("undefinedx"), std::string::npos);
  EXPECT_NE(html.find("fit y = "), std::string::npos);  // the other targets' lines
  // Two datasets with no ok row: said so, not "the same platform".
  Dataset failed = a;
  for (Record& r : failed.rows) r.status = Status::oom, r.latency_ms.reset(), r.energy_j.reset(), r.peak_memory_mb.reset();
  Dataset failed_b = failed;
  for (Record& r : failed_b.rows) r.platform = "synthetic-d";
  ReportInputs none = synthetic_inputs(true);
  none.datasets = {{"failed-a.csv", failed}, {"failed-b.csv", failed_b}};
  html = render_report_html(none);
  EXPECT_NE(html.find("holds no ok row"), std::string::npos);
  EXPECT_EQ(html.find("two measurements of one platform"), std::string::npos);
}

TEST(Report, DisjointPlatformsExplainTheMissingTransfer) {
  ReportInputs in = synthetic_inputs(true);
  Dataset other;
  other.rows.push_back(testing::synthetic_record("b", Config{Family::basic, 200, 1.0, 32, 1, Precision::fp32},
                                                 1.0, std::nullopt, std::nullopt));
  in.datasets.push_back({"other.csv", other});
  const std::string html = render_report_html(in);
  expect_self_contained(html);
  EXPECT_NE(html.find("share no configuration"), std::string::npos);
}

TEST(Report, ScreenSectionShowsFunnelAndParetoFront) {
  ReportInputs in = synthetic_inputs(true);
  in.screen = nlohmann::json{
      {"rank_by", "energy_j"},
      {"stages", {{{"name", "candidates"}, {"count", 3072}}, {{"name", "pareto"}, {"count", 2}}}},
      {"pareto",
       {{{"family", "basic"},
         {"depth", 18},
         {"width", 1.0},
         {"resolution", 64},
         {"batch", 8},
         {"precision", "fp16"},
         {"energy_j", 1.5},
         {"latency_ms", 4.0}},
        {{"family", "bottleneck"},
         {"depth", 50},
         {"width", 0.5},
         {"resolution", 32},
         {"batch", 1},
         {"precision", "fp32"},
         {"energy_j", 0.8},
         {"latency_ms", 6.0}}}}};
  const std::string html = render_report_html(in);
  expect_self_contained(html);
  EXPECT_NE(html.find("Screening funnel"), std::string::npos);
  EXPECT_NE(html.find("Pareto front: energy vs latency"), std::string::npos);
  EXPECT_NE(html.find("<td>bottleneck</td>"), std::string::npos);
}

// Thirty-fifth hostile pass: screen's count of configurations it could not judge at the confidence
// was left out of the report; so were the two counts added since.
TEST(Report, ScreenSectionStatesWhatScreenCouldNotJudge) {
  ReportInputs in = synthetic_inputs(true);
  in.screen = nlohmann::json{{"stages", {{{"name", "candidates"}, {"count", 30}}}},
                             {"unbounded_at_confidence", 4},
                             {"source_guesses", 2},
                             {"nonpositive_predictions", 1},
                             {"within_budget_guesses", 7},
                             {"pareto", nlohmann::json::array()}};
  const std::string html = render_report_html(in);
  EXPECT_NE(html.find("4 configurations within budget by the point prediction cannot pass"), std::string::npos);
  EXPECT_NE(html.find("2 candidates lie outside what the source model trained on"), std::string::npos);
  EXPECT_NE(html.find("the model predicts a cost at or below zero for 1 candidate:"), std::string::npos);
  EXPECT_NE(html.find("7 of the configurations within budget lie outside"), std::string::npos);
  EXPECT_EQ(html.find("never measured"), std::string::npos) << "not counted, not said";
  (*in.screen)["unbounded_at_confidence"] = 0;
  in.screen->erase("source_guesses");
  in.screen->erase("nonpositive_predictions");
  const std::string none = render_report_html(in);
  EXPECT_EQ(none.find("cannot pass"), std::string::npos);
  EXPECT_EQ(none.find("at or below zero"), std::string::npos);
}

// Forty-sixth hostile pass: screen said a drift-corrected model's latencies and budgets hold at a
// reference host speed, and gave a two-stage screen's rank agreement; the report dropped both.
TEST(Report, ScreenSectionStatesDriftCorrectionAndRankAgreement) {
  ReportInputs in = synthetic_inputs(true);
  in.screen = nlohmann::json{{"stages", {{{"name", "candidates"}, {"count", 30}}}},
                             {"pareto", nlohmann::json::array()},
                             {"two_stage", false},
                             {"drift_reference_ms", {{"source", 3.14}, {"target", 3.14}}}};
  std::string html = render_report_html(in);
  EXPECT_NE(html.find("the model is drift-corrected: latency is predicted, and budgets judged, at the host speed "
                      "where the reference network takes 3.14 ms"), std::string::npos);
  EXPECT_EQ(html.find("source model is drift-corrected"), std::string::npos);  // one model: said once
  EXPECT_EQ(html.find("Spearman"), std::string::npos);
  (*in.screen)["two_stage"] = true;
  (*in.screen)["drift_reference_ms"] = {{"source", nullptr}, {"target", 2.5}};
  (*in.screen)["rank_spearman"] = 0.9877;
  (*in.screen)["target_guesses"] = 357;
  html = render_report_html(in);
  EXPECT_NE(html.find("the target model is drift-corrected: latency is predicted, and budgets judged, at the host "
                      "speed where the reference network takes 2.5 ms"), std::string::npos);
  EXPECT_EQ(html.find("source model is drift-corrected"), std::string::npos);
  EXPECT_NE(html.find("rank Spearman ρ of the two models over the whole space: 0.9877"), std::string::npos);
  EXPECT_NE(html.find("357 candidates lie outside what the target model trained on: ρ includes its guesses"),
            std::string::npos);
  in.screen->erase("drift_reference_ms");
  EXPECT_EQ(render_report_html(in).find("drift-corrected"), std::string::npos);
}

// Hundred-and-sixth hostile pass: screen says where a budget on the upper edge passes a larger batch
// and not a smaller one predicted to cost no more; the report says it too.
TEST(Report, ScreenSectionStatesBudgetsThatPassALargerBatchOnly) {
  ReportInputs in = synthetic_inputs(true);
  in.screen = nlohmann::json{{"stages", {{{"name", "candidates"}, {"count", 30}}}},
                             {"pareto", nlohmann::json::array()},
                             {"two_stage", false},
                             {"confidence", 0.8},
                             {"upper_edge_falls_with_batch",
                              {{{"target", "latency_ms"}, {"budget", 6.6}, {"networks", 3}, {"widest", nlohmann::json::object()}}}}};
  const std::string html = render_report_html(in);
  EXPECT_NE(html.find("the latency_ms budget of 6.6, judged on the interval&#39;s upper edge, passes a larger batch "
                      "and not a smaller one predicted to cost no more in 3 networks"),
            std::string::npos);
  (*in.screen)["upper_edge_falls_with_batch"] = nlohmann::json::array();
  EXPECT_EQ(render_report_html(in).find("Budgets on the upper edge"), std::string::npos);
}

// Hundred-and-seventeenth hostile pass: screen's notes where a cost falls as the batch grows, and
// that the ranking target was its default, were left out of the report. Word for word now.
TEST(Report, ScreenSectionStatesCostsThatFallAsTheBatchGrows) {
  ReportInputs in = synthetic_inputs(true);
  ScreenBatchInversions b;
  b.target = "latency_ms", b.networks = 27, b.of_networks = 48, b.pareto = 0;
  b.smaller = Config{Family::basic, 18, 0.5, 64, 2, Precision::fp32};
  b.larger = Config{Family::basic, 18, 0.5, 64, 4, Precision::fp32};
  b.smaller_value = 1.37, b.larger_value = 1.0, b.ratio = 1.37;
  const auto config = [](const Config& c) {
    return nlohmann::json{{"family", "basic"}, {"depth", c.depth}, {"width", c.width}, {"resolution", c.resolution},
                          {"batch", c.batch}, {"precision", "fp32"}};
  };
  in.screen = nlohmann::json{{"stages", {{{"name", "candidates"}, {"count", 30}}}},
                             {"pareto", nlohmann::json::array()},
                             {"two_stage", true},
                             {"rank_by", "latency_ms"},
                             {"rank_by_default", true},
                             {"batch_order", {{"networks", 48}, {"over", "shortlist"}}},
                             {"cost_falls_with_batch",
                              {{{"target", "latency_ms"}, {"networks", 27}, {"of_networks", 48}, {"pareto", 0},
                                {"worst", {{"smaller", config(b.smaller)}, {"larger", config(b.larger)},
                                           {"smaller_value", 1.37}, {"larger_value", 1.0}, {"ratio", 1.37}}}}}}};
  const std::string html = render_report_html(in);
  const std::string said = batch_inversion_note(b, true, true);
  ASSERT_NE(said.find("27 of the 48 networks"), std::string::npos) << said;
  EXPECT_NE(html.find(said.substr(0, said.find(". "))), std::string::npos) << said;  // up to the meaning, unescaped
  EXPECT_NE(html.find("ranked by latency_ms (the default where a model predicts no energy_j)"), std::string::npos);
  // A malformed entry is refused with the document, not drawn or dropped.
  (*in.screen)["cost_falls_with_batch"][0]["networks"] = 49;
  try {
    (void)report::screen_batch_inversions(*in.screen, "s.json");
    ADD_FAILURE() << "a count of more networks than were scored was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.json: cost_falls_with_batch[0] counts more networks than it scored"),
              std::string::npos) << e.what();
  }
  (*in.screen)["cost_falls_with_batch"] = nlohmann::json::array();
  (*in.screen)["rank_by_default"] = false;
  const std::string none = render_report_html(in);
  EXPECT_EQ(none.find("Costs that fall as the batch grows"), std::string::npos);
  EXPECT_EQ(none.find("(the default"), std::string::npos);
}

// Twenty-seventh session: screen says where configurations within budget imply more power than the
// device draws; the report says it word for word, and refuses a document whose count has no power.
TEST(Report, ScreenSectionStatesPowerBeyondTheDevice) {
  ReportInputs in = synthetic_inputs(true);
  in.screen = nlohmann::json{{"stages", {{{"name", "candidates"}, {"count", 30}}, {{"name", "within_budget"}, {"count", 26}}}},
                             {"pareto", nlohmann::json::array()},
                             {"two_stage", false},
                             {"within_budget", 26},
                             {"power_limit_w", 700.0},
                             {"targets", {"energy_j", "latency_ms"}},
                             {"within_budget_over_power", 4},
                             {"pareto_over_power", 1},
                             {"most_power_w", 806.9}};
  ScreenResult said;
  said.within_budget = 26, said.within_budget_over_power = 4, said.pareto_over_power = 1;
  said.power_limit_w = 700.0, said.most_power_w = 806.9;
  const std::string note = screen_power_note(said);
  ASSERT_NE(note.find("4 of the 26 within budget imply more than 1.1x the 700 W power limit"), std::string::npos) << note;
  ASSERT_NE(note.find("up to 807 W"), std::string::npos) << note;
  ASSERT_NE(note.find("1 of the Pareto set is among them"), std::string::npos) << note;
  EXPECT_NE(render_report_html(in).find(note.substr(0, note.find("'s data"))), std::string::npos) << note;  // unescaped
  report::check_screen_document(*in.screen, "s.json");
  (*in.screen).erase("most_power_w");
  EXPECT_THROW(report::check_screen_document(*in.screen, "s.json"), InputError);
  (*in.screen)["most_power_w"] = 806.9;
  (*in.screen)["within_budget_over_power"] = 27;  // more than within budget
  EXPECT_THROW(report::check_screen_document(*in.screen, "s.json"), InputError);
  (*in.screen)["within_budget_over_power"] = 0;
  EXPECT_EQ(render_report_html(in).find("Beyond the device"), std::string::npos);
}

// Networks the deciding model never measured: screen counts those within budget and marks Pareto rows.
TEST(Report, ScreenSectionStatesNetworksNeverMeasured) {
  ReportInputs in = synthetic_inputs(true);
  const auto row = [](int depth, bool trained) {
    return nlohmann::json{{"family", "basic"},  {"depth", depth},    {"width", 0.5},     {"resolution", 32},
                          {"batch", 1},         {"precision", "fp32"}, {"latency_ms", 30.0 / depth},
                          {"peak_memory_mb", 1.0 * depth}, {"trained_architecture", trained}, {"outside", nlohmann::json::array()}};
  };
  in.screen = nlohmann::json{{"stages", {{{"name", "candidates"}, {"count", 30}}}},
                             {"within_budget", 12},
                             {"within_budget_new_architectures", 5},
                             {"pareto", {row(18, true), row(22, false)}}};
  const std::string html = render_report_html(in);
  EXPECT_NE(html.find("5 of the configurations within budget are networks the deciding model never measured"),
            std::string::npos);
  EXPECT_EQ(html.find("no interval level bounds"), std::string::npos);
  (*in.screen)["within_budget_never_trained"] = 2;
  EXPECT_NE(render_report_html(in).find("2 of them at a family, precision or pairing of the two it never trained, "
                                        "which no interval level bounds"),
            std::string::npos);
  EXPECT_NE(html.find("<th>network never measured</th>"), std::string::npos);
  EXPECT_NE(html.find("<td>yes</td>"), std::string::npos);
  (*in.screen)["within_budget_new_architectures"] = 0;
  (*in.screen)["pareto"] = {row(18, true)};
  const std::string none = render_report_html(in);
  EXPECT_EQ(none.find("never measured"), std::string::npos);
}

TEST(Report, EmptyScreenDocumentSaysSo) {
  ReportInputs in = synthetic_inputs(true);
  in.screen = nlohmann::json::object();
  EXPECT_NE(render_report_html(in).find("no Pareto rows"), std::string::npos);
}

TEST(Report, NamesAreEscaped) {
  ReportInputs in = synthetic_inputs(true);
  in.title = "<b>bold</b> & co";
  in.datasets[0].name = "a<b>.csv";
  const std::string html = render_report_html(in);
  EXPECT_EQ(markup_problem(html), "");
  EXPECT_NE(html.find("&lt;b&gt;bold&lt;/b&gt; &amp; co"), std::string::npos);
  EXPECT_EQ(html.find("a<b>.csv"), std::string::npos);
}

TEST(Report, DatasetWithoutOkRowsRendersAWarning) {
  ReportInputs in = synthetic_inputs(true);
  for (auto& r : in.datasets[0].data.rows) r.status = Status::oom;
  const std::string html = render_report_html(in);
  expect_self_contained(html);
  EXPECT_NE(html.find("no ok rows"), std::string::npos);
}

TEST(Report, ModelParityOnItsPlatformAndSkipOnOthers) {
  ReportInputs in;
  in.datasets.push_back({"synthetic-a.csv", synthetic_grid(true, false)});
  in.datasets.push_back({"synthetic-b.csv", synthetic_affine_copy(in.datasets[0].data, 2, 3, "synthetic-b")});
  in.models.push_back({"model-a", &testing::synthetic_source_model()});
  const std::string html = render_report_html(in);
  expect_self_contained(html);
  for (const char* s : {"Parity: energy (J per batch)", "Residuals by batch (model-a)",
                        "Accuracy: model-a on synthetic-a.csv",
                        "skipped: the model was trained on synthetic-a, the data comes from synthetic-b"})
    EXPECT_NE(html.find(s), std::string::npos) << s;
}

// Fifteenth hostile pass: the report scored a model on the rows it trained on and called it the
// model's accuracy. It scores the rows the model did not train on, and calls the figures in-sample
// when there are none.
TEST(Report, ModelAccuracyIsHeldOutOrSaysInSample) {
  const CarbModel& m = testing::synthetic_source_model();
  const Dataset trained = synthetic_grid(true, false);  // the model trained on all of it
  Dataset grid = trained;
  for (std::size_t i = 0; i < 10; ++i) {  // and ten configurations it never saw
    Record r = trained.rows[i];
    r.config.resolution = 48;
    grid.rows.push_back(r);
  }
  Dataset unseen;
  for (const Record& r : grid.rows)
    if (!m.trained_on(r.config)) unseen.rows.push_back(r);
  ASSERT_EQ(unseen.rows.size(), 10u);
  ReportInputs in;
  in.datasets.push_back({"grid.csv", grid});
  in.datasets.push_back({"trained.csv", trained});
  in.models.push_back({"model-a", &m});
  const std::string html = render_report_html(in);
  const std::string held = "held out: the " + std::to_string(unseen.rows.size()) + " rows the model did not train on (" +
                           std::to_string(trained.rows.size()) + " rows it trained on are left out)";
  EXPECT_NE(html.find(held), std::string::npos) << held;
  EXPECT_NE(html.find("Accuracy: model-a on trained.csv (in-sample)"), std::string::npos);
  EXPECT_NE(html.find("in-sample: the model trained on " + std::to_string(trained.rows.size()) + " of these"),
            std::string::npos);
  EXPECT_EQ(html.find("Accuracy: model-a on grid.csv (in-sample)"), std::string::npos);
  {  // One row the model never saw is not "in-sample: trained on 0 of these 1 rows", nor data without
     // a measured value: one row is too few to score, and said so.
    Dataset one;
    one.rows.push_back(unseen.rows.front());
    ReportInputs in1;
    in1.datasets.push_back({"one.csv", one});
    in1.models.push_back({"model-a", &m});
    const std::string html1 = render_report_html(in1);
    EXPECT_EQ(html1.find("in-sample"), std::string::npos);
    EXPECT_EQ(html1.find("no measured value"), std::string::npos);
    EXPECT_NE(html1.find("targets: scoring takes at least two"),
              std::string::npos);
  }
  {  // Scores from a few rows are said to say little, as evaluate says (hundred-and-seventeenth hostile
     // pass: five rows read R2 -1.39 in the report, unqualified).
    Dataset three;
    three.rows.assign(unseen.rows.begin(), unseen.rows.begin() + 3);
    ReportInputs in3;
    in3.datasets.push_back({"three.csv", three});
    in3.models.push_back({"model-a", &m});
    EXPECT_NE(render_report_html(in3).find("only 3 test rows: R2, MAE and MAPE from so few say little"), std::string::npos);
    EXPECT_EQ(html.find("test rows: R2, MAE and MAPE from so few"), std::string::npos);  // 10 rows are not few
  }
  // Beside the accuracy, how often the 90% intervals hold the scored rows, recounted from predict.
  EXPECT_NE(html.find("<th>90% interval holds</th>"), std::string::npos);
  const auto p = m.predict(configs_of(unseen), {}, 0.9);
  for (const auto& t : m.targets()) {
    std::size_t held = 0, unbounded = 0;
    for (std::size_t i = 0; i < unseen.rows.size(); ++i) {
      const double y = *unseen.rows[i].value(t);
      held += p[i].interval.at(t).first <= y && y <= p[i].interval.at(t).second;
      unbounded += std::isinf(p[i].interval.at(t).second);
    }
    const std::string cell = "<td>" + fmt_num(100.0 * double(held) / double(unseen.rows.size()), 3) + "%" +
                             (unbounded ? " (" + std::to_string(unbounded) + " unbounded)" : "") + "</td></tr>";
    EXPECT_NE(html.find("<tr><td>" + t + "</td><td>10</td>"), std::string::npos) << t;
    EXPECT_NE(html.find(cell), std::string::npos) << t << " " << cell;
  }
}

// Twenty-fifth hostile pass: what evaluate, screen, transfer and characterize say beside their
// figures was left out of the report: configurations past the trained ranges (guesses), the Pareto
// rows screen flags, how the set was chosen and how its decisions held, few-shot predictions at or
// below zero, and rows past the last batch tier.
TEST(Report, SaysWhatTheCommandsSayBesideTheirFigures) {
  const CarbModel& m = testing::synthetic_source_model();
  Dataset grid = synthetic_grid(true, false);
  for (std::size_t i = 0; i < 10; ++i) {  // ten configurations far past the trained resolutions
    Record r = grid.rows[i];
    r.config.resolution = 1024;
    grid.rows.push_back(r);
  }
  ReportInputs in;
  in.datasets.push_back({"grid.csv", grid});
  in.models.push_back({"model-a", &m});
  std::string html = render_report_html(in);
  EXPECT_NE(html.find("10 of 10 scored configurations lie outside the ranges the model trained on"), std::string::npos);
  // Rows past the last tier (batch 256) are said to be left out of the efficiency table.
  Dataset big = synthetic_grid(true, true);
  for (std::size_t i = 0; i < 3; ++i) {
    Record r = big.rows[i];
    r.config.batch = 512;
    big.rows.push_back(r);
  }
  ReportInputs tiers;
  tiers.datasets.push_back({"big.csv", big});
  EXPECT_NE(render_report_html(tiers).find("3 ok rows with a batch above 256 are outside the tiers and left out"),
            std::string::npos);
  // A few-shot map that puts some predictions at or below zero (as transfer_test's).
  const Dataset a = synthetic_grid(false, false);
  Dataset b = synthetic_affine_copy(a, 1, 0, "synthetic-b");
  double lo = 1e300, hi = 0;
  for (const auto& r : a.rows) lo = std::min(lo, *r.latency_ms), hi = std::max(hi, *r.latency_ms);
  for (auto& r : b.rows) *r.latency_ms = std::max(1e-3, 3 * *r.latency_ms - 2 * lo - (hi - lo) / 10);
  ReportInputs tr;
  tr.datasets.push_back({"a.csv", a});
  tr.datasets.push_back({"b.csv", b});
  EXPECT_NE(render_report_html(tr).find("of predictions &lt;= 0, scored as they are"), std::string::npos);
  // A screen document: a flagged Pareto row, the capacity, the confidence and the validation.
  ReportInputs sc = synthetic_inputs(true);
  sc.screen = nlohmann::json{
      {"rank_by", "latency_ms"},
      {"budgets", {{"latency_ms", 10.0}}},
      {"confidence", 0.9},
      {"capacity", "gflops"},
      {"validation", {{"matched", 12}, {"decisions", {{"accuracy", 0.833}, {"true_accept", 8}, {"false_accept", 0},
                                                      {"true_reject", 2}, {"false_reject", 2}}},
                      {"warnings", {"a validation warning"}}}},
      {"stages", {{{"name", "candidates"}, {"count", 30}}, {{"name", "pareto"}, {"count", 1}}}},
      {"pareto",
       {{{"family", "basic"}, {"depth", 18}, {"width", 1.0}, {"resolution", 224}, {"batch", 8},
         {"precision", "fp16"}, {"energy_j", 1.5}, {"latency_ms", 4.0}, {"capacity", 14.5},
         {"outside", {{{"dimension", "resolution"}, {"text", "resolution 224 > 128 trained"}, {"log_ratio", 0.56}}}}}}}};
  html = render_report_html(sc);
  expect_self_contained(html);
  for (const char* say : {"1 of these configurations lie outside the ranges the model trained on",
                          "resolution 224 &gt; 128 trained", "upper end of the 0.9 interval",
                          "Pareto set taken against capacity in gflops", "validated on 12 measured configurations",
                          "false_reject 2", "a validation warning"})
    EXPECT_NE(html.find(say), std::string::npos) << say;
  EXPECT_EQ(html.find("shortlist"), std::string::npos);
  // With a shortlist, the screen's own decisions too (sixty-sixth hostile pass).
  (*sc.screen)["validation"]["shortlisted"] = 5;
  (*sc.screen)["validation"]["screen_decisions"] = {
      {"accuracy", 0.5}, {"true_accept", 4}, {"false_accept", 0}, {"true_reject", 2}, {"false_reject", 6}};
  const std::string cut = render_report_html(sc);
  EXPECT_NE(cut.find("false_reject 2 by the deciding model alone; with the shortlist&#39;s cut (5 kept), accuracy 0.5, "
                     "false_accept 0, false_reject 6"),
            std::string::npos)
      << cut.substr(cut.find("validated on"), 300);
}

// Twenty-fifth hostile pass: a telemetry model on data where some rows lack utilization dropped the
// whole accuracy section, naming one configuration. The rows with it are scored, the others counted.
TEST(Report, ATelemetryModelScoresTheRowsWithUtilization) {
  TrainOptions o;
  o.learners = {"extra_trees"};
  o.params.n_trees = 10;
  o.params.threads = 1;
  o.folds = 2;
  o.correctors = false;
  o.use_telemetry = true;
  const Dataset trained = synthetic_grid(true, true);
  const CarbModel m = CarbModel::train(trained, o);
  Dataset d = trained;
  for (std::size_t i = 0; i < 10; ++i) d.rows[i].config.resolution = 48;  // unseen: scored
  for (std::size_t i = 0; i < 5; ++i) d.rows[i].avg_sm_util.reset(), d.rows[i].avg_mem_util.reset();
  ReportInputs in;
  in.datasets.push_back({"tel.csv", d});
  in.models.push_back({"tel-model", &m});
  const std::string html = render_report_html(in);
  EXPECT_NE(html.find("5 rows without measured utilization left out"), std::string::npos);
  EXPECT_NE(html.find("held out: the 5 rows the model did not train on"), std::string::npos);
  EXPECT_EQ(html.find("cannot predict"), std::string::npos);
}

// The learning curves of active profiling: two strategies, two seeds; the chart and the table
// show the mean over seeds.
TEST(Report, CurvesSectionShowsTheMeanLearningCurves) {
  ReportInputs in = synthetic_inputs(true);
  for (unsigned seed : {1u, 2u})
    for (int r = 0; r < 3; ++r) {
      in.curves.push_back({"random", "latency_ms", seed, r, 50 * (r + 1), 60.0 * (r + 1), 0.9 + 0.02 * r, 5});
      in.curves.push_back({"plan<uncertainty>", "latency_ms", seed, r, 50 * (r + 1), 90.0 * (r + 1),
                           0.91 + 0.02 * r + (seed == 2 ? 0.01 : 0.0), 4});
    }
  const std::string html = render_report_html(in);
  expect_self_contained(html);
  EXPECT_NE(html.find("Active profiling: learning curves"), std::string::npos);
  EXPECT_NE(html.find("Mean over 2 seeds"), std::string::npos);
  EXPECT_NE(html.find("latency R² against seconds of measuring"), std::string::npos);
  EXPECT_NE(html.find("plan&lt;uncertainty&gt;"), std::string::npos);  // escaped
  EXPECT_NE(html.find("0.955"), std::string::npos);  // plan's last round: (0.95 + 0.96) / 2
  EXPECT_EQ(render_report_html(synthetic_inputs(true)).find("Active profiling"), std::string::npos);
}

TEST(Report, CurvesCsvIsReadAndCheckedLikeEveryCsv) {
  const auto dir = std::filesystem::temp_directory_path() / ("carb_curves_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "c.csv") << "strategy,seed,round,rows,cost_s,target,r2,mape\nrandom,1,0,50,58.3,latency_ms,0.97,9.8\n";
  const auto c = read_curves_csv(dir / "c.csv");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].rows, 50);
  EXPECT_DOUBLE_EQ(c[0].cost_s, 58.3);
  std::ofstream(dir / "bad.csv") << "strategy,seed,round,rows,cost_s,target,r2,mape\nrandom,1,0,fifty,58.3,latency_ms,0.97,9.8\n";
  try {
    read_curves_csv(dir / "bad.csv");
    ADD_FAILURE() << "a bad rows value was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rows"), std::string::npos) << e.what();
  }
  std::ofstream(dir / "other.csv") << "a,b\n1,2\n";
  EXPECT_THROW(read_curves_csv(dir / "other.csv"), DataError);
  // Values a curve cannot have are refused with their line, not plotted.
  const std::string head = "strategy,seed,round,rows,cost_s,target,r2,mape\n";
  for (const char* row : {"random,1,0,-5,58.3,latency_ms,0.97,9.8", "random,1,0,50,-1,latency_ms,0.97,9.8",
                          "random,1,0,50,58.3,latency_ms,1.5,9.8", "random,1,0,50,58.3,bogus,0.97,9.8",
                          "random,1,0,50,1e308,latency_ms,0.97,9.8", "random,1,0,50,58.3,latency_ms,0.97,-2",
                          "random,1,0,50,58.3,latency_ms,-1e300,9.8", "random,-1,0,50,58.3,latency_ms,0.97,9.8",
                          "random,1,0,50,58.3,latency_ms,0.97,1e300"}) {
    std::ofstream(dir / "v.csv") << head << row << "\n";
    EXPECT_THROW(read_curves_csv(dir / "v.csv"), DataError) << row;
  }
  std::ofstream(dir / "low.csv") << head << "random,0,0,50,58.3,latency_ms,-999,9.8\n";  // poor, but a curve
  EXPECT_DOUBLE_EQ(read_curves_csv(dir / "low.csv").at(0).r2, -999);
  std::ofstream(dir / "dup.csv") << head << "random,1,0,50,58.3,latency_ms,0.97,9.8\nrandom,1,0,50,58.3,latency_ms,0.98,9.8\n";
  try {
    read_curves_csv(dir / "dup.csv");
    ADD_FAILURE() << "a duplicated round was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("dup.csv:3"), std::string::npos) << e.what();
  }
  // Fifty-sixth hostile pass: rows and cost falling from round to round, and a round's targets on
  // different rows, were drawn. The shipped curves pass.
  const auto refusal = [&](const std::string& rows) -> std::string {
    std::ofstream(dir / "x.csv") << head << rows;
    try {
      read_curves_csv(dir / "x.csv");
    } catch (const DataError& e) {
      return e.what();
    }
    return "";
  };
  const std::string two = "random,1,0,50,58,latency_ms,0.97,9.8\nrandom,1,0,50,58,peak_memory_mb,0.99,2\n";
  EXPECT_EQ(refusal(two + "random,1,1,100,120,latency_ms,0.98,8\n"), "");
  EXPECT_NE(refusal(two + "random,1,1,40,120,latency_ms,0.98,8\n")
                .find("x.csv:4: strategy \"random\", seed 1, round 1 has measured 40 rows for 120 s, less than round 0's 50"),
            std::string::npos)
      << refusal(two + "random,1,1,40,120,latency_ms,0.98,8\n");
  EXPECT_NE(refusal(two + "random,1,1,100,50,latency_ms,0.98,8\n").find("only grow from round to round"), std::string::npos);
  EXPECT_NE(refusal("random,1,0,50,58,latency_ms,0.97,9.8\nrandom,1,0,350,58,peak_memory_mb,0.99,2\n")
                .find("x.csv:3: strategy \"random\", seed 1, round 0 has 350 rows and 58 s for peak_memory_mb but 50 rows"),
            std::string::npos);
  EXPECT_EQ(refusal("random,1,0,50,58,latency_ms,0.97,9.8\nrandom,2,0,60,70,latency_ms,0.97,9.8\n"), "");  // other seed
  EXPECT_NO_THROW(read_curves_csv(std::filesystem::path(CARB_SOURCE_DIR) / "bench" / "results" /
                                  "active_learning_cpu-2t-1000.csv"));
  std::filesystem::remove_all(dir);
}

TEST(Report, NoDatasetIsAnError) { EXPECT_THROW(render_report_html(ReportInputs{}), InputError); }

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("carb_report_test_" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

TEST(Report, WriteReportIsAtomicAndComplete) {
  TempDir tmp;
  const auto csv = tmp.path / "synthetic.csv";
  write_dataset_csv(synthetic_grid(true, true), csv);
  ReportOptions o;
  o.data = {csv};
  o.out = tmp.path / "report.html";
  write_report(o);
  std::ifstream f(o.out);
  const std::string html((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  expect_self_contained(html);
  EXPECT_NE(html.find("synthetic.csv"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(o.out.string() + ".tmp"));
}

TEST(Report, BadInputsAreClearErrors) {
  TempDir tmp;
  ReportOptions o;
  o.out = tmp.path / "r.html";
  EXPECT_THROW(write_report(o), InputError);  // no data
  o.data = {tmp.path / "missing.csv"};
  EXPECT_THROW(write_report(o), Error);
  const auto csv = tmp.path / "synthetic.csv";
  write_dataset_csv(synthetic_grid(false, false), csv);
  o.data = {csv};
  o.screen = tmp.path / "missing.json";  // read as every input is (csv::read_text), and named
  try {
    write_report(o);
    ADD_FAILURE() << "a missing screen document was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.json: cannot open for reading"), std::string::npos) << e.what();
  }
  // Seventieth hostile pass: a named pipe at --screen or --curves blocked the open for good, deaf
  // to the SIGTERM the report records to stop; refused before it is opened.
  ASSERT_EQ(::mkfifo((tmp.path / "fifo").c_str(), 0600), 0);
  o.screen = tmp.path / "fifo";
  EXPECT_THROW(write_report(o), DataError);
  o.screen.reset();
  o.curves = tmp.path / "fifo";
  EXPECT_THROW(write_report(o), DataError);
  o.curves.reset();
  o.out = tmp.path / "no_such_dir" / "r.html";
  EXPECT_THROW(write_report(o), InputError);
  o.out = tmp.path / "r.html";
  o.models = {tmp.path / "no_model"};
  EXPECT_THROW(write_report(o), ModelError);
  EXPECT_FALSE(std::filesystem::exists(o.out));
  // A dataset given twice, under two names too, would be characterized as twice its rows.
  o.models.clear();
  std::filesystem::create_directory(tmp.path / "sub");
  o.data = {csv, tmp.path / "sub" / ".." / "synthetic.csv"};
  try {
    write_report(o);
    ADD_FAILURE() << "a dataset given twice was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is given twice"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(o.out));
}

// Fifteenth hostile pass: `--screen` drew `{}`, negative and 1e308 latencies, and a latency "n/a"
// (which made the column vanish) with exit 0. A document that is no screen result is refused,
// naming the first bad field; nothing is written.
TEST(Report, AScreenDocumentIsCheckedBeforeItIsDrawn) {
  TempDir tmp;
  const auto csv = tmp.path / "synthetic.csv";
  write_dataset_csv(synthetic_grid(false, false), csv);
  const nlohmann::json row = {{"family", "basic"}, {"depth", 18},      {"width", 1.0},   {"resolution", 64},
                              {"batch", 8},        {"precision", "fp16"}, {"latency_ms", 4.0}, {"latency_ms_lower", 3.0},
                              {"latency_ms_upper", 5.0}};
  const nlohmann::json good = {{"targets", {"latency_ms"}},
                               {"stages", {{{"name", "candidates"}, {"count", 3072}}}},
                               {"pareto", {row}}};
  const auto error_of = [&](const nlohmann::json& doc) -> std::string {
    std::ofstream(tmp.path / "s.json") << doc.dump();
    ReportOptions o;
    o.data = {csv};
    o.screen = tmp.path / "s.json";
    o.out = tmp.path / "r.html";
    std::filesystem::remove(o.out);
    try {
      write_report(o);
    } catch (const InputError& e) {
      EXPECT_FALSE(std::filesystem::exists(o.out));
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of(good), "");
  auto with = [&](const char* key, const nlohmann::json& v) {
    nlohmann::json d = good;
    d["pareto"][0][key] = v;
    return d;
  };
  const std::string file = (tmp.path / "s.json").string();
  EXPECT_EQ(error_of(nlohmann::json::object()),
            file + ": the document has no \"targets\" (expected `carb screen --format json` output)");
  EXPECT_NE(error_of(with("latency_ms", -5)).find("pareto[0].latency_ms is -5, outside the plausible range"),
            std::string::npos);
  EXPECT_NE(error_of(with("latency_ms", 1e308)).find("pareto[0].latency_ms is 1e+308"), std::string::npos)
      << error_of(with("latency_ms", 1e308));
  EXPECT_NE(error_of(with("latency_ms", "n/a")).find("pareto[0].latency_ms is \"n/a\", not a number"),
            std::string::npos);
  EXPECT_NE(error_of(with("latency_ms_upper", 3.5)).find("the interval of latency_ms does not hold"),
            std::string::npos);
  EXPECT_NE(error_of(with("depth", 19)).find("pareto[0]: "), std::string::npos) << error_of(with("depth", 19));
  EXPECT_NE(error_of(with("precision", 16)).find("pareto[0].precision is 16, not a string"), std::string::npos);
  // Fifty-second hostile pass: a Pareto row edited to 999 ms was drawn beside its 20 ms budget. A
  // row's interval is what the budget judged, where it has one.
  nlohmann::json budgeted = good;
  budgeted["budgets"] = {{"latency_ms", 5.0}};
  EXPECT_EQ(error_of(budgeted), "");
  budgeted["budgets"]["latency_ms"] = 4.5;
  EXPECT_NE(error_of(budgeted).find("pareto[0].latency_ms_upper is 5, over the document's own budget latency_ms <= 4.5 "
                                    "(edited since carb screen wrote it?)"),
            std::string::npos)
      << error_of(budgeted);
  budgeted["budgets"] = {{"energy_j", 1.0}};
  EXPECT_NE(error_of(budgeted).find("a budget on energy_j, which is not among the document's targets"),
            std::string::npos);
  nlohmann::json neg = good;
  neg["stages"][0]["count"] = -1;
  EXPECT_NE(error_of(neg).find("stages[0].count is negative"), std::string::npos);
  for (const char* k : {"unbounded_at_confidence", "source_guesses", "nonpositive_predictions"}) {
    nlohmann::json bad = good;
    bad[k] = -2;
    EXPECT_NE(error_of(bad).find(std::string(k) + " is negative"), std::string::npos) << k;
    bad[k] = 1.5;
    EXPECT_NE(error_of(bad).find(std::string(k) + " is 1.5, not a whole number"), std::string::npos) << k;
  }
  nlohmann::json other = good;
  other["targets"] = {"accuracy"};
  EXPECT_NE(error_of(other).find("\"accuracy\" is not a target carb predicts"), std::string::npos);

  // Fifty-fifth hostile pass: rho -7, a within_budget stage of 3,000 after a shortlist of 5, and a
  // peak of 1e-6 MB were drawn with exit 0. Figures the screen cannot have written are refused.
  nlohmann::json full = good;
  full["targets"] = {"latency_ms", "peak_memory_mb"};
  full["pareto"][0]["peak_memory_mb"] = 40.0;
  full["stages"] = {{{"name", "candidates"}, {"count", 3072}}, {{"name", "shortlist"}, {"count", 5}},
                    {{"name", "within_budget"}, {"count", 3}}, {{"name", "pareto"}, {"count", 1}}};
  full["within_budget"] = 3, full["within_budget_guesses"] = 1, full["rank_spearman"] = -0.5;
  full["confidence"] = 0.9;
  EXPECT_EQ(error_of(full), "");
  const auto edited = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json d = full;
    edit(d);
    return error_of(d);
  };
  EXPECT_NE(edited([](auto& d) { d["rank_spearman"] = -7; }).find("rank_spearman is -7, outside [-1, 1]"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["stages"][2]["count"] = 3000, d["within_budget"] = 3000; })
                .find("stages[2] (within_budget) keeps 3000 of the 5 shortlist before it"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["validation"] = {{"matched", 3}, {"shortlisted", 4}}; })
                .find("validation.shortlisted is more than validation.matched"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["validation"] = {{"matched", 3}, {"shortlisted", "two"}}; })
                .find("validation.shortlisted"),
            std::string::npos);
  // Sixty-seventh hostile pass: edited screen decisions were drawn as given.
  const nlohmann::json model = {{"true_accept", 2}, {"false_accept", 1}, {"true_reject", 0}, {"false_reject", 0}};
  const auto with_cut = [&](nlohmann::json cut, int kept) {
    return edited([&](auto& d) {
      d["validation"] = {{"matched", 3}, {"shortlisted", kept}, {"decisions", model}, {"screen_decisions", cut}};
    });
  };
  EXPECT_EQ(with_cut({{"true_accept", 1}, {"false_accept", 0}, {"true_reject", 1}, {"false_reject", 1}}, 2), "");
  EXPECT_NE(with_cut({{"true_accept", 3}, {"false_accept", 0}, {"true_reject", 1}, {"false_reject", -1}}, 3)
                .find("is negative"),
            std::string::npos);
  EXPECT_NE(with_cut({{"true_accept", 1}, {"false_accept", 0}, {"true_reject", 1}, {"false_reject", 2}}, 2)
                .find("judge different configurations"),
            std::string::npos);
  EXPECT_NE(with_cut({{"true_accept", 2}, {"false_accept", 1}, {"true_reject", 0}, {"false_reject", 0}}, 2)
                .find("accepts more than validation.shortlisted kept"),
            std::string::npos);
  EXPECT_NE(with_cut("many", 2).find("needs an object"), std::string::npos);
  const auto with_accuracy = [&](double a) {
    return edited([&](auto& d) {
      nlohmann::json m = model;
      m["accuracy"] = a;
      d["validation"] = {{"matched", 3}, {"decisions", m}};
    });
  };
  EXPECT_EQ(with_accuracy(2.0 / 3.0), "");
  EXPECT_NE(with_accuracy(0.99).find("validation.decisions.accuracy is not what its counts give"), std::string::npos);
  EXPECT_NE(edited([&](auto& d) {
              d["validation"] = {
                  {"matched", 3},
                  {"shortlisted", 3},
                  {"decisions", {{"true_accept", 1}, {"false_accept", 1}, {"true_reject", 0}, {"false_reject", 1}}},
                  {"screen_decisions", {{"true_accept", 2}, {"false_accept", 1}, {"true_reject", 0}, {"false_reject", 0}}}};
            }).find("accepts more than validation.decisions"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["within_budget"] = 4; }).find("within_budget is 4 but its stage counts 3"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["within_budget_guesses"] = 4; }).find("within_budget_guesses is more than"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["within_budget_new_architectures"] = 4; })
                .find("within_budget_new_architectures is more than"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["within_budget_new_architectures"] = 1, d["within_budget_never_trained"] = 2; })
                .find("within_budget_never_trained is more than within_budget_new_architectures"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["within_budget_never_trained"] = 4; }).find("within_budget_never_trained is more than"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["pareto"][0]["trained_architecture"] = "nope"; })
                .find("pareto[0].trained_architecture is not true or false"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["within_budget_new_architectures"] = 0, d["pareto"][0]["trained_architecture"] = false; })
                .find("1 Pareto rows are of networks never measured, more than"),
            std::string::npos);
  EXPECT_EQ(edited([](auto& d) { d["within_budget_new_architectures"] = 1, d["pareto"][0]["trained_architecture"] = false; }),
            "");
  EXPECT_NE(edited([](auto& d) { d["source_guesses"] = 4000; }).find("source_guesses is 4000, more than the 3072"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["stages"][3]["count"] = 2; }).find("\"pareto\" lists 1 rows but its stage counts 2"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["confidence"] = 1.5; }).find("confidence is 1.5, not a level"), std::string::npos);
  // Fifty-sixth hostile pass: a dominated row and a duplicate drawn as part of the front, "ranked by
  // foo", and a confidence screen never judges at.
  EXPECT_NE(edited([](auto& d) { d["confidence"] = 0.7; }).find("confidence is 0.7, not a level carb screen judges at"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["rank_by"] = "foo"; }).find("rank_by \"foo\" is not a target carb predicts"),
            std::string::npos);
  EXPECT_NE(edited([](auto& d) { d["rank_by"] = "energy_j"; }).find("rank_by energy_j is not among the document's targets"),
            std::string::npos);
  EXPECT_EQ(edited([](auto& d) { d["rank_by"] = "energy_j", d["two_stage"] = true; }), "");
  EXPECT_EQ(edited([](auto& d) { d["rank_by"] = "latency_ms"; }), "");
  nlohmann::json budgeted_full = full;
  budgeted_full["budgets"] = {{"latency_ms", 6.0}};
  EXPECT_EQ(error_of(budgeted_full), "");
  budgeted_full["pareto"][0].erase("latency_ms_upper");
  budgeted_full["pareto"][0].erase("latency_ms_lower");
  EXPECT_NE(error_of(budgeted_full).find("pareto[0] has no interval of latency_ms, though its budget was judged"),
            std::string::npos) << error_of(budgeted_full);
  const auto with_second = [&](double latency, double memory, int batch) {
    nlohmann::json d = full;
    nlohmann::json second = d["pareto"][0];
    second["batch"] = batch, second["latency_ms"] = latency, second["latency_ms_lower"] = latency * 0.9;
    second["latency_ms_upper"] = latency * 1.1, second["peak_memory_mb"] = memory;
    d["pareto"].push_back(second);
    d["stages"][3]["count"] = 2;
    return error_of(d);
  };
  EXPECT_EQ(with_second(3.0, 60.0, 16), "");  // faster, larger: a trade-off
  EXPECT_NE(with_second(5.0, 60.0, 16).find("pareto[1] is beaten on every cost by another row"), std::string::npos)
      << with_second(5.0, 60.0, 16);
  EXPECT_NE(with_second(3.0, 60.0, 8).find("pareto[1] is a configuration listed before it"), std::string::npos);
  const std::string floor = edited([](auto& d) { d["pareto"][0]["peak_memory_mb"] = 1e-6; });
  EXPECT_NE(floor.find("pareto[0].peak_memory_mb is 1e-06 for basic-18-w1-r64-b8-fp16, under the "), std::string::npos)
      << floor;
  const std::string fast = edited([](auto& d) {
    d["pareto"][0]["latency_ms"] = 1e-6, d["pareto"][0]["latency_ms_lower"] = 1e-6;
  });
  EXPECT_NE(fast.find("pareto[0].latency_ms is 1e-06 for basic-18-w1-r64-b8-fp16, faster than the 10 PFLOP/s"),
            std::string::npos) << fast;
}

// The check refuses what a screen cannot write, never what it does: one- and two-stage screens, with
// and without a confidence level, pass it as they come.
TEST(Report, EveryScreenDocumentCarbWritesPassesTheCheck) {
  const auto cs = testing::synthetic_screen_configs();
  for (const bool two : {false, true})
    for (const std::optional<double> confidence : {std::optional<double>(), std::optional<double>(0.9)}) {
      ScreenOptions o;
      o.top_k = 40;
      o.budgets = {{"latency_ms", 6.0}};
      o.confidence = confidence;
      for (const Capacity capacity : {Capacity::none, Capacity::gflops}) {
        o.capacity = capacity;
        const auto r = screen(cs, testing::synthetic_model_a(), two ? &testing::synthetic_model_b() : nullptr, o);
        ASSERT_FALSE(r.pareto.empty());
        EXPECT_NO_THROW(report::check_screen_document(r.to_json(), "s.json"))
            << two << ' ' << confidence.has_value() << ' ' << to_string(capacity);
      }
    }
}

// `report --out` once overwrote whatever was there, the input CSV included. Now it replaces only a
// report carb wrote, refuses an input even with --force, and replaces anything else only with --force.
// Sixty-second hostile pass (its review): a symbolic link at --out, to nothing or to an earlier
// report, was replaced under --force with nothing kept. It is kept as a link.
TEST(Report, ForceKeepsASymbolicLinkAtTheOutputAsALink) {
  TempDir tmp;
  const auto csv = tmp.path / "synthetic.csv";
  write_dataset_csv(synthetic_grid(true, true), csv);
  std::filesystem::create_symlink("nowhere/r.html", tmp.path / "r.html");
  ReportOptions o;
  o.data = {csv};
  o.out = tmp.path / "r.html";
  EXPECT_THROW(write_report(o), InputError);  // without --force: refused
  o.force = true;
  write_report(o);
  EXPECT_FALSE(std::filesystem::is_symlink(tmp.path / "r.html"));
  ASSERT_TRUE(std::filesystem::is_symlink(tmp.path / "r.earlier.html"));
  EXPECT_EQ(std::filesystem::read_symlink(tmp.path / "r.earlier.html"), std::filesystem::path("nowhere/r.html"));
}

TEST(Report, NeverOverwritesAnInputOrAUsersFile) {
  TempDir tmp;
  const auto csv = tmp.path / "synthetic.csv";
  write_dataset_csv(synthetic_grid(true, true), csv);
  const auto csv_size = std::filesystem::file_size(csv);
  ReportOptions o;
  o.data = {csv};
  o.out = csv;
  o.force = true;
  EXPECT_THROW(write_report(o), InputError);
  EXPECT_EQ(std::filesystem::file_size(csv), csv_size);
  // Sixth hostile pass: the input's provenance sidecar was replaced with the report (with --force).
  { std::ofstream(tmp.path / "synthetic.json") << R"({"kind": "carb dataset"})"; }
  o.out = tmp.path / "synthetic.json";
  EXPECT_THROW(write_report(o), InputError);
  EXPECT_EQ(std::filesystem::file_size(tmp.path / "synthetic.json"), std::string(R"({"kind": "carb dataset"})").size());

  // Seventh hostile pass: through a link to the input, the sidecar beside the link target was not
  // seen as the input's; and a bare --out name run from inside a bundle (--model .) wrote into it.
  std::filesystem::create_directories(tmp.path / "links");
  std::filesystem::create_symlink(csv, tmp.path / "links" / "link.csv");
  o.data = {tmp.path / "links" / "link.csv"};
  EXPECT_THROW(write_report(o), InputError);
  EXPECT_EQ(std::filesystem::file_size(tmp.path / "synthetic.json"), std::string(R"({"kind": "carb dataset"})").size());
  o.data = {csv};
  std::filesystem::create_directories(tmp.path / "bundle");
  { std::ofstream(tmp.path / "bundle" / "trained_configs.txt") << "basic-10-w0.25-r32-b1-fp32\n"; }
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(tmp.path / "bundle");
  ReportOptions inside = o;
  inside.models = {"."};
  inside.out = "trained_configs.txt";
  EXPECT_THROW(write_report(inside), InputError);
  EXPECT_TRUE(std::filesystem::exists("trained_configs.txt"));
  std::filesystem::current_path(cwd);

  o.out = tmp.path / "notes.html";
  { std::ofstream(o.out) << "<html>my notes</html>"; }
  o.force = false;
  EXPECT_THROW(write_report(o), InputError);
  std::ifstream kept(o.out);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>()),
            "<html>my notes</html>");
  // Fifty-eighth hostile pass: --force replaced it with nothing kept. It is kept first, with a warning.
  std::vector<std::string> warnings;
  const WarningHandler before = set_warning_handler([&](const std::string& w) { warnings.push_back(w); });
  o.force = true;
  EXPECT_NO_THROW(write_report(o));
  {
    std::ifstream earlier(tmp.path / "notes.earlier.html");
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(earlier)), std::istreambuf_iterator<char>()),
              "<html>my notes</html>");
  }
  EXPECT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings.at(0).find("kept as " + (tmp.path / "notes.earlier.html").string()), std::string::npos) << warnings.at(0);
  EXPECT_NO_THROW(write_report(o));  // its own report now: replaced, nothing more kept
  EXPECT_EQ(warnings.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(tmp.path / "notes.earlier-1.html"));

  o.out = tmp.path / "report.html";
  o.force = false;
  write_report(o);
  EXPECT_NO_THROW(write_report(o));  // an earlier carb report is replaced without --force

  // Twelfth hostile pass: a carb report the user annotated was regenerated over without --force.
  auto read = [](const std::filesystem::path& f) {
    std::ifstream in(f, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  std::string annotated = read(o.out);
  const std::size_t main_at = annotated.find("<main>");
  ASSERT_NE(main_at, std::string::npos);
  annotated.insert(main_at + 6, "<p>my note: rerun on the quiet machine</p>");
  { std::ofstream(o.out, std::ios::binary) << annotated; }
  try {
    write_report(o);
    ADD_FAILURE() << "an edited report was replaced without --force";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("changed since carb wrote it"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read(o.out), annotated);
  o.force = true;
  EXPECT_NO_THROW(write_report(o));
  EXPECT_EQ(read(o.out).find("my note"), std::string::npos);
  EXPECT_EQ(read(tmp.path / "report.earlier.html"), annotated);  // kept, as what --force replaces always is
  set_warning_handler(before);
  // Thirteenth hostile pass: a link at --out was replaced by a file, leaving its target stale.
  std::filesystem::create_symlink(o.out, tmp.path / "link.html");
  ReportOptions via_link = o;
  via_link.force = false;
  via_link.out = tmp.path / "link.html";
  EXPECT_THROW(write_report(via_link), InputError);
  EXPECT_TRUE(std::filesystem::is_symlink(via_link.out));
  // The report ends with its seal; everything above it is what the seal covers.
  const std::string html = read(o.out);
  EXPECT_EQ(html.rfind("<!-- carb-report fnv1a64="), html.size() - std::string("<!-- carb-report fnv1a64=").size() - 16 - 5);
}

}  // namespace
}  // namespace carb
