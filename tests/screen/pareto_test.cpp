// Tests of Pareto extraction: hand-made fronts (dominated points removed, exact ties kept,
// one-objective degenerate case), a brute-force cross-check, and invalid input.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "carb/error.hpp"
#include "carb/screen.hpp"

namespace carb {
namespace {

using Points = std::vector<std::vector<double>>;  // row-wise, as people write them

std::vector<std::vector<double>> columns(const Points& rows) {
  std::vector<std::vector<double>> cols(rows.empty() ? 1 : rows.front().size());
  for (const auto& r : rows)
    for (std::size_t k = 0; k < r.size(); ++k) cols[k].push_back(r[k]);
  return cols;
}

struct FrontCase {
  const char* name;
  Points points;
  std::vector<std::size_t> front;
};

TEST(Pareto, HandMadeFronts) {
  const FrontCase cases[] = {
      {"two objectives, one dominated", {{1, 5}, {2, 2}, {3, 3}, {5, 1}}, {0, 1, 3}},
      {"chain: only the best survives", {{3, 3}, {1, 1}, {2, 2}}, {1}},
      {"exact ties are all kept", {{1, 2}, {1, 2}, {2, 1}, {2, 2}}, {0, 1, 2}},
      {"equal in one objective, worse in the other", {{1, 2}, {1, 3}}, {0}},
      {"one objective: every minimum kept", {{4}, {2}, {2}, {3}}, {1, 2}},
      {"one point", {{7, 7, 7}}, {0}},
      {"three objectives, all incomparable", {{1, 2, 3}, {2, 3, 1}, {3, 1, 2}}, {0, 1, 2}},
      {"three objectives, one dominated", {{1, 2, 3}, {2, 3, 1}, {2, 3, 3}, {0, 9, 9}}, {0, 1, 3}},
      {"negative and infinite values",
       {{-1, 5}, {0, -std::numeric_limits<double>::infinity()}, {0, 0}},
       {0, 1}},
  };
  for (const auto& c : cases) EXPECT_EQ(pareto_front(columns(c.points)), c.front) << c.name;
}

TEST(Pareto, NoPointsGivesEmptyFront) { EXPECT_TRUE(pareto_front({{}, {}}).empty()); }

// Brute force straight from the definition, to cross-check the sorted sweep.
std::vector<std::size_t> brute_front(const Points& p) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < p.size() && !dominated; ++j) {
      bool le = true, lt = false;
      for (std::size_t k = 0; k < p[i].size(); ++k)
        le = le && p[j][k] <= p[i][k], lt = lt || p[j][k] < p[i][k];
      dominated = le && lt;
    }
    if (!dominated) out.push_back(i);
  }
  return out;
}

TEST(Pareto, AgreesWithBruteForceOnRandomPoints) {
  std::mt19937 g(7);
  for (std::size_t dims : {1, 2, 3, 4}) {
    Points p(300, std::vector<double>(dims));
    // Few distinct values, so ties and partial ties are frequent.
    for (auto& row : p)
      for (auto& v : row) v = static_cast<double>(g() % 12);
    EXPECT_EQ(pareto_front(columns(p)), brute_front(p)) << dims << " objectives";
  }
}

TEST(Pareto, RejectsInvalidInput) {
  EXPECT_THROW(pareto_front({}), InputError);
  EXPECT_THROW(pareto_front({{1, 2, 3}, {1, 2}}), InputError);
  EXPECT_THROW(pareto_front({{1, std::numeric_limits<double>::quiet_NaN()}}), InputError);
}

}  // namespace
}  // namespace carb
