// Measuring from Python: the protocol a plan is priced under or a profile runs with, `carb profile`
// (run_profile with the LibTorch backends) and `carb data export` (export_store).
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cmath>
#include <map>
#include <vector>

#include "binding_util.hpp"
#include "carb/carb.hpp"

namespace carb_python {

carb::Protocol protocol_from(const std::map<std::string, double>& given) {
  carb::Protocol p;
  const auto whole = [](double v, const std::string& k) {
    if (v != std::floor(v)) throw carb::InputError("protocol " + k + " must be a whole number");
    if (std::fabs(v) > 1e9) throw carb::InputError("protocol " + k + " is out of range");
    return static_cast<int>(v);
  };
  const std::map<std::string, int*> wholes = {{"warmup", &p.warmup},           {"min_passes", &p.min_passes},
                                              {"max_passes", &p.max_passes},   {"threads", &p.threads},
                                              {"energy_ticks", &p.energy_ticks}};
  const std::map<std::string, double*> numbers = {
      {"target_ci", &p.target_rel_ci},      {"max_timed_s", &p.max_timed_s},   {"cooldown", &p.cooldown_s},
      {"min_energy_window", &p.min_energy_window_s}, {"util_window", &p.util_window_s}, {"util", &p.util_sample},
      {"cooldown_above", &p.cooldown_above_c}};
  const std::map<std::string, bool*> flags = {{"reference", &p.reference},
                                              {"keep_memory", &p.keep_memory},
                                              {"channels_last", &p.channels_last},
                                              {"realtime", &p.realtime},
                                              {"rebuild_networks", &p.rebuild_networks}};
  for (const auto& [k, v] : given) {
    if (const auto w = wholes.find(k); w != wholes.end()) *w->second = whole(v, k);
    else if (const auto n = numbers.find(k); n != numbers.end()) *n->second = v;
    else if (const auto f = flags.find(k); f != flags.end()) *f->second = v != 0;
    else throw carb::InputError("unknown protocol setting '" + k + "'");
  }
  return p;
}

namespace {

py::object profile(std::vector<carb::Config> configs, const std::filesystem::path& db, const std::string& backend,
                   const std::string& platform, const std::map<std::string, double>& protocol, bool group_architectures,
                   bool check_meter, bool retry_errors, bool progress, const std::string& command_line, bool redo,
                   bool replan) {
  carb::ProfileOptions o;
  o.backend = backend;
  o.db = db;
  o.protocol = protocol_from(protocol);
  o.check_meter = check_meter;
  o.retry_errors = retry_errors;
  o.redo = redo;
  o.replan = replan;
  o.progress = progress;
  o.command_line = command_line;
  // As the CLI: CPU results depend on the thread count, so it is part of the default platform id.
  o.platform = !platform.empty() ? platform
               : backend == "cpu" ? "cpu-" + std::to_string(o.protocol.threads) + "t"
                                  : backend;
  // As `carb profile --configs`, which refuses a file repeating a configuration; by network, as it
  // does (a review: widths 0.25 and 0.251 build the same channels, and one was skipped unsaid).
  std::map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (const auto [it, fresh] = first.emplace(carb::network_key(configs[i]), i); !fresh)
      throw carb::InputError("configuration " + std::to_string(i) + " (" + carb::config_key(configs[i]) +
                             ") repeats configuration " + std::to_string(it->second) + " (" +
                             carb::config_key(configs[it->second]) + "): give each network once");
  if (group_architectures) configs = carb::group_by_architecture(configs);
  // With the GIL held, so that a Ctrl-C while LibTorch loads is Python's, and raised here.
  carb::load_profiler_backends();
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  carb::ProfileSummary s;
  {
    py::gil_scoped_release release;  // run_profile takes SIGINT/SIGTERM as a request to stop
    s = carb::run_profile(configs, o);
  }
  auto j = s.to_json();
  j["platform"] = o.platform, j["protocol_id"] = o.protocol.id(), j["db"] = o.db.string();
  return to_python(j);
}

py::object export_store(const std::filesystem::path& db, const std::filesystem::path& out,
                        std::optional<std::string> platform, std::optional<std::string> protocol, bool force,
                        const std::string& command_line) {
  carb::ExportOptions o;
  o.db = db;
  o.out = out;
  o.platform = std::move(platform);
  o.protocol = std::move(protocol);
  o.force = force;
  o.command_line = command_line;
  // Ctrl-C stops it before the write, as the CLI's (KeyboardInterrupt, nothing written).
  const carb::ExportSummary s = stoppable([&] { return carb::export_store(o); });
  return to_python(s.to_json());
}

py::object store_info(const std::filesystem::path& db) {
  carb::StoreInfo info;
  {
    py::gil_scoped_release release;
    info = carb::store_info(db);
  }
  return to_python(info.to_json());
}

}  // namespace

void bind_measure(py::module_& m) {
  m.def("profile", &profile, py::arg("configs"), py::arg("db"), py::arg("backend"), py::arg("platform"),
        py::arg("protocol"), py::arg("group_architectures"), py::arg("check_meter"), py::arg("retry_errors"),
        py::arg("progress"), py::arg("command_line"), py::arg("redo") = false, py::arg("replan") = false);
  m.def("store_info", &store_info, py::arg("db"));
  m.def("export", &export_store, py::arg("db"), py::arg("out"), py::arg("platform"), py::arg("protocol"),
        py::arg("force"), py::arg("command_line"));
}

}  // namespace carb_python
