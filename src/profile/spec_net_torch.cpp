// The LibTorch model built from a NetworkSpec; initialised like torchvision's ResNet
// (Kaiming-normal fan-out convolutions, BatchNorm weight 1 and bias 0) so activations
// keep their scale through deep networks (no denormal slow paths when profiling).
#include "spec_net.hpp"

namespace carb {

torch::ScalarType to_dtype(Precision p) {
  switch (p) {
    case Precision::fp32: return torch::kFloat32;
    case Precision::fp16: return torch::kFloat16;
    case Precision::bf16: return torch::kBFloat16;
  }
  return torch::kFloat32;
}

SpecNetImpl::SpecNetImpl(const NetworkSpec& spec) : spec_(spec) {
  total_uses_.assign(spec.layers.size(), 0);
  for (std::size_t i = 0; i < spec.layers.size(); ++i) {
    const Layer& l = spec.layers[i];
    for (int in : l.inputs)
      if (in >= 0) ++total_uses_[in];
    const std::string name = "l" + std::to_string(i);
    switch (l.kind) {
      case LayerKind::conv: {
        auto opts = torch::nn::Conv2dOptions(l.in_shape[1], l.out_shape[1], l.kernel)
                        .stride(l.stride).padding(l.padding).bias(false);
        auto m = register_module(name, torch::nn::Conv2d(opts));
        torch::nn::init::kaiming_normal_(m->weight, 0.0, torch::kFanOut, torch::kReLU);
        module_index_.push_back(static_cast<int>(convs_.size()));
        convs_.push_back(m);
        break;
      }
      case LayerKind::batchnorm:
        module_index_.push_back(static_cast<int>(bns_.size()));
        bns_.push_back(register_module(name, torch::nn::BatchNorm2d(l.out_shape[1])));
        break;
      case LayerKind::linear:
        module_index_.push_back(static_cast<int>(linears_.size()));
        linears_.push_back(register_module(name, torch::nn::Linear(l.in_shape[1], l.out_shape[1])));
        break;
      default:
        module_index_.push_back(-1);
    }
  }
}

torch::Tensor SpecNetImpl::apply(std::size_t i, std::vector<torch::Tensor>& outs, const torch::Tensor& input,
                                 const std::vector<int>& uses_left) {
  const Layer& l = spec_.layers[i];
  auto in = [&](int k) { return l.inputs[k] < 0 ? input : outs[l.inputs[k]]; };
  // In place only when this layer is the input's last consumer (as torchvision's inplace ReLU / +=).
  auto last_use = [&](int k) { return l.inputs[k] >= 0 && uses_left[l.inputs[k]] == 1; };
  switch (l.kind) {
    case LayerKind::conv: return convs_[module_index_[i]]->forward(in(0));
    case LayerKind::batchnorm: return bns_[module_index_[i]]->forward(in(0));
    case LayerKind::relu: {
      torch::Tensor t = in(0);
      return last_use(0) ? t.relu_() : torch::relu(t);
    }
    case LayerKind::maxpool: return torch::max_pool2d(in(0), l.kernel, l.stride, l.padding);
    case LayerKind::add: return last_use(0) ? in(0).add_(in(1)) : in(0) + in(1);
    case LayerKind::avgpool: return in(0).mean({2, 3});
    case LayerKind::linear: return linears_[module_index_[i]]->forward(in(0));
  }
  return {};
}

torch::Tensor SpecNetImpl::run(const torch::Tensor& x, std::vector<std::vector<int64_t>>* shapes) {
  std::vector<torch::Tensor> outs(spec_.layers.size());
  std::vector<int> uses_left = total_uses_;
  torch::Tensor last;
  for (std::size_t i = 0; i < spec_.layers.size(); ++i) {
    torch::Tensor y = apply(i, outs, x, uses_left);
    if (shapes) shapes->push_back(y.sizes().vec());
    for (int in : spec_.layers[i].inputs)
      if (in >= 0 && --uses_left[in] == 0) outs[in] = torch::Tensor();  // release after last use
    if (total_uses_[i] > 0) outs[i] = y;
    last = y;
  }
  return last;
}

torch::Tensor SpecNetImpl::forward(const torch::Tensor& x) { return run(x, nullptr); }

std::vector<std::vector<int64_t>> SpecNetImpl::layer_shapes(const torch::Tensor& x) {
  std::vector<std::vector<int64_t>> shapes;
  run(x, &shapes);
  return shapes;
}

int64_t SpecNetImpl::parameter_count() const {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

void SpecNetImpl::train_with_frozen_batchnorm() {
  train();
  for (auto& bn : bns_) bn->eval();
}

void train_step(SpecNet& net, const torch::Tensor& x) { net->forward(x).to(torch::kFloat32).sum().backward(); }

bool first_train_step(SpecNet& net, const torch::Tensor& x) {
  try {
    train_step(net, x);
    return false;
  } catch (const c10::Error& e) {
    if (std::string(e.what()).find("Expected more than 1 value per channel when training") == std::string::npos) throw;
  }
  net->train_with_frozen_batchnorm();
  train_step(net, x);
  return true;
}

}  // namespace carb
