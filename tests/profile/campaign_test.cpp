// Tests of what makes a GPU campaign count, on a fake backend (no LibTorch): architecture order,
// the utilization sample, cooling down only when warm, the meter check in the provenance, and
// the campaign summary (configurations/s, compute share).
#include <gtest/gtest.h>

#include "profile/store_lock.hpp"

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "carb/data_ops.hpp"
#include "carb/error.hpp"
#include "carb/meter.hpp"
#include "carb/profiler.hpp"
#include "carb/space.hpp"
#include "carb/store.hpp"
#include "carb/store_export.hpp"
#include "carb/store_info.hpp"
#include "carb/training.hpp"
#include "carb/warning.hpp"
#include "temp_dir_test.hpp"

namespace carb {
namespace {

TEST(ArchitectureOrder, EachArchitectureOnceInASeededOrder) {
  const auto configs = enumerate_preset("paper");
  const auto a = order_by_architecture(configs, 7), b = order_by_architecture(configs, 7);
  const auto c = order_by_architecture(configs, 8);
  ASSERT_EQ(a.size(), configs.size());
  EXPECT_EQ(a, b);
  std::vector<std::string> archs_a, archs_c;
  std::set<std::string> closed;  // architectures already left behind: never seen again
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string k = architecture_key(a[i]);
    if (archs_a.empty() || archs_a.back() != k) {
      EXPECT_FALSE(closed.count(k)) << k << " comes back after another architecture";
      if (!archs_a.empty()) closed.insert(archs_a.back());
      archs_a.push_back(k);
    }
  }
  for (const auto& x : c)
    if (archs_c.empty() || archs_c.back() != architecture_key(x)) archs_c.push_back(architecture_key(x));
  EXPECT_NE(archs_a, archs_c);  // another seed, another order
  std::multiset<std::string> keys_in, keys_out;
  for (const auto& x : configs) keys_in.insert(config_key(x));
  for (const auto& x : a) keys_out.insert(config_key(x));
  EXPECT_EQ(keys_in, keys_out);
  EXPECT_EQ(architecture_key(Config{Family::bottleneck, 50, 0.75, 224, 64, Precision::bf16}), "bottleneck-50-w0.75-bf16");
}

// --per-arch K: the architectures in the same seeded order, visited in rounds of K configurations
// each, every visit spread over the architecture's resolutions and batch sizes.
TEST(ArchitectureOrder, VisitsInRoundsOfKSpreadOverResolutionsAndBatches) {
  const auto configs = enumerate_preset("paper");  // 120 architectures x 4 resolutions x 9 batches
  const auto whole = order_by_architecture(configs, 7);
  const auto a = order_by_architecture(configs, 7, 6), b = order_by_architecture(configs, 7, 6);
  ASSERT_EQ(a.size(), configs.size());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, order_by_architecture(configs, 8, 6));
  std::multiset<std::string> keys_in, keys_out;
  for (const auto& x : configs) keys_in.insert(config_key(x));
  for (const auto& x : a) keys_out.insert(config_key(x));
  EXPECT_EQ(keys_in, keys_out);
  std::vector<std::string> arch_order;  // of the whole-architecture order
  for (const auto& x : whole)
    if (arch_order.empty() || arch_order.back() != architecture_key(x)) arch_order.push_back(architecture_key(x));
  // Visits: runs of one architecture. 36 configurations each in visits of 6: 6 rounds of 120.
  std::vector<std::pair<std::string, std::vector<Config>>> visits;
  for (const auto& x : a) {
    if (visits.empty() || visits.back().first != architecture_key(x)) visits.push_back({architecture_key(x), {}});
    visits.back().second.push_back(x);
  }
  ASSERT_EQ(visits.size(), 6 * arch_order.size());
  std::set<int> first_batches;  // the batch sizes the first visits began with, over all architectures
  for (std::size_t i = 0; i < visits.size(); ++i) {
    const auto& [arch, v] = visits[i];
    EXPECT_EQ(arch, arch_order[i % arch_order.size()]) << "visit " << i;
    ASSERT_EQ(v.size(), 6u) << "visit " << i;
    std::set<int> resolutions, batches;
    for (const auto& x : v) resolutions.insert(x.resolution), batches.insert(x.batch);
    EXPECT_EQ(resolutions.size(), 4u) << arch << " visit " << i << ": 6 configurations over 4 resolutions";
    EXPECT_EQ(batches.size(), 6u) << arch << " visit " << i << ": 6 configurations, 6 batch sizes";
    if (i < arch_order.size()) first_batches.insert(v.front().batch);
  }
  EXPECT_GE(first_batches.size(), 5u) << "the batch order is seeded per architecture, not ascending";
  // An architecture smaller than K is measured whole in the first round and never visited again;
  // a larger one comes back in the next round for the rest.
  std::vector<Config> mixed = {{Family::basic, 10, 0.25, 32, 1, Precision::fp32}, {Family::basic, 10, 0.25, 64, 1, Precision::fp32}};
  for (const auto& c : configs)  // two larger ones, so that another visit always comes between a large one's two
    if (architecture_key(c) == "basic-8-w0.1-fp32" || architecture_key(c) == "basic-8-w0.1-fp16") mixed.push_back(c);
  ASSERT_EQ(mixed.size(), 74u);
  const auto m = order_by_architecture(mixed, 3, 20);
  ASSERT_EQ(m.size(), mixed.size());
  std::map<std::string, std::vector<std::size_t>> visit_sizes;
  for (std::size_t i = 0; i < m.size(); ++i) {
    auto& sizes = visit_sizes[architecture_key(m[i])];
    if (i == 0 || architecture_key(m[i]) != architecture_key(m[i - 1])) sizes.push_back(0);
    ++sizes.back();
  }
  EXPECT_EQ(visit_sizes["basic-10-w0.25-fp32"], (std::vector<std::size_t>{2}));
  EXPECT_EQ(visit_sizes["basic-8-w0.1-fp32"], (std::vector<std::size_t>{20, 16}));
  EXPECT_EQ(visit_sizes["basic-8-w0.1-fp16"], (std::vector<std::size_t>{20, 16}));
}

