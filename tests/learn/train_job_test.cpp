// Tests of `carb train` as a library job (src/learn/train_job.cpp): what its summary warns of.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/model.hpp"
#include "carb/network_spec.hpp"
#include "carb/training.hpp"
#include "temp_dir_test.hpp"

namespace carb {
namespace {

class TrainJobTest : public TempDirTest {
 protected:
  TrainJobTest() : TempDirTest("carb_train_job_") {}

  // Costs that are a formula of the configuration (test data, never a measurement), at the given
  // batch sizes only.
  std::filesystem::path write_data(const std::vector<int>& batches, const std::vector<Record>& more = {}) const {
    Dataset d;
    d.rows = more;
    for (int depth : {10, 18, 26})
      for (double width : {0.25, 0.5, 1.0})
        for (int res : {32, 64})
          for (int batch : batches) {
            Record r;
            r.platform = "synthetic";
            r.config = {Family::basic, depth, width, res, batch, Precision::fp32};
            r.status = Status::ok;
            r.latency_ms = 0.1 * depth * width * res * (1 + batch);
            const NetworkSpec net = network_totals(r.config);
            // Above the weights and input, which every measured peak holds (data validate checks it).
            r.peak_memory_mb = static_cast<double>(net.param_bytes() + net.input_bytes()) / 1e6 + 2 + depth * width;
            d.rows.push_back(r);
          }
    const auto f = dir_ / "data.csv";
    write_dataset_csv(d, f);
    return f;
  }

  // The rows of `f`, all of protocol p1 (rewritten so).
  Dataset of_protocol_p1(const std::filesystem::path& f) const {
    Dataset d = read_dataset_csv(f);
    for (auto& r : d.rows) r.extra["protocol_id"] = "p1";
    d.extra_columns = {"protocol_id"};
    write_dataset_csv(d, f);
    return d;
  }

  // A small, quick job on `f` into dir_/model.
  TrainJob small_job(const std::filesystem::path& f) const {
    TrainJob job;
    job.data = {f};
    job.out = dir_ / "model";
    job.options.params.n_trees = 8;
    job.options.params.threads = 1;
    job.options.folds = 2;
    return job;
  }

