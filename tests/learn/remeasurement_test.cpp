// Tests of the re-measurement spread (src/learn/remeasurement.hpp): its quantiles, what may
// calibrate it, how it widens an interval, and that a bundle keeps it (and refuses forged ones).
#include "learn/remeasurement.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "carb/error.hpp"
#include "carb/features.hpp"
#include "carb/model.hpp"
#include "carb/network_spec.hpp"
#include "carb/warning.hpp"
#include "learn/bundle_edit.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

// A grid of basic networks, latency and memory by formula (test data, never measured).
Dataset campaign() {
  Dataset d;
  for (int depth : {10, 18, 26})
    for (double width : {0.25, 0.5})
      for (int res : {32, 64})
        for (int batch : {1, 2, 4, 8, 16})
          for (Precision p : {Precision::fp32, Precision::bf16}) {
            Record r;
            r.platform = "synthetic";
            r.config = {Family::basic, depth, width, res, batch, p};
            const auto s = network_totals(r.config);
            r.peak_memory_mb = 1.5 * s.memory_floor_mb();
            r.latency_ms = 0.3 + s.flops() / 1e10;
            r.extra["protocol_id"] = "p1";
            d.rows.push_back(r);
          }
  return d;
}

// The first n rows measured again: latency off by exp(e_i), e_i spread evenly over [-0.2, 0.2];
// memory the same (it is reproducible).
Dataset again(const Dataset& d, std::size_t n) {
  Dataset a;
  for (std::size_t i = 0; i < n; ++i) {
    Record r = d.rows[i];
    r.latency_ms = *r.latency_ms * std::exp(-0.2 + 0.4 * double(i) / double(n - 1));
    a.rows.push_back(r);
  }
  return a;
}

TEST(RemeasuredSpread, IsTheFiniteSampleQuantileOfTheLogRatios) {
  const Dataset d = campaign();
  const Dataset a = again(d, 41);  // |e| of 41 evenly spread values: 0, 0.01, 0.01, ..., 0.2, 0.2
  const RemeasuredSpread s = remeasured_spread(d, a, "latency_ms");
  EXPECT_EQ(s.pairs, 41u);
  std::vector<double> r;
  for (std::size_t i = 0; i < 41; ++i) r.push_back(std::fabs(-0.2 + 0.4 * double(i) / 40.0));
  std::sort(r.begin(), r.end());
  // ceil((n + 1) * level)-th smallest: 0.8 -> 34th, 0.9 -> 38th, 0.95 -> 40th; 0.99 needs 99 pairs.
  EXPECT_NEAR(s.spread.at("0.8"), r[33], 1e-12);
  EXPECT_NEAR(s.spread.at("0.9"), r[37], 1e-12);
  EXPECT_NEAR(s.spread.at("0.95"), r[39], 1e-12);
  EXPECT_TRUE(std::isinf(s.spread.at("0.99")));
  EXPECT_EQ(remeasured_spread(d, a, "peak_memory_mb").spread.at("0.9"), 0.0);  // the same every time
  EXPECT_THROW(remeasured_spread(d, again(d, kMinRemeasuredPairs - 1), "latency_ms"), InputError);
}

TEST(RemeasuredSpread, OnlyAnotherRunOfTheSamePlatformAndProtocolCalibratesIt) {
  const Dataset d = campaign();
  const Dataset a = again(d, 30);
  EXPECT_NO_THROW(check_remeasurement(d, a));
  Dataset other = a;
  for (Record& r : other.rows) r.platform = "elsewhere";
  EXPECT_THROW(check_remeasurement(d, other), InputError);
  // Another protocol is said, not refused: its spread includes the protocols' difference.
  Dataset protocol = a;
  for (Record& r : protocol.rows) r.extra["protocol_id"] = "p2";
  std::vector<std::string> said;
  set_warning_handler([&](const std::string& w) { said.push_back(w); });
  new_warning_round();
  EXPECT_NO_THROW(check_remeasurement(d, protocol));
  warn_remeasurement(d, protocol);
  // A target shifted as a whole (every latency doubled) is said: the spread reads it as noise.
  Dataset doubled = again(d, 30);
  for (Record& r : doubled.rows) r.latency_ms = *r.latency_ms * 2;
  warn_remeasurement(d, doubled);
  warn_remeasurement(d, a);  // nothing to say
  set_warning_handler(nullptr);
  ASSERT_EQ(said.size(), 2u);
  EXPECT_NE(said[0].find("measured under protocol p2, the data under p1"), std::string::npos) << said[0];
  EXPECT_EQ(said[1].rfind("the re-measurement's latency_ms is 10", 0), 0u) << said[1];  // 100-101%
  EXPECT_NE(said[1].find("% higher than the data's"), std::string::npos) << said[1];
  Dataset copy(d);
  copy.rows.resize(30);
  // Seventy-fifth hostile pass: the data with one value changed, or rounded to 6 digits, passed.
  Dataset edited = copy, rounded = copy;
  edited.rows[0].latency_ms = *edited.rows[0].latency_ms * 1.01;
  for (Record& r : rounded.rows) r.latency_ms = *r.latency_ms * (1 + 2e-6);
  for (const Dataset* c : {&copy, &edited, &rounded}) try {
      check_remeasurement(d, *c);
      ADD_FAILURE() << "a copy of the data calibrated a spread";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("a copy, not a new measurement"), std::string::npos) << e.what();
    }
  Dataset elsewhere = a;
  for (Record& r : elsewhere.rows) r.config.resolution = 128;  // none of the data's
  EXPECT_THROW(check_remeasurement(d, elsewhere), InputError);
}

