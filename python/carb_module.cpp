// carb's Python bindings (module carb._carb; the package carb/__init__.py is the user's surface).
// Thin by design: configurations, presets and the analytic model, CarbModel (load, train, save,
// predict into numpy arrays), screen and recommend. Results that the library already serializes
// (arch, screen, recommend) cross as Python dicts; predictions cross as numpy arrays. carb's
// typed errors become carb.Error and its subclasses, with the same one-line messages.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "binding_util.hpp"
#include "carb/carb.hpp"

namespace py = pybind11;

// CarbModel owns its learners (move-only), but std::vector's copy constructor is declared anyway,
// so pybind11's trait would think it copyable: models cross by move only.
template <>
struct pybind11::detail::is_copy_constructible<carb::CarbModel> : std::false_type {};

namespace {

using carb_python::python_words;
using carb_python::stoppable;
using carb_python::to_python;

// A number argument as T, refusing a bool: True is an int to Python and to pybind11, so
// Config(..., batch=True) was batch 1 and width=True width 1 (seventeenth hostile pass).
template <class T>
T number_arg(const py::object& v, const char* name) {
  const std::string type = py::str(py::type::of(v).attr("__name__"));
  if (py::isinstance<py::bool_>(v) || type == "bool_" || type == "bool")
    throw carb::InputError(std::string(name) + " is " + py::repr(v).cast<std::string>() + ", not a number");
  try {
    // An integer is an int or has __index__ (numpy's integers): pybind11's conversion truncated
    // np.float32(8.9), Fraction(17, 2) and Decimal("8.5") to 8 (twenty-third hostile pass) while it
    // refused a Python float. No float is a batch size, whole or not.
    if constexpr (std::is_integral_v<T>) {
      const py::int_ whole = py::module_::import("operator").attr("index")(v);
      // An integer too large for T is out of range, not "not an integer" (a hostile tester's finding).
      const py::object lo = py::int_(std::numeric_limits<T>::min()), hi = py::int_(std::numeric_limits<T>::max());
      if (whole < lo || whole > hi)
        throw carb::InputError(std::string(name) + " is " + py::repr(v).cast<std::string>() + ", out of range");
      return whole.template cast<T>();
    }
    return v.cast<T>();
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    throw carb::InputError(std::string(name) + " is " + py::repr(v).cast<std::string>() + ", not an integer");
  } catch (const py::cast_error&) {
    throw carb::InputError(std::string(name) + " is " + py::repr(v).cast<std::string>() + ", not " +
                           (std::is_integral_v<T> ? "an integer" : "a number"));
  }
}

// A name argument: a str, not None or 1 (pybind11's "incompatible constructor arguments" before).
std::string name_arg(const py::object& v, const char* name) {
  if (!py::isinstance<py::str>(v))
    throw carb::InputError(std::string(name) + " is " + py::repr(v).cast<std::string>() + ", not a name");
  return v.cast<std::string>();
}

carb::Config make_config(const py::object& family_arg, const py::object& depth_arg, const py::object& width_arg,
                         const py::object& resolution_arg, const py::object& batch_arg, const py::object& precision_arg) {
  const std::string family = name_arg(family_arg, "family"), precision = name_arg(precision_arg, "precision");
  const int depth = number_arg<int>(depth_arg, "depth"), resolution = number_arg<int>(resolution_arg, "resolution"),
            batch = number_arg<int>(batch_arg, "batch");
  const double width = number_arg<double>(width_arg, "width");
  const carb::Config c{carb::parse_family(family), depth, width, resolution, batch, carb::parse_precision(precision)};
  carb::validate(c);
  return c;
}

// A numpy array of n values, value(i) each: every column that crosses to Python is built here.
template <class F>
py::array_t<double> array_of(std::size_t n, F value) {
  py::array_t<double> a(static_cast<py::ssize_t>(n));
  auto w = a.mutable_unchecked<1>();
  for (std::size_t i = 0; i < n; ++i) w(static_cast<py::ssize_t>(i)) = value(i);
  return a;
}

// target -> numpy array, plus "<target>_lower"/"_upper" under a confidence, "outside": for each
// configuration, the dimensions where it lies past the trained ranges (empty inside), and
// "trained_architecture": a bool array, false for a network the model never measured.
py::dict predict(const carb::CarbModel& m, const std::vector<carb::Config>& configs, std::optional<double> confidence,
                 const std::vector<std::pair<double, double>>& readings) {
  // A telemetry model answers from the utilization measured for each configuration (hundred-and-
  // thirteenth hostile pass: Python had no way to give it, and a CSV's columns were ignored).
  if (!readings.empty() && readings.size() != configs.size())
    throw carb::InputError("telemetry has " + std::to_string(readings.size()) + " readings for " +
                           std::to_string(configs.size()) + " configurations: give one (avg_sm_util, avg_mem_util) per configuration");
  std::vector<carb::Telemetry> tel;
  for (const auto& [sm, mem] : readings) tel.push_back({sm, mem});
  // A chunk at a time inside a stoppable call, so Ctrl-C stops a long list at the next chunk (as the
  // CLI's): a million configurations took minutes, deaf to it. The answers are the same as in one go.
  const std::vector<carb::Prediction> p = stoppable([&] {
    const carb::StopOnSignalsScope scope;  // nested: reads the signal the call's own scope records
    std::vector<carb::Prediction> all;
    all.reserve(configs.size());
    m.predict_chunked(configs, tel, confidence, [&](std::vector<carb::Prediction>&& answers, std::size_t) {
      all.insert(all.end(), std::make_move_iterator(answers.begin()), std::make_move_iterator(answers.end()));
      if (const int sig = scope.signal(); sig != 0 && all.size() < configs.size())
        throw carb::Interrupted(sig, "Model.predict interrupted by a signal after " + std::to_string(all.size()) +
                                         " of " + std::to_string(configs.size()) +
                                         " configurations; nothing was returned");
      return true;
    }, carb::kPredictChunk);
    return all;
  });
  py::dict out;
  for (const std::string& t : m.targets()) {
    out[py::str(t)] = array_of(p.size(), [&](std::size_t i) { return p[i].value.at(t); });
    if (!confidence) continue;
    out[py::str(t + "_lower")] = array_of(p.size(), [&](std::size_t i) { return p[i].interval.at(t).first; });
    out[py::str(t + "_upper")] = array_of(p.size(), [&](std::size_t i) { return p[i].interval.at(t).second; });
  }
  py::list outside;
  for (const auto& pr : p) {
    py::list dims;
    for (const auto& e : pr.outside) dims.append(e.text);
    outside.append(dims);
  }
  out["outside"] = outside;
  // Whether each configuration's network was measured in training (at any resolution and batch).
  py::array_t<bool> trained(static_cast<py::ssize_t>(p.size()));
  auto tw = trained.mutable_unchecked<1>();
  for (std::size_t i = 0; i < p.size(); ++i) tw(static_cast<py::ssize_t>(i)) = p[i].trained_architecture;
  out["trained_architecture"] = trained;
  // Whether each predicted peak memory is within the device's, where the model knows it (as predict's
  // CSV and JSON have it).
  const carb::DeviceLimits device = carb::held_device(m);
  const auto flags = [&](const std::function<bool(const carb::Prediction&)>& holds) {
    py::array_t<bool> a(static_cast<py::ssize_t>(p.size()));
    auto w = a.mutable_unchecked<1>();
    for (std::size_t i = 0; i < p.size(); ++i) w(static_cast<py::ssize_t>(i)) = holds(p[i]);
    return a;
  };
  if (device.memory_mb)
    out["fits_device_memory"] = flags([&](const carb::Prediction& x) { return carb::fits_device_memory(x, *device.memory_mb); });
  if (device.power_limit_w)
    out["within_power_limit"] = flags([&](const carb::Prediction& x) { return carb::within_power_limit(x, *device.power_limit_w); });
  // As the CLI notes it (twenty-seventh hostile pass: Python said nothing of the host speed).
  if (const auto ref = m.drift_reference_ms()) out["drift_reference_ms"] = *ref;
  // The CLI's notes as (text, caution) pairs, which Model.predict turns into warnings and removes.
  py::list notes;
  for (const carb::PredictionNote& n :
       carb::prediction_note_lines(carb::count_prediction_notes(p, m), m, confidence, "confidence"))
    notes.append(py::make_tuple(python_words(n.text), n.caution));  // "a lower confidence", not "--confidence"
  out["notes"] = notes;
  return out;
}

carb::CarbModel train(const std::vector<std::filesystem::path>& data, int trees, bool correctors,
                      const std::string& normalize, unsigned seed, int threads, bool fast,
                      const std::vector<std::filesystem::path>& remeasured, std::optional<double> device_memory_mb,
                      int size_bins, bool telemetry) {
  if (fast && (trees != 0 || !correctors))
    throw carb::InputError("fast=True sets the trees and turns the correctors off; give it alone");
  carb::TrainOptions o;
  o.params.n_trees = trees;
  o.correctors = correctors;
  if (fast) carb::make_fast(o);
  o.params.threads = threads;
  o.normalize = normalize;
  o.seed = seed;
  o.params.seed = seed;  // the learners too, as `carb train --seed` (a hostile tester: they kept 42)
  o.size_bins = size_bins;
  o.use_telemetry = telemetry;  // as `carb train --telemetry`
  // What `carb train` says of the rows it leaves out (oom and error rows), as warnings.
  std::vector<std::string> notes;
  carb::new_warning_round();  // each call says again what is wrong with its inputs
  const carb::Dataset d = carb::read_datasets(data, &notes);
  for (const auto& n : notes) carb::warn(n);
  carb::check_remeasurement_files(remeasured, data);
  std::optional<carb::Dataset> again;
  if (!remeasured.empty()) {
    again = carb::read_datasets(remeasured);
    carb::check_remeasurement(d, *again);  // before the work
  }
  std::vector<std::string> device_notes;
  const carb::DeviceLimits device = carb::device_limits_of(data, d, device_memory_mb, &device_notes);  // before the work
  for (const auto& n : device_notes) carb::warn(n);
  carb::CarbModel m = stoppable([&] { return carb::CarbModel::train(d, o); });
  if (again) m.calibrate_remeasurement(d, *again);
  m.set_device_limits(device);
  carb::TrainingRecord record;  // the files it was trained from: save() never writes over them
  for (const auto& f : data) record.data_files.push_back(std::filesystem::absolute(f).string());
  for (const auto& f : remeasured)
    record.remeasured_files.push_back(std::filesystem::absolute(f).lexically_normal().string());
  m.set_training_record(std::move(record));
  return m;
}

py::object screen(const std::vector<carb::Config>& configs, const carb::CarbModel& source,
                  const carb::CarbModel* target, const std::string& rank_by, std::optional<std::size_t> top_k,
                  const carb::Budgets& budgets, std::optional<double> confidence, const std::string& capacity) {
  carb::ScreenOptions o;
  o.rank_by = rank_by;
  o.top_k = top_k;
  o.budgets = budgets;
  o.confidence = confidence;
  o.capacity = carb::parse_capacity(capacity);
  // Stoppable as plan is: Ctrl-C stops it as the models predict the space (most of a large screen's
  // time; it was heard only when screen returned).
  const carb::ScreenResult r = stoppable([&] {
    const carb::StopOnSignalsScope scope;  // nested: reads the signal the call's own scope records
    o.progress = [&](std::size_t predicted, std::size_t of) {
      if (const int sig = scope.signal(); sig != 0)
        throw carb::Interrupted(sig, "carb.screen interrupted by a signal after " + std::to_string(predicted) + " of " +
                                         std::to_string(of) + " configurations predicted; nothing was returned");
    };
    return carb::screen(configs, source, target, o);
  });
  // What the CLI notes, as warnings (sixty-sixth hostile pass: Python's screen and recommend said
  // nothing of guesses, unbounded intervals or precisions never trained, which only the dict held).
  for (const auto& n : carb::screen_notes(r))
    if (n.caution) carb::warn(n.text);
  return to_python(r.to_json());
}

py::object recommend(const carb::CarbModel& m, const carb::Config& arch, const std::vector<int>& batches,
                     const std::vector<std::string>& precisions, std::optional<double> latency_max,
                     std::optional<double> memory_max, std::optional<double> confidence) {
  carb::RecommendOptions o;
  o.family = arch.family;
  o.depth = arch.depth;
  o.width = arch.width;
  o.resolution = arch.resolution;
  if (!batches.empty()) o.batches = batches;
  for (const auto& p : precisions) o.precisions.push_back(carb::parse_precision(p));
  o.latency_max_ms = latency_max;
  o.memory_max_mb = memory_max;
  o.confidence = confidence;
  const carb::RecommendResult r = carb::recommend(m, o);
  for (const auto& n : carb::recommendation_notes(r))
    if (n.caution) carb::warn(n.text);
  // The dict's notes in Python's words, as its warnings (hundred-and-thirty-seventh hostile pass: they
  // said "--confidence" where the warnings said "confidence").
  nlohmann::json j = r.to_json();
  for (auto& n : j["notes"]) n = python_words(n.get<std::string>());
  return to_python(j);
}

// The plan as columns: the configurations in the order to measure them, and per row the score,
// the model's spread, the predicted latency and seconds to measure (NaN without a model).
py::dict plan(const std::vector<carb::Config>& candidates, const std::vector<carb::Config>& measured,
              const carb::CarbModel* model, const std::string& strategy, std::optional<std::size_t> count,
              std::optional<double> budget_s, double diversity, unsigned seed, const std::string& spread,
              double build_s, const std::string& backend, const std::map<std::string, double>& protocol) {
  carb::PlanOptions o;
  o.strategy = carb::parse_plan_strategy(strategy);
  o.count = count;
  o.budget_s = budget_s;
  o.diversity = diversity;
  o.seed = seed;
  o.spread = carb::parse_spread_space(spread);
  o.build_s = build_s;
  o.backend = backend;
  o.protocol = carb_python::protocol_from(protocol);
  // Stoppable as the CLI's: Ctrl-C stops the choosing at the next row (a hostile tester: 40,740
  // candidates ran to their end through it, and the result was thrown away).
  const carb::Plan p = stoppable([&] {
    const carb::StopOnSignalsScope scope;  // nested: reads the signal the call's own scope records
    o.progress = [&](std::size_t planned, std::size_t wanted) {
      if (const int sig = scope.signal(); sig != 0)
        throw carb::Interrupted(sig, "carb.plan interrupted by a signal after " + std::to_string(planned) +
                                         " of at most " + std::to_string(wanted) + " rows chosen; nothing was returned");
    };
    o.scoring = [&](const char*, std::size_t predicted, std::size_t of) {  // and before the first, as the model scores them
      if (const int sig = scope.signal(); sig != 0)
        throw carb::Interrupted(sig, "carb.plan interrupted by a signal after " + std::to_string(predicted) + " of " +
                                         std::to_string(of) + " candidates predicted; nothing was returned");
    };
    return carb::make_plan(candidates, measured, model, o);
  });
  const auto column = [&](double carb::PlannedRow::*field) {
    return array_of(p.rows.size(), [&](std::size_t i) { return p.rows[i].*field; });
  };
  std::vector<carb::Config> configs;
  for (const auto& r : p.rows) configs.push_back(r.config);
  py::dict out;
  out["configs"] = configs;
  out["score"] = column(&carb::PlannedRow::score);
  out["uncertainty"] = column(&carb::PlannedRow::uncertainty);
  out["latency_ms"] = column(&carb::PlannedRow::latency_ms);
  out["cost_s"] = column(&carb::PlannedRow::cost_s);
  py::list outside;  // per row, where it lies outside the trained ranges (empty inside)
  for (const auto& r : p.rows) outside.append(carb::outside_text(r.outside));
  out["outside"] = outside;
  out["strategy"] = carb::to_string(p.strategy);
  out["candidates"] = p.candidates;
  out["excluded"] = p.excluded;
  // Thirty-sixth hostile pass: the rows passed over under a budget were counted by the CLI only.
  out["unknown_cost"] = p.unknown_cost;
  out["planned_unknown_cost"] = p.planned_unknown_cost();
  out["nonpositive_predictions"] = p.nonpositive_predictions;
  out["over_device_memory"] = p.over_device_memory;
  out["planned_nonpositive"] = p.planned_nonpositive();
  // As `carb plan` says (a hostile tester: Python said nothing of a row predicted at 1.1e7 s).
  const auto slow = p.rows_longer_than(3600);
  out["planned_over_an_hour"] = slow.size();
  if (!slow.empty()) {
    const auto longest = *std::max_element(slow.begin(), slow.end(), [&](std::size_t a, std::size_t b) {
      return p.rows[a].cost_s < p.rows[b].cost_s;
    });
    out["longest_planned"] = py::make_tuple(p.rows[longest].config, p.rows[longest].cost_s);
  }
  out["total_cost_s"] = p.total_cost_s;
  // As `carb plan` warns: the costs priced under other settings than the model's data was measured with.
  out["protocol_departure"] = model && p.priced ? python_words(carb::model_protocol_departure(*model, o.protocol, backend))
                                                : std::string();
  return out;
}

}  // namespace

