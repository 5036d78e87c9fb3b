// Tests of the library's plugin loader (carb/plugin.hpp): a wrong file is refused with its name
// and reason; the real plugin registers the profiler backends.
#include "carb/plugin.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "carb/error.hpp"
#include "carb/profiler.hpp"

namespace carb {
namespace {

std::string error_of(const std::filesystem::path& p) {
  try {
    load_profiler_backends(p);
  } catch (const MeasureError& e) {
    return e.what();
  }
  return "";
}

#ifdef CARB_TEST_PLUGIN

// One test, in this order: once a plugin is loaded, later calls return at once.
TEST(Plugin, WrongFilesAreRefusedThenTheRealPluginRegistersTheBackends) {
  EXPECT_EQ(error_of("/no/such/libcarb_torch.so"),
            "the LibTorch profiler plugin is missing (/no/such/libcarb_torch.so: not found); rebuild carb, or set "
            "CARB_TORCH_PLUGIN");
  EXPECT_NE(error_of(CARB_TEST_CORE).find("is not carb's LibTorch plugin"), std::string::npos);
  const auto names = backend_names();
  EXPECT_EQ(std::count(names.begin(), names.end(), "cpu"), 0);
  load_profiler_backends(CARB_TEST_PLUGIN);
  const auto after = backend_names();
  EXPECT_EQ(std::count(after.begin(), after.end(), "cpu"), 1);
  EXPECT_NO_THROW(load_profiler_backends());  // loaded: returns at once
}

#else

TEST(Plugin, WithoutLibTorchProfilingIsRefusedClearly) {
  EXPECT_NE(error_of({}).find("built without LibTorch"), std::string::npos);
}

#endif

}  // namespace
}  // namespace carb
