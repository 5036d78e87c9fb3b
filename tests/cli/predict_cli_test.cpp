// `carb predict` on many configurations through the binary: answered a chunk at a time, the CSV
// written as it is answered and equal to the library's answer for the whole list, with progress on
// stderr (ninety-first hostile pass: a million configurations ran for minutes with nothing written
// and no word, and a kill lost everything).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/synthetic_datasets.hpp"
#include "carb/dataset.hpp"
#include "carb/prediction_io.hpp"
#include "cli/cli_run.hpp"

namespace {

using namespace carb_cli_test;
using carb_cli_test::carb;  // the helper, not namespace carb

TEST(PredictCli, ManyConfigurationsAreWrittenAsAnsweredWithProgressAndEqualTheWholeAnswer) {
  std::vector<::carb::Config> configs;  // 50,000 distinct networks and shapes
  for (int depth = 10; depth <= 28; depth += 2)
    for (int w = 1; w <= 10; ++w)
      for (int r = 0; r < 20; ++r)
        for (int batch = 1; batch <= 25; ++batch)
          configs.push_back({::carb::Family::basic, depth, 0.25 * w, 32 + 16 * r, batch, ::carb::Precision::fp32});
  ASSERT_EQ(configs.size(), 50000u);
  {
    std::ofstream out(scratch().dir() / "many.csv");
    ::carb::write_configs_csv(configs, out);
  }
  const auto& model = ::carb::testing::synthetic_source_model();
  model.save(scratch().dir() / "many_model");
  const CliRun r = carb("predict --model many_model --configs many.csv --format csv --confidence 0.9", "many");
  ASSERT_EQ(r.status, 0) << r.err;
  std::ostringstream whole;
  const auto loaded = ::carb::CarbModel::load(scratch().dir() / "many_model");
  ::carb::write_predictions_csv(loaded.predict(configs, {}, 0.9), loaded.targets(), whole, nullptr, 0.9,
                                ::carb::held_device(loaded));
  EXPECT_TRUE(r.out == whole.str()) << r.out.size() << " bytes against " << whole.str().size();
  EXPECT_EQ(r.err.rfind("carb predict: 50000 configurations, 20000 at a time\n", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("carb predict: 50000 of 50000 configurations, "), std::string::npos) << r.err;
  // Fewer than that: no progress line.
  const CliRun few = carb("predict --model many_model --preset tiny --format csv", "few");
  ASSERT_EQ(few.status, 0) << few.err;
  EXPECT_EQ(few.err.find("carb predict:"), std::string::npos) << few.err;
}

}  // namespace
