// `carb data merge` through the binary, on shipped measurements: what it advises for duplicates
// that measured differently is what carb can do with them.
#include <gtest/gtest.h>

#include <string>

#include "cli/cli_run.hpp"

namespace {

using namespace carb_cli_test;
using carb_cli_test::carb;  // the helper, not namespace carb

// Ninety-fourth hostile pass: a merge of two campaigns under different protocols advised `carb data
// combine`, which then refused them for their protocols.
TEST(DataMergeCli, CombineIsAdvisedOnlyForRoundsOfOneProtocol) {
  const std::string data = std::string(CARB_SOURCE_DIR) + "/data/";
  const CliRun two = carb("data merge --out dm_two.csv " + data + "cpu-1t.csv " + data + "extra/cpu-1t-ref.csv", "dm_two");
  ASSERT_EQ(two.status, 0) << two.err;
  EXPECT_NE(two.err.find("of the dropped duplicates measured differently"), std::string::npos) << two.err;
  EXPECT_NE(two.err.find("`carb data combine` takes rounds of one protocol, which these are not"), std::string::npos)
      << two.err;
  EXPECT_EQ(two.err.find("or combine them as rounds"), std::string::npos) << two.err;
  const CliRun rounds = carb("data merge --out dm_rounds.csv " + data + "cpu-2t-round1.csv " + data + "cpu-2t-round2.csv",
                             "dm_rounds");
  ASSERT_EQ(rounds.status, 0) << rounds.err;
  EXPECT_NE(rounds.err.find("or combine them as rounds with `carb data combine`"), std::string::npos) << rounds.err;
}

}  // namespace
