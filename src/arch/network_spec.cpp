// Builds a NetworkSpec layer by layer following torchvision's ResNet (v1.5: the
// stride of a bottleneck block sits on its 3x3 convolution), with exact parameter,
// MAC and activation counts.
#include "carb/network_spec.hpp"

#include <algorithm>
#include <initializer_list>
#include <stdexcept>

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

// A layer's name without building a string: "stem" + leaf, "layer<stage+1>.<block>" + leaf, or leaf
// alone (avgpool, fc). Only the Builder, which keeps names, ever formats one.
struct Name {
  int stage;  // -1 stem, -2 top level, else 0..3
  int block;
  const char* leaf;
  std::string str() const {
    if (stage == -2) return leaf;
    if (stage == -1) return std::string("stem") + leaf;
    return "layer" + std::to_string(stage + 1) + "." + std::to_string(block) + leaf;
  }
};

// Records every layer (names, shapes, per-layer counts): the full NetworkSpec.
class Builder {
 public:
  using Ref = int;  // index of the producing layer; -1 = the network input
  explicit Builder(const Config& c) { spec_.config = c; }

  NetworkSpec& spec() { return spec_; }
  Ref input() const { return -1; }
  int64_t channels(Ref r) const { return shape(r)[1]; }

  Ref conv(Name name, Ref in, int cout, int k, int s, int p) {
    auto is = shape(in);
    std::vector<int64_t> os = {is[0], cout, window_out(is[2], k, s, p), window_out(is[3], k, s, p)};
    Layer l = make(name, LayerKind::conv, {in}, os);
    l.kernel = k, l.stride = s, l.padding = p;
    l.params = int64_t(cout) * is[1] * k * k;
    l.macs = l.out_elements * is[1] * k * k;
    return push(std::move(l));
  }
  Ref bn(Name name, Ref in) {
    Layer l = make(name, LayerKind::batchnorm, {in}, shape(in));
    l.params = 2 * shape(in)[1];
    return push(std::move(l));
  }
  Ref relu(Name name, Ref in) { return push(make(name, LayerKind::relu, {in}, shape(in))); }
  Ref maxpool(Name name, Ref in) {
    auto is = shape(in);
    Layer l = make(name, LayerKind::maxpool, {in},
                   {is[0], is[1], window_out(is[2], 3, 2, 1), window_out(is[3], 3, 2, 1)});
    l.kernel = 3, l.stride = 2, l.padding = 1;
    return push(std::move(l));
  }
  Ref add(Name name, Ref a, Ref b) { return push(make(name, LayerKind::add, {a, b}, shape(a))); }
  Ref avgpool(Name name, Ref in) {
    return push(make(name, LayerKind::avgpool, {in}, {shape(in)[0], shape(in)[1]}));
  }
  Ref linear(Name name, Ref in, int out) {
    auto is = shape(in);
    Layer l = make(name, LayerKind::linear, {in}, {is[0], out});
    l.params = is[1] * out + out;
    l.macs = is[0] * is[1] * out;
    return push(std::move(l));
  }

  void share(Ref) {}  // the layer list knows every consumer already

  void finish() {
    for (const auto& l : spec_.layers) {
      spec_.params += l.params;
      spec_.macs += l.macs;
      spec_.act_elements_total += l.out_elements;
      spec_.act_elements_max = std::max(spec_.act_elements_max, l.out_elements);
      spec_.conv_layers += l.kind == LayerKind::conv;
    }
    spec_.act_elements_peak = peak_live_elements(spec_.layers);
  }

  // The liveness of SpecNetImpl::run, on the layer list.
  static int64_t peak_live_elements(const std::vector<Layer>& layers) {
    std::vector<int> uses(layers.size(), 0);
    for (const auto& l : layers)
      for (int in : l.inputs)
        if (in >= 0) ++uses[in];
    std::vector<int> left = uses;
    int64_t live = 0, peak = 0;
    for (std::size_t i = 0; i < layers.size(); ++i) {
      const Layer& l = layers[i];
      const int first = l.inputs.front();
      const bool in_place = (l.kind == LayerKind::relu || l.kind == LayerKind::add) && first >= 0 && left[first] == 1;
      if (!in_place) live += l.out_elements;
      peak = std::max(peak, live);
      for (int in : l.inputs)
        if (in >= 0 && --left[in] == 0) live -= layers[in].out_elements;  // in place: the output takes its storage
      if (in_place) live += l.out_elements;
      if (uses[i] == 0) live -= l.out_elements;  // nothing consumes it (the classifier's output)
    }
    return peak;
  }

