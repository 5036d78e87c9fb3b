// Row splits: deterministic train/test split, dataset subsets, and which targets a dataset has.
#include <array>
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
    // As the reader says of a CSV's (a hostile tester: train made a model of platform '').
    if (r.platform.empty())
      throw DataError("row " + std::to_string(i + 1) + " (" + config_key(r.config) + "): platform is empty");
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
  // A target measured on some ok rows of a platform and not others (a hostile tester: one row without
  // latency made a model of peak memory alone, without a word; the CSV reader refuses such a file).
  // The first such row in the dataset's order is named.
  std::unordered_map<std::string, std::array<std::size_t, kTargets.size()>> with;  // platform -> rows per target
  for (const Record& r : d.rows)
    if (r.status == Status::ok) {
      auto& n = with.try_emplace(r.platform).first->second;
      for (std::size_t t = 0; t < kTargets.size(); ++t) n[t] += r.value(kTargets[t]).has_value();
    }
  for (std::size_t i = 0; i < d.rows.size(); ++i) {
    const Record& r = d.rows[i];
    if (r.status != Status::ok) continue;
    for (std::size_t t = 0; t < kTargets.size(); ++t)
      if (const std::size_t n = with.at(r.platform)[t]; n > 0 && !r.value(kTargets[t]))
        throw DataError("row " + std::to_string(i + 1) + " (" + r.platform + " " + config_key(r.config) + ") has no " +
                        kTargets[t] + ", which " + std::to_string(n) + " other ok rows of '" + r.platform +
                        "' have: measure it on all ok rows or none");
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
