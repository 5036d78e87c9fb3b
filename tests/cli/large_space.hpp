// A configuration space large enough that predicting it takes seconds, past the first second's
// silence of a progress line: for tests that signal a command while its model predicts.
#pragma once
#include <filesystem>
#include <fstream>
#include <vector>

#include "carb/dataset.hpp"

namespace carb_cli_test {

/// Writes 200,000 distinct configurations (basic, depths 10-28, widths 0.25-2.5, 32-128 px,
/// batches 1-40, fp32 and fp16) to `csv` as a configurations CSV.
inline void write_large_space(const std::filesystem::path& csv) {
  std::vector<carb::Config> space;
  for (int depth = 10; depth <= 28; depth += 2)
    for (int w = 1; w <= 10; ++w)
      for (int r = 0; r < 25; ++r)
        for (int batch = 1; batch <= 40; ++batch)
          for (carb::Precision p : {carb::Precision::fp32, carb::Precision::fp16})
            space.push_back({carb::Family::basic, depth, 0.25 * w, 32 + 4 * r, batch, p});
  std::ofstream out(csv);
  carb::write_configs_csv(space, out);
}

}  // namespace carb_cli_test
