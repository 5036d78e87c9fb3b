// Test helper: edits a bundle's manifest as a carb that wrote it that way would have, the checksum
// recomputed, so that what loading sees is the edit itself and not a damaged file.
#pragma once
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "util/fnv.hpp"

namespace carb {

template <class F>
void rewrite_manifest(const std::filesystem::path& dir, F&& edit) {
  nlohmann::json man;
  {
    std::ifstream in(dir / "manifest.json");
    man = nlohmann::json::parse(in);
  }
  man.erase("manifest_fnv1a64");
  edit(man);
  const std::string body = man.dump();
  man["manifest_fnv1a64"] =
      detail::hex64(detail::fnv1a64(reinterpret_cast<const unsigned char*>(body.data()), body.size()));
  std::ofstream(dir / "manifest.json") << man.dump(1);
}

}  // namespace carb