// --group-architectures: stable, architectures in the order of their first configuration.
TEST(ArchitectureOrder, GroupingKeepsTheFirstSeenOrderOfArchitecturesAndConfigurations) {
  const Config a1{Family::basic, 18, 1, 64, 1, Precision::fp32}, a2{Family::basic, 18, 1, 96, 8, Precision::fp32},
      b1{Family::basic, 18, 1, 64, 1, Precision::fp16}, c1{Family::bottleneck, 50, 1, 64, 2, Precision::fp32},
      c2{Family::bottleneck, 50, 1, 32, 2, Precision::fp32};
  EXPECT_EQ(group_by_architecture({b1, a1, c2, a2, c1}), (std::vector<Config>{b1, a1, a2, c2, c1}));
  EXPECT_EQ(group_by_architecture({}), std::vector<Config>{});
}

TEST(UtilizationSample, AStableShareOfConfigurations) {
  const auto configs = enumerate_preset("paper");
  Protocol p;
  p.util_sample = 0.25;
  std::size_t picked = 0;
  for (const auto& c : configs) picked += samples_utilization(p, c);
  EXPECT_NEAR(static_cast<double>(picked) / configs.size(), 0.25, 0.03);
  Protocol again = p;
  for (const auto& c : configs) EXPECT_EQ(samples_utilization(p, c), samples_utilization(again, c));
  p.util_sample = 0;
  for (const auto& c : configs) EXPECT_FALSE(samples_utilization(p, c));
  EXPECT_TRUE(samples_utilization(Protocol{}, configs.front()));
}

TEST(CampaignProtocol, NewOptionsChangeTheIdOnlyWhenSetAndMeanNothingOnCpu) {
  const Protocol plain;
  for (const char* k : {"energy_ticks", "util_sample", "cooldown_above_c", "rebuild_networks"})
    EXPECT_FALSE(plain.to_json().contains(k)) << k;
  std::set<std::string> ids = {plain.id()};
  Protocol t = plain, u = plain, c = plain, r = plain;
  t.energy_ticks = 10, u.util_sample = 0.1, c.cooldown_above_c = 50, r.rebuild_networks = true;
  for (const Protocol* x : {&t, &u, &c, &r}) EXPECT_TRUE(ids.insert(x->id()).second);
  EXPECT_NO_THROW(validate(t, "cuda"));
  for (const Protocol* x : {&t, &u, &c}) EXPECT_THROW(validate(*x, "cpu"), InputError);
  EXPECT_NO_THROW(validate(r, "cpu"));
  Protocol bad = plain;
  bad.util_sample = 1.5;
  EXPECT_THROW(validate(bad, "cuda"), InputError);
  bad = plain;
  bad.energy_ticks = -1;
  EXPECT_THROW(validate(bad, "cuda"), InputError);
}

// A backend whose GPU is hot for its first readings and then cool, and which says what a meter
// check found.
struct FakeState {
  std::vector<double> temps;  // answered in turn; the last one repeats
  std::size_t reads = 0;
  int measured = 0;
  bool fail = false;  // every measurement an error, as on a machine out of file descriptors
  int stop_after = 0;  // > 0: a SIGTERM arrives while this many-th measurement is in flight
  bool stop_in_meter_check = false;  // a SIGTERM arrives during the meter check, before any row
  double latency_ms = 1.0;
};
FakeState fake;

class FakeBackend final : public Backend {
 public:
  std::string name() const override { return "fake-campaign"; }
  void check(const Config&) const override {}
  Measurement measure(const Config&, const Protocol&) override {
    ++fake.measured;
    if (fake.stop_after > 0 && fake.measured == fake.stop_after) std::raise(SIGTERM);
    Measurement m;
    if (fake.fail) {
      m.status = Status::error;
      m.error = "Unable to open /dev/urandom";
      return m;
    }
    m.latency_ms = fake.latency_ms, m.peak_memory_mb = 10.0;
    m.extra["timed_s"] = "0.01";
    m.extra["energy_window_s"] = "0.02";
    return m;
  }
  nlohmann::json platform_info() const override { return {{"backend", "fake-campaign"}}; }
  MeterCheck check_meter(double) override {
    if (fake.stop_in_meter_check) std::raise(SIGTERM);
    MeterCheck m;
    m.meter = "fake counter";
    m.updates = 12;
    m.period_ms = 100;
    return m;
  }
  std::optional<double> temperature_c() override {
    const double t = fake.temps[std::min(fake.reads, fake.temps.size() - 1)];
    ++fake.reads;
    return t;
  }
};

class Campaign : public TempDirTest {
 protected:
  Campaign() : TempDirTest("carb_campaign_") {}
  void SetUp() override {
    TempDirTest::SetUp();
    register_backend("fake-campaign", [](const Protocol&) { return std::make_unique<FakeBackend>(); });
    fake = FakeState{};
  }
  ProfileOptions options() const {
    ProfileOptions o;
    o.backend = "fake-campaign";
    o.platform = "fake";
    o.db = dir_ / "s.db";
    o.progress = false;
    o.protocol.cooldown_s = 0.3;
    o.protocol.cooldown_above_c = 60;
    return o;
  }
};

