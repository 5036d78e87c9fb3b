// SpecNet: a LibTorch module built from a NetworkSpec, layer for layer. Internal header:
// include it only from *_torch.cpp files (LibTorch headers are expensive to compile).
#pragma once
#include <torch/torch.h>

#include "carb/network_spec.hpp"

namespace carb {

class SpecNetImpl : public torch::nn::Module {
 public:
  explicit SpecNetImpl(const NetworkSpec& spec);
  /// Inference forward pass. Intermediate outputs are released after their last use and
  /// ReLU/add run in place where torchvision's ResNet does, so memory behaves like it.
  torch::Tensor forward(const torch::Tensor& x);
  /// Runs a forward pass and returns every layer's output shape, in spec order.
  std::vector<std::vector<int64_t>> layer_shapes(const torch::Tensor& x);
  int64_t parameter_count() const;
  /// Training mode for every layer but BatchNorm, which runs on its running statistics.
  void train_with_frozen_batchnorm();

 private:
  torch::Tensor run(const torch::Tensor& x, std::vector<std::vector<int64_t>>* shapes);
  torch::Tensor apply(std::size_t i, std::vector<torch::Tensor>& outs, const torch::Tensor& input,
                      const std::vector<int>& uses_left);

  NetworkSpec spec_;
  std::vector<torch::nn::Conv2d> convs_;
  std::vector<torch::nn::BatchNorm2d> bns_;
  std::vector<torch::nn::Linear> linears_;
  std::vector<int> module_index_;  // per layer: index into convs_/bns_/linears_, or -1
  std::vector<int> total_uses_;    // per layer: number of consumers
};
TORCH_MODULE(SpecNet);

/// One training step: forward, sum of the outputs, backward (gradients accumulate in the net).
void train_step(SpecNet& net, const torch::Tensor& x);

/// The first training step of a net in training mode. Training-mode BatchNorm refuses a batch
/// with one value per channel (batch 1 where the last feature map is 1x1); then BatchNorm is
/// frozen (train_with_frozen_batchnorm) and the step retried. Returns whether that happened.
bool first_train_step(SpecNet& net, const torch::Tensor& x);

/// LibTorch dtype of a precision.
torch::ScalarType to_dtype(Precision p);

}  // namespace carb
