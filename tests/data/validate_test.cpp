// Tests of `carb data validate`'s checks: every problem reported with its line, in file
// order, including the dataset-level ones (duplicates, partly measured targets).
#include "data/validate.hpp"

#include <gtest/gtest.h>

#include "temp_dir_test.hpp"

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "carb/drift.hpp"
#include "carb/network_spec.hpp"
#include "carb/warning.hpp"
#include "carb/error.hpp"

namespace carb {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kHeader =
    "platform,family,depth,width,resolution,batch,precision,status,latency_ms,energy_j,peak_memory_mb,"
    "avg_sm_util,avg_mem_util\n";

class DataValidate : public TempDirTest {
 protected:
  DataValidate() : TempDirTest("carb_validate_") {}
  std::vector<std::string> validate_text(const std::string& text) const {
    std::ofstream(dir_ / "v.csv") << text;
    return validate_dataset_csv(dir_ / "v.csv");
  }
  std::string file() const { return (dir_ / "v.csv").string(); }

};

TEST_F(DataValidate, ValidFileHasNoProblems) {
  EXPECT_TRUE(validate_text(std::string(kHeader) + "gpu,basic,18,1,224,1,fp32,ok,5,0.2,120,,\n"
                                                   "gpu,basic,18,1,224,2,fp32,oom,,,,,\n"
                                                   "gpu,basic,18,1,224,4,fp32,ok,6,0.5,300,80,40\n")
                  .empty());
}

TEST_F(DataValidate, ReportsEveryProblemInLineOrder) {
  const auto p = validate_text(std::string(kHeader) +
                               "cpu,basic,18,1,224,1,fp32,ok,x,,120,,\n"   // 2: bad number
                               "cpu,basic,18,1,224,2,fp32,ok,5,,120,,\n"   // 3: fine
                               "cpu,basic,18,1,224,2,fp32,ok,6,,120,,\n"   // 4: duplicate of 3
                               "cpu,basic,18,1,224,4,fp32,bad,5,,12,,\n"  // 5: bad status
                               "cpu,basic,18,1,224,8,fp32,ok,,,120,,\n");  // 6: ok without latency
  ASSERT_EQ(p.size(), 4u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0].rfind(file() + ":2: column 'latency_ms'", 0), 0u) << p[0];
  EXPECT_EQ(p[1], file() + ":4: duplicate of line 3 (platform 'cpu', basic-18-w1-r224-b2-fp32)");
  EXPECT_EQ(p[2].rfind(file() + ":5: column 'status'", 0), 0u) << p[2];
  EXPECT_EQ(p[3], file() + ":6: status ok but latency_ms is empty");
}

// Widths that round to the same channels build one network: two rows of it are one measurement
// twice, however the width is spelled (eleventh hostile pass: 0.25 and 0.2500000001).
TEST_F(DataValidate, TwoWidthsThatBuildOneNetworkAreDuplicates) {
  const auto p = validate_text(std::string(kHeader) +
                               "cpu,basic,18,0.25,64,1,fp32,ok,5,,120,,\n"
                               "cpu,basic,18,0.2500000001,64,1,fp32,ok,6,,120,,\n"
                               "cpu,basic,18,0.5,64,1,fp32,ok,6,,120,,\n");  // other channels: no duplicate
  ASSERT_EQ(p.size(), 1u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":3: duplicate of line 2 (platform 'cpu', basic-18-w0.25-r64-b1-fp32; width 0.2500000001 "
                           "builds the same channels as 0.25)");
}

// Peak memory is taken with the network and its input in memory, and the largest layer output is
// made beside them: a peak below their size is no measurement (twelfth hostile pass: one below the
// weights trained without a word; forty-third: one below weights, input and largest output did).
TEST_F(DataValidate, APeakMemoryBelowTheWeightsInputAndLargestOutputIsRefused) {
  const auto p = validate_text(std::string(kHeader) +
                               "cpu,basic,18,1,224,1,fp32,ok,5,,47,,\n"     // 46.8 MB weights + 0.6 MB input
                               "cpu,basic,18,1,224,8,fp32,ok,5,,55,,\n"     // + 25.7 MB stem output: 77.6 MB
                               "cpu,basic,18,1,224,2,fp32,ok,5,,54.5,,\n"   // 54.4 MB: holds them
                               "cpu,basic,18,1,224,4,fp32,oom,,,3,,\n");    // ran out while loading: no bound
  ASSERT_EQ(p.size(), 2u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":2: peak_memory_mb 47 MB is below the 50.571424 MB that the weights, input and largest "
                           "layer output of basic-18-w1-r224-b1-fp32 take");
  EXPECT_EQ(p[1].rfind(file() + ":3: peak_memory_mb 55 MB is below the 77.", 0), 0u) << p[1];
}

TEST_F(DataValidate, OneDatasetHoldsOnePlatform) {
  const auto p = validate_text(std::string(kHeader) +
                               "cpu,basic,18,1,224,1,fp32,ok,5,,120,,\n"
                               "gpu,basic,18,1,224,1,fp32,ok,5,,120,,\n"
                               "cpu,basic,18,1,224,1,fp32,error,,,,,\n");
  ASSERT_EQ(p.size(), 2u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":3: platform 'gpu', but line 2 is platform 'cpu': one dataset holds one platform");
  EXPECT_EQ(p[1].rfind(file() + ":4: duplicate of line 2", 0), 0u) << p[1];  // same platform: a duplicate
}

TEST_F(DataValidate, OneDatasetHoldsOneProtocol) {
  const auto p = validate_text(std::string(kHeader.substr(0, kHeader.size() - 1)) + ",protocol_id\n" +
                               "cpu,basic,18,1,224,1,fp32,ok,5,,120,,,p1\n"
                               "cpu,basic,18,1,224,2,fp32,ok,5,,120,,,p1\n"
                               "cpu,basic,18,1,224,4,fp32,ok,5,,120,,,p2\n");
  ASSERT_EQ(p.size(), 1u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":4: protocol p2, but line 2 has protocol p1: one dataset holds one protocol per platform");
}

