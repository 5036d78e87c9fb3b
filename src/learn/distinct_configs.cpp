#include "distinct_configs.hpp"

#include <bit>
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "carb/error.hpp"

namespace carb {
namespace {

struct Key {
  Config config;
  std::optional<double> sm, mem;
  bool operator==(const Key&) const = default;
};

struct KeyHash {
  static std::uint64_t mix(std::uint64_t h, std::uint64_t v) {  // boost's hash_combine, on 64 bits
    return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  }
  static std::uint64_t bits(double v) { return std::bit_cast<std::uint64_t>(v == 0 ? 0.0 : v); }  // -0 == 0
  static std::uint64_t reading(const std::optional<double>& v) { return v ? bits(*v) : 0x7ff8dead0000beefull; }
  std::size_t operator()(const Key& k) const {
    const Config& c = k.config;
    std::uint64_t h = 0;
    h = mix(h, static_cast<std::uint64_t>(c.family) << 8 | static_cast<std::uint64_t>(c.precision));
    h = mix(h, static_cast<std::uint32_t>(c.depth));
    h = mix(h, bits(c.width));
    h = mix(h, static_cast<std::uint32_t>(c.resolution));
    h = mix(h, static_cast<std::uint32_t>(c.batch));
    h = mix(h, reading(k.sm));
    h = mix(h, reading(k.mem));
    return static_cast<std::size_t>(h ^ (h >> 32));
  }
};

}  // namespace

DistinctConfigs distinct_configs(const std::vector<Config>& cs, const std::vector<Telemetry>& tel) {
  if (!tel.empty() && tel.size() != cs.size())
    throw InputError("telemetry for " + std::to_string(tel.size()) + " configurations, but " +
                     std::to_string(cs.size()) + " configurations: give one per configuration, or none");
  DistinctConfigs out;
  out.index.reserve(cs.size());
  std::unordered_map<Key, std::size_t, KeyHash> seen;
  seen.reserve(cs.size());
  for (std::size_t i = 0; i < cs.size(); ++i) {
    Key k{cs[i], {}, {}};
    if (!tel.empty()) k.sm = tel[i].avg_sm_util, k.mem = tel[i].avg_mem_util;
    const auto [it, fresh] = seen.emplace(k, out.configs.size());
    if (fresh) {
      out.configs.push_back(cs[i]);
      if (!tel.empty()) out.tel.push_back(tel[i]);
    }
    out.index.push_back(it->second);
  }
  return out;
}

}  // namespace carb
