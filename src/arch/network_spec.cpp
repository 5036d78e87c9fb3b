// Builds a NetworkSpec layer by layer following torchvision's ResNet (v1.5: the
// stride of a bottleneck block sits on its 3x3 convolution), with exact parameter,
// MAC and activation counts.
#include "carb/network_spec.hpp"

#include <algorithm>

namespace carb {

std::string to_string(LayerKind k) {
  switch (k) {
    case LayerKind::conv: return "conv";
    case LayerKind::batchnorm: return "batchnorm";
    case LayerKind::relu: return "relu";
    case LayerKind::maxpool: return "maxpool";
    case LayerKind::add: return "add";
    case LayerKind::avgpool: return "avgpool";
    case LayerKind::linear: return "linear";
  }
  return "?";
}

int64_t NetworkSpec::input_bytes() const {
  int64_t n = 1;
  for (auto d : input_shape) n *= d;
  return n * element_bytes(config.precision);
}

namespace {

int64_t elements(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

int64_t window_out(int64_t size, int k, int s, int p) { return (size + 2 * p - k) / s + 1; }

class Builder {
 public:
  explicit Builder(const Config& c) { spec_.config = c; }

  NetworkSpec& spec() { return spec_; }
  const std::vector<int64_t>& shape(int idx) const {
    return idx < 0 ? spec_.input_shape : spec_.layers[idx].out_shape;
  }

  int conv(const std::string& name, int in, int cout, int k, int s, int p) {
    auto is = shape(in);
    std::vector<int64_t> os = {is[0], cout, window_out(is[2], k, s, p), window_out(is[3], k, s, p)};
    Layer l = make(name, LayerKind::conv, {in}, os);
    l.kernel = k, l.stride = s, l.padding = p;
    l.params = int64_t(cout) * is[1] * k * k;
    l.macs = l.out_elements * is[1] * k * k;
    return push(std::move(l));
  }
  int bn(const std::string& name, int in) {
    Layer l = make(name, LayerKind::batchnorm, {in}, shape(in));
    l.params = 2 * shape(in)[1];
    return push(std::move(l));
  }
  int relu(const std::string& name, int in) { return push(make(name, LayerKind::relu, {in}, shape(in))); }
  int maxpool(const std::string& name, int in) {
    auto is = shape(in);
    Layer l = make(name, LayerKind::maxpool, {in},
                   {is[0], is[1], window_out(is[2], 3, 2, 1), window_out(is[3], 3, 2, 1)});
    l.kernel = 3, l.stride = 2, l.padding = 1;
    return push(std::move(l));
  }
  int add(const std::string& name, int a, int b) { return push(make(name, LayerKind::add, {a, b}, shape(a))); }
  int avgpool(int in) { return push(make("avgpool", LayerKind::avgpool, {in}, {shape(in)[0], shape(in)[1]})); }
  int linear(int in, int out) {
    auto is = shape(in);
    Layer l = make("fc", LayerKind::linear, {in}, {is[0], out});
    l.params = is[1] * out + out;
    l.macs = is[0] * is[1] * out;
    return push(std::move(l));
  }

 private:
  Layer make(const std::string& name, LayerKind k, std::vector<int> inputs, std::vector<int64_t> out) {
    Layer l;
    l.name = name, l.kind = k, l.inputs = std::move(inputs);
    l.in_shape = shape(l.inputs[0]);
    l.out_shape = std::move(out);
    l.out_elements = elements(l.out_shape);
    return l;
  }
  int push(Layer l) {
    spec_.layers.push_back(std::move(l));
    return static_cast<int>(spec_.layers.size()) - 1;
  }
  NetworkSpec spec_;
};

int conv_bn(Builder& b, const std::string& p, const std::string& suffix, int in, int cout, int k, int s,
            int pad) {
  int c = b.conv(p + ".conv" + suffix, in, cout, k, s, pad);
  return b.bn(p + ".bn" + suffix, c);
}

// One residual block; returns the index of its output layer.
int block(Builder& b, const std::string& p, int in, Family f, int planes, int stride) {
  const int cin = static_cast<int>(b.shape(in)[1]);
  const int cout = f == Family::basic ? planes : planes * NetworkDefaults::kBottleneckExpansion;
  int x;
  if (f == Family::basic) {
    x = b.relu(p + ".relu1", conv_bn(b, p, "1", in, planes, 3, stride, 1));
    x = conv_bn(b, p, "2", x, planes, 3, 1, 1);
  } else {
    x = b.relu(p + ".relu1", conv_bn(b, p, "1", in, planes, 1, 1, 0));
    x = b.relu(p + ".relu2", conv_bn(b, p, "2", x, planes, 3, stride, 1));
    x = conv_bn(b, p, "3", x, cout, 1, 1, 0);
  }
  int identity = in;
  if (stride != 1 || cin != cout) {
    int d = b.conv(p + ".downsample.0", in, cout, 1, stride, 0);
    identity = b.bn(p + ".downsample.1", d);
  }
  return b.relu(p + ".relu_out", b.add(p + ".add", x, identity));
}

}  // namespace

NetworkSpec build_network_spec(const Config& c) {
  validate(c);
  const auto blocks = stage_blocks(c.family, c.depth);
  Builder b(c);
  b.spec().input_shape = {c.batch, NetworkDefaults::kInputChannels, c.resolution, c.resolution};
  int x = conv_bn(b, "stem", "", -1, scaled_channels(NetworkDefaults::kStemChannels, c.width), 7, 2, 3);
  x = b.maxpool("stem.maxpool", b.relu("stem.relu", x));
  for (int s = 0; s < 4; ++s) {
    const int planes = scaled_channels(NetworkDefaults::kStageChannels[s], c.width);
    for (int i = 0; i < blocks[s]; ++i) {
      const int stride = (s > 0 && i == 0) ? 2 : 1;
      x = block(b, "layer" + std::to_string(s + 1) + "." + std::to_string(i), x, c.family, planes, stride);
    }
  }
  b.linear(b.avgpool(x), NetworkDefaults::kClasses);
  NetworkSpec& spec = b.spec();
  for (const auto& l : spec.layers) {
    spec.params += l.params;
    spec.macs += l.macs;
    spec.act_elements_total += l.out_elements;
    spec.act_elements_max = std::max(spec.act_elements_max, l.out_elements);
    spec.conv_layers += l.kind == LayerKind::conv;
  }
  return spec;
}

}  // namespace carb
