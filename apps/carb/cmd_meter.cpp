// `carb meter`: what the energy meter on this machine can resolve (update period, jitter, instant
// power readings, idle power), and the window study that decides how long an energy window must be.
#include <iostream>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/meter.hpp"
#include "carb/plugin.hpp"
#include "carb/profiler.hpp"
#include "config_flags.hpp"

namespace carb::cli {
namespace {

struct MeterCmd {
  std::string backend = "cuda", format, study;
  double seconds = 3.0;
  WindowStudyOptions w;
};

void print_check(const MeterCheck& m) {
  auto ms = [](const std::optional<double>& v) { return v ? extra_number(*v) + " ms" : std::string("-"); };
  std::cout << "meter: " << m.meter << (m.note.empty() ? "" : " (" + m.note + ")") << "\n";
  if (m.meter == "none") return;
  std::cout << "counter updates: " << m.updates << " in " << extra_number(m.observed_s) << " s; period median "
            << ms(m.period_ms) << ", p10 " << ms(m.period_p10_ms) << ", p90 " << ms(m.period_p90_ms) << "\n";
  if (m.idle_power_w) std::cout << "idle power (counter): " << extra_number(*m.idle_power_w) << " W\n";
  std::cout << "instant power reading: " << m.power_reading;
  if (m.power_reading != "none")
    std::cout << ", " << m.power_changes << " changes, period median " << ms(m.power_period_ms) << ", mean "
              << (m.power_mean_w ? extra_number(*m.power_mean_w) + " W" : "-");
  std::cout << "\n";
}

void run(MeterCmd& c, const std::string& cmdline) {
  load_profiler_backends();
  if (c.study.empty()) {
    if (!c.w.out.empty()) throw InputError("--out is for --study; the meter check prints to the terminal");
    auto b = make_backend(c.backend, Protocol{});
    const MeterCheck m = b->check_meter(c.seconds);
    if (c.format == "json") std::cout << json_text(m.to_json(), 2) << '\n';
    else print_check(m);
    return;
  }
  if (c.w.out.empty()) throw InputError("--study needs --out FILE for the study's rows");
  c.w.backend = c.backend;
  c.w.command_line = cmdline;
  c.w.inputs = {c.study};
  const auto s = run_window_study(read_configs_csv(c.study), c.w);
  for (const auto& f : s.failures) std::cerr << "carb meter --study: " << f << "\n";
  std::cout << "window study: " << s.traces << " traces (" << s.skipped << " already in " << printable(c.w.out.string()) << "), "
            << s.rows << " windows, " << s.failures.size() << " configurations failed -> " << printable(c.w.out.string()) << "\n";
}

Registrar reg({"meter", "Check the energy meter (update period, jitter, power readings, idle power), or run the window study",
               [](CLI::App& app) {
                 auto c = std::make_shared<MeterCmd>();
                 app.add_option("--backend", c->backend, "cpu (RAPL, where readable) | cuda (NVML)")->capture_default_str();
                 auto* seconds = app.add_option("--seconds", c->seconds, "watch the idle counter at most this long (the check, not --study)")->capture_default_str()->check(in_range(0.05, 600.0));
                 auto* study = app.add_option("--study", c->study, "configurations CSV: run each back to back for --trace-s, and evaluate windows of every --windows length against it");
                 app.add_option("--out", c->w.out, "window-study CSV (resumed if it is one; a .json sidecar records the meter and the GPU)");
                 app.add_option("--trace-s", c->w.trace_s, "length of each trace: the reference window")->capture_default_str()->check(in_range(0.01, 600.0))->needs(study);
                 app.add_option("--windows", c->w.windows_s, "window lengths to evaluate (s), each shorter than --trace-s")->delimiter(',')->capture_default_str()->needs(study);
                 app.add_option("--repeats", c->w.repeats, "traces per configuration")->capture_default_str()->check(in_range(1, 100))->needs(study);
                 app.add_option("--warmup", c->w.warmup, "untimed passes before each trace")->capture_default_str()->check(in_range(0, 100000))->needs(study);
                 app.add_flag("--force", c->w.force, "replace an --out (and its .json) that is not a window study; what was there is kept first as NAME.earlier.EXT")->needs(study);
                 add_format(app, c->format, {"table", "json"});
                 study->excludes(seconds);
                 app.callback([c] { run(*c, command_line()); });
               }});

}  // namespace
}  // namespace carb::cli
