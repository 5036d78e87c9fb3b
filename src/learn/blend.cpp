// Grid search over the weight simplex. With three learners and step 0.1 that is 66 points,
// each one pass over the rows: cheap next to fitting.
#include "blend.hpp"

#include <cmath>
#include <functional>
#include <limits>

#include "carb/error.hpp"

namespace carb {

std::vector<float> blend(const std::vector<std::vector<float>>& preds, const std::vector<double>& w) {
  std::vector<float> out(preds.empty() ? 0 : preds[0].size(), 0.0f);
  for (std::size_t l = 0; l < preds.size(); ++l)
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += static_cast<float>(w[l] * preds[l][i]);
  return out;
}

std::vector<double> choose_blend_weights(const std::vector<std::vector<float>>& preds, const std::vector<float>& y,
                                         double step) {
  if (preds.empty()) throw InputError("blend: no learners");
  if (!(step > 0 && step <= 1)) throw InputError("blend step must be in (0, 1]");
  const int units = static_cast<int>(std::lround(1.0 / step));
  const std::size_t L = preds.size();
  std::vector<int> k(L, 0);
  std::vector<double> best(L, 0.0), w(L);
  double best_err = std::numeric_limits<double>::infinity();
  // Enumerate compositions of `units` into L non-negative parts.
  std::function<void(std::size_t, int)> rec = [&](std::size_t l, int left) {
    if (l + 1 == L) {
      k[l] = left;
      for (std::size_t j = 0; j < L; ++j) w[j] = static_cast<double>(k[j]) / units;
      double err = 0;
      for (std::size_t i = 0; i < y.size(); ++i) {
        double p = 0;
        for (std::size_t j = 0; j < L; ++j) p += w[j] * preds[j][i];
        err += (p - y[i]) * (p - y[i]);
      }
      if (err < best_err) best_err = err, best = w;  // strict: ties keep the earlier grid point
      return;
    }
    for (int a = left; a >= 0; --a) {
      k[l] = a;
      rec(l + 1, left - a);
    }
  };
  rec(0, units);
  return best;
}

}  // namespace carb