namespace carb_python {

// An input error in the words of the Python surface: the library's checks name the CLI's flags
// ("--test-fraction must be ..."), which Python takes as keywords (test_fraction=...). A hostile
// tester's finding. Only the flags the Python functions have a keyword for are rewritten, and only
// as whole words after a space, "(" or "`": "--old/s.db" in a path and a preset named '--force' are
// the user's own text.
std::string python_words(const std::string& text) {
  static const std::map<std::string, std::string> keywords = [] {
    std::map<std::string, std::string> k;
    const auto underscored = [](std::string name) {
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    };
    for (const char* same : {"arch", "backend", "batches", "budget-s", "budgets", "build-s", "candidates", "capacity",
                             "columns", "confidence", "config", "configs", "count", "data", "db", "diversity",
                             "known", "latency-max", "layers", "measured", "memory-max", "model", "normalize", "out",
                             "platform", "precisions", "protocol", "rank-by", "seed", "spread", "strategy", "target",
                             "test-fraction", "threads", "top-k", "trees", "remeasured", "device-memory-mb",
                             "size-bins",
                             // the protocol's settings, keys of carb.profile's and carb.plan's protocol
                             "channels-last", "cooldown", "cooldown-above", "energy-ticks", "keep-memory",
                             "max-passes", "max-timed-s", "min-energy-window", "min-passes", "realtime",
                             "rebuild-networks", "reference", "target-ci", "util", "util-window", "warmup"})
      k[same] = underscored(same);
    for (const char* on :
         {"check-meter", "external", "fast", "force", "group-architectures", "quick", "retry-errors", "telemetry"})
      k[on] = underscored(on) + "=True";
    k["no-correctors"] = "correctors=False";
    return k;
  }();
  static const std::regex flag(R"((^|[\s(`])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?![a-z0-9_./-]))");
  // A '...'-quoted span is the user's value, kept as given ('x --seed' is a name, not a flag). It
  // opens at a quote after no letter or digit (an apostrophe, as in "model's", opens none) and
  // closes at the next quote before none. The flags are found in the whole text, so that a closing
  // quote is no start of a word ("'--seed" lost its dashes when the pieces were searched apart).
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  std::vector<std::pair<std::size_t, std::size_t>> quoted;  // [open, close] positions
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\'' || (i > 0 && word(text[i - 1]))) continue;
    std::size_t close = i + 1;
    while (close < text.size() && !(text[close] == '\'' && (close + 1 == text.size() || !word(text[close + 1])))) ++close;
    if (close >= text.size()) break;
    quoted.emplace_back(i, close);
    i = close;
  }
  // A `carb ...` command quoted in backticks is the CLI's, kept as given (a hostile tester: "give `carb
  // predict configs` a CSV" named neither the CLI's --configs nor a Python call).
  for (std::size_t open = text.find("`carb "); open != std::string::npos; open = text.find("`carb ", open + 1)) {
    const std::size_t close = text.find('`', open + 1);
    if (close == std::string::npos) break;
    quoted.emplace_back(open, close);
    open = close;
  }
  const auto inside = [&](std::size_t pos) {
    return std::any_of(quoted.begin(), quoted.end(), [&](const auto& q) { return q.first < pos && pos < q.second; });
  };
  std::string out;
  auto begin = text.cbegin();
  // Past the start, "^" is no start of the text (match_prev_avail).
  const auto from = [&] { return begin == text.cbegin() ? std::regex_constants::match_default : std::regex_constants::match_prev_avail; };
  for (std::smatch m; std::regex_search(begin, text.cend(), m, flag, from()); begin = m[0].second) {
    out.append(begin, m[0].first);
    const auto it = keywords.find(m[2].str());
    const auto dashes = static_cast<std::size_t>(m[0].first - text.cbegin()) + m[1].length();
    out += it == keywords.end() || inside(dashes) ? m[0].str() : m[1].str() + it->second;
  }
  out.append(begin, text.cend());
  // Said twice once the flag is a keyword (a hostile tester: "pass force=True (force=True in Python)").
  const std::string twice = " (force=True in Python)";
  for (std::size_t at; (at = out.find(twice)) != std::string::npos;) out.erase(at, twice.size());
  return out;
}

}  // namespace carb_python

