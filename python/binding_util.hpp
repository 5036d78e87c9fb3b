// Helpers the binding files of the _carb module share.
#pragma once
#include <pybind11/pybind11.h>

#include <csignal>
#include <map>
#include <type_traits>
#include <nlohmann/json.hpp>
#include <string>

#include "carb/error.hpp"
#include "carb/interrupt.hpp"
#include "carb/profiler.hpp"

namespace carb_python {

namespace py = pybind11;

/// A JSON document as the Python objects json.loads makes of it (dict, list, float, ...).
/// A byte that is not UTF-8 (in a path given as bytes) becomes U+FFFD: it ended carb.profile in a
/// RuntimeError after the work was done (hundred-and-thirty-first hostile pass).
inline py::object to_python(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

/// The measuring protocol from the Python surface's checked mapping (carb/_measure.py): `carb
/// profile`'s flag names with underscores, each a number (flags 0 or 1, `util` the share sampled).
/// Settings left out keep Protocol's defaults, which are the CLI's.
carb::Protocol protocol_from(const std::map<std::string, double>& given);

/// carb.profile and carb.export (profiling into a store, and the store as a dataset CSV).
void bind_measure(py::module_& m);

/// Delivers a signal that came after carb's work last checked for one, once the scope that caught
/// it has put the previous handlers back, as if it had come just after the call. To Python's own
/// handler (Ctrl-C: KeyboardInterrupt), not through the OS: another call's scope may still have
/// carb's handler installed, which took a raise() as a second signal and ended the process. A
/// signal Python leaves at its default (SIGTERM) gets the default action, through the OS: handed to
/// Python it was ignored, and `kill -TERM` during a call that had checked for the last time left
/// the process running. Throws py::error_already_set when Python's handler raised.
inline void deliver_late_signal(int late) {
  if (late == 0) return;
  struct sigaction now {};
  if (sigaction(late, nullptr, &now) == 0 && !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL) {
    std::raise(late);
    return;
  }
  if (PyErr_SetInterruptEx(late) == 0 && PyErr_CheckSignals() != 0) throw py::error_already_set();
}

/// The CLI's flags in a message, in Python's keywords ("--out" is `out`; carb_module.cpp).
std::string python_words(const std::string& text);

/// A message of carb's as a Python str: UTF-8, a byte that is none (a path's) as "\\xNN".
inline py::str decoded(const std::string& text) {
  PyObject* s = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "backslashreplace");
  if (!s) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

/// Runs `f` without the GIL inside a carb::StopOnSignalsScope: Ctrl-C (or SIGTERM) stops carb's work
/// at its next step, as the CLI's, and raises KeyboardInterrupt with carb::Interrupted's message.
/// (A hostile tester's finding: Python's own handler only runs when C++ returns, so Model.train and
/// evaluate ran to their end through three Ctrl-Cs, then discarded the result.) A signal that came
/// after the work's last check is delivered once the scope has ended (deliver_late_signal).
template <class F>
auto stoppable(F&& f) -> decltype(f()) {
  if constexpr (std::is_void_v<decltype(f())>) {
    stoppable([&] { return f(), 0; });
  } else {
    try {
      int late = 0;
      auto result = [&] {
        const carb::StopOnSignalsScope scope;
        const py::gil_scoped_release release;
        auto r = f();
        late = scope.signal();
        return r;
      }();
      deliver_late_signal(late);
      return result;
    } catch (const carb::Interrupted& e) {
      // In Python's words ("what was at out is unchanged": a hostile tester read "--out").
      PyErr_SetObject(PyExc_KeyboardInterrupt, decoded(python_words(e.what())).ptr());
      throw py::error_already_set();
    }
  }
}
}  // namespace carb_python
