// The profiling loop: hold the store as its sole writer, skip what it already has, measure
// the rest one by one, commit each row immediately, stop cleanly on SIGINT/SIGTERM.
#include "carb/profiler.hpp"

#include <sched.h>

#include <algorithm>
#include <regex>
#include <unordered_map>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <unordered_set>

#include "carb/error.hpp"
#include "carb/store.hpp"
#include "carb/text_table.hpp"
#include "carb/warning.hpp"
#include "data/platform_name.hpp"
#include "data/provenance.hpp"
#include "data/validate.hpp"
#include "device_identity.hpp"
#include "progress.hpp"
#include "util/join.hpp"
#include "util/stop_signal.hpp"

namespace carb {
namespace {

std::map<std::string, BackendFactory>& registry() {
  static std::map<std::string, BackendFactory> r;
  return r;
}

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

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The pause before a configuration, in short slices so that a signal ends it within a moment.
// With a temperature threshold it pauses only while the device is warmer, and at most cooldown_s.
// Returns the seconds paused; records the temperature that decided it.
double cool_down(Backend& b, const Protocol& p, Measurement& m) {
  const auto t0 = std::chrono::steady_clock::now();
  auto warm = [&] {
    if (p.cooldown_above_c <= 0) return true;
    const auto t = b.temperature_c();
    return !t || *t > p.cooldown_above_c;  // unknown temperature: the full pause, to be safe
  };
  if (p.cooldown_above_c > 0)
    if (auto t = b.temperature_c()) m.extra["cooldown_temp_c"] = extra_number(*t);
  while (!detail::stop_signal() && seconds_since(t0) < p.cooldown_s && warm())
    std::this_thread::sleep_for(std::min<std::chrono::duration<double>>(
        std::chrono::duration<double>(p.cooldown_s - seconds_since(t0)), std::chrono::milliseconds(50)));
  return seconds_since(t0);
}

// Seconds of passes inside a measurement: its energy window where it has one, else its timed passes.
double compute_seconds(const Measurement& m) {
  for (const char* key : {"energy_window_s", "timed_s"}) {
    auto it = m.extra.find(key);
    if (it != m.extra.end()) return std::strtod(it->second.c_str(), nullptr);
  }
  return 0;
}

// Long enough for a few updates of NVML's counter (20-100 ms), short against a campaign.
constexpr double kMeterCheckS = 2.0;

std::string known_backends() {
  const std::string known = join(backend_names());
  return known.empty() ? "none" : known;
}

void require_known_backend(const std::string& name) {
  if (!registry().count(name))
    throw InputError("unknown backend '" + name + "' (available: " + known_backends() + ")");
}

}  // namespace

void register_backend(const std::string& name, BackendFactory f) { registry()[name] = std::move(f); }

MeterCheck Backend::check_meter(double) {
  MeterCheck m;
  m.note = "the " + name() + " backend has no energy meter: energy_j is left empty";
  return m;
}

EnergyTrace Backend::trace_energy(const Config&, const Protocol&, double) {
  throw InputError("the window study needs an energy counter; the " + name() + " backend has none here");
}

std::vector<std::string> backend_names() {
  std::vector<std::string> out;
  for (const auto& [k, v] : registry()) out.push_back(k);
  return out;
}

std::unique_ptr<Backend> make_backend(const std::string& name, const Protocol& p) {
  require_known_backend(name);
  return registry().at(name)(p);
}

ProfileSummary run_profile(const std::vector<Config>& configs, const ProfileOptions& o) {
  // From the start: a signal while the device starts or the meter is checked stops the run before
  // its first configuration (a review: from Python, one in that window went unseen until the end).
  detail::StopOnSignals signals;  // the first signal lets the configuration in flight finish
  // Everything that can refuse the run does so before a device or the store is touched.
  require_known_backend(o.backend);
  validate(o.protocol, o.backend);
  // A platform is a name printed in tables and read back by export, which refuses a control
  // character in it (a hostile tester: a "gpu\nbox" store was measured, then could not be exported).
  if (const std::string why = detail::platform_name_problem(o.platform); !why.empty())
    throw InputError("the platform name " + why + "; give a printable name (e.g. cpu-2t)");
  // A name of the default's form must agree with the thread count (ninety-seventh hostile pass:
  // --platform cpu-2t --threads 1 stored one-thread rows as cpu-2t, under cpu-1t's protocol).
  if (std::smatch m; o.backend == "cpu" && std::regex_match(o.platform, m, std::regex("cpu-([0-9]+)t")) &&
                     m[1].str() != std::to_string(o.protocol.threads))
    throw InputError("platform " + o.platform + " names " + m[1].str() + " threads, and this run measures with " +
                     std::to_string(o.protocol.threads) + ": measure with " + m[1].str() +
                     " threads (--threads), or give a platform name that does not say another thread count");
  // Said, not refused (a machine may be larger than this one): more intra-op threads than the host
  // has measure threads waiting for cores, not the configuration (a hostile tester: 1000 on 2 cores).
  if (const unsigned cores = std::thread::hardware_concurrency(); o.backend == "cpu" && cores > 0 &&
                                                                  o.protocol.threads > static_cast<int>(cores))
    warn(std::to_string(o.protocol.threads) + " threads is more than this machine's " + std::to_string(cores) +
         " hardware threads: the latencies would be of threads waiting for cores, not of the configurations");
  if (o.protocol.realtime) enter_realtime();
  auto backend = make_backend(o.backend, o.protocol);
  for (const auto& c : configs) backend->check(c);  // refuse up front, before hours of work
  Store store(o.db, StoreAccess::sole_writer);      // a second profiler of this store stops here
  // Every stored row must read back before more are added (thirty-first hostile pass: a row whose
  // extra_json was damaged passed SQLite's integrity check; export refused it, profile resumed past it).
  const Dataset stored = store.to_dataset();
  const std::string pid = o.protocol.id();
  nlohmann::json settings = o.protocol.to_json();
  settings["backend"] = o.backend;
  settings["platform_info"] = backend->platform_info();
  if (!o.command_line.empty()) settings["command"] = o.command_line;  // provenance; not part of the id
  // Before the meter check costs seconds: a store whose record of this protocol names another
  // device (an H200's campaign resumed on an H100) would skip that device's configurations as done
  // and export these rows as measured there.
  const nlohmann::json protocols = store.protocols();
  detail::require_same_device(protocols, pid, settings, o.db.string());
  // Nor under other flags: one platform name is one device (a review: the same --platform with
  // another protocol went into a store of another device's rows).
  std::set<std::string> platform_protocols;
  for (const Record& r : stored.rows)
    if (r.platform == o.platform) platform_protocols.insert(protocol_of(r));
  for (const std::string& id : platform_protocols)
    if (id != pid && protocols.contains(id))
      detail::require_recorded_device(protocols.at(id), settings,
                                      o.db.string() + "'s " + o.platform + " rows (protocol " + id + ") are recorded",
                                      "one platform name is one device; give this one another --platform or --db");
  if (o.check_meter) settings["meter_check"] = backend->check_meter(kMeterCheckS).to_json();
  store.put_protocol(pid, settings);
  // A record keeps its first run's facts; one that disagrees with this device's memory is said (a
  // hostile tester: 80,000 MB recorded on a 25 GB machine reached `carb train` without a word).
  if (const auto had = protocols.find(pid); had != protocols.end()) {
    const auto memory = [](const nlohmann::json& j) -> std::optional<double> {
      const auto info = j.find("platform_info");
      if (info == j.end() || !info->is_object()) return std::nullopt;
      const auto m = info->find("device_memory_mb");
      return m != info->end() && m->is_number() ? std::optional<double>(m->get<double>()) : std::nullopt;
    };
    const auto recorded = memory(*had), now = memory(settings);
    if (recorded && now && std::abs(*recorded - *now) > 0.01 * *now)
      warn(o.db.string() + " records the device's memory as " + fmt_num(*recorded, 10) + " MB for protocol " + pid +
           ", and this run reads " + fmt_num(*now, 10) + " MB: the record is kept (its first run's), and `carb train` "
           "takes it unless --device-memory-mb is given");
  }
  // What this run was given, so that an export of the store says when a campaign is unfinished
  // (a run stopped in a preset's grid order holds its small networks only, and read as a dataset
  // without a word that was a biased sample).
  store.put_planned(o.platform, pid, configs, o.replan, o.command_line);
  // Done by network: a resume that spells a width otherwise (0.251 for 0.25, the same channels)
  // measured the network again, and the store could then not be exported (fourteenth hostile pass).
  // Sixtieth hostile pass: a machine fault (ulimit -n 8) stored every configuration as error, and
  // a resume skipped them all, "already done". They are counted, and --retry-errors measures them.
  const auto networks = [](const std::unordered_set<std::string>& keys) {
    std::unordered_set<std::string> n;
    for (const auto& k : keys) {
      const auto c = parse_config_key(k);
      n.insert(c ? network_key(*c) : k);
    }
    return n;
  };
  const std::unordered_set<std::string> not_errors = networks(store.done_keys(o.platform, pid, false));
  const auto all_done = store.done_keys(o.platform, pid);
  std::unordered_set<std::string> done =
      o.redo ? std::unordered_set<std::string>{} : o.retry_errors ? not_errors : networks(all_done);
  // The networks stored, each with its row's spelling: a network measured again (retried as error,
  // or redone) is measured under it, which the new row then replaces (sixty-first hostile pass:
  // width 0.251 for a stored 0.25 added a duplicate row).
  std::unordered_map<std::string, Config> stored_rows;
  std::unordered_set<std::string> error_networks;
  for (const auto& k : all_done)
    if (const auto c = parse_config_key(k)) {
      const std::string n = network_key(*c);
      stored_rows.emplace(n, *c);
      if (!not_errors.count(n)) error_networks.insert(n);
    }
  ProfileSummary s;
  s.total = configs.size();
  std::vector<Config> todo;
  for (const auto& c : configs) {
    const std::string n = network_key(c);
    if (done.insert(n).second) {
      const auto stored = stored_rows.find(n);  // only when retrying or redoing: else a stored row is done
      todo.push_back(stored != stored_rows.end() ? stored->second : c);  // and each network once
    } else if (!o.retry_errors && error_networks.count(n)) {
      ++s.skipped_errors;
    }
  }
  s.skipped = configs.size() - todo.size();
  Progress bar("profile " + o.platform, todo.size(), o.progress);
  std::size_t measured = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& c : todo) {
    Measurement cooled;  // where the pause before this configuration records itself
    const double paused = o.protocol.cooldown_s > 0 && measured > 0 ? cool_down(*backend, o.protocol, cooled) : 0;
    if (detail::stop_signal()) break;
    Measurement m = backend->measure(c, o.protocol);
    if (measured > 0 && o.protocol.cooldown_s > 0) {
      m.extra["cooldown_s"] = extra_number(paused);
      m.extra.insert(cooled.extra.begin(), cooled.extra.end());
    }
    // A redo that fails (a fault of the machine) keeps the stored ok row rather than lose it to an
    // error row (a review of --redo).
    const std::string n = network_key(c);
    // Counted as they happen (hundred-and-thirty-first hostile pass: an interrupted --redo said all 64
    // stored rows were measured again where 39 were).
    if (o.redo && m.status == Status::error && stored_rows.count(n) && !error_networks.count(n)) {
      ++s.kept_on_error;
    } else {
      store.put({to_record(o.platform, c, m), pid, m.error});
      s.replaced += stored_rows.count(n);
    }
    ++measured;
    (m.status == Status::ok ? s.ok : m.status == Status::oom ? s.oom : s.error)++;
    if (const auto ci = m.extra.find("latency_rel_ci95");
        m.status == Status::ok && o.protocol.target_rel_ci > 0 && ci != m.extra.end()) {
      char* end = nullptr;
      const double v = std::strtod(ci->second.c_str(), &end);
      s.ci_target_missed += end != ci->second.c_str() && v > o.protocol.target_rel_ci;
    }
    s.compute_s += compute_seconds(m);
    backend->settle();
    bar.tick(config_key(c));
  }
  s.wall_s = seconds_since(t0);
  bar.finish();
  // Seventy-fourth hostile pass: rows measured on a loaded host were stored ok, and only `data
  // export`, later, refused them. The same checks now run at the end of the run, on this platform
  // and protocol's rows, so that the run says what to measure again (--redo).
  // A word, never a failure (a review: another campaign's damaged settings in the same store made
  // a run whose rows were all saved exit 1): only this protocol's settings, and anything thrown is
  // said as the check's own problem.
  if (measured > 0) try {
      Dataset mine;
      std::vector<std::string> where;
      for (Record& r : store.to_dataset().rows)
        if (r.platform == o.platform && protocol_of(r) == pid) {
          where.push_back(o.db.string() + " (" + config_key(r.config) + ")");
          mine.rows.push_back(std::move(r));
        }
      const auto problems = check_dataset(mine, where, protocol_facts_of(nlohmann::json{{pid, settings}}));
      s.export_problems = problems.size();
      if (!problems.empty()) s.first_export_problem = problems.front();
    } catch (const std::exception& e) {
      s.export_problems = 1;
      s.first_export_problem = std::string("the rows could not be checked: ") + e.what();
    }
  // Interrupted means "the store lacks configurations": a signal after the last one changes nothing.
  s.interrupted = measured < todo.size();
  s.signal = s.interrupted ? detail::stop_signal() : 0;
  // A store that lost its name after the last commit: its rows are saved, and the run fails.
  if (const auto rescued = store.rescue_if_unnamed()) throw MeasureError(store.unnamed_message(*rescued));
  s.store_moved = store.moved();
  return s;
}

}  // namespace carb