namespace {

// The stack level of a warning raised from C++: the first frame outside the carb package, so that
// a warning points at the user's line (a hostile tester: screen's warnings pointed inside carb's
// __init__.py, where a filter by module or line cannot tell one caller from another).
// This extension module's import name (set when it loads: "carb._carb" where installed as carb).
std::string& module_name() {
  static std::string name;
  return name;
}

// The directory of this extension module, with a trailing '/': the package's Python files sit
// beside it, whatever the package is named or wherever it is installed. Read at the first warning
// (the import machinery sets __file__ after the module's init); "" where it cannot be read.
const std::string& package_dir() {
  static const std::string dir = [] {
    try {
      const auto file = py::module_::import(module_name().c_str()).attr("__file__").cast<std::string>();
      const auto slash = file.find_last_of('/');
      return slash == std::string::npos ? std::string() : file.substr(0, slash + 1);
    } catch (const py::error_already_set&) {
      return std::string();
    } catch (const py::cast_error&) {
      return std::string();
    }
  }();
  return dir;
}

int user_stack_level() {
  int level = 1;
  PyFrameObject* top = PyEval_GetFrame();
  if (!top) return level;  // no Python frame: a thread C++ started
  const std::string& package = package_dir();
  if (package.empty()) return level;
  try {
    for (auto frame = py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(top)); !frame.is_none();
         frame = frame.attr("f_back"), ++level)
      if (frame.attr("f_code").attr("co_filename").cast<std::string>().rfind(package, 0) != 0) return level;
  } catch (const py::error_already_set&) {  // only a stack level is at stake: the warning itself goes on
    return 1;
  } catch (const py::cast_error&) {
    return 1;
  }
  return 1;  // every frame is carb's own: the innermost
}