TEST_F(DataValidate, ABadByteIsOneProblemAndTheRestOfTheFileIsStillChecked) {
  // Hundred-and-third hostile pass: a byte that is not UTF-8 on line 4 was the only problem listed;
  // the unknown status on line 2 went unsaid.
  const auto p = validate_text(std::string(kHeader) +
                               "gpu,basic,18,1,224,1,fp32,weird,5,0.2,120,,\n"
                               "gpu,basic,18,1,224,2,fp32,ok,5,0.2,120,,\n"
                               "gpu,bas\xe9" "c,18,1,224,4,fp32,ok,5,0.2,120,,\n");
  ASSERT_EQ(p.size(), 3u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0].rfind(file() + ":2: ", 0), 0u) << p[0];
  EXPECT_NE(p[0].find("weird"), std::string::npos) << p[0];
  EXPECT_EQ(p[1], file() + ":4: byte 0xe9 is not UTF-8 text; save the file as UTF-8");
  EXPECT_EQ(p[2].rfind(file() + ":4: ", 0), 0u) << p[2];  // and the family it spells is no family
}

TEST_F(DataValidate, AnOddProtocolIsOneProblemAtItsRowNotTwo) {
  // Hundred-and-third hostile pass: one row of p2 among rows of p1 was reported, and so was the p1 row
  // after it ("protocol p1, but line 3 has protocol p2"). Each other protocol is said once, where it
  // first appears, against the platform's first.
  const auto p = validate_text(std::string(kHeader.substr(0, kHeader.size() - 1)) + ",protocol_id\n" +
                               "cpu,basic,18,1,224,1,fp32,ok,5,,120,,,p1\n"
                               "cpu,basic,18,1,224,2,fp32,ok,5,,120,,,p2\n"
                               "cpu,basic,18,1,224,4,fp32,ok,5,,120,,,p1\n"
                               "cpu,basic,18,1,224,8,fp32,ok,5,,120,,,\n"
                               "cpu,basic,18,1,224,16,fp32,ok,5,,120,,,p2\n");
  ASSERT_EQ(p.size(), 2u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":3: protocol p2, but line 2 has protocol p1: one dataset holds one protocol per platform");
  EXPECT_EQ(p[1], file() + ":5: no protocol, but line 2 has protocol p1: one dataset holds one protocol per platform");
}

// A latency of 1e308 once trained "fine" into predictions of 1e288 ms: values outside the stated
// bounds are refused, and the bounds are one table.
TEST_F(DataValidate, ImplausibleValuesAreRefused) {
  const auto p = validate_text(std::string(kHeader) +
                               "gpu,basic,18,1,224,1,fp32,ok,1e308,1,120,,\n"
                               "gpu,basic,18,1,224,2,fp32,ok,0,1,120,,\n"
                               "gpu,basic,18,1,224,4,fp32,ok,5,2e7,120,,\n"
                               "gpu,basic,18,1,224,8,fp32,ok,5,1,2e9,,\n"
                               "gpu,basic,18,1,224,16,fp32,ok,1e-320,1,120,,\n");  // a denormal
  ASSERT_EQ(p.size(), 6u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":2: latency_ms is 1e+308, outside the plausible range [1e-06, 1e+07] ms");
  EXPECT_EQ(p[1], file() + ":3: latency_ms is 0, outside the plausible range [1e-06, 1e+07] ms");
  EXPECT_EQ(p[2], file() + ":4: energy_j is 2e+07, outside the plausible range [1e-09, 1e+07] J");
  EXPECT_EQ(p[3].rfind(file() + ":4: energy_j 2e+07 J in latency_ms 5 ms is an average power of", 0), 0u) << p[3];
  EXPECT_EQ(p[4], file() + ":5: peak_memory_mb is 2e+09, outside the plausible range [1e-06, 1e+08] MB");
  EXPECT_EQ(p[5].rfind(file() + ":6: latency_ms is 1e-320", 0), 0u) << p[5];
}

// Twelfth hostile pass: 1000 J per ms of latency (an average power of 1 MW) passed each column's
// own bound, trained, and answered 1969 J in 1.95 ms. An H200 draws at most about 700 W; the bound
// was a rack's worth, 100 kW, until the ninetieth: an H200 file without its protocol columns, energy
// and latency swapped, validated at 8 kW. It is 5 kW, well above the largest single accelerator.
TEST_F(DataValidate, AnAveragePowerNoDeviceDrawsIsRefused) {
  const auto p = validate_text(std::string(kHeader) +
                               "gpu,basic,18,1,224,1,fp32,ok,1,1000,120,,\n"
                               "gpu,basic,18,1,224,2,fp32,ok,2,1.4,120,,\n"    // 700 W: an H200 at full power
                               "gpu,basic,18,1,224,4,fp32,ok,5,20,120,,\n"     // 4 kW: more than any one device, kept
                               "gpu,basic,18,1,224,8,fp32,ok,2.5,20,120,,\n");  // 8 kW: swapped, refused
  ASSERT_EQ(p.size(), 2u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":2: energy_j 1000 J in latency_ms 1 ms is an average power of 1e+06 W, above the plausible 5000 W");
  EXPECT_EQ(p[1], file() + ":5: energy_j 20 J in latency_ms 2.5 ms is an average power of 8000 W, above the plausible 5000 W");
}

// Forty-first hostile pass: energy divided by 1e4 validated at 0.01 W on an H200, and latency and
// energy both divided by 1000 kept every rule and implied 85 PFLOP/s. No device draws under
// kMinAveragePowerW while it computes, and none computes faster than kMaxFlopsPerSecond.
TEST_F(DataValidate, APowerOrAComputeRateNoDeviceHasIsRefused) {
  // basic-18 at width 1 and 224 pixels: 3.64 GFLOPs a sample.
  const auto p = validate_text(std::string(kHeader) +
                               "gpu,basic,18,1,112,1,fp16,ok,100,0.001,120,,\n"     // 0.01 W
                               "gpu,basic,18,1,112,2,fp16,ok,100,0.05,120,,\n"      // 0.5 W: the least
                               "gpu,basic,18,1,224,256,fp32,ok,0.01,0.002,12000,,\n"  // 93 PFLOP/s
                               "gpu,basic,18,1,224,128,fp32,ok,0.05,0.2,6000,,\n");  // 9.3 PFLOP/s at 4 kW: under both
  ASSERT_EQ(p.size(), 2u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":2: energy_j 0.001 J in latency_ms 100 ms is an average power of 0.01 W, below the plausible 0.5 W");
  EXPECT_EQ(p[1].rfind(file() + ":4: latency_ms 0.01 ms for the ", 0), 0u) << p[1];
  EXPECT_NE(p[1].find("TFLOP/s, above the plausible 10000 TFLOP/s of any device"), std::string::npos) << p[1];
}

