// Pareto extraction (minimize every objective). Sorting lexicographically puts every dominator of
// a point before it; if a dominator is itself dominated, some point already on the front dominates
// both (transitivity), so testing each point against the front built so far is exact.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "carb/error.hpp"
#include "carb/screen.hpp"

namespace carb {

namespace {

void check_columns(const std::vector<std::vector<double>>& obj) {
  for (const auto& col : obj) {
    if (col.size() != obj.front().size())
      throw InputError("pareto_front: objective columns differ in length (" + std::to_string(col.size()) +
                       " vs " + std::to_string(obj.front().size()) + ")");
    for (std::size_t i = 0; i < col.size(); ++i)
      if (std::isnan(col[i]))
        throw InputError("pareto_front: point " + std::to_string(i) + " has a NaN objective");
  }
}

// a dominates b: no worse everywhere and strictly better somewhere.
bool dominates(const std::vector<std::vector<double>>& obj, std::size_t a, std::size_t b) {
  bool better = false;
  for (const auto& col : obj) {
    if (col[a] > col[b]) return false;
    if (col[a] < col[b]) better = true;
  }
  return better;
}

}  // namespace

std::vector<std::size_t> pareto_front(const std::vector<std::vector<double>>& obj) {
  if (obj.empty()) throw InputError("pareto_front: no objectives");
  check_columns(obj);
  const std::size_t n = obj.front().size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    for (const auto& col : obj)
      if (col[a] != col[b]) return col[a] < col[b];
    return a < b;
  });
  std::vector<std::size_t> front;
  for (std::size_t i : order) {
    bool dominated = false;
    for (std::size_t f : front)
      if (dominates(obj, f, i)) {
        dominated = true;
        break;
      }
    if (!dominated) front.push_back(i);
  }
  std::sort(front.begin(), front.end());
  return front;
}

}  // namespace carb
