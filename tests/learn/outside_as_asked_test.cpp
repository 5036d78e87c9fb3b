// Where a configuration lies outside the trained ranges is said with the width it was asked at
// (ninety-third hostile pass: `screen` said "width 0.0977 < 0.25 trained" of a row showing 0.1).
#include "learn/outside_as_asked.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "analysis/synthetic_datasets.hpp"

namespace carb {
namespace {

std::string number(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

TEST(OutsideAsAsked, AWidthIsSaidAsAskedAndAsBuilt) {
  const CarbModel& m = testing::synthetic_source_model();  // basic, widths 0.5 and 1
  const Config asked{Family::basic, 10, 0.1, 32, 1, Precision::fp32};
  const double built = m.as_trained(asked).width;
  ASSERT_NE(built, 0.1);  // 0.1 builds the channels of another width
  const std::string want = "width 0.1 (" + number(built) + " as built) < 0.5 trained";
  const auto x = outside_as_asked(m, asked);
  ASSERT_FALSE(x.empty());
  EXPECT_EQ(x.front().text, want);
  EXPECT_EQ(x.front().dimension, "width");
  // As predict says it.
  EXPECT_EQ(m.predict({asked}).front().outside.front().text, want);
  // A width asked as it builds, and every other dimension, read as before.
  const Config exact{Family::basic, 10, built, 32, 1, Precision::fp32};
  EXPECT_EQ(outside_as_asked(m, exact).front().text, "width " + number(built) + " < 0.5 trained");
  const Config wide{Family::basic, 10, 0.5, 512, 1, Precision::fp32};
  EXPECT_EQ(outside_as_asked(m, wide).front().text.rfind("resolution 512 > 64 trained", 0), 0u);
}

}  // namespace
}  // namespace carb