TEST_F(Campaign, CoolsDownOnlyWhileWarmAndRecordsTheTemperature) {
  // The GPU reads 75, 75, 72, 72, then 55 for good: the pause before the 2nd configuration lasts
  // until it is cool (well within the 0.3 s most), and the later ones find it cool at once.
  fake.temps = {75, 75, 72, 72, 55};
  const auto configs = enumerate_preset("tiny");
  ASSERT_GE(configs.size(), 4u);
  const std::vector<Config> four(configs.begin(), configs.begin() + 4);
  const auto s = run_profile(four, options());
  EXPECT_EQ(s.ok, 4u);
  const Dataset d = Store(dir_ / "s.db").to_dataset();
  std::map<std::string, const Record*> by_key;
  for (const auto& r : d.rows) by_key[config_key(r.config)] = &r;
  const Record& first = *by_key.at(config_key(four[0]));
  EXPECT_FALSE(first.extra.count("cooldown_s"));  // nothing to cool down from before the first
  const Record& last = *by_key.at(config_key(four[3]));
  EXPECT_EQ(last.extra.at("cooldown_temp_c"), "55");
  EXPECT_LT(std::stod(last.extra.at("cooldown_s")), 0.1);  // cool: no pause
  const Record& second = *by_key.at(config_key(four[1]));
  EXPECT_EQ(second.extra.at("cooldown_temp_c"), "75");
  EXPECT_GT(std::stod(second.extra.at("cooldown_s")), 0.0);
}

TEST_F(Campaign, RecordsTheMeterCheckAndSummarisesThroughput) {
  fake.temps = {40};
  const auto configs = enumerate_preset("tiny");
  const std::vector<Config> three(configs.begin(), configs.begin() + 3);
  const auto s = run_profile(three, options());
  EXPECT_EQ(s.measured(), 3u);
  EXPECT_NEAR(s.compute_s, 0.06, 1e-9);  // three energy windows of 0.02 s
  EXPECT_GT(s.wall_s, 0);
  EXPECT_NEAR(s.configs_per_s(), 3 / s.wall_s, 1e-9);
  EXPECT_NEAR(s.compute_share(), 0.06 / s.wall_s, 1e-9);
  const auto j = s.to_json();
  EXPECT_TRUE(j.contains("configs_per_s") && j.contains("compute_share"));
  const auto protocols = Store(dir_ / "s.db").protocols();
  ASSERT_EQ(protocols.size(), 1u);
  const auto& settings = protocols.begin().value();
  EXPECT_EQ(settings["meter_check"]["meter"], "fake counter");
  EXPECT_EQ(settings["meter_check"]["period_ms"], 100.0);
  auto o = options();
  o.db = dir_ / "t.db";
  o.check_meter = false;
  run_profile(three, o);
  EXPECT_FALSE(Store(dir_ / "t.db").protocols().begin().value().contains("meter_check"));
}

// Fourteenth hostile pass: a resume that spelled a width otherwise (the same channels) measured the
// network again, and the store's export was then refused for the duplicate.
TEST_F(Campaign, AResumeKnowsANetworkByItsChannelsNotItsSpelling) {
  fake.temps = {40};
  auto o = options();
  o.protocol.cooldown_s = 0;
  const Config c{Family::basic, 10, 0.25, 32, 1, Precision::fp32};
  ASSERT_EQ(run_profile({c}, o).ok, 1u);
  Config respelled = c;
  respelled.width = 0.251;  // every stage rounds to 0.25's channels
  ASSERT_EQ(network_key(respelled), network_key(c));
  Config other = c;
  other.batch = 2;
  fake.measured = 0;
  const auto s = run_profile({respelled, other, other}, o);
  EXPECT_EQ(s.skipped, 2u);  // the respelled network, and the repeat of the new one
  EXPECT_EQ(fake.measured, 1);
  EXPECT_EQ(Store(dir_ / "s.db").to_dataset().rows.size(), 2u);
}

// Sixtieth hostile pass: a machine fault (ulimit -n 8) stored every configuration as an error row,
// and every resume skipped them as "already done". They are counted, and retry_errors
// (--retry-errors) measures them again, replacing the rows.
TEST_F(Campaign, ErrorRowsAreCountedAndMeasuredAgainWhenAsked) {
  fake.temps = {40};
  auto o = options();
  o.protocol.cooldown_s = 0;
  const std::vector<Config> cs = {{Family::basic, 10, 0.25, 32, 1, Precision::fp32},
                                  {Family::basic, 10, 0.25, 32, 2, Precision::fp32}};
  fake.fail = true;
  EXPECT_EQ(run_profile(cs, o).error, 2u);
  fake.fail = false, fake.measured = 0;
  const auto again = run_profile(cs, o);
  EXPECT_EQ(again.skipped, 2u);
  EXPECT_EQ(again.skipped_errors, 2u);
  EXPECT_EQ(fake.measured, 0);
  EXPECT_EQ(again.to_json()["skipped_errors"], 2);
  o.retry_errors = true;
  const auto retried = run_profile(cs, o);
  EXPECT_EQ(retried.ok, 2u);
  EXPECT_EQ(retried.skipped, 0u);
  const Dataset d = Store(dir_ / "s.db").to_dataset();
  ASSERT_EQ(d.rows.size(), 2u);
  for (const auto& r : d.rows) EXPECT_EQ(r.status, Status::ok);
  // Nothing left to retry: an ok row is not measured again.
  fake.measured = 0;
  EXPECT_EQ(run_profile(cs, o).skipped, 2u);
  EXPECT_EQ(fake.measured, 0);
  // Sixty-first hostile pass: a retry spelled otherwise (width 0.251 for 0.25, the same channels)
  // added a second row for the network, and the store could not be exported. It replaces the row.
  fake.fail = true;
  const Config third{Family::basic, 10, 0.25, 32, 4, Precision::fp32};
  EXPECT_EQ(run_profile({third}, o).error, 1u);
  fake.fail = false;
  Config respelled = third;
  respelled.width = 0.251;
  EXPECT_EQ(run_profile({respelled}, o).ok, 1u);
  const Dataset after = Store(dir_ / "s.db").to_dataset();
  EXPECT_EQ(after.rows.size(), 3u);
  for (const auto& r : after.rows) EXPECT_EQ(r.status, Status::ok) << config_key(r.config);
}

