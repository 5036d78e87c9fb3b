// The profiling loop: skip what the store already has, measure the rest one by one,
// commit each row immediately, stop cleanly on SIGINT/SIGTERM.
#include <sched.h>

#include <csignal>
#include <cstring>
#include <map>
#include <thread>

#include "carb/error.hpp"
#include "carb/profiler.hpp"
#include "carb/store.hpp"
#include "progress.hpp"

namespace carb {
namespace {

std::map<std::string, BackendFactory>& registry() {
  static std::map<std::string, BackendFactory> r;
  return r;
}

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct SignalScope {
  using Handler = void (*)(int);
  Handler old_int, old_term;
  SignalScope() : old_int(std::signal(SIGINT, on_signal)), old_term(std::signal(SIGTERM, on_signal)) { g_stop = 0; }
  ~SignalScope() {
    std::signal(SIGINT, old_int);
    std::signal(SIGTERM, old_term);
  }
};

Record to_record(const std::string& platform, const Config& c, const Measurement& m) {
  Record r;
  r.platform = platform;
  r.config = c;
  r.status = m.status;
  r.latency_ms = m.latency_ms, r.energy_j = m.energy_j, r.peak_memory_mb = m.peak_memory_mb;
  r.avg_sm_util = m.avg_sm_util, r.avg_mem_util = m.avg_mem_util;
  r.extra = m.extra;
  return r;
}

// SCHED_FIFO for this process (threads created later inherit it). Priority 10 stays below
// the kernel's own real-time threads; the kernel's RT throttling keeps the machine responsive.
void enter_realtime() {
  sched_param sp{};
  sp.sched_priority = 10;
  if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
    throw MeasureError(std::string("--realtime: cannot switch to SCHED_FIFO: ") + std::strerror(errno) +
                       " (needs root or CAP_SYS_NICE)");
}

}  // namespace

void register_backend(const std::string& name, BackendFactory f) { registry()[name] = std::move(f); }

std::vector<std::string> backend_names() {
  std::vector<std::string> out;
  for (const auto& [k, v] : registry()) out.push_back(k);
  return out;
}

std::unique_ptr<Backend> make_backend(const std::string& name, const Protocol& p) {
  auto it = registry().find(name);
  if (it == registry().end()) {
    std::string known;
    for (const auto& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
    throw InputError("unknown backend '" + name + "' (available: " + (known.empty() ? "none" : known) + ")");
  }
  return it->second(p);
}

ProfileSummary run_profile(const std::vector<Config>& configs, const ProfileOptions& o) {
  if (o.protocol.realtime) enter_realtime();
  auto backend = make_backend(o.backend, o.protocol);
  for (const auto& c : configs) backend->check(c);  // refuse up front, before hours of work
  Store store(o.db);
  const std::string pid = o.protocol.id();
  nlohmann::json settings = o.protocol.to_json();
  settings["backend"] = o.backend;
  settings["platform_info"] = backend->platform_info();
  if (!o.command_line.empty()) settings["command"] = o.command_line;  // provenance; not part of the id
  store.put_protocol(pid, settings);
  const auto done = store.done_keys(o.platform, pid);
  ProfileSummary s;
  s.total = configs.size();
  std::vector<Config> todo;
  for (const auto& c : configs)
    if (!done.count(config_key(c))) todo.push_back(c);
  s.skipped = configs.size() - todo.size();
  SignalScope signals;
  Progress bar("profile " + o.platform, todo.size(), o.progress);
  for (const auto& c : todo) {
    if (g_stop) break;
    Measurement m = backend->measure(c, o.protocol);
    store.put({to_record(o.platform, c, m), pid, m.error});
    (m.status == "ok" ? s.ok : m.status == "oom" ? s.oom : s.error)++;
    backend->settle();
    bar.tick(config_key(c));
    if (o.protocol.cooldown_s > 0 && !g_stop)
      std::this_thread::sleep_for(std::chrono::duration<double>(o.protocol.cooldown_s));
  }
  bar.finish();
  s.interrupted = g_stop != 0;
  return s;
}

}  // namespace carb
