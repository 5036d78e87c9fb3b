// Row splits: deterministic train/test split, dataset subsets, and which targets a dataset has.
#include <algorithm>
#include <unordered_map>
#include <numeric>
#include <random>

#include "carb/error.hpp"
#include "data/csv.hpp"
#include "carb/model.hpp"

namespace carb {

void split_indices(std::size_t n, double test_fraction, unsigned seed, std::vector<std::size_t>& train,
                   std::vector<std::size_t>& test) {
  if (!(test_fraction >= 0 && test_fraction < 1))
    throw InputError("test fraction must be in [0, 1), got " + std::to_string(test_fraction));
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(idx.begin(), idx.end(), rng);
  const auto n_test = static_cast<std::size_t>(std::llround(test_fraction * static_cast<double>(n)));
  test.assign(idx.begin(), idx.begin() + n_test);
  train.assign(idx.begin() + n_test, idx.end());
  std::sort(test.begin(), test.end());
  std::sort(train.begin(), train.end());
}

Dataset subset(const Dataset& d, const std::vector<std::size_t>& idx) {
  Dataset out;
  out.extra_columns = d.extra_columns;
  out.rows.reserve(idx.size());
  for (auto i : idx) {
    if (i >= d.rows.size())  // seventy-sixth hostile pass: std::out_of_range escaped
      throw InputError("row index " + std::to_string(i) + " is past the dataset's " + std::to_string(d.rows.size()) +
                       " rows");
    out.rows.push_back(d.rows[i]);
  }
  return out;
}

// Seventy-sixth hostile pass: a Dataset built in code reached training and evaluation with what
// the CSV reader refuses (60 copies of one row trained a model; a latency of -3 ms was scored).
void check_learnable_rows(const Dataset& d) {
  std::unordered_map<std::string, std::size_t> first;  // platform + network -> row
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const Record& r = d.rows[i];
    if (r.status != Status::ok) continue;
    const auto what = [&] { return "row " + std::to_string(i + 1) + " (" + r.platform + " " + config_key(r.config) + ")"; };
    const auto [it, fresh] = first.emplace(r.platform + '\n' + network_key(r.config), i);
    if (!fresh)
      throw DataError(what() + " measures the same network as row " + std::to_string(it->second + 1) +
                      ": a dataset holds each configuration once per platform (carb data combine takes the "
                      "median of rounds)");
    for (const ColumnBounds& b : kPlausibleBounds)
      if (const auto v = r.value(b.column); v && !b.contains(*v))
        throw DataError(what() + " has " + b.column + " " + csv::format_number(*v) + ", outside " + b.describe() +
                        ": no measurement");
  }
}

std::vector<std::string> available_targets(const Dataset& d) {
  std::vector<std::string> out;
  const Dataset ok = d.ok_only();
  if (ok.rows.empty()) return out;
  for (const char* t : kTargets)
    if (std::all_of(ok.rows.begin(), ok.rows.end(), [&](const Record& r) { return r.value(t).has_value(); }))
      out.push_back(t);
  return out;
}

}  // namespace carb
