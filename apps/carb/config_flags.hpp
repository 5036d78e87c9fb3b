// The single-configuration flags (--family --depth --width --resolution --batch --precision)
// shared by arch, predict and recommend; and the configuration-source flags (--preset | --configs).
#pragma once
#include <optional>
#include <iostream>
#include <string>
#include <vector>

#include "carb/config.hpp"
#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/space.hpp"
#include "carb/text_table.hpp"
#include "cli.hpp"

namespace carb::cli {

struct ConfigFlags {
  std::string family = "basic", precision = "fp32";
  int depth = 18, resolution = 224, batch = 1;
  double width = 1.0;
  std::vector<CLI::Option*> opts;

  void add(CLI::App& app, bool with_batch_precision = true) {
    opts.push_back(app.add_option("--family", family, "basic | bottleneck")->capture_default_str());
    // The ranges carb::validate holds a configuration to (hundred-and-fifteenth hostile pass: a depth
    // of the right form, bottleneck 47, was refused by a range no help named).
    using L = ConfigLimits;
    const auto range = [](auto lo, auto hi) { return " (" + fmt_num(lo) + "-" + fmt_num(hi) + ")"; };
    opts.push_back(app.add_option("--depth", depth,
                                  "network depth: 2 + 2*blocks for basic" + range(L::kMinDepthBasic, L::kMaxDepthBasic) +
                                      ", 2 + 3*blocks for bottleneck" +
                                      range(L::kMinDepthBottleneck, L::kMaxDepthBottleneck) + "; e.g. 18, 34, 50")
                        ->capture_default_str());
    opts.push_back(app.add_option("--width", width, "width multiplier" + range(L::kMinWidth, L::kMaxWidth))
                       ->capture_default_str());
    opts.push_back(app.add_option("--resolution", resolution,
                                  "input resolution, px" + range(L::kMinResolution, L::kMaxResolution))
                       ->capture_default_str());
    if (with_batch_precision) {
      opts.push_back(app.add_option("--batch", batch, "batch size" + range(L::kMinBatch, L::kMaxBatch))->capture_default_str());
      opts.push_back(app.add_option("--precision", precision, "fp32 | fp16 | bf16")->capture_default_str());
    }
  }
  bool any_given() const {
    for (auto* o : opts)
      if (o->count() > 0) return true;
    return false;
  }
  Config config() const {
    Config c{parse_family(family), depth, width, resolution, batch, parse_precision(precision)};
    validate(c);
    return c;
  }
};

/// --preset P | --configs FILE, plus optional --shard k/N.
struct SourceFlags {
  std::string preset, configs, shard_spec;

  void add(CLI::App& app) {
    app.add_option("--preset", preset, "a named configuration space (see `carb space --list`)");
    app.add_option("--configs", configs, "CSV of configurations (family,depth,width,resolution,batch,precision)");
    app.add_option("--shard", shard_spec, "only the k-th of N deterministic shards, as k/N");
  }
  bool given() const { return !preset.empty() || !configs.empty(); }
  std::vector<Config> load() const {
    if (!preset.empty() && !configs.empty()) throw InputError("give either --preset or --configs, not both");
    if (!given()) throw InputError("no configurations: give --preset P or --configs FILE");
    auto all = preset.empty() ? read_configs_csv(configs) : enumerate_preset(preset);
    if (shard_spec.empty()) return all;
    auto part = shard(all, shard_spec);
    // Twenty-eighth hostile pass: a shard past the configurations (9/9 of 8) printed 0 without a word.
    if (part.empty() && !all.empty())
      std::cerr << "note: shard " << printable(shard_spec) << " of " << all.size()
                << " configurations is empty (more shards than configurations)\n";
    return part;
  }
};

}  // namespace carb::cli