// Forty-third hostile pass: a cpu-1t row made 1000x faster, with its median, std and timed window
// to match, implied 81 TFLOP/s on one thread and validated. A CPU row is held to a rate per thread,
// and where it timed the reference network beside it, to a multiple of the host's rate on that.
TEST_F(DataValidate, ACpuRowFasterThanItsThreadsOrItsHostIsRefused) {
  const double host_rate = network_totals(kReferenceConfig).flops() / 1e-3;  // reference_ms 1
  const auto latency_at = [&](int batch, double times_host) {
    const double flops = network_totals({Family::basic, 18, 1, 224, batch, Precision::fp32}).flops();
    std::ostringstream o;
    o << std::setprecision(17) << flops / (times_host * host_rate) * 1000;
    return o.str();
  };
  const std::string header = std::string(kHeader.substr(0, kHeader.size() - 1)) + ",threads,reference_ms\n";
  const auto p = validate_text(header +
                               "cpu,basic,18,1,224,1,fp32,ok,0.1,,120,,,1,\n"    // 36 TFLOP/s on one thread
                               "cpu,basic,18,1,224,2,bf16,ok,0.2,,120,,,4,\n"    // 36 on four: under 4 x 10
                               "cpu,basic,18,1,224,4,fp32,ok," + latency_at(4, 150) + ",,120,,,64,1\n"
                               "cpu,basic,18,1,224,8,fp32,ok," + latency_at(8, 50) + ",,120,,,64,1\n"
                               // Fifty-fourth hostile pass: fp32 runs on no matrix engine, 1 TFLOP/s a thread.
                               "cpu,basic,18,1,224,16,bf16,ok,40,,300,,,8,\n"    // 1.45 TFLOP/s on eight
                               "cpu,basic,18,1,224,16,fp32,ok,40,,300,,,1,\n");  // 1.45 on one, in fp32
  ASSERT_EQ(p.size(), 3u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":2: latency_ms 0.1 ms for the 3.628146688 GFLOPs of basic-18-w1-r224-b1-fp32 is "
                           "36.28146688 TFLOP/s, above the plausible 1 TFLOP/s of 1 CPU thread(s) in fp32");
  EXPECT_EQ(p[1].rfind(file() + ":4: latency_ms ", 0), 0u) << p[1];
  EXPECT_NE(p[1].find("150x the "), std::string::npos) << p[1];
  EXPECT_NE(p[1].find("the host showed on the reference network beside it (at most 100x is plausible)"),
            std::string::npos) << p[1];
  EXPECT_EQ(p[2].rfind(file() + ":7: latency_ms 40 ms ", 0), 0u) << p[2];
  EXPECT_NE(p[2].find("above the plausible 1 TFLOP/s of 1 CPU thread(s) in fp32"), std::string::npos) << p[2];
}

// Forty-fourth hostile pass: H200 rows at 13.2 kW and at 6 W, each beside the device's own power
// readings of 130-445 W, and one 60x faster with its energy to match (8,917 TFLOP/s, 14 TFLOP/J),
// kept every identity and validated. A row's power lies near the device's readings and within its
// recorded power limit, and no device does more than 5 TFLOP per joule.
TEST_F(DataValidate, APowerOrEfficiencyItsDeviceCannotHaveIsRefused) {
  std::ofstream(dir_ / "v.json") << R"({"protocols": {"p1": {"platform_info": {"power_limit_w": 600}}}})";
  const std::string header =
      std::string(kHeader.substr(0, kHeader.size() - 1)) + ",protocol_id,gpu_power_w_start,gpu_power_w_end\n";
  const auto p = validate_text(header +
                               "gpu,basic,18,1,224,1,fp32,ok,5,1,120,,,p1,100,300\n"       // 200 W: fine
                               "gpu,basic,18,1,224,2,fp32,ok,5,1,120,,,p1,10,20\n"        // 200 W beside 10-20 W
                               "gpu,basic,18,1,224,4,fp32,ok,5,0.175,120,,,p1,400,500\n"  // 35 W beside 400-500 W
                               "gpu,basic,18,1,224,8,fp32,ok,0.15,0.005,120,,,p1,,\n"      // 5.8 TFLOP/J
                               "gpu,basic,18,1,224,16,fp32,ok,20,20,300,,,p1,400,400\n"    // 1 kW, limit 600 W
                               "gpu,basic,18,1,224,32,fp32,ok,20,17,600,,,p1,400,400\n"    // 850 W: within 1.5x
                               "gpu,basic,18,1,224,64,fp32,ok,40,20,900,,,p1,-1,400\n");   // a broken reading
  ASSERT_EQ(p.size(), 5u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":3: energy_j 1 J in latency_ms 5 ms is an average power of 200 W, above 100 W, 5x the "
                           "higher of the device's readings before and after it (gpu_power_w_start 10 W, "
                           "gpu_power_w_end 20 W)");
  EXPECT_EQ(p[1], file() + ":4: energy_j 0.175 J in latency_ms 5 ms is an average power of 35 W, below 40 W, 0.1x the "
                           "lower of the device's readings before and after it (gpu_power_w_start 400 W, "
                           "gpu_power_w_end 500 W)");
  EXPECT_EQ(p[2], file() + ":5: energy_j 0.005 J for the 29.025173504 GFLOPs of basic-18-w1-r224-b8-fp32 is "
                           "5.8050347008 TFLOP/J, above the plausible 5 TFLOP/J of any device");
  EXPECT_EQ(p[3], file() + ":6: energy_j 20 J in latency_ms 20 ms is an average power of 1000 W, above 1.5x the 600 W "
                           "power limit its provenance records for protocol p1");
  EXPECT_EQ(p[4], file() + ":8: gpu_power_w_start is -1, outside the plausible range (0, 5000] W");
}