 private:
  const std::vector<int64_t>& shape(Ref idx) const {
    return idx < 0 ? spec_.input_shape : spec_.layers[idx].out_shape;
  }
  Layer make(Name name, LayerKind k, std::vector<int> inputs, std::vector<int64_t> out) {
    Layer l;
    l.name = name.str(), l.kind = k, l.inputs = std::move(inputs);
    l.in_shape = shape(l.inputs[0]);
    l.out_shape = std::move(out);
    l.out_elements = elements(l.out_shape);
    return l;
  }
  Ref push(Layer l) {
    spec_.layers.push_back(std::move(l));
    return static_cast<int>(spec_.layers.size()) - 1;
  }
  NetworkSpec spec_;
};

// Keeps only the running totals and the current tensor shapes: no names, no layer list, no heap.
// Liveness: each output has one consumer unless the walk says share() (a block input feeds its first
// convolution and its shortcut), and a small table holds the outputs still waiting for one.
class Counter {
 public:
  struct Ref {
    int64_t n, c, h, w;  // h = w = 1 after avgpool / linear
    int slot = -1;       // in the live table; -1 = the network input
    int64_t elements() const { return n * c * h * w; }
  };
  explicit Counter(const Config& c) { spec_.config = c; }

  NetworkSpec& spec() { return spec_; }
  Ref input() const {
    const auto& s = spec_.input_shape;
    return {s[0], s[1], s[2], s[3]};
  }
  int64_t channels(Ref r) const { return r.c; }

  Ref conv(Name, Ref in, int cout, int k, int s, int p) {
    Ref o{in.n, cout, window_out(in.h, k, s, p), window_out(in.w, k, s, p)};
    spec_.params += int64_t(cout) * in.c * k * k;
    spec_.macs += o.elements() * in.c * k * k;
    spec_.conv_layers += 1;
    return out(o, {in});
  }
  Ref bn(Name, Ref in) {
    spec_.params += 2 * in.c;
    return out(in, {in});
  }
  Ref relu(Name, Ref in) { return out(in, {in}, true); }
  Ref maxpool(Name, Ref in) {
    return out({in.n, in.c, window_out(in.h, 3, 2, 1), window_out(in.w, 3, 2, 1)}, {in});
  }
  Ref add(Name, Ref a, Ref b) { return out(a, {a, b}, true); }
  Ref avgpool(Name, Ref in) { return out({in.n, in.c, 1, 1}, {in}); }
  Ref linear(Name, Ref in, int classes) {
    spec_.params += in.c * classes + classes;
    spec_.macs += in.n * in.c * classes;
    return out({in.n, classes, 1, 1}, {in});
  }
  void share(Ref r) {
    if (r.slot >= 0) ++table_[r.slot].uses;
  }
  void finish() {}

 private:
  struct Live {
    int64_t elements = 0;
    int uses = 0;  // consumers still to come; 0 = a free slot
  };
  static constexpr int kSlots = 8;  // a block holds at most its input, two outputs and a shortcut

  // Makes an output from `inputs` (a ReLU or an add works in place when it is its first input's last
  // consumer), as SpecNetImpl::run does.
  Ref out(Ref o, std::initializer_list<Ref> inputs, bool may_work_in_place = false) {
    const int64_t e = o.elements();
    spec_.act_elements_total += e;
    spec_.act_elements_max = std::max(spec_.act_elements_max, e);
    const Ref& first = *inputs.begin();
    const bool in_place = may_work_in_place && first.slot >= 0 && table_[first.slot].uses == 1;
    if (!in_place) live_ += e;
    spec_.act_elements_peak = std::max(spec_.act_elements_peak, live_);
    for (const Ref& in : inputs)
      if (in.slot >= 0 && --table_[in.slot].uses == 0) live_ -= table_[in.slot].elements;
    if (in_place) live_ += e;
    for (o.slot = 0; o.slot < kSlots && table_[o.slot].uses > 0; ++o.slot) {
    }
    if (o.slot == kSlots) throw std::logic_error("network_totals: more live tensors than its table holds");
    table_[o.slot] = {e, 1};
    return o;
  }
  NetworkSpec spec_;
  Live table_[kSlots];
  int64_t live_ = 0;
};

