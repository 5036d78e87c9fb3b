// Tests of the dominance search: bounded, in its tree and by scanning every configuration, it gives the row
// that comparing every pair of rows gives (the rule as check_dominance stated it before the tree).
#include "data/dominance.hpp"

#include <gtest/gtest.h>

#include <random>

#include "carb/config.hpp"

namespace carb {
namespace {

// The rule, pair by pair: the reference every search is held to.
std::vector<std::optional<std::size_t>> by_pairs(const Dataset& d, const std::vector<DominanceRow>& rows,
                                                 std::string_view target, double least) {
  const bool memory = target == "peak_memory_mb";
  std::vector<std::optional<std::size_t>> out;
  for (const DominanceRow& a : rows) {
    const Config& ca = d.rows[a.i].config;
    const auto va = d.rows[a.i].value(target);
    std::optional<std::size_t> worst;
    double worst_value = 0;
    if (va && *va > 0 && (!memory || a.cpu))
      for (const DominanceRow& b : rows) {
        const Config& cb = d.rows[b.i].config;
        if (a.i == b.i || !(ca.depth >= cb.depth && ca.width >= cb.width && ca.resolution >= cb.resolution &&
                            ca.batch >= cb.batch))
          continue;
        Config one_a = ca, one_b = cb;
        one_a.batch = one_b.batch = 1;
        const bool same = network_key(one_a) == network_key(one_b);  // widths of the same channels too
        if (same ? !memory || ca.batch == cb.batch : !memory && a.flops < kMinFlopsOverDominated * b.flops) continue;
        const auto vb = d.rows[b.i].value(target);
        if (vb && *vb > worst_value) worst = b.i, worst_value = *vb;
      }
    out.push_back(worst && *va < least * worst_value ? worst : std::nullopt);
  }
  return out;
}

struct Group {
  Dataset d;
  std::vector<DominanceRow> rows;
};

// Random rows of one family and precision on a grid of `per_axis` values a dimension: values with
// ties (rounded to few levels), empty cells, duplicates, rows without a value, widths that build the
// same channels as another (0.501 and 0.5: one network), and a FLOPs count that grows with every
// dimension, so the FLOPs rule, the ties and the network identity are all exercised.
Group random_group(std::mt19937& rng, int n, int per_axis) {
  Group g;
  std::uniform_int_distribution<int> axis(0, per_axis - 1), level(0, 6), coin(0, 9);
  for (int k = 0; k < n; ++k) {
    Record r;
    r.platform = "p";
    r.config = {Family::basic, 10 + 8 * axis(rng), 0.25 * (1 + axis(rng)) + (coin(rng) == 0 ? 0.001 : 0.0),
                32 * (1 + axis(rng)), 1 << axis(rng), Precision::fp32};
    const Config& c = r.config;
    const double flops = c.depth * c.width * c.width * c.resolution * c.resolution * c.batch;
    for (const char* t : {"latency_ms", "energy_j", "peak_memory_mb"})
      if (coin(rng) > 0) r.set_value(t, coin(rng) == 1 ? 0.0 : std::pow(2.0, level(rng)));
    g.rows.push_back({g.d.rows.size(), flops, coin(rng) > 2});
    g.d.rows.push_back(r);
  }
  return g;
}

TEST(Dominance, EverySearchFindsTheRowThePairsFind) {
  std::mt19937 rng(7);
  int held = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const Group g = random_group(rng, 20 + trial * 5, 2 + trial % 5 + (trial % 7 == 0 ? 12 : 0));
    for (const char* t : {"latency_ms", "energy_j", "peak_memory_mb"})
      for (const double least : {0.3, 0.8, 1.0, 4.0}) {
        const auto want = by_pairs(g.d, g.rows, t, least);
        for (const DominanceSearch how : {DominanceSearch::automatic, DominanceSearch::tree, DominanceSearch::cells})
          ASSERT_EQ(costliest_outdone(g.d, g.rows, t, least, how), want)
              << "trial " << trial << " " << t << " least " << least << " way " << static_cast<int>(how);
        for (const auto& w : want) held += w.has_value();
      }
  }
  EXPECT_GT(held, 1000) << "the random groups must hold many rows to others for the comparison to mean anything";
}

TEST(Dominance, TheEarliestOfEqualCostliestRowsIsNamed) {
  // Row 4 outdoes rows 0 to 3, each another network with under a quarter of its FLOPs; rows 1 and 3
  // tie as the costliest of them.
  Dataset d;
  const auto row = [&](int depth, int res, double latency) {
    Record r;
    r.platform = "p";
    r.config = {Family::basic, depth, 1.0, res, 1, Precision::fp32};
    r.latency_ms = latency;
    d.rows.push_back(r);
  };
  row(18, 32, 1);
  row(10, 64, 5);
  row(18, 64, 3);
  row(10, 32, 5);
  row(34, 128, 1);
  std::vector<DominanceRow> rows;
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const Config& c = d.rows[i].config;
    rows.push_back({i, static_cast<double>(c.depth) * c.resolution * c.resolution, false});
  }
  const auto got = costliest_outdone(d, rows, "latency_ms", kMinCostOverDominated);
  ASSERT_EQ(got, by_pairs(d, rows, "latency_ms", kMinCostOverDominated));
  ASSERT_TRUE(got[4].has_value()) << "1 ms is under 0.3x the 5 ms of rows it outdoes";
  EXPECT_EQ(*got[4], 1u) << "rows 1 and 3 both cost 5: the earlier is named";
  EXPECT_FALSE(got[0].has_value()) << "row 0 outdoes nothing";
  // At 0.2x, 1 ms against 5 ms is no problem: nothing is named.
  EXPECT_FALSE(costliest_outdone(d, rows, "latency_ms", 0.2)[4].has_value());
}

}  // namespace
}  // namespace carb