TEST(RemeasuredSpread, AddsInQuadratureOnEachSideInLogSpace) {
  const auto [lo, hi] = with_remeasured_spread(10.0, {8.0, 12.5}, 0.1);
  EXPECT_NEAR(std::log(10.0 / lo), std::hypot(std::log(1.25), 0.1), 1e-12);
  EXPECT_NEAR(std::log(hi / 10.0), std::hypot(std::log(1.25), 0.1), 1e-12);
  const auto same = with_remeasured_spread(10.0, {8.0, 12.5}, 0.0);
  EXPECT_DOUBLE_EQ(same.first, 8.0);
  EXPECT_DOUBLE_EQ(same.second, 12.5);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(with_remeasured_spread(10.0, {0.0, 12.5}, 0.1).first, 0.0);  // a lower edge at 0 stays
  EXPECT_TRUE(std::isinf(with_remeasured_spread(10.0, {8.0, inf}, 0.1).second));
  const auto unbounded = with_remeasured_spread(10.0, {8.0, 12.5}, inf);
  EXPECT_EQ(unbounded.first, 0.0);
  EXPECT_TRUE(std::isinf(unbounded.second));
}

TrainOptions quick() {
  TrainOptions o;
  o.params.n_trees = 20;
  o.params.threads = 1;
  o.folds = 3;
  return o;
}

// Calibrated, every interval holds the spread; saved and loaded, the bundle answers the same; a
// forged spread is refused like a forged rate.
TEST(RemeasuredSpread, WidensPredictionsAndTravelsWithTheBundle) {
  const Dataset d = campaign();
  const Dataset a = again(d, 60);
  CarbModel m = CarbModel::train(d, quick());
  const std::vector<Config> cs = {d.rows[3].config, d.rows[70].config};
  const auto before = m.predict(cs, {}, 0.9);
  EXPECT_FALSE(m.has_remeasured_spread());
  m.calibrate_remeasurement(d, a);
  ASSERT_TRUE(m.has_remeasured_spread());
  const double q = m.target_summary("latency_ms").remeasured_spread.at("0.9");
  EXPECT_GT(q, 0.15);
  EXPECT_EQ(m.target_summary("latency_ms").remeasured_pairs, 60u);
  const auto after = m.predict(cs, {}, 0.9);
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const double v = after[i].value.at("latency_ms");
    EXPECT_DOUBLE_EQ(v, before[i].value.at("latency_ms"));  // the point stays
    const auto [lo0, hi0] = before[i].interval.at("latency_ms");
    const auto [lo1, hi1] = after[i].interval.at("latency_ms");
    EXPECT_NEAR(std::log(hi1 / v), std::hypot(std::log(hi0 / v), q), 1e-9);
    EXPECT_NEAR(std::log(v / lo1), std::hypot(std::log(v / lo0), q), 1e-9);
    EXPECT_EQ(after[i].interval.at("peak_memory_mb"), before[i].interval.at("peak_memory_mb"));  // spread 0
  }
  const fs::path dir = fs::temp_directory_path() / ("carb_remeasured_" + std::to_string(::getpid()));
  m.save(dir, true);
  const CarbModel back = CarbModel::load(dir);
  EXPECT_EQ(back.target_summary("latency_ms").remeasured_spread, m.target_summary("latency_ms").remeasured_spread);
  EXPECT_EQ(back.predict(cs, {}, 0.9)[1].interval, after[1].interval);
  using Edit = std::function<void(nlohmann::json&)>;
  const std::vector<std::pair<std::string, Edit>> edits = {
      {"a negative spread", [](nlohmann::json& j) { j["models"]["latency_ms"]["remeasured"]["spread"]["0.9"] = -0.1; }},
      {"a spread below a lower level's",
       [](nlohmann::json& j) { j["models"]["latency_ms"]["remeasured"]["spread"]["0.95"] = 0.0; }},
      {"too few pairs", [](nlohmann::json& j) { j["models"]["latency_ms"]["remeasured"]["pairs"] = 3; }},
      {"a spread for one target only", [](nlohmann::json& j) { j["models"]["peak_memory_mb"].erase("remeasured"); }},
      {"a spread missing a level", [](nlohmann::json& j) { j["models"]["latency_ms"]["remeasured"]["spread"].erase("0.8"); }},
      // Seventy-fifth hostile pass: what training never writes loaded.
      {"a bounded 99% from 60 configurations",
       [](nlohmann::json& j) {
         for (auto& [t, tj] : j["models"].items()) tj["remeasured"]["spread"]["0.99"] = 5.0;
       }},
      {"a key training never writes", [](nlohmann::json& j) { j["models"]["latency_ms"]["remeasured"]["note"] = 1; }},
      {"a spread on a drift-corrected model", [](nlohmann::json& j) { j["drift_correction"] = {{"reference_ms", 3.5}}; }},
  };
  for (const auto& [what, edit] : edits) {
    m.save(dir, true);
    rewrite_manifest(dir, edit);
    EXPECT_THROW(CarbModel::load(dir), ModelError) << what;
  }
  fs::remove_all(dir);
  CarbModel corrected = CarbModel::train(d, quick());
  corrected.set_drift_reference_ms(1.0);
  EXPECT_THROW(corrected.calibrate_remeasurement(d, a), InputError);
}

}  // namespace
}  // namespace carb