template <class Net>
typename Net::Ref conv_bn(Net& b, int stage, int blk, const char* conv, const char* bn, typename Net::Ref in,
                          int cout, int k, int s, int pad) {
  return b.bn({stage, blk, bn}, b.conv({stage, blk, conv}, in, cout, k, s, pad));
}

// One residual block; returns its output.
template <class Net>
typename Net::Ref block(Net& b, int stage, int blk, typename Net::Ref in, Family f, int planes, int stride) {
  const int64_t cin = b.channels(in);
  const int cout = f == Family::basic ? planes : planes * NetworkDefaults::kBottleneckExpansion;
  b.share(in);  // the block input feeds the main path and, after it, the shortcut (or the add)
  typename Net::Ref x;
  if (f == Family::basic) {
    x = b.relu({stage, blk, ".relu1"}, conv_bn(b, stage, blk, ".conv1", ".bn1", in, planes, 3, stride, 1));
    x = conv_bn(b, stage, blk, ".conv2", ".bn2", x, planes, 3, 1, 1);
  } else {
    x = b.relu({stage, blk, ".relu1"}, conv_bn(b, stage, blk, ".conv1", ".bn1", in, planes, 1, 1, 0));
    x = b.relu({stage, blk, ".relu2"}, conv_bn(b, stage, blk, ".conv2", ".bn2", x, planes, 3, stride, 1));
    x = conv_bn(b, stage, blk, ".conv3", ".bn3", x, cout, 1, 1, 0);
  }
  typename Net::Ref identity = in;
  if (stride != 1 || cin != cout)
    identity = conv_bn(b, stage, blk, ".downsample.0", ".downsample.1", in, cout, 1, stride, 0);
  return b.relu({stage, blk, ".relu_out"}, b.add({stage, blk, ".add"}, x, identity));
}

// The one description of the topology, walked by either net: stem, four stages, pool, classifier.
template <class Net>
NetworkSpec walk(const Config& c) {
  validate(c);
  const auto blocks = stage_blocks(c.family, c.depth);
  Net b(c);
  b.spec().input_shape = {c.batch, NetworkDefaults::kInputChannels, c.resolution, c.resolution};
  auto x = conv_bn(b, -1, 0, ".conv", ".bn", b.input(), scaled_channels(NetworkDefaults::kStemChannels, c.width), 7,
                   2, 3);
  x = b.maxpool({-1, 0, ".maxpool"}, b.relu({-1, 0, ".relu"}, x));
  for (int s = 0; s < 4; ++s) {
    const int planes = scaled_channels(NetworkDefaults::kStageChannels[s], c.width);
    for (int i = 0; i < blocks[s]; ++i) x = block(b, s, i, x, c.family, planes, (s > 0 && i == 0) ? 2 : 1);
  }
  b.linear({-2, 0, "fc"}, b.avgpool({-2, 0, "avgpool"}, x), NetworkDefaults::kClasses);
  b.finish();
  return std::move(b.spec());
}

}  // namespace

NetworkSpec build_network_spec(const Config& c) { return walk<Builder>(c); }

NetworkSpec network_totals(const Config& c) { return walk<Counter>(c); }

NetworkSpec totals_at_batch(const NetworkSpec& at_batch_1, int batch) {
  if (at_batch_1.config.batch != 1 || !at_batch_1.layers.empty() || at_batch_1.input_shape.size() != 4)
    throw std::logic_error("totals_at_batch: not the totals of a configuration at batch 1");
  NetworkSpec s = at_batch_1;
  s.config.batch = batch;
  validate(s.config);
  s.input_shape[0] = batch;
  s.macs *= batch;
  s.act_elements_total *= batch;
  s.act_elements_max *= batch;
  s.act_elements_peak *= batch;
  return s;
}

}  // namespace carb