// Forty-fourth hostile pass: a cpu-1t peak x1000, 1,821 MB for a network whose every tensor takes
// 1.9 MB, validated. A peak is at most 4x every tensor of the pass and the library's buffers.
TEST_F(DataValidate, APeakFarAboveEveryTensorOfThePassIsRefused) {
  const std::string header = std::string(kHeader.substr(0, kHeader.size() - 1)) + ",threads\n";
  const auto p = validate_text(header +
                               "cpu,basic,18,1,224,1,fp32,ok,500,,400,,,2\n"   // 80.3 MB of tensors: 385 at most
                               "cpu,basic,18,1,224,2,fp32,ok,900,,200,,,2\n"   // fine
                               "cpu,basic,18,1,224,4,fp32,ok,900,,1300,,,\n"   // no threads: a device's 1 GB more
                               "cpu,basic,18,1,224,8,fp32,ok,900,,3000,,,\n");  // 2,288 at most
  ASSERT_EQ(p.size(), 2u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":2: peak_memory_mb 400 MB is above the 385.126656 MB a forward pass of "
                           "basic-18-w1-r224-b1-fp32 can hold: 4x its weights, input and every layer output "
                           "(80.281664 MB) and 64 MB of the CPU library's buffers");
  EXPECT_EQ(p[1].rfind(file() + ":5: peak_memory_mb 3000 MB is above the ", 0), 0u) << p[1];
  EXPECT_NE(p[1].find("and 1024 MB of a device library's buffers"), std::string::npos) << p[1];
}

// Forty-fifth hostile pass: a cpu-1t row 40x too fast with its reference_ms 40x too fast to match
// kept its rate over the host's and trained; only --drift-correct refused the reference. A row's
// reference far from the others' of its platform and protocol is a damaged cell for every reader.
// And a CPU file without a `threads` column is known as one by its provenance.
TEST_F(DataValidate, AReferenceFarFromTheOthersAndACpuKnownByItsProvenance) {
  const std::string header = std::string(kHeader.substr(0, kHeader.size() - 1)) + ",protocol_id,reference_ms\n";
  std::string rows;
  for (int b : {1, 2, 4, 8}) rows += "cpu,basic,18,1,224," + std::to_string(b) + ",fp32,ok,900,,200,,,p1,3\n";
  rows += "cpu,basic,18,1,224,16,fp32,ok,900,,200,,,p1,0.075\n";  // 40x below
  rows += "cpu,basic,18,1,224,32,fp32,ok,900,,700,,,p1,12\n";     // 4x above: a busy host
  auto p = validate_text(header + rows);
  ASSERT_EQ(p.size(), 1u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":6: reference_ms 0.075 ms is 40x below the typical 3 ms of the rows measured with it, more "
                           "than 10x: a damaged cell, or a host too loaded to measure on");

  // Its provenance says p1 ran on the CPU with 2 threads: 30 TFLOP/s is not theirs, nor a peak of
  // 1,200 MB a device's cuDNN workspace.
  std::ofstream(dir_ / "v.json") << R"({"protocols": {"p1": {"backend": "cpu", "threads": 2}}})";
  p = validate_text(header + "cpu,basic,18,1,224,8,fp32,ok,0.97,,400,,,p1,\n"   // 29.9 TFLOP/s
                             "cpu,basic,18,1,224,1,fp32,ok,900,,1200,,,p1,\n");  // 385 MB at most on a CPU
  ASSERT_EQ(p.size(), 2u) << ::testing::PrintToString(p);
  EXPECT_NE(p[0].find("above the plausible 2 TFLOP/s of 2 CPU thread(s) in fp32"), std::string::npos) << p[0];
  EXPECT_NE(p[1].find("and 64 MB of the CPU library's buffers"), std::string::npos) << p[1];
}

// Forty-second hostile pass: a latency 1000x its own median, std and timed window validated; a
// negative avg_power_w, or any `rounds` column, switched the energy identity off; a peak of 1.3 TB
// beside 1.6 GB reserved validated. A row of one measurement must agree with itself throughout.
TEST_F(DataValidate, ARowOfOneMeasurementAgreesWithItselfThroughout) {
  const std::string header = std::string(kHeader.substr(0, kHeader.size() - 1)) +
                             ",timed_s,passes,latency_median_ms,latency_std_ms,latency_cv,avg_power_w,energy_window_s,"
                             "energy_passes,peak_reserved_mb,rounds\n";
  const auto p = validate_text(header +
                               // 10 passes of 4 ms in 0.04 s, median 4.1, std 0.2, cv 0.05: consistent
                               "gpu,basic,18,1,224,1,fp32,ok,4,1,120,,,0.04,10,4.1,0.2,0.05,250,0.4,100,130,\n"
                               // latency x1000 (the rest as measured)
                               "gpu,basic,18,1,224,2,fp32,ok,4000,1000,120,,,0.04,10,4.1,0.2,0.05,250,0.4,100,130,\n"
                               // the mean further from the median than the std: no sample's
                               "gpu,basic,18,1,224,4,fp32,ok,4,1,120,,,0.04,10,3,0.2,0.05,250,0.4,100,130,\n"
                               // cv not std / mean
                               "gpu,basic,18,1,224,8,fp32,ok,4,1,120,,,0.04,10,4.1,0.2,0.5,250,0.4,100,130,\n"
                               // a negative power is refused, not read as absent
                               "gpu,basic,18,1,224,16,fp32,ok,4,1,120,,,0.04,10,4.1,0.2,0.05,-250,0.4,100,130,\n"
                               // energy x5 in a row of 1 round: still one measurement
                               "gpu,basic,18,1,224,32,fp32,ok,4,5,600,,,0.04,10,4.1,0.2,0.05,250,0.4,100,700,1\n"
                               // energy x5 in a row of 3 rounds: beyond even the medians' 3x
                               "gpu,basic,18,1,224,64,fp32,ok,4,5,600,,,0.04,10,4.1,0.2,0.05,250,0.4,100,700,3\n"
                               // energy x1.5 over 3 rounds: medians of their own may differ that much
                               "gpu,basic,18,1,224,128,fp32,ok,4,1.5,600,,,0.05,10,3,0.2,0.5,250,0.4,100,700,3\n"
                               // the allocated peak above the reserved pool
                               "gpu,basic,18,1,224,3,fp32,ok,4,1,1610,,,0.04,10,4.1,0.2,0.05,250,0.4,100,1600,\n");
  ASSERT_EQ(p.size(), 11u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":3: energy_j 1000 J disagrees with its own window: avg_power_w 250 W x energy_window_s 0.4 s / "
                           "energy_passes 100 is 1 J");
  EXPECT_EQ(p[1], file() + ":3: latency_ms 4000 ms disagrees with the energy window, 4 ms a pass (energy_window_s / "
                           "energy_passes), by more than 3x");
  EXPECT_EQ(p[2], file() + ":3: latency_ms 4000 ms disagrees with its timed window: timed_s 0.04 s / passes 10 is 4 ms a pass");
  EXPECT_EQ(p[3], file() + ":3: latency_ms 4000 ms, a mean of passes, is 3995.9 ms from their median, latency_median_ms "
                           "4.1 ms, more than their standard deviation, latency_std_ms 0.2 ms, which no sample's mean can be");
  EXPECT_EQ(p[4].rfind(file() + ":3: latency_cv 0.05 disagrees with latency_std_ms 0.2 ms / latency_ms 4000 ms", 0), 0u);
  EXPECT_EQ(p[5].rfind(file() + ":4: latency_ms 4 ms, a mean of passes, is 1 ms from their median", 0), 0u) << p[5];
  EXPECT_EQ(p[6], file() + ":5: latency_cv 0.5 disagrees with latency_std_ms 0.2 ms / latency_ms 4 ms, which is 0.05");
  EXPECT_EQ(p[7], file() + ":6: avg_power_w is -250, outside the plausible range (0, 5000] W");
  EXPECT_EQ(p[8].rfind(file() + ":7: energy_j 5 J disagrees with its own window: ", 0), 0u) << p[8];
  EXPECT_EQ(p[9].rfind(file() + ":8: energy_j 5 J disagrees with its own window by more than 3x (a row combined over "
                                "rounds)", 0), 0u) << p[9];
  EXPECT_EQ(p[10], file() + ":10: peak_memory_mb 1610 MB is above peak_reserved_mb 1600 MB, the memory its allocator "
                            "held, which the allocated peak lies within");
}