// Seventy-fourth hostile pass: rows measured on a loaded host were stored ok, `data export` refused
// them ("re-measure both"), and no run could: a resume skipped them as done. `redo` measures the
// given configurations again, each new row replacing the stored one under its stored spelling.
TEST_F(Campaign, RedoMeasuresStoredRowsAgainAndReplacesThem) {
  fake.temps = {40};
  auto o = options();
  o.protocol.cooldown_s = 0;
  const Config a{Family::basic, 10, 0.25, 32, 1, Precision::fp32}, b{Family::basic, 10, 0.25, 32, 2, Precision::fp32};
  fake.latency_ms = 7.0;  // disturbed
  EXPECT_EQ(run_profile({a, b}, o).ok, 2u);
  fake.latency_ms = 1.0, fake.measured = 0;
  EXPECT_EQ(run_profile({a, b}, o).skipped, 2u);  // a resume: done
  EXPECT_EQ(fake.measured, 0);
  o.redo = true;
  Config respelled = a;
  respelled.width = 0.251;  // the same network
  const auto s = run_profile({respelled}, o);
  EXPECT_EQ(fake.measured, 1);
  EXPECT_EQ(s.replaced, 1u);
  EXPECT_EQ(s.skipped, 0u);
  EXPECT_EQ(s.to_json()["replaced"], 1);
  const Dataset d = Store(dir_ / "s.db").to_dataset();
  ASSERT_EQ(d.rows.size(), 2u);
  for (const auto& r : d.rows)
    EXPECT_EQ(*r.latency_ms, r.config.batch == 1 ? 1.0 : 7.0) << config_key(r.config);  // a replaced, b kept
  for (const auto& r : d.rows) EXPECT_EQ(r.config.width, 0.25);
  // A configuration the store does not hold is measured as new, not counted as replaced.
  const Config c{Family::basic, 10, 0.25, 32, 4, Precision::fp32};
  EXPECT_EQ(run_profile({c}, o).replaced, 0u);
  // A redo that fails (a fault of the machine) keeps the stored ok row.
  fake.fail = true;
  const auto failed = run_profile({b}, o);
  fake.fail = false;
  EXPECT_EQ(failed.kept_on_error, 1u);
  EXPECT_EQ(failed.replaced, 0u);
  for (const auto& r : Store(dir_ / "s.db").to_dataset().rows) EXPECT_EQ(r.status, Status::ok) << config_key(r.config);
  fake.latency_ms = 1.0;
}

// Hundred-and-thirty-first hostile pass: a --redo stopped part-way said every stored row given had
// been measured again. Only the rows measured again are counted.
TEST_F(Campaign, AStoppedRedoCountsOnlyTheRowsItMeasuredAgain) {
  fake.temps = {40};
  auto o = options();
  o.protocol.cooldown_s = 0;
  std::vector<Config> cs;
  for (int batch : {1, 2, 4, 8}) cs.push_back({Family::basic, 10, 0.25, 32, batch, Precision::fp32});
  EXPECT_EQ(run_profile(cs, o).ok, 4u);
  o.redo = true;
  fake.measured = 0, fake.stop_after = 2;  // a SIGTERM during the second: it finishes, then the run stops
  const auto s = run_profile(cs, o);
  fake.stop_after = 0;
  EXPECT_TRUE(s.interrupted);
  EXPECT_EQ(s.ok, 2u);
  EXPECT_EQ(s.replaced, 2u);
}

// The same hostile pass: only `data export`, later, said the disturbed rows were wrong. The run now
// checks its platform and protocol's rows as export does, and says so at once.
TEST_F(Campaign, ARunSaysWhatExportWouldRefuseAndRedoMendsIt) {
  fake.temps = {40};
  auto o = options();
  o.protocol.cooldown_s = 0;
  const Config small{Family::basic, 10, 0.25, 32, 1, Precision::fp32}, large{Family::basic, 10, 0.25, 32, 16, Precision::fp32};
  fake.latency_ms = 9.0;  // batch 1 on a loaded host
  EXPECT_EQ(run_profile({small}, o).export_problems, 0u);
  fake.latency_ms = 1.0;  // batch 16, 16x the work, in a ninth of the time
  const auto s = run_profile({large}, o);
  EXPECT_GE(s.export_problems, 1u);
  EXPECT_NE(s.first_export_problem.find("basic-10-w0.25-r32-b"), std::string::npos) << s.first_export_problem;
  o.redo = true;
  fake.latency_ms = 0.2;
  // Another campaign's damaged settings in the same store: the check says nothing of them, and
  // never fails a run whose rows are saved (a review).
  Store(dir_ / "s.db").put_protocol("pforeign00000", nlohmann::json{{"warmup", "not a number"}});
  const auto mended = run_profile({small}, o);
  EXPECT_EQ(mended.replaced, 1u);
  EXPECT_EQ(mended.export_problems, 0u);
  fake.latency_ms = 1.0;
}

