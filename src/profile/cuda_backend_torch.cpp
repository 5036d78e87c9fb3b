// The "cuda" profiler backend: LibTorch on CUDA device 0 (fp32, fp16, bf16), latency from
// synchronised passes, energy from the NVML total-energy counter over a window of at least
// min_energy_window_s, peak memory from the CUDA caching allocator, utilization sampled by
// NVML during training-mode forward+backward (the paper's method). carb never changes a GPU
// setting: clocks, temperature and power limit are recorded, not set. Built against a LibTorch
// without CUDA, the backend still registers and refuses every configuration with a clear error.
#include <torch/version.h>

#include "backends.hpp"
#include "carb/error.hpp"
#include "carb/profiler.hpp"

#ifdef CARB_TORCH_CUDA
#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstring>

#include "carb/dataset.hpp"
#include "carb/network_spec.hpp"
#include "energy_window.hpp"
#include "nvml.hpp"
#include "spec_net.hpp"
#include "timing.hpp"
#endif

namespace carb {
namespace {

const char* const kNoClockLocking = "clock locking is not implemented; carb never changes GPU settings on its own";

#ifdef CARB_TORCH_CUDA

constexpr c10::DeviceIndex kDevice = 0;
namespace alloc = c10::cuda::CUDACachingAllocator;


double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool is_oom(const std::string& what) {
  // cuDNN and cuBLAS report a failed workspace allocation as ALLOC_FAILED, not as an OOM.
  return what.find("out of memory") != std::string::npos || what.find("ALLOC_FAILED") != std::string::npos;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// CUDA's PCI bus id of a device, looked up in the CUDA runtime LibTorch already loaded
// (so carb neither links nor includes cudart itself); empty when it cannot be found.
std::string cuda_pci_bus_id(int device) {
  using Fn = int (*)(char*, int, int);  // cudaError_t cudaDeviceGetPCIBusId(char*, int, int)
  void* p = dlsym(RTLD_DEFAULT, "cudaDeviceGetPCIBusId");
  if (!p) return "";
  Fn fn = nullptr;
  std::memcpy(&fn, &p, sizeof p);
  char buf[64] = {};
  if (fn(buf, sizeof buf, device) != 0) return "";
  return buf;
}

// One synchronised forward pass; the caller holds an InferenceMode guard.
double forward_ms(SpecNet& net, const torch::Tensor& x) {
  const auto t0 = std::chrono::steady_clock::now();
  auto y = net->forward(x);
  torch::cuda::synchronize();
  return seconds_since(t0) * 1e3;
}

// Weights on the device in the precision's dtype (NHWC when asked). Called outside InferenceMode:
// inference-mode weights could not be trained in the utilization window.
void weights_to_device(SpecNet& net, Precision precision, const Protocol& p) {
  net->to(torch::Device(torch::kCUDA, kDevice), to_dtype(precision));
  if (p.channels_last)
    for (auto& prm : net->parameters())
      if (prm.dim() == 4) prm.set_data(prm.contiguous(at::MemoryFormat::ChannelsLast));
}

torch::Tensor input_on_device(const Config& c, const Protocol& p) {
  const auto fmt = p.channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
  const auto opts = torch::TensorOptions().dtype(to_dtype(c.precision)).device(torch::kCUDA, kDevice);
  return torch::randn({c.batch, 3, c.resolution, c.resolution}, opts).contiguous(fmt);
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(const Protocol& p) {
    if (p.lock_clocks) throw InputError(kNoClockLocking);
    if (!torch::cuda::is_available())
      throw MeasureError("the cuda backend found no usable CUDA device (check the driver and CUDA_VISIBLE_DEVICES)");
    // Benchmark mode would time candidate kernels on each new shape and make the first passes
    // (and the memory peak) depend on that search; the paper measures with it off.
    at::globalContext().setBenchmarkCuDNN(false);
    torch::zeros({1}, torch::TensorOptions().device(torch::kCUDA, kDevice));  // create the context now
    create_library_workspaces();
    open_nvml();
  }
  std::string name() const override { return "cuda"; }
  void check(const Config&) const override {}  // fp32, fp16 and bf16 all run on CUDA

  Measurement measure(const Config& c, const Protocol& p) override {
    if (p.lock_clocks) throw InputError(kNoClockLocking);
    check(c);
    Measurement m;
    m.extra["load_avg_1m"] = std::to_string(load_average());
    record_state(m, "_start");
    try {
      measure_into(c, p, m);
    } catch (const c10::OutOfMemoryError& e) {
      m = failed(Status::oom, e.what_without_backtrace(), m);
    } catch (const c10::Error& e) {
      m = failed(is_oom(e.what()) ? Status::oom : Status::error, e.what_without_backtrace(), m);
    } catch (const std::bad_alloc& e) {
      m = failed(Status::oom, e.what(), m);
    }
    if (m.status != Status::ok) {  // the failed configuration's tensors are gone: return their memory
      drop_network();
      settle();
    }
    return m;
  }

  MeterCheck check_meter(double max_s) override;
  EnergyTrace trace_energy(const Config& c, const Protocol& p, double seconds) override;
  bool traces_energy() const override { return meter_ != nullptr; }
  std::optional<double> temperature_c() override {
    if (!nvml_) return std::nullopt;
    if (auto v = nvml_->temperature_c(nvml_index_)) return static_cast<double>(*v);
    return std::nullopt;
  }

  nlohmann::json platform_info() const override;

  void settle() override {
    alloc::emptyCache();
    torch::cuda::synchronize();
  }

 private:
  void open_nvml();
  static void create_library_workspaces();
  SpecNet& network_for(const Config& c, const Protocol& p, Measurement& m);
  void drop_network() {
    net_.reset();
    net_key_.clear();
  }
  void measure_into(const Config& c, const Protocol& p, Measurement& m);
  TimingStats timed_with_energy(const Protocol& p, SpecNet& net, const torch::Tensor& x, Measurement& m);
  void utilization_window(SpecNet& net, const torch::Tensor& x, Measurement& m, const Protocol& p);
  void record_state(Measurement& m, const std::string& suffix) const;

  static Measurement failed(Status status, const std::string& why, const Measurement& base) {
    Measurement m;
    m.status = status;
    m.error = first_line(why);
    m.extra = base.extra;
    return m;
  }

  std::unique_ptr<Nvml> nvml_;
  std::string nvml_why_, nvml_match_, meter_why_;
  int nvml_index_ = -1;
  std::unique_ptr<EnergyMeter> meter_;
  std::unique_ptr<SpecNet> net_;  // the last architecture's network (Protocol::rebuild_networks)
  std::string net_key_;
  int64_t net_baseline_ = 0;      // allocated bytes before its weights existed
  int64_t net_build_peak_ = 0;    // allocated bytes at most while they were built
};

// NVML numbers devices in PCI order, CUDA fastest-first and after CUDA_VISIBLE_DEVICES: match
// CUDA device 0 to its NVML index by PCI bus id, or fall back to index 0 and say so.
void CudaBackend::open_nvml() {
  nvml_ = Nvml::open(&nvml_why_);
  if (!nvml_) return;
  const std::string bus = cuda_pci_bus_id(kDevice);
  if (auto idx = bus.empty() ? std::nullopt : nvml_->index_by_pci_bus_id(bus)) {
    nvml_index_ = *idx;
    nvml_match_ = "pci bus id " + bus;
  } else {
    nvml_index_ = 0;
    nvml_match_ = nvml_->device_count() == 1u ? "the only NVML device"
                                              : "assumed NVML index 0 (PCI bus id match failed)";
  }
  meter_ = nvml_->energy_meter(nvml_index_, &meter_why_);
}

// cuBLAS keeps a workspace per (handle, stream) in the caching allocator until the process ends,
// made by the first matrix product on a thread (the backward pass runs on autograd's own thread).
// Made after a configuration's baseline, it counted in that configuration's peak (+33 to 67 MB on
// sm90) and, with reused networks, in every configuration of the first architecture. So they are
// made here, before any baseline: a small Linear and convolution forward and backward per dtype.
void CudaBackend::create_library_workspaces() {
  for (auto dtype : {torch::kFloat32, torch::kFloat16, torch::kBFloat16}) {
    const auto opts = torch::TensorOptions().dtype(dtype).device(torch::kCUDA, kDevice);
    torch::nn::Linear lin(8, 8);
    torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 8, 3).padding(1));
    lin->to(torch::Device(torch::kCUDA, kDevice), dtype);
    conv->to(torch::Device(torch::kCUDA, kDevice), dtype);
    const auto x = torch::randn({2, 3, 8, 8}, opts);
    lin->forward(conv->forward(x).mean({2, 3})).to(torch::kFloat32).sum().backward();
  }
  torch::cuda::synchronize();
}

// The network of c's architecture on the device: the one already built when the previous
// configuration had the same architecture (same weights, seeded the same), else a new one. Resets
// the allocator's peak. The baseline is what was allocated before the weights existed, and the
// peak of building them (a dtype conversion's transient) is kept, so a configuration measured on
// a reused network has the peak it would have had on a new one.
SpecNet& CudaBackend::network_for(const Config& c, const Protocol& p, Measurement& m) {
  const std::string key = architecture_key(c);
  torch::cuda::synchronize();
  if (net_ && key == net_key_ && !p.rebuild_networks) {
    m.extra["net_reused"] = "1";
    alloc::resetPeakStats(kDevice);
    return *net_;
  }
  drop_network();
  torch::cuda::synchronize();
  net_baseline_ = alloc::getDeviceStats(kDevice).allocated_bytes[0].current;
  alloc::resetPeakStats(kDevice);
  torch::manual_seed(0);
  // Built outside InferenceMode: the utilization window trains these same weights.
  net_ = std::make_unique<SpecNet>(build_network_spec(c));
  (*net_)->eval();
  weights_to_device(*net_, c.precision, p);
  torch::cuda::synchronize();
  net_build_peak_ = alloc::getDeviceStats(kDevice).allocated_bytes[0].peak;
  net_key_ = key;
  m.extra["net_reused"] = "0";
  return *net_;
}

void CudaBackend::measure_into(const Config& c, const Protocol& p, Measurement& m) {
  SpecNet& net = network_for(c, p, m);  // the peak now covers weights + input + activations + workspace
  torch::manual_seed(0);
  const torch::Tensor x = input_on_device(c, p);
  TimingStats t;
  {
    torch::InferenceMode guard;
    for (int i = 0; i < std::max(p.warmup, 1); ++i) forward_ms(net, x);
    t = timed_with_energy(p, net, x, m);
  }
  const auto stats = alloc::getDeviceStats(kDevice);
  const int64_t peak = std::max<int64_t>(stats.allocated_bytes[0].peak, net_build_peak_);
  m.peak_memory_mb = static_cast<double>(peak - net_baseline_) / 1e6;
  m.extra["peak_reserved_mb"] = extra_number(static_cast<double>(stats.reserved_bytes[0].peak) / 1e6);
  m.latency_ms = t.mean_ms;
  record_timing(t, m.extra);
  m.extra["warmup"] = std::to_string(p.warmup);
  record_state(m, "_end");
  if (samples_utilization(p, c))
    utilization_window(net, x, m, p);
  else
    m.extra["util_mode"] = "not sampled (--util)";
}

// Latency and energy from one window of passes (measure_window): the protocol's timed passes,
// extended until the window holds --energy-ticks whole counter periods (or lasts
// --min-energy-window): NVML's counter advances in steps of tens of milliseconds.
TimingStats CudaBackend::timed_with_energy(const Protocol& p, SpecNet& net, const torch::Tensor& x,
                                           Measurement& m) {
  const WindowResult w = measure_window(meter_.get(), p, [&] { return forward_ms(net, x); });
  record_window(w, m.extra);
  m.energy_j = w.energy_per_pass_j;
  if (nvml_) {  // clocks as they were at the end of the loaded window (never set by carb)
    if (auto v = nvml_->clock_mhz(nvml_index_, NvmlClock::sm)) m.extra["sm_clock_mhz"] = std::to_string(*v);
    if (auto v = nvml_->clock_mhz(nvml_index_, NvmlClock::mem)) m.extra["mem_clock_mhz"] = std::to_string(*v);
  }
  return w.timing;
}

MeterCheck CudaBackend::check_meter(double max_s) {
  if (!meter_) {
    MeterCheck m = Backend::check_meter(max_s);
    m.note = "no NVML energy counter: " + meter_why_ + nvml_why_ + "; the cuda backend leaves energy_j empty here";
    return m;
  }
  torch::cuda::synchronize();
  std::function<std::optional<double>()> power;
  if (nvml_) power = [this] { return nvml_->power_usage_w(nvml_index_); };
  MeterCheck m = carb::check_meter([this] { return meter_->joules(); }, power, max_s, 40);
  m.meter = "nvml total-energy counter";
  if (power) m.power_reading = "nvml power usage";
  return m;
}

// The window study's raw material: `seconds` of back-to-back passes after the warm-up, every
// pass's end and every counter change on one clock.
EnergyTrace CudaBackend::trace_energy(const Config& c, const Protocol& p, double seconds) {
  EnergyTrace tr;
  tr.config = c;
  if (!meter_) throw InputError("the window study needs NVML's energy counter: " + meter_why_ + nvml_why_);
  try {
    Measurement scratch;
    SpecNet& net = network_for(c, p, scratch);
    torch::manual_seed(0);
    const torch::Tensor x = input_on_device(c, p);
    torch::InferenceMode guard;
    for (int i = 0; i < std::max(p.warmup, 1); ++i) forward_ms(net, x);
    CounterPoller poller(*meter_);
    if (!poller.start()) {
      tr.status = Status::error;
      tr.error = "NVML's energy counter could not be read";
      return tr;
    }
    tr.start_s = poller.now_s();
    do {
      forward_ms(net, x);
      tr.pass_end_s.push_back(poller.now_s());
    } while (tr.pass_end_s.back() - tr.start_s < seconds);
    for (const auto& ch : poller.stop()) tr.counter_t_s.push_back(ch.t_s), tr.counter_j.push_back(ch.joules);
  } catch (const c10::Error& e) {
    tr.status = is_oom(e.what()) ? Status::oom : Status::error;
    tr.error = first_line(e.what_without_backtrace());
  } catch (const std::bad_alloc& e) {
    tr.status = Status::oom;
    tr.error = e.what();
  }
  if (tr.status != Status::ok) {
    drop_network();
    settle();
  }
  return tr;
}

// The paper samples utilization while training: forward + backward in train mode for
// util_window_s. Where training-mode BatchNorm refuses one value per channel (batch 1 with a 1x1
// map) it runs frozen and util_mode says so. A failure here (training needs more memory than
// inference) leaves the two utilization columns empty, not the whole row.
void CudaBackend::utilization_window(SpecNet& net, const torch::Tensor& x, Measurement& m, const Protocol& p) {
  m.extra["util_mode"] = "train_fwd_bwd";
  if (!nvml_ || p.util_window_s <= 0) return;
  // Training-mode BatchNorm updates its running statistics; the network is reused for the next
  // configurations of its architecture, which must see the statistics a new network has.
  std::vector<torch::Tensor> saved;
  {
    torch::NoGradGuard no_grad;
    for (const auto& b : net->buffers()) saved.push_back(b.clone());
  }
  try {
    net->train();
    // The first backward allocates the gradients: keep it out of the window.
    if (first_train_step(net, x)) m.extra["util_mode"] = "train_fwd_bwd_frozen_batchnorm";
    torch::cuda::synchronize();
    auto step = [&] {
      train_step(net, x);
      torch::cuda::synchronize();
    };
    UtilSampler sampler(*nvml_, nvml_index_);
    sampler.start();
    const auto t0 = std::chrono::steady_clock::now();
    int steps = 0;
    do {
      step();
      ++steps;
    } while (seconds_since(t0) < p.util_window_s);
    const auto r = sampler.stop();
    m.avg_sm_util = r.sm;
    m.avg_mem_util = r.mem;
    m.extra["util_samples"] = std::to_string(r.samples);
    m.extra["util_steps"] = std::to_string(steps);
    m.extra["util_window_s"] = extra_number(seconds_since(t0));
  } catch (const c10::Error& e) {
    m.extra["util_error"] = first_line(e.what_without_backtrace());
  }
  for (auto& prm : net->parameters()) prm.mutable_grad().reset();
  {
    torch::NoGradGuard no_grad;
    auto buffers = net->buffers();
    for (std::size_t i = 0; i < buffers.size() && i < saved.size(); ++i) buffers[i].copy_(saved[i]);
  }
  net->eval();
}

void CudaBackend::record_state(Measurement& m, const std::string& suffix) const {
  if (!nvml_) return;
  if (auto v = nvml_->temperature_c(nvml_index_)) m.extra["gpu_temp_c" + suffix] = std::to_string(*v);
  if (auto v = nvml_->power_usage_w(nvml_index_)) m.extra["gpu_power_w" + suffix] = extra_number(*v);
}

nlohmann::json CudaBackend::platform_info() const {
  const auto& hooks = at::detail::getCUDAHooks();
  nlohmann::json j = {{"backend", "cuda"},
                      {"cuda_device", kDevice},
                      {"cuda_device_count", torch::cuda::device_count()},
                      {"libtorch", TORCH_VERSION},
                      {"cuda_runtime", hooks.versionCUDART()},
                      {"cudnn", torch::cuda::cudnn_is_available() ? hooks.versionCuDNN() : 0},
                      {"cudnn_benchmark", false},
                      {"allow_tf32_cudnn", at::globalContext().allowTF32CuDNN()},
                      {"allow_tf32_cublas", at::globalContext().allowTF32CuBLAS()},
                      {"memory_meter", "CUDA caching allocator peak allocated bytes"},
                      {"clock_policy", "never changed by carb; clocks recorded per row"}};
  if (!nvml_) {
    j["nvml"] = "unavailable: " + nvml_why_;
    j["energy_meter"] = "none (energy_j left empty)";
    return j;
  }
  j["nvml"] = nvml_->source();
  j["nvml_device"] = {{"index", nvml_index_}, {"matched_by", nvml_match_}};
  j["energy_meter"] = meter_ ? "nvml total-energy counter" : "none (" + meter_why_ + "; energy_j left empty)";
  if (auto v = nvml_->device_name(nvml_index_)) j["gpu_name"] = *v;
  if (auto v = nvml_->driver_version()) j["driver"] = *v;
  if (auto v = nvml_->power_limit_w(nvml_index_)) j["power_limit_w"] = *v;
  // The device's memory, which `carb train` records (a lease's probe, where it ran out of memory,
  // states the capacity CUDA offers, a little less: scripts/main_job.sh prefers that one).
  if (auto v = nvml_->memory_total_mb(nvml_index_)) j["device_memory_mb"] = *v;
  if (auto v = nvml_->clock_mhz(nvml_index_, NvmlClock::sm)) j["sm_clock_mhz_now"] = *v;
  if (auto v = nvml_->clock_mhz(nvml_index_, NvmlClock::mem)) j["mem_clock_mhz_now"] = *v;
  if (auto v = nvml_->temperature_c(nvml_index_)) j["gpu_temp_c_now"] = *v;
  return j;
}

#else  // LibTorch without CUDA

// Registered anyway, so `--backend cuda` names the real reason instead of "unknown backend".
class NoCudaBackend final : public Backend {
 public:
  explicit NoCudaBackend(const Protocol& p) {
    if (p.lock_clocks) throw InputError(kNoClockLocking);
  }
  std::string name() const override { return "cuda"; }
  void check(const Config&) const override {
    // Named by the flag, as `carb meter` names it (a README walkthrough: profile's line did not).
    throw InputError("--backend cuda: this carb was built without CUDA support (LibTorch found has no CUDA); "
                     "--backend cpu profiles this machine's CPU");
  }
  Measurement measure(const Config& c, const Protocol&) override {
    check(c);
    return {};
  }
  nlohmann::json platform_info() const override {
    return {{"backend", "cuda"}, {"available", false}, {"libtorch", TORCH_VERSION}};
  }
  // Thirty-second hostile pass: `carb meter` (cuda is its default) answered "meter: none" with exit
  // 0 here, as if the GPU's meter had been checked and found wanting.
  MeterCheck check_meter(double) override {
    throw InputError("--backend cuda: this carb was built without CUDA support (LibTorch found has no CUDA); "
                     "--backend cpu checks this machine's CPU meter");
  }
};

#endif

}  // namespace

void register_cuda_backend() {
#ifdef CARB_TORCH_CUDA
  register_backend("cuda", [](const Protocol& p) { return std::make_unique<CudaBackend>(p); });
#else
  register_backend("cuda", [](const Protocol& p) { return std::make_unique<NoCudaBackend>(p); });
#endif
}

}  // namespace carb
