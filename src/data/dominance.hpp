// Which row each row of one group (platform, protocol, family, precision) is held to by the
// dominance rule of `carb data validate` (kMinFlopsOverDominated and its neighbours in
// carb/dataset.hpp): the costliest row it outdoes in every dimension. Found in a tree of the group's
// configurations rather than by comparing every pair of rows (74 s for 135,000 rows in the
// hundred-and-third hostile pass).
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "carb/dataset.hpp"

namespace carb {

/// One ok row of a group: its index in the dataset, its FLOPs and whether a CPU measured it.
struct DominanceRow {
  std::size_t i;
  double flops;
  bool cpu;
};

/// How the outdone rows of each row are searched; every way gives the same answer (tested).
/// `automatic` first bounds what each row can be held to by the largest value at or below its
/// configuration (a sweep with a Fenwick tree of maxima) and passes the rows that bound clears (nearly
/// all, in sound data); the rest, and every row under `tree`, search a k-d tree of the group's
/// configurations whose nodes know their largest value; `cells` scans every configuration of the
/// group, as the pairs were compared before.
enum class DominanceSearch { automatic, tree, cells };

/// For each row of `rows` (same order) that costs under `least` times the row it is held to for
/// `target`, the index of that row in `d.rows`; nothing for the others. A row is held to the one it
/// outdoes (depth, width, resolution and batch each at least as large) of the largest positive value,
/// the earliest of equals. For latency and energy a row of its own network is not held to (that is the
/// batch rule's), nor a network with more than 1 / kMinFlopsOverDominated of its FLOPs; for peak
/// memory only a CPU row is held, to any other network or another batch of its own. A row without a
/// positive value is held to nothing.
std::vector<std::optional<std::size_t>> costliest_outdone(const Dataset& d, const std::vector<DominanceRow>& rows,
                                                          std::string_view target, double least,
                                                          DominanceSearch how = DominanceSearch::automatic);

}  // namespace carb