// Left alone for several sessions: the export of a campaign stopped early read as the whole of it. A
// preset measured in its grid order and stopped holds its small networks only. The store records
// what runs were given, and export says what has no row.
TEST_F(Campaign, AnExportOfAnUnfinishedCampaignSaysSo) {
  fake.temps = {40};
  auto o = options();
  o.protocol.cooldown_s = 0;
  const auto configs = enumerate_preset("tiny");
  ASSERT_GE(configs.size(), 6u);
  const std::vector<Config> six(configs.begin(), configs.begin() + 6);
  fake.stop_after = 2;  // stopped after the second configuration
  const auto stopped = run_profile(six, o);
  fake.stop_after = 0;
  ASSERT_TRUE(stopped.interrupted);
  EXPECT_EQ(stopped.ok, 2u);
  const auto planned = Store(o.db).planned_keys("fake", o.protocol.id());
  ASSERT_TRUE(planned.has_value());
  EXPECT_EQ(planned->size(), 6u);
  std::vector<std::string> said;
  const auto before = set_warning_handler([&](const std::string& w) { said.push_back(w); });
  const ExportSummary partial = export_store({o.db, dir_ / "partial.csv", "fake", ""});
  EXPECT_EQ(partial.rows, 2u);
  EXPECT_EQ(partial.planned, 6u);
  EXPECT_EQ(partial.unmeasured, 4u);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("4 of the 6 configurations"), std::string::npos) << said[0];
  EXPECT_EQ(partial.to_json()["unmeasured"], 4);
  nlohmann::json prov;
  std::ifstream(partial.provenance) >> prov;
  EXPECT_EQ(prov["campaign"], (nlohmann::json{{"planned", 6}, {"unmeasured", 4}}));
  EXPECT_EQ(dataset_info(dir_ / "partial.csv").campaign->unmeasured, 4u);
  // `data info` of the store itself says the same, and the command that resumes it.
  const StoreInfo info = store_info(o.db);
  ASSERT_EQ(info.campaigns.size(), 1u);
  EXPECT_EQ(info.campaigns[0].ok, 2u);
  EXPECT_EQ(info.campaigns[0].planned, 6u);
  EXPECT_EQ(info.campaigns[0].unmeasured, 4u);
  EXPECT_NE(format_store_info(info).find("4 of 6 configurations its runs were given have no row yet"), std::string::npos)
      << format_store_info(info);
  EXPECT_EQ(info.to_json()["campaigns"][0]["unmeasured"], 4);
  // Training from that export says it learns from a partial sample.
  std::vector<std::string> notes;
  read_datasets({dir_ / "partial.csv"}, &notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("the export of an unfinished campaign: 4 of the 6"), std::string::npos) << notes[0];
  // One file given twice is said as such, not as every row a duplicate (eightieth hostile pass).
  try {
    read_datasets({dir_ / "partial.csv", dir_ / "." / "partial.csv"});
    ADD_FAILURE() << "a file given twice was read as two";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is given twice"), std::string::npos) << e.what();
  }
  // A second run giving the same configurations plans nothing new; a respelled width is the same
  // network; resumed to the end, the export is whole.
  std::vector<Config> respelled = six;
  respelled[5].width += 0.001;
  const auto rest = run_profile(respelled, o);
  EXPECT_EQ(rest.ok, 4u);
  said.clear();
  const ExportSummary whole = export_store({o.db, dir_ / "partial.csv", "fake", ""});
  set_warning_handler(before);
  EXPECT_TRUE(said.empty()) << said.front();
  EXPECT_EQ(whole.rows, 6u);
  EXPECT_EQ(whole.planned, 6u);
  EXPECT_EQ(whole.unmeasured, 0u);
  EXPECT_EQ(dataset_info(dir_ / "partial.csv").campaign->unmeasured, 0u);
  EXPECT_EQ(store_info(o.db).campaigns[0].unmeasured, 0u);
  // A run stopped before its first row planned a campaign that has no row yet: shown, not hidden.
  auto other = o;
  other.platform = "fake-b";
  fake.stop_in_meter_check = true;
  EXPECT_TRUE(run_profile(six, other).interrupted);
  fake.stop_in_meter_check = false;
  const StoreInfo both = store_info(o.db);
  ASSERT_EQ(both.campaigns.size(), 2u);
  EXPECT_EQ(both.campaigns[1].platform, "fake-b");
  EXPECT_EQ(both.campaigns[1].ok, 0u);
  EXPECT_EQ(both.campaigns[1].unmeasured, 6u);
  EXPECT_TRUE(is_sqlite_file(o.db));
  EXPECT_FALSE(is_sqlite_file(dir_ / "partial.csv"));
}

// A campaign abandoned for a smaller one kept being reported unfinished on every export: --replan
// makes a run's configurations the whole plan of its platform and protocol.
TEST_F(Campaign, ARunCanReplaceThePlanItsCampaignIsCountedAgainst) {
  fake.temps = {40};
  auto o = options();
  o.protocol.cooldown_s = 0;
  const auto configs = enumerate_preset("tiny");
  const std::vector<Config> six(configs.begin(), configs.begin() + 6), two(configs.begin(), configs.begin() + 2);
  fake.stop_after = 2;
  o.command_line = "carb profile --preset six";
  run_profile(six, o);  // 2 of 6 measured
  fake.stop_after = 0;
  o.command_line = "carb profile --configs two.csv";
  run_profile(two, o);  // a smaller run adds nothing to the plan
  EXPECT_EQ(store_info(o.db).campaigns[0].unmeasured, 4u);
  EXPECT_EQ(store_info(o.db).campaigns[0].commands,
            (std::vector<std::string>{"carb profile --preset six", "carb profile --configs two.csv"}));
  o.replan = true;
  o.command_line = "carb profile --configs two.csv --replan";
  const auto s = run_profile(two, o);
  EXPECT_EQ(s.skipped, 2u);  // nothing measured again
  const StoreInfo info = store_info(o.db);
  EXPECT_EQ(info.campaigns[0].planned, 2u);
  EXPECT_EQ(info.campaigns[0].unmeasured, 0u);
  EXPECT_EQ(info.campaigns[0].ok, 2u);
  // The runs that planned it are this one alone (a hostile tester: the first run's command, whose
  // configurations the replan dropped, was named as the one that resumes the campaign).
  EXPECT_EQ(info.campaigns[0].commands, (std::vector<std::string>{"carb profile --configs two.csv --replan"}));
  std::vector<std::string> said;
  const auto before = set_warning_handler([&](const std::string& w) { said.push_back(w); });
  const ExportSummary e = export_store({o.db, dir_ / "two.csv", "fake", ""});
  set_warning_handler(before);
  EXPECT_TRUE(said.empty()) << said.front();
  EXPECT_EQ(e.unmeasured, 0u);
}

