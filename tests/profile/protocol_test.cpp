// Tests of the protocol's identity: options added later (--reference, --keep-memory) appear in the
// protocol and change its id only when on, so stores measured before them keep their ids and resume.
#include <gtest/gtest.h>

#include "carb/profiler.hpp"

namespace carb {
namespace {

TEST(Protocol, LaterOptionsChangeTheIdOnlyWhenOn) {
  const Protocol plain;
  EXPECT_FALSE(plain.to_json().contains("reference"));
  EXPECT_FALSE(plain.to_json().contains("keep_memory"));
  EXPECT_EQ(plain.id(), Protocol{}.id());

  Protocol ref = plain;
  ref.reference = true;
  EXPECT_EQ(ref.to_json()["reference"], config_key(kReferenceConfig));
  Protocol keep = plain;
  keep.keep_memory = true;
  EXPECT_TRUE(keep.to_json()["keep_memory"].get<bool>());
  Protocol both = ref;
  both.keep_memory = true;

  const std::string ids[] = {plain.id(), ref.id(), keep.id(), both.id()};
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j) EXPECT_NE(ids[i], ids[j]) << i << " vs " << j;
}

TEST(Protocol, ReferenceNetworkIsAValidConfiguration) {
  EXPECT_NO_THROW(validate(kReferenceConfig));
  EXPECT_EQ(config_key(kReferenceConfig), "basic-18-w0.5-r64-b1-fp32");
}

}  // namespace
}  // namespace carb