// Fortieth hostile pass: a row implying 0.66 W on an H200 (energy_j divided by 1000) passed every
// bound. A row's own figures must agree: energy with its window's power x time / passes, latency
// with the time a pass took in the energy window, the mean latency with the median's half.
TEST_F(DataValidate, ARowsOwnFiguresMustAgree) {
  const std::string header = std::string(kHeader.substr(0, kHeader.size() - 1)) +
                             ",avg_power_w,energy_window_s,energy_passes,latency_median_ms,rounds\n";
  const auto p = validate_text(header +
                               // 1 ms a pass, 500 W: 0.5 J a pass. Consistent.
                               "gpu,basic,18,1,224,1,fp32,ok,1,0.5,120,,,500,0.5,500,1,\n"
                               // energy_j divided by 10
                               "gpu,basic,18,1,224,2,fp32,ok,1,0.05,120,,,500,0.5,500,1,\n"
                               // a pass in the energy window took 10 ms, the latency says 1 ms
                               "gpu,basic,18,1,224,4,fp32,ok,1,5,120,,,500,0.5,50,1,\n"
                               // a mean of 1 ms over passes whose median is 3 ms
                               "gpu,basic,18,1,224,8,fp32,ok,1,0.5,120,,,500,0.5,500,3,\n"
                               // combined over rounds: each column its own median, energy not checked against them
                               "gpu,basic,18,1,224,16,fp32,ok,1,0.55,120,,,500,0.5,500,1,3\n"
                               // within the shipped spread (1.27x) and without the window's columns: fine
                               "gpu,basic,18,1,224,32,fp32,ok,1,0.635,600,,,500,0.635,500,1.2,\n"
                               "gpu,basic,18,1,224,64,fp32,ok,1,0.5,600,,,,,,,\n");
  ASSERT_EQ(p.size(), 3u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":3: energy_j 0.05 J disagrees with its own window: avg_power_w 500 W x energy_window_s "
                           "0.5 s / energy_passes 500 is 0.5 J");
  EXPECT_EQ(p[1], file() + ":4: latency_ms 1 ms disagrees with the energy window, 10 ms a pass (energy_window_s / "
                           "energy_passes), by more than 3x");
  EXPECT_EQ(p[2], file() + ":5: latency_ms 1 ms, a mean of passes, is below half their median, latency_median_ms 3 "
                           "ms, which no mean of positive times can be");
}

// The extra columns carb reads (the protocol, combine's rounds, drift's reference) are checked
// too; other extra columns and empty cells are carried as they are.
TEST_F(DataValidate, ExtraColumnsCarbReadsAreChecked) {
  const std::string header = std::string(kHeader.substr(0, kHeader.size() - 1)) + ",threads,passes,reference_ms,note\n";
  const auto p = validate_text(header +
                               "cpu,basic,18,1,224,1,fp32,ok,500,,200,,,2,100,3.5,anything\n"
                               "cpu,basic,18,1,224,2,fp32,ok,500,,200,,,0,100,3.5,\n"
                               "cpu,basic,18,1,224,4,fp32,ok,500,,200,,,2,many,,\n"
                               "cpu,basic,18,1,224,8,fp32,ok,500,,200,,,2,100,-1,\n"
                               "cpu,basic,18,1,224,16,fp32,ok,500,,200,,,2.5,100,3.5,\n"
                               // combine's median over rounds: a fractional pass count is data
                               "cpu,basic,18,1,224,32,fp32,ok,500,,600,,,2,74.5,3.5,\n");
  ASSERT_EQ(p.size(), 4u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], file() + ":3: threads is 0, outside the plausible range whole numbers in [1, 4096] threads");
  EXPECT_EQ(p[1], file() + ":4: passes is 'many', not a number");
  EXPECT_EQ(p[2], file() + ":5: reference_ms is -1, outside the plausible range [1e-06, 1e+07] ms");
  EXPECT_EQ(p[3], file() + ":6: threads is 2.5, outside the plausible range whole numbers in [1, 4096] threads");
}

