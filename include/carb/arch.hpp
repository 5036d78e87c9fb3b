// Analytic description of a network as JSON (the `carb arch` contract).
#pragma once
#include <nlohmann/json.hpp>

#include "carb/network_spec.hpp"

namespace carb {

/// Keys: config, params, param_bytes, macs, flops (= 2*macs), activation_bytes_total,
/// activation_bytes_max, input_bytes, conv_layers, layers (name, kind, inputs, in_shape,
/// out_shape, params, macs, out_elements).
nlohmann::json spec_to_json(const NetworkSpec& s, bool with_layers = true);
nlohmann::json config_to_json(const Config& c);

}  // namespace carb
