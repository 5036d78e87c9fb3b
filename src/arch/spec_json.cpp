// JSON rendering of configurations and network specs.
#include "carb/arch.hpp"

namespace carb {

nlohmann::json config_to_json(const Config& c) {
  return {{"family", to_string(c.family)}, {"depth", c.depth},           {"width", c.width},
          {"resolution", c.resolution},    {"batch", c.batch},           {"precision", to_string(c.precision)}};
}

nlohmann::json spec_to_json(const NetworkSpec& s, bool with_layers) {
  nlohmann::json j = {{"config", config_to_json(s.config)},
                      {"params", s.params},
                      {"param_bytes", s.param_bytes()},
                      {"macs", s.macs},
                      {"flops", s.flops()},
                      {"activation_bytes_total", s.activation_bytes_total()},
                      {"activation_bytes_max", s.activation_bytes_max()},
                      {"activation_bytes_peak", s.activation_bytes_peak()},
                      {"input_bytes", s.input_bytes()},
                      {"conv_layers", s.conv_layers}};
  if (!with_layers) return j;
  auto& layers = j["layers"] = nlohmann::json::array();
  for (const auto& l : s.layers)
    layers.push_back({{"name", l.name},
                      {"kind", to_string(l.kind)},
                      {"inputs", l.inputs},
                      {"in_shape", l.in_shape},
                      {"out_shape", l.out_shape},
                      {"params", l.params},
                      {"macs", l.macs},
                      {"out_elements", l.out_elements}});
  return j;
}

}  // namespace carb