TEST_F(Campaign, AUnknownTemperaturePausesTheFullCooldown) {
  fake.temps = {40};
  struct Blind final : public Backend {
    std::string name() const override { return "blind"; }
    void check(const Config&) const override {}
    Measurement measure(const Config&, const Protocol&) override {
      Measurement m;
      m.latency_ms = 1.0, m.peak_memory_mb = 1.0;
      return m;
    }
    nlohmann::json platform_info() const override { return {}; }
  };
  register_backend("blind", [](const Protocol&) { return std::make_unique<Blind>(); });
  auto o = options();
  o.backend = "blind";
  o.protocol.cooldown_s = 0.15;
  const auto configs = enumerate_preset("tiny");
  const std::vector<Config> two(configs.begin(), configs.begin() + 2);
  run_profile(two, o);
  const Dataset d = Store(o.db).to_dataset();
  int paused = 0;
  for (const auto& r : d.rows) {
    if (!r.extra.count("cooldown_s")) continue;
    ++paused;
    EXPECT_GE(std::stod(r.extra.at("cooldown_s")), 0.14);
  }
  EXPECT_EQ(paused, 1);
}

// A backend whose traces are made up: passes of 10 ms at 200 W, a counter that updates every
// 100 ms. It counts the traces it was asked for, and runs g_on_trace (when set) before each.
int g_traces = 0;
std::function<void(int)> g_on_trace;
int g_meter_checks = 0;
class StudyBackend final : public Backend {
 public:
  std::string name() const override { return "fake-study"; }
  void check(const Config&) const override {}
  Measurement measure(const Config&, const Protocol&) override { return {}; }
  nlohmann::json platform_info() const override { return {{"backend", "fake-study"}, {"gpu_name", "Fake GPU"}}; }
  MeterCheck check_meter(double) override {
    ++g_meter_checks;
    MeterCheck m;
    m.meter = "fake counter";
    m.period_ms = 100;
    return m;
  }
  bool traces_energy() const override { return true; }
  EnergyTrace trace_energy(const Config& c, const Protocol&, double seconds) override {
    ++g_traces;
    if (g_on_trace) g_on_trace(g_traces);
    EnergyTrace t;
    t.config = c;
    if (c.batch == 256) {
      t.status = Status::oom;
      t.error = "CUDA out of memory";
      return t;
    }
    t.start_s = 0.013;
    for (int k = 1; k * 0.01 <= seconds + 1e-9; ++k) t.pass_end_s.push_back(t.start_s + k * 0.01);
    for (int k = 0; k * 0.1 <= seconds + 0.2; ++k) t.counter_t_s.push_back(k * 0.1), t.counter_j.push_back(k * 20.0);
    return t;
  }
};

class Study : public TempDirTest {
 protected:
  Study() : TempDirTest("carb_study_") {}
  void SetUp() override {
    TempDirTest::SetUp();
    register_backend("fake-study", [](const Protocol&) { return std::make_unique<StudyBackend>(); });
    g_traces = 0;
    g_on_trace = nullptr;
  }
  void TearDown() override {
    g_on_trace = nullptr;
    TempDirTest::TearDown();
  }
  WindowStudyOptions options() const {
    WindowStudyOptions o;
    o.backend = "fake-study";
    o.out = dir_ / "study.csv";
    o.trace_s = 1.0;
    o.windows_s = {0.1, 0.25, 0.5};
    o.repeats = 2;
    o.progress = false;
    return o;
  }
  const std::vector<Config> configs = {{Family::basic, 18, 1.0, 64, 8, Precision::fp16},
                                       {Family::basic, 18, 1.0, 64, 256, Precision::fp16},
                                       {Family::bottleneck, 50, 1.0, 96, 16, Precision::fp32}};
};

TEST_F(Study, WritesEveryTraceResumesAndNamesFailures) {
  const auto s = run_window_study(configs, options());
  EXPECT_EQ(s.traces, 4u);  // two configurations x two repeats; the oom one stops after its first
  ASSERT_EQ(s.failures.size(), 1u);
  EXPECT_NE(s.failures[0].find("oom"), std::string::npos);
  EXPECT_TRUE(looks_like_window_study(dir_ / "study.csv"));
  const auto side = nlohmann::json::parse(std::ifstream(dir_ / "study.csv.json"));
  EXPECT_EQ(side["kind"], "carb window study");
  EXPECT_EQ(side["meter_check"]["period_ms"], 100.0);
  // Run again: the traces already there are kept and not measured again.
  g_traces = 0;
  const auto again = run_window_study(configs, options());
  EXPECT_EQ(again.skipped, 4u);
  EXPECT_EQ(again.traces, 0u);
  EXPECT_EQ(g_traces, 1);  // only the configuration that failed is tried again
  // The provenance of the first run stays; the resumed run is added to it.
  const auto side2 = nlohmann::json::parse(std::ifstream(dir_ / "study.csv.json"));
  ASSERT_TRUE(side2.contains("resumed"));
  EXPECT_EQ(side2["resumed"].size(), 1u);
  // The analysis script reads it back: tick-aligned windows are exact on a made-up constant power.
  const std::string cmd = "/usr/bin/python3 " CARB_SOURCE_DIR "/scripts/window_study.py --json " +
                          (dir_ / "study.csv").string() + " > " + (dir_ / "a.json").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const auto a = nlohmann::json::parse(std::ifstream(dir_ / "a.json"));
  EXPECT_EQ(a["configurations"], 2);
  EXPECT_EQ(a["shortest_ok_window_s"], 0.25);  // a 0.1 s window may hold no whole 100 ms period
  EXPECT_EQ(a["energy_ticks"], 3);
  EXPECT_NEAR(a["repeat_cv_median"].get<double>(), 0.0, 1e-12);
}

