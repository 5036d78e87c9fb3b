// The named configuration spaces. Each preset documents its axes here and in the README.
#include <algorithm>
#include <sstream>

#include "carb/error.hpp"
#include "carb/network_spec.hpp"
#include "carb/space.hpp"
#include "util/join.hpp"

namespace carb {

namespace {

using P = Precision;

std::vector<Preset> build_presets() {
  std::vector<Preset> all;
  // The paper's ranges: basic depths 8-152, bottleneck 50-200, widths 0.1-4, resolutions 32-128,
  // batches 1-256, fp32 and fp16 (a GPU space).
  const std::vector<double> pw = {0.1, 0.25, 0.5, 1.0, 2.0, 4.0};
  const std::vector<int> pr = {32, 64, 96, 128};
  const std::vector<int> pb = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  all.push_back({"paper",
                 "the paper's ranges (GPU): basic depth 8-152, bottleneck 50-200, width 0.1-4, "
                 "resolution 32-128, batch 1-256, fp32+fp16",
                 {{Family::basic, {8, 18, 34, 50, 102, 152}, pw, pr, pb, {P::fp32, P::fp16}},
                  {Family::bottleneck, {50, 101, 152, 200}, pw, pr, pb, {P::fp32, P::fp16}}}});
  // Screening example of the paper's size (3,072), inside the cpu preset's ranges so that
  // models trained on the shipped CPU data score it without extrapolating far.
  const std::vector<double> sw = {0.25, 0.5, 0.75, 1.0};
  const std::vector<int> sr = {32, 64, 96, 128};
  const std::vector<int> sb = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
  all.push_back({"screen",
                 "3,072 candidates: basic depth 10/18/26/34 and bottleneck 50/59/68/80, width "
                 "0.25-1, resolution 32-128, 12 batch sizes 1-64, fp32+bf16",
                 {{Family::basic, {10, 18, 26, 34}, sw, sr, sb, {P::fp32, P::bf16}},
                  {Family::bottleneck, {50, 59, 68, 80}, sw, sr, sb, {P::fp32, P::bf16}}}});
  // What a 2-core CPU profiles in about an hour: the screen axes, fewer depths and batch sizes,
  // capped at 12 GMACs per batch so that no single configuration takes more than seconds.
  const std::vector<int> cb = {1, 2, 4, 8, 12, 16, 24, 32, 48, 64};
  all.push_back({"cpu",
                 "CPU-profilable: basic depth 10/18/26/34, bottleneck 50/68/80, width 0.25-1, "
                 "resolution 32-128, batch 1-64, fp32+bf16, at most 12 GMACs per batch",
                 {{Family::basic, {10, 18, 26, 34}, sw, sr, cb, {P::fp32, P::bf16}},
                  {Family::bottleneck, {50, 68, 80}, sw, sr, cb, {P::fp32, P::bf16}}},
                 12.0});
  // What people deploy: torchvision's depths at ImageNet-like resolutions (the paper's ranges stop
  // at 128), the widths of wide ResNets, all three precisions. Past every shipped grid on purpose:
  // the GPU campaign measures slices of it to check how predictions hold outside the training grid.
  const std::vector<double> dw = {0.5, 0.75, 1.0, 1.5, 2.0};
  const std::vector<int> dr = {160, 192, 224, 256};
  all.push_back({"deploy",
                 "2,700 deployed shapes: basic depth 18/34, bottleneck 50/101/152, width 0.5-2, "
                 "resolution 160-256, batch 1-256, fp32+fp16+bf16",
                 {{Family::basic, {18, 34}, dw, dr, pb, {P::fp32, P::fp16, P::bf16}},
                  {Family::bottleneck, {50, 101, 152}, dw, dr, pb, {P::fp32, P::fp16, P::bf16}}}});
  // A few seconds of profiling, for smoke tests and trying the tool.
  all.push_back({"tiny",
                 "8 small configurations for smoke tests: basic depth 10, width 0.25, resolution 32, "
                 "batch 1/2/4/8, fp32+bf16",
                 {{Family::basic, {10}, {0.25}, {32}, {1, 2, 4, 8}, {P::fp32, P::bf16}}}});
  return all;
}

}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = build_presets();
  return all;
}

const Preset& find_preset(const std::string& name) {
  for (const auto& p : presets())
    if (p.name == name) return p;
  throw InputError("unknown preset '" + name + "' (known: " + join(presets(), [](const auto& p) { return p.name; }) +
                   ")");
}

std::vector<Config> enumerate(const Preset& p) {
  std::vector<Config> out;
  for (const auto& g : p.grids)
    for (int d : g.depths)
      for (double w : g.widths)
        for (int r : g.resolutions)
          for (int b : g.batches)
            for (P prec : g.precisions) {
              Config c{g.family, d, w, r, b, prec};
              if (p.max_gmacs > 0 && network_totals(c).macs > p.max_gmacs * 1e9) continue;
              out.push_back(c);
            }
  return out;
}

std::vector<Config> enumerate_preset(const std::string& name) { return enumerate(find_preset(name)); }

std::vector<Config> shard(const std::vector<Config>& all, const std::string& spec) {
  int k = 0, n = 0;
  char slash = 0, extra = 0;
  std::istringstream in(spec);
  if (!(in >> k >> slash >> n) || slash != '/' || (in >> extra) || n < 1 || k < 1 || k > n)
    throw InputError("invalid shard '" + spec + "' (expected k/N with 1 <= k <= N, e.g. 2/8)");
  std::vector<Config> out;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (static_cast<int>(i % n) == k - 1) out.push_back(all[i]);
  return out;
}

}  // namespace carb
