// Configuration spaces: named presets (grids over the six knobs) and their enumeration.
#pragma once
#include <string>
#include <vector>

#include "carb/config.hpp"

namespace carb {

/// A grid over the knobs, per family; optionally capped by analytic GMACs per batch.
struct Grid {
  Family family;
  std::vector<int> depths;
  std::vector<double> widths;
  std::vector<int> resolutions;
  std::vector<int> batches;
  std::vector<Precision> precisions;
};

struct Preset {
  std::string name;
  std::string description;
  std::vector<Grid> grids;
  double max_gmacs = 0;  // 0 = no cap; otherwise drop configurations above this many GMACs per batch
};

/// All presets, in listing order.
const std::vector<Preset>& presets();
/// The preset by name; throws InputError naming the known presets.
const Preset& find_preset(const std::string& name);
/// Every configuration of the preset, in a deterministic order.
std::vector<Config> enumerate(const Preset& p);
std::vector<Config> enumerate_preset(const std::string& name);

/// Parses "k/N" (1 <= k <= N) and keeps the configurations whose index i satisfies i % N == k-1.
/// Deterministic, so a fleet of N jobs covers the space exactly once. Throws InputError.
std::vector<Config> shard(const std::vector<Config>& all, const std::string& spec);

}  // namespace carb