// The H200 window study of 2026-12-04: launch-bound networks ran up to 20% faster or slower from
// one second to the next, so energy per pass missed the 5 s reference by p90 10% in every window
// while the power over whole counter periods was within 3% at 1 s. The script splits the two and
// chooses the window by the meter's part, the power: here a 1 s window whose passes ran 10% faster
// at the reference's power passes, a 0.5 s window with the power 10% off does not, and no window
// passes by energy per pass.
TEST_F(Study, TheWindowIsChosenByThePowerTheMeterReadNotByTheWorkloadsSpeed) {
  {
    std::ofstream f(dir_ / "synthetic.csv");
    f << "family,depth,width,resolution,batch,precision,repeat,window_s,reference,method,start_s,seconds,"
         "passes,ticks,energy_per_pass_j\n";
    const std::string c = "basic,18,1,64,1,fp32,1,";
    f << c << "5,1,ticks,0,5,1000,50,0.5\n";                    // 100 W, 5 ms per pass
    f << c << "1,0,ticks,0,1,220,10," << 100.0 / 220 << "\n";     // 100 W, 4.55 ms per pass
    f << c << "0.5,0,ticks,1,0.5,100,5," << 110.0 * 0.005 << "\n";  // 110 W, 5 ms per pass
  }
  const std::string cmd = "/usr/bin/python3 " CARB_SOURCE_DIR "/scripts/window_study.py --json " +
                          (dir_ / "synthetic.csv").string() + " > " + (dir_ / "s.json").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const auto a = nlohmann::json::parse(std::ifstream(dir_ / "s.json"));
  EXPECT_EQ(a["shortest_ok_window_s"], 1.0);
  EXPECT_TRUE(a["shortest_ok_energy_window_s"].is_null());
  ASSERT_EQ(a["table"].size(), 2u);
  EXPECT_NEAR(a["table"][1]["p90_dev"].get<double>(), 1 - 200.0 / 220, 1e-5);  // the 1 s window (6 digits in the file)
  EXPECT_NEAR(a["table"][1]["p90_power_dev"].get<double>(), 0.0, 1e-5);
  EXPECT_NEAR(a["table"][0]["p90_power_dev"].get<double>(), 0.10, 1e-5);
}

// Thirty-third hostile pass (the same for datasets and plans): a file moved onto --out while the
// study ran was replaced by its next write. Each write replaces only what the checks found, then
// what the previous write left; the user's file stays, and the study stops saying so.
TEST_F(Study, AFileMovedOntoTheOutputDuringTheStudyIsKept) {
  g_on_trace = [&](int n) {
    if (n != 2) return;
    std::ofstream(dir_ / "mine.csv") << "my notes\n";
    std::filesystem::rename(dir_ / "mine.csv", dir_ / "study.csv");
  };
  try {
    (void)run_window_study(configs, options());
    ADD_FAILURE() << "the study wrote over a file moved onto its --out";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("another file was put in its place"), std::string::npos) << e.what();
  }
  std::ifstream in(dir_ / "study.csv");
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "my notes");
}

// Twenty-second hostile pass: a study's sidecar whose CSV was moved away (archived) was replaced by
// the next study at that --out; it is that CSV's only provenance. Notes added to the sidecar of a
// study that is resumed stay.
TEST_F(Study, ASidecarWhoseCsvMovedAwayIsNotReplacedAndNotesSurviveAResume) {
  (void)run_window_study(configs, options());
  std::filesystem::rename(dir_ / "study.csv", dir_ / "archived.csv");
  EXPECT_THROW(run_window_study(configs, options()), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "study.csv"));
  auto side = nlohmann::json::parse(std::ifstream(dir_ / "study.csv.json"));
  EXPECT_FALSE(side.contains("resumed"));
  // Put back, with a note: resuming keeps the note and adds the run.
  std::filesystem::rename(dir_ / "archived.csv", dir_ / "study.csv");
  side["note"] = "GPU at 43 C";
  std::ofstream(dir_ / "study.csv.json") << side.dump(2);
  (void)run_window_study(configs, options());
  side = nlohmann::json::parse(std::ifstream(dir_ / "study.csv.json"));
  EXPECT_EQ(side["note"], "GPU at 43 C");
  EXPECT_EQ(side["resumed"].size(), 1u);
  // --force replaces a sidecar whose CSV is gone, and (fifty-eighth hostile pass) keeps it first.
  std::filesystem::remove(dir_ / "study.csv");
  auto o = options();
  o.force = true;
  (void)run_window_study(configs, o);
  EXPECT_FALSE(nlohmann::json::parse(std::ifstream(dir_ / "study.csv.json")).contains("note"));
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(dir_ / "study.earlier.csv.json"))["note"], "GPU at 43 C");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "study.earlier.csv"));
}

// A study resumed on another device is refused (its traces would decide the other's window), and
// before the meter check's seconds are spent, not after them.
TEST_F(Study, AnotherDevicesStudyIsRefusedBeforeTheMeterCheck) {
  (void)run_window_study(configs, options());
  auto side = nlohmann::json::parse(std::ifstream(dir_ / "study.csv.json"));
  ASSERT_EQ(side["platform_info"]["gpu_name"], "Fake GPU");
  side["platform_info"]["gpu_name"] = "Other GPU";
  std::ofstream(dir_ / "study.csv.json") << side.dump(2);
  const auto contents = [&] {
    std::ifstream in(dir_ / "study.csv");
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  const std::string rows = contents();
  g_meter_checks = 0;
  try {
    (void)run_window_study(configs, options());
    ADD_FAILURE() << "another device's study was resumed";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("as measured on 'fake-study Other GPU', and this run's device is "
                                         "'fake-study Fake GPU'"),
              std::string::npos) << e.what();
  }
  EXPECT_EQ(g_meter_checks, 0);
  EXPECT_EQ(contents(), rows);
}

