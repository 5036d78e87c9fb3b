// NetworkSpec: the single exact description of a network in the space. Both the
// analytic features and the real LibTorch model are built from it, and a test proves
// they agree layer by layer.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "carb/config.hpp"

namespace carb {

enum class LayerKind { conv, batchnorm, relu, maxpool, add, avgpool, linear };
std::string to_string(LayerKind k);

struct Layer {
  std::string name;  // torchvision-style, e.g. "layer2.0.conv1"
  LayerKind kind = LayerKind::conv;
  std::vector<int> inputs;            // indices of producing layers; -1 = the network input
  std::vector<int64_t> in_shape;      // shape of inputs[0]
  std::vector<int64_t> out_shape;     // NCHW, or NC after avgpool/linear
  int kernel = 0, stride = 1, padding = 0;  // conv and maxpool
  int64_t params = 0;                 // trainable parameters
  int64_t macs = 0;                   // multiply-accumulates for the whole batch
  int64_t out_elements = 0;           // elements of the output tensor
};

struct NetworkSpec {
  Config config;
  std::vector<Layer> layers;
  std::vector<int64_t> input_shape;  // {batch, 3, resolution, resolution}

  int64_t params = 0;
  int64_t macs = 0;                  // convolutions + classifier (as torchvision's published GMACs)
  int64_t act_elements_total = 0;    // sum over layers of output elements
  int64_t act_elements_max = 0;      // largest single layer output
  /// Most layer-output elements alive at once in an inference pass run as the profiler runs it
  /// (SpecNet: an output is freed after its last consumer; a ReLU or an add that is its input's
  /// last consumer works in place), counted when each output is made: what inference holds beside
  /// the weights and the input. The network input is not counted.
  int64_t act_elements_peak = 0;
  int64_t conv_layers = 0;

  double flops() const { return 2.0 * static_cast<double>(macs); }  // FLOPs = 2 x MACs
  int64_t param_bytes() const { return params * element_bytes(config.precision); }
  int64_t input_bytes() const;
  int64_t activation_bytes_total() const { return act_elements_total * element_bytes(config.precision); }
  int64_t activation_bytes_max() const { return act_elements_max * element_bytes(config.precision); }
  int64_t activation_bytes_peak() const { return act_elements_peak * element_bytes(config.precision); }
  /// The least peak memory a forward pass can have, in MB: the weights and the input, which are in
  /// memory throughout it, and the largest layer output, which exists beside them when it is made.
  /// A measured row below it is refused; a prediction below it is raised to it (a log-target model's)
  /// or said to be impossible (a raw-target model's).
  double memory_floor_mb() const {
    return static_cast<double>(param_bytes() + input_bytes() + activation_bytes_max()) / 1e6;
  }
};

/// Network constants (torchvision ResNet defaults).
struct NetworkDefaults {
  static constexpr int kInputChannels = 3;
  static constexpr int kClasses = 1000;
  static constexpr int kStemChannels = 64;
  static constexpr int kStageChannels[4] = {64, 128, 256, 512};
  static constexpr int kBottleneckExpansion = 4;
};

/// Builds the spec; throws InputError when the configuration is invalid.
NetworkSpec build_network_spec(const Config& c);
/// The same totals (params, macs, activations, conv layers, input shape) with an empty layer list:
/// the allocation-free fast path for features and screening. Throws InputError like build_network_spec.
NetworkSpec network_totals(const Config& c);
/// network_totals of `at_batch_1`'s configuration at `batch`, without walking it again: every count
/// but the parameters is per image (the walk multiplies each by the batch), so it scales exactly.
/// `at_batch_1` must be network_totals of a configuration at batch 1; `batch` is validated as a
/// configuration's is.
NetworkSpec totals_at_batch(const NetworkSpec& at_batch_1, int batch);

}  // namespace carb
