// One file given twice among inputs meant to be different (repeated_files.hpp).
#include "util/repeated_files.hpp"

#include <system_error>

#include "carb/error.hpp"

namespace carb::detail {

void refuse_repeated_files(const std::vector<std::filesystem::path>& files, const std::string& what) {
  for (std::size_t i = 0; i < files.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (std::error_code ec; files[i] == files[j] || (std::filesystem::equivalent(files[i], files[j], ec) && !ec))
        throw InputError((what.empty() ? "" : what + " ") + files[i].string() + " is given twice (also as " +
                         files[j].string() + "): give each once");
}

}  // namespace carb::detail