// Thirteenth hostile pass: negative timing statistics and host load, and an ok row combined from
// no ok round, validated.
TEST_F(DataValidate, TimingStatisticsAndRoundsMustBePossible) {
  const std::string header =
      std::string(kHeader.substr(0, kHeader.size() - 1)) + ",latency_median_ms,latency_cv,load_avg_1m,rounds\n";
  const auto p = validate_text(header +
                               "cpu,basic,18,1,224,1,fp32,ok,5,,120,,,4.9,0.02,1.5,4\n"  // fine
                               "cpu,basic,18,1,224,2,fp32,ok,5,,120,,,-4.9,0.02,1.5,4\n"
                               "cpu,basic,18,1,224,4,fp32,ok,5,,120,,,4.9,-0.02,1.5,4\n"
                               "cpu,basic,18,1,224,8,fp32,ok,5,,120,,,4.9,0.02,-1,4\n"
                               "cpu,basic,18,1,224,16,fp32,ok,5,,120,,,4.9,0.02,1.5,0\n"
                               "cpu,basic,18,1,224,32,fp32,error,,,,,,,,1.5,0\n"  // failed in every round
                               "cpu,basic,18,1,224,64,fp32,ok,5,,600,,,4.9,0.02,1.5,0.0\n");  // 0 by value
  ASSERT_EQ(p.size(), 5u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0].rfind(file() + ":3: latency_median_ms is -4.9", 0), 0u) << p[0];
  EXPECT_EQ(p[1].rfind(file() + ":4: latency_cv is -0.02", 0), 0u) << p[1];
  EXPECT_EQ(p[2].rfind(file() + ":5: load_avg_1m is -1", 0), 0u) << p[2];
  EXPECT_EQ(p[3], file() + ":6: status ok but rounds is 0 (no ok round to take the median of)");
  EXPECT_EQ(p[4], file() + ":8: status ok but rounds is 0 (no ok round to take the median of)");
}

TEST_F(DataValidate, FailedRowsCarryNoLatencyOrEnergy) {
  const auto p = validate_text(std::string(kHeader) + "gpu,basic,18,1,224,1,fp32,oom,3,2,9000,,\n");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], file() + ":2: status oom but latency_ms has a value");
  EXPECT_EQ(p[1], file() + ":2: status oom but energy_j has a value");
}

