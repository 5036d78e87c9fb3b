// The notes on a set of predictions: each kind counted once, under the rule that decides it (a
// cost at or below zero is unknown, not unbounded; outside the ranges, inside them, of a network
// never trained), and worded with the caller's name for the level.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <limits>

#include "analysis/synthetic_datasets.hpp"
#include "carb/error.hpp"
#include "carb/prediction_notes.hpp"

namespace carb {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Prediction made(double value, double upper, bool outside, bool trained) {
  Prediction p;
  p.config = {Family::basic, 18, 0.5, 32, 4, Precision::fp32};
  p.value["latency_ms"] = value;
  p.interval["latency_ms"] = {value / 2, upper};
  if (outside) p.outside.push_back({"resolution", "resolution 512 > 64 trained", 2.1});
  p.trained_architecture = trained;
  return p;
}

std::string all(const std::vector<PredictionNote>& lines) {
  std::string s;
  for (const auto& l : lines) s += l.text + "\n";
  return s;
}

TEST(PredictionNotes, EachRowIsCountedOnceUnderTheRuleThatDecidesIt) {
  const CarbModel& m = testing::synthetic_source_model();
  const std::vector<Prediction> p = {
      made(1.0, 2.0, false, true),     // nothing to say
      made(-1.0, kInf, false, false),  // at or below zero: unknown, not unbounded nor new
      made(1.0, kInf, true, false),    // outside, unbounded (its network's novelty is the envelope's)
      made(1.0, kInf, false, true),    // inside, trained network, unbounded
      made(1.0, kInf, false, false),   // inside, new network, unbounded
      made(1.0, 3.0, false, false),    // inside, new network, bounded
  };
  const PredictionNotes n = count_prediction_notes(p, m);
  EXPECT_EQ(n.total, 6u);
  EXPECT_EQ(n.nonpositive, 1u);
  EXPECT_EQ(n.unbounded_outside, 1u);
  EXPECT_EQ(n.new_networks, 2u);
  if (m.calibrates_unseen_architectures()) {
    EXPECT_EQ(n.unbounded_inside, 1u);
    EXPECT_EQ(n.unbounded_new, 1u);
  } else {  // a new network's interval is then the trained ones': too few rows is the reason
    EXPECT_EQ(n.unbounded_inside, 2u);
    EXPECT_EQ(n.unbounded_new, 0u);
  }
}

// A hostile tester: 2.4 TB of peak memory on the 141 GB H200, and 1,226 W on its 700 W limit, came
// with the outside-the-ranges note alone. A model that knows its device says so.
TEST(PredictionNotes, WhatTheDeviceCannotRunIsSaid) {
  // A model of its own to set limits on: the shared one saved and loaded again (never freed, as the
  // shared ones: XGBoost's globals go before statics at exit).
  const auto dir = std::filesystem::temp_directory_path() / ("carb_notes_device_" + std::to_string(::getpid()));
  testing::synthetic_source_model().save(dir, true);
  CarbModel& m = *new CarbModel(CarbModel::load(dir));
  std::filesystem::remove_all(dir);
  const auto with = [](double memory, double energy, double latency) {
    Prediction p;
    p.config = {Family::basic, 18, 0.5, 32, 4, Precision::fp32};
    p.value = {{"peak_memory_mb", memory}, {"energy_j", energy}, {"latency_ms", latency}};
    return p;
  };
  const std::vector<Prediction> p = {with(50, 0.2, 1), with(150, 0.2, 1), with(50, 0.5, 1), with(50, 0.32, 1)};
  EXPECT_EQ(count_prediction_notes(p, m).over_memory, 0u);  // a model that knows nothing of its device
  EXPECT_EQ(count_prediction_notes(p, m).over_power, 0u);
  // Hundred-and-sixteenth hostile pass: with no limit known, 27 kW was said nothing of; past the
  // most a measured row may show (5 kW) it is.
  EXPECT_EQ(count_prediction_notes(p, m).over_any_device_power, 0u);
  const std::vector<Prediction> hot = {with(50, 49.7, 1.812), with(50, 4.9, 1)};  // 27.4 kW; 4.9 kW
  const PredictionNotes nh = count_prediction_notes(hot, m);
  EXPECT_EQ(nh.over_any_device_power, 1u);
  const auto hot_lines = prediction_note_lines(nh, m, std::nullopt, "--confidence");
  ASSERT_EQ(hot_lines.size(), 1u) << all(hot_lines);
  EXPECT_NE(hot_lines[0].text.find("1 prediction implies more than 5000 W (energy over latency, up to 27428 W)"),
            std::string::npos) << hot_lines[0].text;
  m.set_device_limits({100.0, 300.0});
  EXPECT_EQ(count_prediction_notes(hot, m).over_any_device_power, 0u);  // the device's own limit says it then
  EXPECT_EQ(count_prediction_notes(hot, m).over_power, 2u);
  const PredictionNotes n = count_prediction_notes(p, m);
  EXPECT_EQ(n.over_memory, 1u);
  EXPECT_EQ(n.over_power, 1u);  // 500 W; 320 W is within 1.1x, as close as measured rows come
  EXPECT_DOUBLE_EQ(n.most_power_w, 500);
  const auto lines = prediction_note_lines(n, m, std::nullopt, "--confidence");
  ASSERT_EQ(lines.size(), 2u) << all(lines);
  EXPECT_NE(lines[0].text.find("1 prediction needs more memory than the device has (peak memory above its 100 MB)"),
            std::string::npos) << lines[0].text;
  EXPECT_NE(lines[1].text.find("1 prediction implies more than 1.1x the 300 W power limit"), std::string::npos)
      << lines[1].text;
  EXPECT_NE(lines[1].text.find("up to 500 W"), std::string::npos) << lines[1].text;
  EXPECT_TRUE(lines[0].caution && lines[1].caution);
  // Under a confidence, an interval reaching above the device's memory may not fit.
  std::vector<Prediction> q = {with(50, 0.2, 1), with(60, 0.2, 1)};
  q[0].interval["peak_memory_mb"] = {40, 90}, q[1].interval["peak_memory_mb"] = {45, 120};
  q.push_back(with(50, 0.2, 1));
  q[2].interval["peak_memory_mb"] = {45, kInf};  // unbounded: said as such, not as reaching above
  const PredictionNotes nq = count_prediction_notes(q, m);
  EXPECT_EQ(nq.over_memory, 0u);
  EXPECT_EQ(nq.may_exceed_memory, 1u);
  const auto at90 = prediction_note_lines(nq, m, 0.9, "--confidence");
  ASSERT_GE(at90.size(), 1u) << all(at90);  // and the unbounded one's own note
  EXPECT_NE(at90[0].text.find("1 prediction within the device's 100 MB reaches above it at the upper end of its 90% "
                              "interval of peak memory: it may not fit"),
            std::string::npos) << at90[0].text;
  EXPECT_THROW(m.set_device_limits({0.0, std::nullopt}), InputError);
  EXPECT_THROW(m.set_device_limits({std::nullopt, kInf}), InputError);
  EXPECT_EQ(*m.device_limits().memory_mb, 100);  // a refused setting changes nothing
}

TEST(PredictionNotes, TheLinesNameTheCallersLevelAndOnlyDoubtsAreCautions) {
  const CarbModel& m = testing::synthetic_source_model();
  PredictionNotes n;
  n.total = 5, n.nonpositive = 1, n.unbounded_outside = 1, n.unbounded_inside = 2, n.unbounded_new = 1,
  n.new_networks = 3;
  const auto lines = prediction_note_lines(n, m, 0.99, "confidence");
  ASSERT_EQ(lines.size(), 5u) << all(lines);
  EXPECT_NE(lines[0].text.find("1 prediction is at or below zero"), std::string::npos) << lines[0].text;
  EXPECT_NE(lines[0].text.find("its interval is unbounded"), std::string::npos) << lines[0].text;
  EXPECT_NE(lines[1].text.find("1 prediction outside the trained ranges has no upper bound at 99%"), std::string::npos);
  // Sixty-fifth hostile pass: a rate unbounded at the level was the one cause left unnamed.
  EXPECT_NE(lines[1].text.find("an extrapolation rate unbounded at 99%"), std::string::npos) << lines[1].text;
  EXPECT_NE(lines[2].text.find("2 predictions inside the trained ranges have no upper bound at 99%"), std::string::npos);
  EXPECT_NE(lines[2].text.find("needs 99 per regime); a lower confidence may bound them"), std::string::npos)
      << lines[2].text;
  EXPECT_NE(lines[3].text.find("3 of 5 configurations inside the trained ranges are of architectures"),
            std::string::npos);
  EXPECT_EQ(lines[3].caution, !m.calibrates_unseen_architectures());
  EXPECT_NE(lines[4].text.find("needs 99 trained networks, and the model has " +
                               std::to_string(m.unseen_calibration_networks())),
            std::string::npos)
      << lines[4].text;
  for (std::size_t k : {0u, 1u, 2u, 4u}) EXPECT_TRUE(lines[k].caution) << lines[k].text;
  // Without a level only a cost no configuration has is worth a word, and it has no interval.
  const auto plain = prediction_note_lines(n, m, std::nullopt, "--confidence");
  ASSERT_EQ(plain.size(), 1u) << all(plain);
  EXPECT_EQ(plain[0].text.find("interval"), std::string::npos) << plain[0].text;
  EXPECT_TRUE(prediction_note_lines(PredictionNotes{}, m, 0.9, "--confidence").empty());
}

}  // namespace
}  // namespace carb