// Twenty-first hostile pass: two studies resumed on one file at once kept only one's rows. A study
// holds its file's lock, as a profile holds its store's.
TEST_F(Study, TwoStudiesOnOneFileAtOnceAreRefused) {
  const StoreLock other(dir_ / "study.csv", "window study", "carb meter --study");
  try {
    (void)run_window_study(configs, options());
    FAIL() << "a second study ran on a file in use";
  } catch (const MeasureError& e) {
    EXPECT_NE(std::string(e.what()).find("in use by another carb meter --study in this process (another thread)"), std::string::npos) << e.what();
  }
  EXPECT_EQ(g_traces, 0);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "study.csv"));
}

// A study that measures nothing (every trace failed, or killed before the first) leaves no sidecar
// without a CSV, which the next run would take for an archived study's.
TEST_F(Study, NoSidecarIsWrittenBeforeItsCsv) {
  const std::vector<Config> failing = {{Family::basic, 18, 1.0, 64, 256, Precision::fp16}};
  const auto s = run_window_study(failing, options());
  EXPECT_EQ(s.traces, 0u);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "study.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "study.csv.json"));
  EXPECT_EQ(run_window_study(configs, options()).traces, 4u);
}

TEST_F(Study, NeverReplacesAFileThatIsNotAStudy) {
  std::ofstream(dir_ / "study.csv") << "my notes\n";
  EXPECT_THROW(run_window_study(configs, options()), InputError);
  std::ifstream in(dir_ / "study.csv");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "my notes");
  // Fifty-eighth hostile pass: --force replaced it with nothing kept. It is kept first.
  auto forced = options();
  forced.force = true;
  EXPECT_EQ(run_window_study(configs, forced).traces, 4u);
  EXPECT_TRUE(looks_like_window_study(dir_ / "study.csv"));
  std::ifstream earlier(dir_ / "study.earlier.csv");
  std::getline(earlier, line);
  EXPECT_EQ(line, "my notes");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "study.earlier.csv.json"));  // it had no provenance
  (void)run_window_study(configs, forced);  // a study now: resumed, nothing more kept
  EXPECT_FALSE(std::filesystem::exists(dir_ / "study.earlier-1.csv"));
  auto o = options();
  o.windows_s = {2.0};  // longer than the trace
  o.out = dir_ / "other.csv";
  EXPECT_THROW(run_window_study(configs, o), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "other.csv"));
}

// Thirty-fifth hostile pass: --force replaced a file at the sidecar's name that was no provenance
// at all. --force is for --out; at the sidecar's name only carb's own provenance is replaced.
TEST_F(Study, ForceReplacesOnlyCarbsOwnProvenanceAtTheSidecarsName) {
  auto o = options();
  o.force = true;
  // Thirty-sixth: nor a dataset's provenance, which `--out h200` meets at h200.json (h200.csv's).
  for (const std::string mine : {"my notes\n", "{\"kind\": \"carbon emissions\"}\n", "{\"kind\": \"carb dataset\"}\n"}) {
    std::ofstream(dir_ / "study.csv.json") << mine;
    try {
      (void)run_window_study(configs, o);
      ADD_FAILURE() << "--force replaced " << mine;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--force replaces only a window study's own provenance there"),
                std::string::npos)
          << e.what();
    }
    std::ifstream in(dir_ / "study.csv.json");
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), mine);
    EXPECT_EQ(g_traces, 0);
  }
  std::filesystem::remove(dir_ / "study.csv.json");
  EXPECT_EQ(run_window_study(configs, o).traces, 4u);
}

// Thirty-fifth hostile pass: a study's refusal of a user's file at its lock's name said "choose
// another --db", a flag meter --study does not have.
TEST_F(Study, ALockRefusalNamesTheStudysOwnFlag) {
  std::ofstream(dir_ / "study.csv.lock") << "my notes\n";
  try {
    (void)run_window_study(configs, options());
    ADD_FAILURE() << "the study overwrote a user's file at its lock's name";
  } catch (const MeasureError& e) {
    EXPECT_NE(std::string(e.what()).find("choose another --out"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("--db"), std::string::npos) << e.what();
  }
}

// Thirty-seventh hostile pass: what is at --out and its sidecar was recorded only after the checks
// and the lock, so a file moved there in between was taken in and replaced by the first write (exit
// 0). It is recorded before the checks now; a file moved onto either name any time after is kept.
TEST_F(Study, AFileMovedOntoTheOutputOrItsSidecarAfterTheChecksIsKept) {
  for (const std::string name : {"study.csv", "study.csv.json"}) {
    std::filesystem::remove(dir_ / "study.csv");
    std::filesystem::remove(dir_ / "study.csv.json");
    register_backend("fake-study-mover", [&](const Protocol&) {
      std::ofstream(dir_ / "mine.txt") << "my notes\n";
      std::filesystem::rename(dir_ / "mine.txt", dir_ / name);  // after the checks and the lock
      return std::make_unique<StudyBackend>();
    });
    auto o = options();
    o.backend = "fake-study-mover";
    try {
      (void)run_window_study(configs, o);
      ADD_FAILURE() << "the study wrote over a file moved onto " << name;
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find("a file appeared at this name"), std::string::npos) << e.what();
    }
    std::ifstream in(dir_ / name);
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "my notes\n") << name;
  }
}

// Thirty-eighth hostile pass: an --out name too long for the temporary beside it (or its sidecar's)
// failed after the first trace, and every resume the same way before measuring anything.
TEST_F(Study, ANameTooLongForItsTemporaryIsRefusedBeforeAnyWork) {
  auto o = options();
  o.out = dir_ / std::string(240, 's');
  EXPECT_THROW(run_window_study(configs, o), InputError);
  EXPECT_EQ(g_traces, 0);
  EXPECT_FALSE(std::filesystem::exists(o.out));
}

}  // namespace
}  // namespace carb
