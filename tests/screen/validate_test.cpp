// Tests of screen validation: a hand-made measured set with a known number of true/false
// accepts and rejects around a budget, averaging of repeated measurements, rows that cannot be
// classified, the confidence trade-off, the held-out rule (configurations the model trained on
// are left out), and the errors for data that matches nothing. Model b trained on the whole
// synthetic space, so the decision-counting tests ask to include trained configurations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "carb/error.hpp"
#include "carb/screen.hpp"
#include "screen/screen_test_util.hpp"

namespace carb {
namespace {

using testing::synthetic_model_b;
using testing::synthetic_screen_configs;

Record measured(const Config& c, std::optional<double> latency, Status status = Status::ok) {
  Record r;
  r.platform = "cpu-synthetic-b";
  r.config = c;
  r.status = status;
  r.latency_ms = latency;
  r.peak_memory_mb = 50.0;
  return r;
}

// Screened space, budget and measurements built around the model's own predictions, so the
// decisions are known: 3 true accepts, 1 false accept, 2 true rejects, 1 false reject, 1 unclassified.
struct HandMade {
  std::vector<Config> space;
  Budgets budget;
  Dataset data;
  std::vector<std::pair<Config, double>> truth;  // matched and classified: config -> mean measured latency
};

HandMade hand_made() {
  HandMade h;
  const auto& m = synthetic_model_b();
  auto preds = m.predict(synthetic_screen_configs());
  std::sort(preds.begin(), preds.end(), [](const Prediction& a, const Prediction& b) {
    return a.value.at("latency_ms") < b.value.at("latency_ms");
  });
  // Cut between two distinct predictions near the middle (tree models predict many ties).
  auto lat = [&](std::size_t i) { return preds[i].value.at("latency_ms"); };
  std::size_t cut = preds.size() / 2;
  while (lat(cut - 1) == lat(cut)) ++cut;
  const double B = (lat(cut - 1) + lat(cut)) / 2;
  h.budget = {{"latency_ms", B}};
  // The space leaves out preds.back(), which is measured but must not match.
  for (std::size_t i = 0; i + 1 < preds.size(); ++i) h.space.push_back(preds[i].config);
  auto add = [&](const Config& c, double latency) {
    h.data.rows.push_back(measured(c, latency));
    h.truth.emplace_back(c, latency);
  };
  add(preds[0].config, 0.5 * B);  // true accepts
  add(preds[1].config, 0.5 * B);
  add(preds[cut].config, 4 * B);  // true rejects
  add(preds[cut + 1].config, 3 * B);
  add(preds[cut + 2].config, 0.5 * B);  // false reject
  add(preds[3].config, 2 * B);          // false accept
  // Measured twice: 1.6B then 0.2B average to 0.9B, a true accept (first-only would make it false).
  h.data.rows.push_back(measured(preds[2].config, 1.6 * B));
  h.data.rows.push_back(measured(preds[2].config, 0.2 * B));
  h.truth.emplace_back(preds[2].config, 0.9 * B);
  h.data.rows.push_back(measured(preds[4].config, std::nullopt));    // unclassified
  h.data.rows.push_back(measured(preds[5].config, 0.1 * B, Status::oom));  // not ok: ignored
  h.data.rows.push_back(measured(preds.back().config, 0.1 * B));     // outside the space
  return h;
}

// A C++ tester: a NaN or negative budget, or one on a target the model lacks, validated to accuracy 1.
TEST(ScreenValidate, RefusesTheBudgetsScreenRefuses) {
  const auto h = hand_made();
  for (const Budgets& b : {Budgets{{"latency_ms", std::nan("")}}, Budgets{{"latency_ms", -5.0}}})
    EXPECT_THROW(validate_screen(h.space, h.data, synthetic_model_b(), b, std::nullopt, true), InputError);
  EXPECT_THROW(validate_screen(h.space, h.data, testing::synthetic_model_no_energy(), {{"energy_j", 1.0}}, std::nullopt, true),
               InputError);
}

TEST(ScreenValidate, CountsKnownFalseAcceptsAndRejects) {
  const auto h = hand_made();
  const auto v = validate_screen(h.space, h.data, synthetic_model_b(), h.budget, std::nullopt, true);
  EXPECT_EQ(v.measured, 9u);  // distinct ok configurations, including the one outside the space
  // Thirty-third hostile pass: the table said "of the space" of the 9; 8 of them are in it.
  EXPECT_EQ(v.measured_in_space, 8u);
  std::ostringstream table;
  ScreenResult shown;
  shown.validation = v;
  print_screen_table(shown, table);
  EXPECT_NE(table.str().find(" of 8 measured configurations of the space"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("1 other measured configurations are not in the space"), std::string::npos);
  EXPECT_EQ(v.to_json({}).at("measured_in_space").get<std::size_t>(), 8u);
  EXPECT_EQ(v.matched, 8u);
  EXPECT_EQ(v.unclassified, 1u);
  EXPECT_EQ(v.decisions.true_accept, 3u);
  EXPECT_EQ(v.decisions.false_accept, 1u);
  EXPECT_EQ(v.decisions.true_reject, 2u);
  EXPECT_EQ(v.decisions.false_reject, 1u);
  EXPECT_DOUBLE_EQ(v.decisions.accuracy(), 5.0 / 7.0);
  EXPECT_DOUBLE_EQ(v.decisions.false_accept_rate(), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(v.decisions.false_reject_rate(), 1.0 / 4.0);
  EXPECT_TRUE(v.tradeoff.empty());
  EXPECT_EQ(v.measured_platforms, (std::vector<std::string>{"cpu-synthetic-b"}));
  // Twenty-fourth hostile pass: the configuration measured only as oom was left out without a word.
  // Every other one is inside what the model trained on: no note of guesses.
  EXPECT_EQ(v.failed_only, 1u);
  ASSERT_EQ(v.warnings.size(), 1u);
  EXPECT_NE(v.warnings[0].find("1 configuration of the space measured only as oom or error is left out"),
            std::string::npos) << v.warnings[0];
}

// Twenty-fourth hostile pass: measured configurations past the model's trained ranges were scored as
// if it knew them, without a word (evaluate --external did the same).
TEST(ScreenValidate, ConfigurationsOutsideTheTrainedRangesAreCountedAsGuesses) {
  HandMade h = hand_made();
  const Config far{Family::basic, 18, 1.0, 1024, 64, Precision::fp32};
  h.space.push_back(far);
  h.data.rows.push_back(measured(far, 1e4));
  const auto v = validate_screen(h.space, h.data, synthetic_model_b(), h.budget, std::nullopt, true);
  ASSERT_EQ(v.warnings.size(), 2u);
  EXPECT_NE(v.warnings[0].find("1 of 9 scored configurations lie outside the ranges the model trained on"),
            std::string::npos) << v.warnings[0];
}

// Fifteenth hostile pass: measurements of another platform validated the model's decisions
// without a word (evaluate warns of the same mismatch).
TEST(ScreenValidate, MeasurementsOfAnotherPlatformAreWarnedOf) {
  auto h = hand_made();
  for (Record& r : h.data.rows) r.platform = "cpu-other";
  const auto v = validate_screen(h.space, h.data, synthetic_model_b(), h.budget, std::nullopt, true);
  ASSERT_EQ(v.warnings.size(), 2u);  // and the oom-only configuration left out
  EXPECT_NE(v.warnings[0].find("platform 'cpu-other', the model that decides from 'cpu-synthetic-b'"),
            std::string::npos)
      << v.warnings[0];
  EXPECT_EQ(v.to_json(h.budget)["warnings"].size(), 2u);
}

// Ninety-seventh hostile pass: with no budget the table read "accuracy 1", every configuration
// accepted by the model and the measurements alike, and nothing said so.
TEST(ScreenValidate, WithoutABudgetTheDecisionsCannotBeWrongAndThatIsSaid) {
  const auto h = hand_made();
  const auto v = validate_screen(h.space, h.data, synthetic_model_b(), Budgets{}, std::nullopt, true);
  ASSERT_FALSE(v.warnings.empty());
  EXPECT_NE(v.warnings.front().find("no budget was given: every configuration is accepted"), std::string::npos)
      << v.warnings.front();
  const auto with = validate_screen(h.space, h.data, synthetic_model_b(), h.budget, std::nullopt, true);
  for (const auto& w : with.warnings) EXPECT_EQ(w.find("no budget was given"), std::string::npos) << w;
}

TEST(ScreenValidate, ErrorsAreOverTheMatchedMeasurements) {
  const auto h = hand_made();
  const auto& m = synthetic_model_b();
  const auto v = validate_screen(h.space, h.data, m, h.budget, std::nullopt, true);
  double abs_sum = 0;
  for (const auto& [c, y] : h.truth) abs_sum += std::abs(m.predict({c})[0].value.at("latency_ms") - y);
  ASSERT_TRUE(v.errors.count("latency_ms"));
  EXPECT_EQ(v.errors.at("latency_ms").n, h.truth.size());
  EXPECT_NEAR(v.errors.at("latency_ms").mae, abs_sum / h.truth.size(), 1e-9);
  EXPECT_EQ(v.errors.at("peak_memory_mb").n, 8u);  // memory was measured on every matched row
  EXPECT_FALSE(v.errors.count("energy_j"));        // never measured
  const auto j = v.to_json(h.budget);
  EXPECT_TRUE(j["errors"]["latency_ms"]["budgeted"].get<bool>());
  EXPECT_FALSE(j["errors"]["peak_memory_mb"]["budgeted"].get<bool>());
}

TEST(ScreenValidate, ConfidenceTradeoffIsMonotonic) {
  const auto h = hand_made();
  const auto v = validate_screen(h.space, h.data, synthetic_model_b(), h.budget, 0.9, true);
  ASSERT_EQ(v.tradeoff.size(), 5u);
  const char* levels[] = {"none", "0.8", "0.9", "0.95", "0.99"};
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(v.tradeoff[i].first, levels[i]);
  EXPECT_EQ(v.tradeoff[0].second.false_accept, 1u);  // the point decisions of the first test
  for (std::size_t i = 1; i < 5; ++i) {
    const auto &prev = v.tradeoff[i - 1].second, &cur = v.tradeoff[i].second;
    EXPECT_LE(cur.false_accept, prev.false_accept) << levels[i];
    EXPECT_LE(cur.true_accept + cur.false_accept, prev.true_accept + prev.false_accept) << levels[i];
    EXPECT_EQ(cur.total(), 7u);
  }
  EXPECT_EQ(v.decisions.to_json(), v.tradeoff[2].second.to_json());  // the screen's own level
}

TEST(ScreenValidate, ScreenCarriesTheValidation) {
  const auto h = hand_made();
  ScreenOptions o;
  o.budgets = h.budget;
  o.validate = &h.data;
  o.validate_include_trained = true;  // model b trained on the whole synthetic space
  const auto r = screen(h.space, synthetic_model_b(), nullptr, o);
  ASSERT_TRUE(r.validation);
  EXPECT_EQ(r.validation->decisions.false_accept, 1u);
  const auto j = r.to_json();
  ASSERT_TRUE(j.contains("validation"));
  EXPECT_EQ(j["validation"]["decisions"]["false_reject"], 1u);
}

// Sixty-sixth hostile pass: a two-stage screen's validation scored the deciding model on every
// measured configuration, and nothing scored what the screen did, whose shortlist cut most of the
// feasible ones. With a shortlist, the screen's own decisions are a row of their own.
TEST(ScreenValidate, TheScreensOwnDecisionsCountWhatTheShortlistCut) {
  auto h = hand_made();
  const auto& m = synthetic_model_b();
  // The shortlist keeps a true accept and the false accept: two true accepts and the false reject
  // are cut, and rejected.
  const std::vector<Config> kept = {h.truth[0].first, h.truth[5].first};
  const auto v = validate_screen(h.space, h.data, m, h.budget, std::nullopt, true, &kept);
  EXPECT_EQ(v.decisions.true_accept, 3u) << "the model's row is unchanged";
  ASSERT_TRUE(v.screen_decisions);
  EXPECT_EQ(v.shortlisted, 2u);
  EXPECT_EQ(v.screen_decisions->true_accept, 1u);
  EXPECT_EQ(v.screen_decisions->false_accept, 1u);
  EXPECT_EQ(v.screen_decisions->true_reject, 2u);
  EXPECT_EQ(v.screen_decisions->false_reject, 3u);
  const auto j = v.to_json(h.budget);
  EXPECT_EQ(j.at("screen_decisions").at("false_reject"), 3u);
  EXPECT_EQ(j.at("shortlisted"), 2u);
  ScreenResult shown;
  shown.validation = v;
  std::ostringstream table;
  print_screen_table(shown, table);
  EXPECT_NE(table.str().find("screen     1         1          2         3"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("where the shortlist kept 2 of the 8 and rejected the rest"), std::string::npos)
      << table.str();
  // Without a shortlist there is no such row.
  EXPECT_FALSE(validate_screen(h.space, h.data, m, h.budget, std::nullopt, true).screen_decisions);
  // A screen with --top-k passes its shortlist.
  ScreenOptions o;
  o.budgets = h.budget;
  o.validate = &h.data;
  o.validate_include_trained = true;
  o.top_k = 3;
  const auto r = screen(h.space, m, nullptr, o);
  ASSERT_TRUE(r.validation && r.validation->screen_decisions);
  EXPECT_LE(r.validation->shortlisted, 3u);
  EXPECT_LE(r.validation->screen_decisions->true_accept + r.validation->screen_decisions->false_accept,
            r.validation->shortlisted);
  o.top_k.reset();
  EXPECT_FALSE(screen(h.space, m, nullptr, o).validation->screen_decisions);
  o.top_k = h.space.size();  // a shortlist that cuts nothing: no second row (sixty-seventh pass)
  EXPECT_FALSE(screen(h.space, m, nullptr, o).validation->screen_decisions);
}

TEST(ScreenValidate, NoBudgetsAcceptEverything) {
  const auto h = hand_made();
  const auto v = validate_screen(h.space, h.data, synthetic_model_b(), {}, std::nullopt, true);
  EXPECT_EQ(v.unclassified, 0u);  // nothing budgeted, so nothing is missing
  EXPECT_EQ(v.decisions.true_accept, 8u);
  EXPECT_EQ(v.decisions.false_accept + v.decisions.false_reject + v.decisions.true_reject, 0u);
  // Nothing measured over a budget: a false-accept rate is undefined, not a perfect 0 (thirteenth
  // hostile pass); the false-reject rate, 0 of 8, is defined.
  EXPECT_TRUE(std::isnan(v.decisions.false_accept_rate()));
  EXPECT_DOUBLE_EQ(v.decisions.false_reject_rate(), 0.0);
  EXPECT_TRUE(nlohmann::json::parse(v.decisions.to_json().dump()).at("false_accept_rate").is_null());
}

// Eighty-seventh session: validation counted a configuration the screen had left out for the
// device's memory as accepted. It decides as the screen does: on the point prediction, rejected.
TEST(ScreenValidate, WhatWouldNotFitTheDeviceIsRejectedAsTheScreenRejectsIt) {
  const auto h = hand_made();
  // A model of its own to set limits on, trained as synthetic_model_b is (never freed, as that one).
  CarbModel& m = *new CarbModel(CarbModel::train(testing::synthetic_cost_dataset(1, true), testing::tiny_train_options()));
  const auto plain = validate_screen(h.space, h.data, m, {}, std::nullopt, true);
  ASSERT_EQ(plain.decisions.true_accept, 8u);
  std::vector<double> memory;
  for (const auto& p : m.predict(h.space)) memory.push_back(p.value.at("peak_memory_mb"));
  std::sort(memory.begin(), memory.end());
  m.set_device_limits({memory[memory.size() / 2], std::nullopt});
  std::size_t over = 0;
  std::vector<Config> measured_configs;
  for (const auto& [c, y] : h.truth) measured_configs.push_back(c);
  measured_configs.push_back(h.data.rows[h.data.rows.size() - 3].config);  // the unclassified one
  for (const auto& p : m.predict(measured_configs)) over += p.value.at("peak_memory_mb") > m.device_limits().memory_mb.value();
  ASSERT_GT(over, 0u);
  ASSERT_LT(over, 8u);
  const auto v = validate_screen(h.space, h.data, m, {}, std::nullopt, true);
  EXPECT_EQ(v.decisions.true_accept, 8u - over);
  EXPECT_EQ(v.decisions.false_reject, over);
  EXPECT_EQ(v.decisions.false_accept + v.decisions.true_reject, 0u);
  const std::string said = std::to_string(over) + " measured configuration";
  EXPECT_TRUE(std::any_of(v.warnings.begin(), v.warnings.end(), [&](const std::string& w) {
    return w.rfind(said, 0) == 0 && w.find("predicted not to fit the device's") != std::string::npos;
  }));
  // With a budget that splits the rows: a configuration within it but predicted not to fit is
  // rejected (a true accept turns false reject, a false accept true reject), the rest as before.
  BudgetConfusion expected;
  for (const auto& [c, y] : h.truth) {
    const Prediction p = m.predict(std::vector<Config>{c}).front();
    const bool acc = p.value.at("latency_ms") <= h.budget.at("latency_ms") &&
                     p.value.at("peak_memory_mb") <= *m.device_limits().memory_mb;
    const bool truly = y <= h.budget.at("latency_ms");
    (truly ? (acc ? expected.true_accept : expected.false_reject) : (acc ? expected.false_accept : expected.true_reject)) += 1;
  }
  const auto vb = validate_screen(h.space, h.data, m, h.budget, std::nullopt, true);
  EXPECT_EQ(vb.decisions.to_json(), expected.to_json());
  EXPECT_GT(expected.true_reject + expected.false_accept, 0u);  // the budget splits the rows
  // The same under a confidence: the device is judged on the point prediction, as the screen does.
  const auto vc = validate_screen(h.space, h.data, m, {}, 0.9, true);
  EXPECT_EQ(vc.decisions.false_reject, over);
  for (const auto& [level, c] : vc.tradeoff) EXPECT_EQ(c.false_reject, over) << level;
  // The screen carries the same counts, and its shortlist row rejects them too.
  ScreenOptions o;
  o.validate = &h.data;
  o.validate_include_trained = true;
  o.top_k = h.space.size() - 1;
  const auto r = screen(h.space, m, nullptr, o);
  ASSERT_TRUE(r.validation && r.validation->screen_decisions);
  EXPECT_EQ(r.validation->decisions.false_reject, over);
  EXPECT_GE(r.validation->screen_decisions->false_reject, over);
}

TEST(ScreenValidate, DataOutsideTheSpaceIsAnError) {
  const auto h = hand_made();
  Dataset outside;
  outside.rows.push_back(measured(Config{Family::basic, 34, 2.0, 224, 1, Precision::fp32}, 1.0));
  EXPECT_THROW(validate_screen(h.space, outside, synthetic_model_b(), h.budget, std::nullopt), InputError);
  EXPECT_THROW(validate_screen(h.space, Dataset{}, synthetic_model_b(), h.budget, std::nullopt), InputError);
}

// A model of platform b trained on every other configuration of the synthetic space.
const CarbModel& half_trained_model() {
  static const CarbModel* m = [] {
    Dataset d;
    const auto cs = synthetic_screen_configs();
    for (std::size_t i = 0; i < cs.size(); i += 2) d.rows.push_back(testing::synthetic_cost_record(cs[i], 1, false));
    return new CarbModel(CarbModel::train(d, testing::tiny_train_options()));  // leaked: see screen_test_util.hpp
  }();
  return *m;
}

Dataset measured_everywhere() {
  Dataset d;
  for (const auto& c : synthetic_screen_configs()) d.rows.push_back(testing::synthetic_cost_record(c, 1, false));
  return d;
}

TEST(ScreenValidate, LeavesOutConfigurationsTheModelTrainedOn) {
  const auto& m = half_trained_model();
  const auto space = synthetic_screen_configs();
  const Dataset d = measured_everywhere();
  const Budgets b = {{"latency_ms", 5.0}};
  const auto v = validate_screen(space, d, m, b, std::nullopt);
  EXPECT_EQ(v.split, "held_out");
  EXPECT_EQ(v.measured, space.size());
  EXPECT_EQ(v.excluded_trained, (space.size() + 1) / 2);
  EXPECT_EQ(v.matched, space.size() / 2);
  EXPECT_EQ(v.decisions.total(), space.size() / 2);
  ASSERT_TRUE(v.errors.count("latency_ms"));
  EXPECT_EQ(v.errors.at("latency_ms").n, space.size() / 2);
  const auto j = v.to_json(b);
  EXPECT_EQ(j["split"], "held_out");
  EXPECT_EQ(j["excluded_trained"], (space.size() + 1) / 2);

  const auto all = validate_screen(space, d, m, b, std::nullopt, true);
  EXPECT_EQ(all.split, "includes_trained");
  EXPECT_EQ(all.excluded_trained, 0u);
  EXPECT_EQ(all.matched, space.size());
}

TEST(ScreenValidate, OnlyTrainedConfigurationsIsAnError) {
  const auto h = hand_made();
  try {
    validate_screen(h.space, h.data, synthetic_model_b(), h.budget, std::nullopt);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("trained on all"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace carb