TEST_F(DataValidate, UtilizationAbovePercentRange) {
  const auto p = validate_text(std::string(kHeader) + "gpu,basic,18,1,224,1,fp32,ok,3,2,90,101.5,\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0], file() + ":2: avg_sm_util is 101.5, outside the plausible range [0, 100] %");
}

TEST_F(DataValidate, PartlyMeasuredTargetIsReported) {
  const auto p = validate_text(std::string(kHeader) +
                               "gpu,basic,18,1,224,1,fp32,ok,1,0.5,300,,\n"
                               "gpu,basic,18,1,224,2,fp32,ok,2,,310,,\n");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(
      p[0],
      file() + ":3: platform 'gpu' has energy_j on 1 of 2 ok rows (empty here first); measure all or none");
}

TEST_F(DataValidate, FileLevelProblemsComeFirst) {
  const auto missing = validate_text("platform,family\ncpu,basic\n");
  ASSERT_EQ(missing.size(), 11u);  // every missing column, each named
  EXPECT_EQ(missing[0], file() + ":1: missing required column 'depth'");
  const auto absent = validate_dataset_csv(dir_ / "absent.csv");
  ASSERT_EQ(absent.size(), 1u);
  EXPECT_NE(absent[0].find("absent.csv: cannot open"), std::string::npos) << absent[0];
  const auto torn = validate_text(std::string(kHeader) + "cpu,\"basic\n");
  ASSERT_EQ(torn.size(), 1u);
  EXPECT_NE(torn[0].find(":2:5: quoted field is never closed"), std::string::npos) << torn[0];
}

// Fiftieth hostile pass: batch 1's and batch 32's timing columns swapped in 160 networks of
// cpu-2t validated, each row consistent on its own, and the model trained on them answered
// 32 images in a sixth of one image's time. A larger batch of a network costs at least 0.4x a
// smaller one's latency and energy, within one platform and protocol.
TEST_F(DataValidate, ALargerBatchCheaperThanASmallerOneIsRefused) {
  const std::string header = std::string(kHeader.substr(0, kHeader.size() - 1)) + ",protocol_id\n";
  auto p = validate_text(header +
                         "gpu,basic,18,1,224,1,fp32,ok,20,4,120,,,p1\n"    // line 2
                         "gpu,basic,18,1,224,2,fp32,ok,12,3,130,,,p1\n"    // 0.6x: a disturbed batch 1, kept
                         "gpu,basic,18,1,224,32,fp32,ok,6,0.5,400,,,p1\n"  // 0.3x the time, 0.125x the energy
                         "gpu,basic,18,1,224,64,fp32,ok,40,6,700,,,p1\n"
                         "gpu,basic,18,0.5,224,32,fp32,ok,1,0.1,90,,,p1\n"  // another network
                         "gpu,basic,18,1,224,16,fp16,ok,2,0.2,90,,,p1\n"   // another precision
                         "gpu,basic,18,1,224,128,fp32,ok,3,0.3,900,,,p2\n");  // another protocol: not compared
  // The batch order gives one problem per target at line 4; the other protocol is one of its own.
  ASSERT_EQ(p.size(), 3u) << ::testing::PrintToString(p);
  EXPECT_NE(p[2].find(":8: protocol p2, but line 2 has protocol p1"), std::string::npos) << p[2];
  EXPECT_TRUE(p[0] == file() + ":4: latency_ms 6 at batch 32 is 0.3x the 20 of batch 1 at line 2, the same network: a "
                               "larger batch cannot cost under 0.4x a smaller one (a damaged or swapped cell, or a "
                               "measurement disturbed that much; re-measure both)")
      << p[0];
  EXPECT_NE(p[1].find(":4: energy_j 0.5 at batch 32 is 0.125x the 4 of batch 1 at line 2"), std::string::npos) << p[1];

  // Rows in any order, the smaller batch after the larger: the larger is the one named, once.
  p = validate_text(header + "cpu,basic,18,1,224,8,fp32,ok,3,,120,,,p1\n"
                             "cpu,basic,18,1,224,1,fp32,ok,10,,110,,,p1\n"
                             "cpu,basic,18,1,224,4,fp32,ok,9,,115,,,p1\n");
  ASSERT_EQ(p.size(), 1u) << ::testing::PrintToString(p);
  EXPECT_NE(p[0].find(":2: latency_ms 3 at batch 8 is 0.3x the 10 of batch 1 at line 3"), std::string::npos) << p[0];
}

// Ninetieth hostile pass: every fp32 latency in microseconds validated and trained, and the model
// answered fp32 1,500x slower than bf16. Two precisions of one network and batch differ by 50x at most.
TEST_F(DataValidate, PrecisionsFarApartAreRefused) {
  const std::string header = std::string(kHeader.substr(0, kHeader.size() - 1)) + ",protocol_id\n";
  const auto p = validate_text(header +
                               "cpu,basic,18,1,64,4,fp32,ok,9000,,120,,,p1\n"   // line 2: microseconds
                               "cpu,basic,18,1,64,4,bf16,ok,6,,110,,,p1\n"      // 0.00067x
                               "cpu,basic,18,1,64,8,fp32,ok,12,,130,,,p1\n"     // a fair pair: 2x
                               "cpu,basic,18,1,64,8,bf16,ok,24,,120,,,p1\n"
                               "cpu,basic,18,0.5,64,8,bf16,ok,0.2,,90,,,p1\n");  // another network: not compared
  ASSERT_GE(p.size(), 1u);
  EXPECT_EQ(p[0], file() + ":3: latency_ms 6 at bf16 is 0.001x the 9000 at fp32 at line 2, the same network and "
                           "batch: precisions do not differ by over 50x (one of them in another unit, or damaged; "
                           "re-measure both)") << ::testing::PrintToString(p);
  for (const auto& problem : p) EXPECT_EQ(problem.find(":5:"), std::string::npos) << problem;
  EXPECT_EQ(p.size(), 2u) << ::testing::PrintToString(p);  // and batch 8 costing under 0.4x batch 4's 9000
}

// Fifty-first hostile pass: resolutions 32 and 128 (or widths 0.25 and 1) swapped in whole networks
// validated, each batch set consistent, and trained into resolution 128 predicted 8x faster than 32;
// a CPU's resolution-32 peaks raised to 1.5x resolution 128's validated too. A configuration that
// outdoes another in every dimension, with 4x its FLOPs or more, costs at least 0.3x its latency and
// energy; on a CPU its peak is at least 0.8x.
TEST_F(DataValidate, AConfigurationCheaperThanOneItOutdoesIsRefused) {
  const std::string header = std::string(kHeader.substr(0, kHeader.size() - 1)) + ",protocol_id\n";
  auto p = validate_text(header +
                         "gpu,basic,18,1,32,8,fp32,ok,10,2,100,,,p1\n"    // line 2
                         "gpu,basic,18,1,128,8,fp32,ok,2,0.3,400,,,p1\n"  // 16x the FLOPs, 0.2x the time
                         "gpu,basic,18,1,64,8,fp32,ok,4,1,200,,,p1\n"     // 4x the FLOPs at 0.4x: kept
                         "gpu,basic,34,1,32,8,fp32,ok,3,0.5,150,,,p1\n"   // 2x the FLOPs: not compared
                         "gpu,basic,18,1,32,8,fp16,ok,1,0.2,60,,,p1\n");  // another precision
  ASSERT_EQ(p.size(), 2u) << ::testing::PrintToString(p);
  EXPECT_TRUE(p[0] == file() + ":3: latency_ms 2 for basic-18-w1-r128-b8-fp32 is 0.2x the 10 of basic-18-w1-r32-b8-fp32 "
                               "at line 2, which it outdoes in every dimension with 15.8x its FLOPs: it cannot cost under "
                               "0.3x that (a damaged or swapped cell, or a disturbed measurement; re-measure both)")
      << p[0];
  EXPECT_NE(p[1].find(":3: energy_j 0.3 for basic-18-w1-r128-b8-fp32 is 0.15x the 2 of"), std::string::npos) << p[1];

  // A CPU row's peak against a smaller configuration's, at any FLOPs; a device's is not compared
  // (cuDNN picks a workspace per shape: the H200 holds a 35 MB peak at r32 beside 1.1 MB at r64).
  const std::string cpu = std::string(kHeader.substr(0, kHeader.size() - 1)) + ",threads\n";
  p = validate_text(cpu + "cpu,basic,18,0.5,32,1,fp32,ok,1,,50,,,2\n"
                          "cpu,basic,18,0.5,64,1,fp32,ok,3,,30,,,2\n"     // 0.6x the peak of a smaller one
                          "cpu,basic,18,0.5,32,2,fp32,ok,1.5,,45,,,2\n"); // 0.9x: kept
  ASSERT_EQ(p.size(), 1u) << ::testing::PrintToString(p);
  EXPECT_NE(p[0].find(":3: peak_memory_mb 30 for basic-18-w0.5-r64-b1-fp32 is 0.6x the 50 of basic-18-w0.5-r32-b1-fp32 "
                      "at line 2, which it outdoes in every dimension on a CPU: it cannot cost under 0.8x that"),
            std::string::npos) << p[0];
  EXPECT_TRUE(validate_text(std::string(kHeader) + "gpu,basic,18,0.5,32,1,fp32,ok,1,,50,,\n"
                                                   "gpu,basic,18,0.5,64,1,fp32,ok,3,,30,,\n")
                  .empty());
}

// Fifty-first hostile pass: cpu-1t with every time x1000 (microseconds read as milliseconds)
// validated beside a sidecar whose protocol stops timing at 2 s, its rows claiming 2,275 s. A
// row's passes and timed window are what its protocol's timing loop can make.
TEST_F(DataValidate, PassesAndTimedWindowsItsProtocolsLoopCannotMakeAreRefused) {
  std::ofstream(dir_ / "v.json")
      << R"({"protocols": {"p1": {"backend": "cpu", "threads": 2, "max_timed_s": 2, "min_passes": 10, "max_passes": 100}}})";
  const std::string header = std::string(kHeader.substr(0, kHeader.size() - 1)) +
                             ",protocol_id,passes,timed_s,latency_std_ms\n";
  const auto p = validate_text(header +
                               "cpu,basic,18,1,224,1,fp32,ok,40,,200,,,p1,50,2.01,1\n"      // stopped just past 2 s
                               "cpu,basic,18,1,224,2,fp32,ok,40000,,300,,,p1,50,2000,1000\n"  // x1000
                               "cpu,basic,18,1,224,4,fp32,ok,400,,400,,,p1,10,4,10\n"        // the minimum passes: any time
                               "cpu,basic,18,1,112,8,fp32,ok,10,,100,,,p1,120,1.2,1\n");       // past max_passes
  ASSERT_EQ(p.size(), 2u) << ::testing::PrintToString(p);
  EXPECT_TRUE(p[0] == file() + ":3: timed_s 2000 s over 50 passes of latency_ms 40000 ms: its protocol stops timing at "
                               "the first pass that ends after max_timed_s 2 s, so the passes before the last cannot "
                               "take longer (a time in another unit?)")
      << p[0];
  EXPECT_TRUE(p[1] == file() + ":5: passes 120 is more than the 100 its protocol's timing loop runs (max_passes 100)")
      << p[1];
}

// Fifty-second hostile pass: the H200's energy and every power column scaled to 0.2x (rows of
// 24-141 W) validated beside its 700 W limit, and the model answered an H200 computing at 60 W. A
// row's average power is at least 0.05x the power limit its provenance records.
TEST_F(DataValidate, AnAveragePowerBelowWhatItsDeviceDrawsIdleIsRefused) {
  std::ofstream(dir_ / "v.json") << R"({"protocols": {"p1": {"platform_info": {"power_limit_w": 700}}}})";
  const std::string header = std::string(kHeader.substr(0, kHeader.size() - 1)) + ",protocol_id\n";
  const auto p = validate_text(header + "gpu,basic,18,1,224,1,fp32,ok,5,0.12,120,,,p1\n"    // 24 W
                                        "gpu,basic,18,1,224,2,fp32,ok,6,0.21,130,,,p1\n");  // 35 W: the least
  ASSERT_EQ(p.size(), 1u) << ::testing::PrintToString(p);
  EXPECT_TRUE(p[0] == file() + ":2: energy_j 0.12 J in latency_ms 5 ms is an average power of 24 W, below 0.05x the "
                               "700 W power limit its provenance records for protocol p1, less than such a device "
                               "draws idle (an energy in another unit?)")
      << p[0];
}

// Fifty-fourth hostile pass: cpu-2t's sidecar with threads 2 -> 64 let every timing x0.002 validate
// as 64 threads' work; an H200 sidecar's power limit 700 -> 3000 W let every energy x4 validate. A
// protocol's recorded settings must make its id; a row's thread count is its protocol's; a sidecar
// edited since carb wrote it (its power limit is part of no id) is read with a warning.
TEST_F(DataValidate, EditedProtocolSettingsAreRefusedAndAnEditedSidecarIsToldOf) {
  const fs::path data = fs::path(CARB_SOURCE_DIR) / "data";
  fs::copy_file(data / "cpu-2t.csv", dir_ / "c.csv");
  std::ifstream in(data / "cpu-2t.json");
  const std::string side((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto write_side = [&](const std::string& from, const std::string& to) {
    std::string text = side;
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
    std::ofstream(dir_ / "c.json") << text;
  };
  std::vector<std::string> said;
  const WarningHandler before = set_warning_handler([&](const std::string& w) { said.push_back(w); });
  write_side("\"threads\": 2,", "\"threads\": 64,");
  try {
    (void)validate_dataset_csv(dir_ / "c.csv");
    ADD_FAILURE() << "edited settings were read";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("c.json: protocol pd75bfe0230d1's recorded settings are not the ones its id "
                                         "was made from"), std::string::npos) << e.what();
  }
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("c.json was edited since carb wrote it"), std::string::npos) << said[0];

  // Notes added to the sidecar: read, with the same warning (once per content), and nothing refused.
  said.clear();
  write_side("\"kind\": \"carb dataset", "\"notes\": \"mine\", \"kind\": \"carb dataset");
  EXPECT_TRUE(validate_dataset_csv(dir_ / "c.csv").empty());
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("the device facts"), std::string::npos) << said[0];

  // The sidecar as carb wrote it: no word; rows that claim other threads than their protocol's.
  said.clear();
  write_side("\"threads\": 2,", "\"threads\": 2,");
  std::ifstream rows(dir_ / "c.csv");
  std::string head, first;
  std::getline(rows, head), std::getline(rows, first);
  EXPECT_TRUE(validate_dataset_csv(dir_ / "c.csv").empty());
  EXPECT_TRUE(said.empty()) << said.front();
  const auto threads_at = [&] {
    std::size_t col = 0;
    for (std::size_t i = 0, start = 0; i <= head.size(); ++i)
      if (i == head.size() || head[i] == ',') {
        if (head.substr(start, i - start) == "threads") return col;
        ++col, start = i + 1;
      }
    return std::string::npos;
  }();
  ASSERT_NE(threads_at, std::string::npos);
  std::vector<std::string> cells;
  for (std::size_t i = 0, start = 0; i <= first.size(); ++i)
    if (i == first.size() || first[i] == ',') cells.push_back(first.substr(start, i - start)), start = i + 1;
  cells[threads_at] = "64";
  std::string row;
  for (const auto& c : cells) row += (row.empty() ? "" : ",") + c;
  std::ofstream(dir_ / "c.csv") << head << '\n' << row << '\n';
  const auto p = validate_dataset_csv(dir_ / "c.csv");
  set_warning_handler(before);
  ASSERT_EQ(p.size(), 1u) << ::testing::PrintToString(p);
  EXPECT_EQ(p[0], (dir_ / "c.csv").string() + ":2: threads 64 is not the 2 its protocol pd75bfe0230d1 ran with, as its "
                                             "provenance records");
  ASSERT_EQ(said.size(), 1u);  // and the CSV is not the one the sidecar was written with
  EXPECT_NE(said[0].find("its hash differs"), std::string::npos) << said[0];
}

}  // namespace
}  // namespace carb