  TrainSummary train(const std::vector<int>& batches, bool correctors, double lambda = 0.5,
                     const std::vector<Record>& more = {}) const {
    TrainJob job;
    job.data = {write_data(batches, more)};
    job.out = dir_ / "model";
    job.force = true;
    job.options.params.n_trees = 8;
    job.options.params.threads = 1;
    job.options.folds = 2;
    job.options.correctors = correctors;
    job.options.lambda = lambda;
    return run_train_job(job);
  }
};

bool warns_of(const TrainSummary& s, const std::string& text) {
  for (const auto& w : s.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

// Thirty-third hostile pass: with too few low-batch rows every corrector was dropped, --lambda then
// changed nothing, and nothing said so while the manifest recorded it.
TEST_F(TrainJobTest, SaysWhenNoTargetKeptACorrector) {
  const TrainSummary none_low = train({16, 32}, true);
  EXPECT_TRUE(warns_of(none_low, "no target kept a low-batch corrector (0 training rows have batch <= 8, fewer than "
                                 "the 8 one needs), so --lambda changes nothing"))
      << nlohmann::json(none_low.warnings).dump();
  // Asked for no correctors, or no corrector setting: nothing to warn of.
  EXPECT_FALSE(warns_of(train({16, 32}, false), "corrector"));
  EXPECT_FALSE(warns_of(train({16, 32}, true, TrainOptions{}.lambda), "corrector"));
}

// Forty-first hostile pass: an oom row at batch 1 beside the same network ok at batch 16 was dropped
// without a word; failed rows are not trained on, and that is said, with any such contradiction.
TEST_F(TrainJobTest, SaysWhichRowsItDidNotTrainOnAndWhichFailuresAreContradicted) {
  const auto failed = [](int batch, Status st) {
    Record r;
    r.platform = "synthetic";
    r.config = {Family::basic, 10, 0.25, 32, batch, Precision::fp32};
    r.status = st;
    return r;
  };
  const TrainSummary s = train({1, 4}, false, 0.5, {failed(2, Status::oom), failed(8, Status::oom), failed(16, Status::error)});
  EXPECT_TRUE(warns_of(s, "3 rows measured as oom or error are not trained on (no cost to learn); 1 of them ran out "
                          "of memory where a larger batch of the same network ran ok (first: basic-10-w0.25-r32-b2-fp32 "
                          "oom, batch 4 ok)"))
      << nlohmann::json(s.warnings).dump();
  // Failures a larger batch does not contradict are only counted.
  const TrainSummary t = train({1, 4}, false, 0.5, {failed(8, Status::oom)});
  EXPECT_TRUE(warns_of(t, "1 row measured as oom or error is not trained on (no cost to learn)"));
  EXPECT_FALSE(warns_of(t, "ran out of memory where"));
  EXPECT_FALSE(warns_of(train({1, 4}, false), "not trained on"));
}

// A hostile tester: predictions of 2.4 TB on the 141 GB H200 and of 1,226 W on its 700 W limit came
// with no word of the device. A bundle records the memory it is told and the power limit the data's
// provenance records for the rows' protocol.
TEST_F(TrainJobTest, TheBundleKnowsTheDevicesMemoryAndThePowerLimitItsDataRecords) {
  const auto f = write_data({1, 4});
  const Dataset d = of_protocol_p1(f);
  std::ofstream(dir_ / "data.json") << R"({"protocols": {"p1": {"backend": "cuda", "platform_info": {"power_limit_w": 700}},)"
                                       R"( "p2": {"platform_info": {"power_limit_w": 9000}}}})";
  TrainJob job = small_job(f);
  job.device_memory_mb = 143155;
  run_train_job(job);
  const CarbModel m = CarbModel::load(dir_ / "model");
  ASSERT_TRUE(m.device_limits().memory_mb && m.device_limits().power_limit_w);
  EXPECT_EQ(*m.device_limits().memory_mb, 143155);
  EXPECT_EQ(*m.device_limits().power_limit_w, 700);  // p2 measured none of the rows
  EXPECT_EQ(device_limits_of({f}, d, std::nullopt).memory_mb, std::nullopt);
  // Data without memory: a device's memory would judge nothing (a review: every row "fit").
  Dataset no_memory = d;
  for (auto& r : no_memory.rows) r.peak_memory_mb.reset();
  EXPECT_THROW(device_limits_of({f}, no_memory, 143155.0), InputError);
  EXPECT_NO_THROW(device_limits_of({f}, no_memory, std::nullopt));
  // Refused before the work, the bundle there kept.
  job.device_memory_mb = -1;
  job.force = true;
  EXPECT_THROW(run_train_job(job), InputError);
  EXPECT_EQ(*CarbModel::load(dir_ / "model").device_limits().memory_mb, 143155);
}

// A hostile tester: a CPU model, knowing no memory, recommended a batch of 4.4 TB. Not given, the
// memory is the one the provenance records of the device every row's protocol ran on (the cpu
// backend records the machine's), unless a measured peak is above it.
TEST_F(TrainJobTest, TheDevicesMemoryIsReadFromTheProvenanceWhereEveryRowsProtocolRecordsIt) {
  const auto f = write_data({1, 4});
  const Dataset d = of_protocol_p1(f);
  const auto sidecar = [&](const std::string& p1, const std::string& p2) {
    std::ofstream(dir_ / "data.json") << R"({"protocols": {"p1": {"backend": "cpu", "platform_info": {)" << p1
                                      << R"(}}, "p2": {"backend": "cpu", "platform_info": {)" << p2 << "}}}}";
  };
  sidecar(R"("device_memory_mb": 25000)", R"("device_memory_mb": 900000)");
  EXPECT_EQ(device_limits_of({f}, d, std::nullopt).memory_mb, 25000);  // p2 measured none of the rows
  EXPECT_EQ(device_limits_of({f}, d, 30000.0).memory_mb, 30000);       // given wins
  // The rows' protocol records none: nothing is known.
  sidecar("", R"("device_memory_mb": 25000)");
  EXPECT_EQ(device_limits_of({f}, d, std::nullopt).memory_mb, std::nullopt);
  // Below a measured peak: not recorded, and said.
  sidecar(R"("device_memory_mb": 1)", R"("device_memory_mb": 1)");
  std::vector<std::string> notes;
  EXPECT_EQ(device_limits_of({f}, d, std::nullopt, &notes).memory_mb, std::nullopt);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("the device's memory the data's provenance records, 1 MB, is below the"), std::string::npos)
      << notes[0];
  // Out of any device's range (an edited sidecar): not recorded, and said (a review: train failed
  // with the flag's range error for a memory no one gave). The same for the power limit.
  sidecar(R"("device_memory_mb": 1e300, "power_limit_w": 1e300)", "");
  notes.clear();
  const DeviceLimits wild = device_limits_of({f}, d, std::nullopt, &notes);
  EXPECT_EQ(wild.memory_mb, std::nullopt);
  EXPECT_EQ(wild.power_limit_w, std::nullopt);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("a device memory (MB) of 1e+300 (platform_info.device_memory_mb), outside"), std::string::npos)
      << notes[0];
  EXPECT_NE(notes[1].find("power limit (W) of 1e+300"), std::string::npos) << notes[1];
  EXPECT_THROW(device_limits_of({f}, d, 1e300), InputError);  // given: the flag's own range
  // Recorded, but no number (hundred-and-thirty-seventh hostile pass: "700" as text left a model
  // without its power limit, without a word).
  sidecar(R"("device_memory_mb": "25000", "power_limit_w": [700])", "");
  notes.clear();
  const DeviceLimits texts = device_limits_of({f}, d, std::nullopt, &notes);
  EXPECT_EQ(texts.memory_mb, std::nullopt);
  EXPECT_EQ(texts.power_limit_w, std::nullopt);
  ASSERT_EQ(notes.size(), 2u) << nlohmann::json(notes).dump();
  EXPECT_NE(notes[0].find("'s provenance for protocol p1: platform_info.power_limit_w is [700], not a positive number; "
                          "the model does not record it"),
            std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("platform_info.device_memory_mb is \"25000\", not a positive number"), std::string::npos)
      << notes[1];
  // A peak that is no number hides no larger one (a review: {NaN, 100} took a memory below the 100).
  Dataset nan_first = d;
  nan_first.rows.front().peak_memory_mb = std::nan("");
  double most = 0;
  for (const auto& r : d.rows) most = std::max(most, *r.peak_memory_mb);
  EXPECT_THROW(device_limits_of({f}, nan_first, most / 2), InputError);
  // Data without memory: nothing for a memory to judge, and no word either.
  sidecar(R"("device_memory_mb": 25000)", "");
  Dataset no_memory = d;
  for (auto& r : no_memory.rows) r.peak_memory_mb.reset();
  notes.clear();
  EXPECT_EQ(device_limits_of({f}, no_memory, std::nullopt, &notes).memory_mb, std::nullopt);
  EXPECT_TRUE(notes.empty());
  // The job records it and its summary says where it came from; the bundle keeps it.
  sidecar(R"("device_memory_mb": 25000)", R"("device_memory_mb": 25000)");
  TrainJob job = small_job(f);
  const TrainSummary s = run_train_job(job);
  EXPECT_EQ(s.device.memory_mb, 25000);
  EXPECT_FALSE(s.device_memory_given);
  EXPECT_EQ(s.to_json()["device_memory_from"], "provenance");
  EXPECT_EQ(CarbModel::load(dir_ / "model").device_limits().memory_mb, 25000);
}

}  // namespace
}  // namespace carb