// Sets a Python exception whose message is `text` read as UTF-8, bytes that are not (a file name
// that is not UTF-8, quoted in the message) escaped as \\xNN: a hostile tester got an empty message,
// the whole text dropped because it did not decode.
void set_error(PyObject* type, const std::string& text) {
  PyObject* msg = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  if (!msg) {
    PyErr_Clear();
    PyErr_SetString(type, "(a message that could not be decoded)");
    return;
  }
  PyErr_SetObject(type, msg);
  Py_DECREF(msg);
}

}  // namespace

PYBIND11_MODULE(_carb, m) {
  module_name() = m.attr("__name__").cast<std::string>();
  m.doc() = "carb: predict what a CNN configuration costs to run, and screen configuration spaces";
  m.attr("__version__") = CARB_VERSION_STRING;

  // Translators run most recently registered first: the subclasses before carb.Error.
  // Each is also the Python exception a user would catch without knowing carb: bad input, data or a
  // bad model file is a ValueError, a failed measurement a RuntimeError (`except ValueError` caught
  // none of carb's errors before).
  static py::exception<carb::Error> error(m, "Error");
  const auto also = [](py::handle builtin) { return py::make_tuple(error, builtin); };
  static py::exception<carb::InputError> input_error(m, "InputError", also(PyExc_ValueError));
  static py::exception<carb::DataError> data_error(m, "DataError", also(PyExc_ValueError));
  static py::exception<carb::ModelError> model_error(m, "ModelError", also(PyExc_ValueError));
  static py::exception<carb::MeasureError> measure_error(m, "MeasureError", also(PyExc_RuntimeError));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const carb::InputError& e) {
      set_error(input_error.ptr(), python_words(e.what()));
    } catch (const carb::DataError& e) {
      set_error(data_error.ptr(), e.what());
    } catch (const carb::ModelError& e) {
      set_error(model_error.ptr(), e.what());
    } catch (const carb::MeasureError& e) {
      set_error(measure_error.ptr(), e.what());
    } catch (const carb::Interrupted& e) {
      // Work that stops on a signal inside its own scope (an export's, a dataset write's) raises
      // what a stoppable call raises: KeyboardInterrupt, not carb.Error (ninety-sixth pass's fixes).
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const carb::Error& e) {
      set_error(error.ptr(), e.what());
    }
  });

  // carb's warnings are carb.CarbWarning, a RuntimeWarning: one category a user can filter, silence
  // or make an error (`warnings.simplefilter("ignore", carb.CarbWarning)`) without touching others'.
  // Held for the life of the process (never released: the handler may warn until exit).
  static PyObject* const warning_type = PyErr_NewExceptionWithDoc(
      "carb.CarbWarning", "A warning from carb (a RuntimeWarning).", PyExc_RuntimeWarning, nullptr);
  if (!warning_type) throw py::error_already_set();
  m.attr("CarbWarning") = py::handle(warning_type);

  // The library's warnings become Python's (carb.CarbWarning, filterable with the warnings module),
  // from whatever thread and GIL state they are raised in; a filter that makes them errors raises.
  carb::set_warning_handler([](const std::string& w) {
    py::gil_scoped_acquire gil;
    // In Python's words too ("force=True replaces", not "--force replaces"; a hostile pass's finding),
    // and named as carb's, as the package's own warnings are ("carb: ...").
    const std::string text = python_words(w);
    const std::string said = text.rfind("carb: ", 0) == 0 ? text : "carb: " + text;
    // Decoded as an error's message is (a hostile tester: a path holding a byte that is no UTF-8 in a
    // warning raised UnicodeDecodeError, from merge after it had written its output).
    const py::str message = carb_python::decoded(said);
    if (PyErr_WarnEx(warning_type, PyUnicode_AsUTF8(message.ptr()), user_stack_level()) < 0)
      throw py::error_already_set();
  });

  py::class_<carb::Config>(m, "Config", "One point of the configuration space (validated on construction).")
      .def(py::init(&make_config), py::arg("family") = py::str("basic"), py::arg("depth") = py::int_(18),
           py::arg("width") = py::float_(1.0), py::arg("resolution") = py::int_(224), py::arg("batch") = py::int_(1),
           py::arg("precision") = py::str("fp32"))
      .def_property_readonly("family", [](const carb::Config& c) { return carb::to_string(c.family); })
      .def_readonly("depth", &carb::Config::depth)
      .def_readonly("width", &carb::Config::width)
      .def_readonly("resolution", &carb::Config::resolution)
      .def_readonly("batch", &carb::Config::batch)
      .def_property_readonly("precision", [](const carb::Config& c) { return carb::to_string(c.precision); })
      .def_property_readonly("key", [](const carb::Config& c) { return carb::config_key(c); })
      // Anything else is not equal (a hostile tester: `c == None` and `c in [None, c]` raised TypeError).
      .def("__eq__", [](const carb::Config& a, const py::object& b) -> py::object {
        if (!py::isinstance<carb::Config>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        return py::bool_(a == b.cast<carb::Config>());
      })
      .def("__ne__", [](const carb::Config& a, const py::object& b) -> py::object {
        if (!py::isinstance<carb::Config>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
        return py::bool_(!(a == b.cast<carb::Config>()));
      })
      .def("__hash__", [](const carb::Config& c) { return py::hash(py::str(carb::config_key(c))); })
      .def("__repr__", [](const carb::Config& c) { return "carb.Config('" + carb::config_key(c) + "')"; })
      // Pickled (and so copied, and sent to worker processes) as a call of Config with its six values,
      // checked again when read back (a hostile tester: copy.copy, deepcopy and pickle refused a
      // Config; py::pickle's state form aborted the interpreter at pickle protocols 0 and 1).
      .def("__reduce__", [](const carb::Config& c) {
        return py::make_tuple(py::type::of<carb::Config>(),
                              py::make_tuple(carb::to_string(c.family), c.depth, c.width, c.resolution, c.batch,
                                             carb::to_string(c.precision)));
      });

  m.attr("max_size_bins") = carb::kMaxSizeBins;
  m.def("preset_names", [] {
    std::vector<std::string> names;
    for (const auto& p : carb::presets()) names.push_back(p.name);
    return names;
  }, "Names of the configuration-space presets.");
  m.def("preset", &carb::enumerate_preset, py::arg("name"), "Every configuration of a preset, in a fixed order.");
  m.def(
      "read_configs",
      [](const std::filesystem::path& file) {
        return py::make_tuple(carb::read_configs_csv(file), carb::read_config_platforms_csv(file));
      },
      py::arg("path"), "The configurations of a CSV and each row's platform cell (\"\" without one).");
  m.def(
      "read_utilization_csv",
      [](const std::filesystem::path& file) {
        std::vector<carb::Config> configs;
        std::vector<std::pair<double, double>> readings;
        for (const carb::Record& r : carb::read_utilization_csv(file)) {
          configs.push_back(r.config);
          readings.emplace_back(*r.avg_sm_util, *r.avg_mem_util);
        }
        return py::make_tuple(configs, readings);
      },
      py::arg("path"), "The configurations of a CSV and each one's (avg_sm_util, avg_mem_util), as `carb predict` reads them for a telemetry model.");
  m.def("campaign_order", &carb::order_by_architecture, py::arg("configs"), py::arg("seed"), py::arg("per_arch") = 0,
        "The order `carb profile --arch-order SEED --per-arch K` measures configurations in.");
  m.def("evaluate",
        [](const carb::CarbModel& model, const std::vector<std::filesystem::path>& data, bool external, bool quick,
           std::optional<unsigned> seed, std::optional<double> test_fraction) {
          carb::EvaluateOptions o;
          o.external = external, o.quick = quick, o.seed = seed, o.test_fraction = test_fraction;
          o.data_files = data;
          carb::new_warning_round();  // each call says again what is wrong with its inputs
          const carb::Dataset d = carb::read_dataset_csvs(data);
          carb::Evaluation e = stoppable([&] { return carb::evaluate_model(model, d, o); });
          nlohmann::json doc = e.to_json();
          // Why a part was skipped, in the words of this call (a README walkthrough: "--external: no
          // training split to fit on" for external=True, "skipped (--quick)" for quick=True).
          const std::function<void(nlohmann::json&)> reasons = [&](nlohmann::json& j) {
            if (j.is_array())
              for (auto& v : j) reasons(v);
            if (!j.is_object()) return;
            for (auto& [key, v] : j.items())
              if (key == "reason" && v.is_string()) v = python_words(v.get<std::string>());
              else reasons(v);
          };
          reasons(doc);
          return to_python(doc);
        },
        py::arg("model"), py::arg("data"), py::arg("external") = false, py::arg("quick") = true,
        py::arg("seed") = py::none(), py::arg("test_fraction") = py::none(),
        "The paper's evaluation of a model on dataset CSVs (as `carb evaluate --format json`).");
  m.def("transfer",
        [](const std::filesystem::path& source, const std::filesystem::path& target, const carb::CarbModel* model,
           const std::vector<int>& ks, int repeats, unsigned seed) {
          carb::TransferOptions o;
          o.ks = ks, o.repeats = repeats, o.seed = seed;
          carb::new_warning_round();
          // The reading inside the stoppable scope too: a Ctrl-C while reading stops the draws at
          // their first (a review: outside it, the whole transfer ran before it was acted on).
          const carb::TransferResult r = stoppable([&] {
            const carb::Dataset a = carb::read_dataset_csv(source), b = carb::read_dataset_csv(target);
            return carb::transfer(a, b, o, model);
          });
          return to_python(r.to_json());
        },
        py::arg("source"), py::arg("target"), py::arg("model"), py::arg("ks"), py::arg("repeats"), py::arg("seed"),
        "Two platforms compared on their common configurations (as `carb transfer --format json`).");
  m.def("characterize",
        [](const std::filesystem::path& data, std::optional<double> sm_threshold) {
          carb::CharacterizeOptions o;
          o.sm_threshold = sm_threshold;
          carb::new_warning_round();
          const carb::Characterization c = stoppable([&] { return carb::characterize(carb::read_dataset_csv(data), o); });
          return to_python(c.to_json());
        },
        py::arg("data"), py::arg("sm_threshold"),
        "One dataset characterized (as `carb characterize --format json`).");
  m.def("validate",
        [](const std::filesystem::path& data) {
          carb::new_warning_round();
          const std::vector<std::string> problems = stoppable([&] { return carb::validate_dataset_csv(data); });
          return to_python(nlohmann::json{{"file", data.string()}, {"valid", problems.empty()}, {"problems", problems}});
        },
        py::arg("data"), "Every problem of one dataset CSV (as `carb data validate --format json`).");
  m.def("dataset_info",
        [](const std::filesystem::path& data) {
          carb::new_warning_round();
          const carb::DatasetInfo info = stoppable([&] { return carb::dataset_info(data); });
          return to_python(info.to_json());
        },
        py::arg("data"), "What one dataset CSV holds (as `carb data info --format json`).");
  // merge and combine: dataset CSVs written into one, the command's summary returned.
  const auto writes_dataset = [](auto write) {
    return [write](const std::vector<std::filesystem::path>& inputs, const std::filesystem::path& out, bool force,
                   const std::string& command_line) {
      carb::new_warning_round();
      return to_python(stoppable([&] { return write(inputs, out, command_line, force); }).to_json());
    };
  };
  m.def("merge", writes_dataset(&carb::merge_datasets), py::arg("inputs"), py::arg("out"), py::arg("force"),
        py::arg("command_line"), "Dataset CSVs merged into one (as `carb data merge --format json`).");
  m.def("combine", writes_dataset(&carb::combine_rounds), py::arg("rounds"), py::arg("out"), py::arg("force"),
        py::arg("command_line"), "Measuring rounds combined into their medians (as `carb data combine --format json`).");
  m.def("features",
        [](const std::vector<carb::Config>& configs) {
          const auto schema = carb::FeatureSchema::make(false);
          const carb::Matrix x = carb::build_features(schema, configs, {});
          py::array_t<float> a({static_cast<py::ssize_t>(x.rows), static_cast<py::ssize_t>(x.cols)});
          std::copy(x.data.begin(), x.data.end(), a.mutable_data());
          return py::make_tuple(a, carb::analytic_feature_names());
        },
        py::arg("configs"),
        "The analytic feature matrix carb's models learn from (rows x features, float32) and the feature names.");
  m.def("arch", [](const carb::Config& c, bool layers) { return to_python(carb::spec_to_json(carb::build_network_spec(c), layers)); },
        py::arg("config"), py::arg("layers") = false,
        "The analytic model of a configuration: params, MACs, FLOPs, activation bytes (and layers).");

  py::class_<carb::CarbModel>(m, "Model", "A trained CARB predictor (a model bundle).")
      .def_static("load", &carb::CarbModel::load, py::arg("path"), "Loads a bundle written by `carb train`.")
      .def_static("train", &train, py::arg("data"), py::arg("trees") = 0, py::arg("correctors") = true,
                  py::arg("normalize") = "auto", py::arg("seed") = 42u, py::arg("threads") = 2, py::arg("fast") = false,
                  py::arg("remeasured") = std::vector<std::filesystem::path>{}, py::arg("device_memory_mb") = py::none(),
                  py::arg("size_bins") = 1, py::arg("telemetry") = false,
                  "Trains on dataset CSVs (checked as every carb reader checks them); trees=0 is the paper's 800/800/400; "
                  "device_memory_mb: the device's memory, so that predictions needing more are said not to fit.")
      .def("save", py::overload_cast<const std::filesystem::path&, bool>(&carb::CarbModel::save, py::const_),
           py::arg("path"), py::arg("force") = false,
           "Writes the bundle atomically; refuses to replace anything but a carb bundle unless force.")
      .def_property_readonly("platform", &carb::CarbModel::platform)
      .def_property_readonly("targets", &carb::CarbModel::targets)
      .def_property_readonly(
          "device",
          [](const carb::CarbModel& m) { return to_python(carb::device_json(m.device_limits())); },
          "What the model knows of its device: memory_mb (as trained with device_memory_mb) and power_limit_w (from "
          "the data's provenance); None where unknown.")
      .def("trained_on", &carb::CarbModel::trained_on, py::arg("config"))
      .def("trained_architecture", &carb::CarbModel::trained_architecture, py::arg("config"))
      .def_property_readonly("unseen_calibration_networks", &carb::CarbModel::unseen_calibration_networks)
      .def_property_readonly(
          "uses_telemetry", [](const carb::CarbModel& m) { return m.schema().telemetry; },
          "Whether the model was trained with telemetry: it predicts from utilization measured for each configuration.")
      .def("predict", &predict, py::arg("configs"), py::arg("confidence") = py::none(),
           py::arg("readings") = std::vector<std::pair<double, double>>{});

  m.def("screen", &screen, py::arg("configs"), py::arg("source"), py::arg("target") = nullptr,
        py::arg("rank_by") = "", py::arg("top_k") = py::none(), py::arg("budgets") = carb::Budgets{},
        py::arg("confidence") = py::none(), py::arg("capacity") = "");
  carb_python::bind_measure(m);
  // A testing aid, not the API: a signal that arrives after carb's work checked for the last time
  // (raised inside the call, which carb's handler records and the work never reads) must still reach
  // Python, as the Ctrl-C or `kill -TERM` it is.
  m.def(
      "_signal_after_the_last_check", [](int sig) { stoppable([sig] { std::raise(sig); }); },
      "Testing aid: raises signal `sig` inside a stoppable call after its last check.");
  m.def(
      "_stopped_inside_the_library", [](int sig) { throw carb::Interrupted(sig, "work interrupted by a signal"); },
      "Testing aid: carb::Interrupted as library work that stops inside its own scope throws it.");
  m.def("plan", &plan, py::arg("candidates"), py::arg("measured"), py::arg("model"), py::arg("strategy"),
        py::arg("count"), py::arg("budget_s"), py::arg("diversity"), py::arg("seed"), py::arg("spread") = "units",
        py::arg("build_s") = 0.0, py::arg("backend") = "cpu", py::arg("protocol") = std::map<std::string, double>{});
  m.def("recommend", &recommend, py::arg("model"), py::arg("arch"), py::arg("batches") = std::vector<int>{},
        py::arg("precisions") = std::vector<std::string>{}, py::arg("latency_max") = py::none(),
        py::arg("memory_max") = py::none(), py::arg("confidence") = py::none());
}
