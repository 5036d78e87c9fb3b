// `carb profile`: measure configurations on real hardware into a resumable SQLite store.
#include <cstdlib>
#include <iostream>
#include <string>

#include "carb/dataset.hpp"
#include "carb/error.hpp"
#include "carb/plan.hpp"
#include "carb/plugin.hpp"
#include "carb/profiler.hpp"
#include "carb/warning.hpp"
#include "config_flags.hpp"
#include "util/stop_signal.hpp"

namespace carb::cli {
namespace {

struct ProfileCmd {
  SourceFlags src;
  ProfileOptions o;
  std::string format, plan, util = "all";
  long long arch_order = -1;  // -1: keep the given order
  int per_arch = 0;           // 0: every configuration of an architecture in one visit
  bool quiet = false, no_meter_check = false, group_architectures = false;
};

// Flag combinations are checked by carb::validate inside run_profile, so that library callers
// get the same refusals.
void run(ProfileCmd& c, const std::string& cmdline) {
  if (c.o.db.empty()) throw InputError("--db FILE is required");
  if (!c.plan.empty() && (c.src.given() || !c.src.shard_spec.empty()))
    throw InputError("give either --plan or --preset/--configs/--shard, not both");
  // A hostile tester: each shard's --replan erased the other shards' plan in a shared store.
  if (c.o.replan && !c.src.shard_spec.empty())
    throw InputError("--replan makes a run's configurations the whole plan, and a shard is part of one: replan "
                     "with the whole --preset or --configs, without --shard");
  if (!c.plan.empty() && c.arch_order >= 0)
    throw InputError("--arch-order reorders configurations; a plan is measured in its own order (--group-architectures "
                     "groups it by architecture): give one of them");
  if (c.group_architectures && c.arch_order >= 0)
    throw InputError("--arch-order already measures one architecture at a time (in a seeded order); "
                     "--group-architectures keeps the given order of architectures: give one of them");
  // Ninety-seventh hostile pass: both were taken, and every network was rebuilt without a word.
  if (c.group_architectures && c.o.protocol.rebuild_networks)
    throw InputError("--group-architectures measures one architecture at a time so that each network is built once; "
                     "--rebuild-networks builds it again for every configuration: give one of them");
  if (c.per_arch > 0 && !c.plan.empty())
    throw InputError("--per-arch sets the visits of --arch-order, which a plan does not take (it is measured in its own "
                     "order); --group-architectures measures a plan one architecture at a time");
  if (c.per_arch > 0 && c.arch_order < 0)
    throw InputError("--per-arch K sets how many configurations each visit of --arch-order measures: give --arch-order SEED too");
  c.o.protocol.util_sample = util_share(c.util);
  auto configs = c.plan.empty() ? c.src.load() : read_plan_csv(c.plan);  // a plan is measured in its order
  if (c.arch_order >= 0)
    configs = order_by_architecture(configs, static_cast<uint64_t>(c.arch_order), static_cast<std::size_t>(c.per_arch));
  if (c.group_architectures) configs = group_by_architecture(configs);
  c.o.check_meter = !c.no_meter_check;
  load_profiler_backends();
  // CPU results depend on the thread count, so it is part of the default platform id.
  if (c.o.platform.empty())
    c.o.platform = c.o.backend == "cpu" ? "cpu-" + std::to_string(c.o.protocol.threads) + "t" : c.o.backend;
  c.o.progress = !c.quiet;
  c.o.command_line = cmdline;
  // Before any measuring: a plan priced for another protocol, backend or platform, or edited since
  // carb wrote it, is measured as asked, but its costs and budget are not this run's.
  // A plan whose architectures do not recur apart builds each network once in its own order too.
  if (!c.plan.empty()) {
    const bool grouped = c.group_architectures || group_by_architecture(configs) == configs;
    for (const std::string& line : plan_departures(c.plan, c.o.protocol, c.o.backend, c.o.platform, grouped))
      warn(printable(line));
  }
  auto s = run_profile(configs, c.o);
  if (c.format == "json") {
    auto j = s.to_json();
    j["platform"] = c.o.platform, j["protocol_id"] = c.o.protocol.id(), j["db"] = c.o.db.string();
    std::cout << json_text(j, 2) << '\n';
  } else {
    std::cout << "profiled " << printable(c.o.platform) << " into " << printable(c.o.db.string()) << ": " << s.total << " configurations, "
              << s.skipped << " already done, " << s.ok << " ok, " << s.oom << " oom, " << s.error << " error"
              << (s.interrupted ? c.o.redo ? " (interrupted; a rerun measures every given configuration again, "
                                             "those redone already too: give only the rest)"
                                           : " (interrupted; rerun the same command to resume)"
                                : "")
              << '\n';
    if (s.kept_on_error > 0)
      std::cout << "  " << s.kept_on_error << " configuration" << (s.kept_on_error == 1 ? "" : "s")
                << " failed when measured again (error) and kept the stored ok row\n";
    if (s.replaced > 0)
      std::cout << "  " << s.replaced << " stored row" << (s.replaced == 1 ? "" : "s") << " measured again"
                << (s.interrupted ? " (those reached are replaced)" : ", each replaced by its new row") << '\n';
    if (s.ci_target_missed > 0)
      std::cout << "  " << s.ci_target_missed << " of the " << s.ok << " measured ok stopped timing (--max-passes "
                << c.o.protocol.max_passes << (c.o.protocol.max_timed_s > 0 ? " or --max-timed-s " +
                                                                                  extra_number(c.o.protocol.max_timed_s)
                                                                            : std::string())
                << ") before their latency interval reached --target-ci " << extra_number(c.o.protocol.target_rel_ci)
                << "; each row's latency_rel_ci95 says how close it came\n";
    if (s.skipped_errors > 0)
      std::cout << "  " << s.skipped_errors << " of the " << s.skipped << " already done "
                << (s.skipped_errors == 1 ? "is an error row" : "are error rows")
                << ", not measured again; --retry-errors measures them again\n";
    if (s.measured() > 0)
      std::cout << "  " << s.measured() << " measured in " << extra_number(s.wall_s) << " s: "
                << extra_number(s.configs_per_s()) << " configurations/s, compute share "
                << extra_number(100 * s.compute_share()) << "% (timed and energy-window passes / wall)\n";
  }
  if (s.export_problems > 0)
    std::cerr << "carb: warning: `data export` would refuse this store's rows of " << printable(c.o.platform)
              << " under this protocol: " << s.export_problems << " problem" << (s.export_problems == 1 ? "" : "s")
              << " (first: " << printable(s.first_export_problem)
              << "); measure those configurations again with --redo (as --configs, with this run's other flags)\n";
  // Twenty-fifth hostile pass: a run whose store was renamed under it reported its rows "into" a name
  // that no longer held them.
  if (s.store_moved)
    std::cerr << "carb: warning: " << printable(c.o.db.string()) << " was renamed, moved or replaced during the run; "
              << "the rows are in the file that had that name, under its new name\n";
  // After the summary, so that what was kept is reported; main turns it into exit 128 + signal.
  // A --redo run cannot resume: its rerun measures again what it already had (hundred-and-thirty-first
  // hostile pass: this line said "rerun the same command to resume" under the summary's warning).
  if (s.interrupted)
    throw Interrupted(s.signal, "interrupted by " + detail::signal_name(s.signal) +
                                    (c.o.redo ? "; a rerun with --redo measures every given configuration again, those "
                                                "redone already too: give only the rest"
                                              : "; rerun the same command to resume"));
}

Registrar reg({"profile", "Measure latency, peak memory, energy (where measurable) into a resumable store",
               [](CLI::App& app) {
                 auto c = std::make_shared<ProfileCmd>();
                 c->src.add(app);
                 app.add_option("--plan", c->plan, "measure the configurations of a plan CSV (from carb plan) in its order");
                 auto& p = c->o.protocol;
                 app.add_option("--backend", c->o.backend, "cpu | cuda")->capture_default_str();
                 app.add_option("--db", c->o.db, "SQLite store (created if missing; rerun to resume)");
                 app.add_flag("--retry-errors", c->o.retry_errors,
                              "measure again the configurations the store holds as error (a fault of the machine, "
                              "not of the configuration); an oom row stays");
                 app.add_flag("--redo", c->o.redo,
                              "measure the given configurations again, those stored ok too, each new row replacing "
                              "the stored one (for measurements `data export` refuses as disturbed: give them as "
                              "--configs with the store's other flags)");
                 app.add_flag("--replan", c->o.replan,
                              "this run's configurations become the store's whole plan for its platform and "
                              "protocol: what earlier runs were given and this one is not is forgotten, and export "
                              "no longer counts it as unmeasured (rows already measured stay)");
                 app.add_option("--platform", c->o.platform, "platform id stored with each row (default: <backend>-<threads>t)");
                 app.add_option("--warmup", p.warmup, "untimed warm-up passes")->capture_default_str()->check(in_range(0, 100000));
                 app.add_option("--min-passes", p.min_passes, "timed passes at least")->capture_default_str()->check(in_range(1, 1000000));
                 app.add_option("--max-passes", p.max_passes, "timed passes at most")->capture_default_str()->check(in_range(1, 1000000));
                 app.add_option("--target-ci", p.target_rel_ci, "stop when the 95% CI half-width / mean is below this (0 = off)")->capture_default_str()->check(in_range(0.0, 1.0));
                 app.add_option("--max-timed-s", p.max_timed_s, "stop timing after this many seconds, once min passes are done (0 = off)")->capture_default_str()->check(in_range(0.0, 1e6));
                 app.add_option("--cooldown", p.cooldown_s, "seconds of pause between configurations")->capture_default_str()->check(in_range(0.0, 3600.0));
                 app.add_option("--threads", p.threads, "intra-op threads (cpu)")->capture_default_str()->check(in_range(1, 1024));
                 app.add_flag("--channels-last", p.channels_last, "NHWC memory format");
                 app.add_option("--min-energy-window", p.min_energy_window_s, "repeat passes until the energy window lasts this long (s)")->capture_default_str()->check(in_range(0.0, 3600.0));
                 app.add_option("--util-window", p.util_window_s, "seconds of utilization sampling (cuda)")->capture_default_str()->check(in_range(0.0, 3600.0));
                 app.add_option("--util", c->util, "which configurations get the utilization window (cuda): all | none | sample:P (a stable hash picks a share P)")->capture_default_str();
                 app.add_option("--energy-ticks", p.energy_ticks, "size the energy window in whole updates of the energy counter, aligned to them (cuda; 0 = by --min-energy-window only, plain reads)")->capture_default_str()->check(in_range(0, 100000));
                 app.add_option("--cooldown-above", p.cooldown_above_c, "pause (at most --cooldown s) only while the GPU is warmer than this, degrees C (cuda; 0 = always pause)")->capture_default_str()->check(in_range(0.0, 200.0));
                 app.add_flag("--rebuild-networks", p.rebuild_networks, "build every configuration's network anew instead of once per architecture (the earlier, slower way)");
                 app.add_option("--arch-order", c->arch_order, "measure one architecture (family, depth, width, precision) at a time, architectures in a random order from this seed: stopped anywhere, a uniform sample of architectures")->check(in_range(0.0, 1e15));
                 app.add_option("--per-arch", c->per_arch, "with --arch-order: visit the architectures in rounds, K configurations of each per visit (spread over its resolutions and batches), so a short campaign covers many more networks (0 = all of them in one visit)")->capture_default_str()->check(in_range(0, 1000000));
                 app.add_flag("--group-architectures", c->group_architectures, "measure one architecture at a time, architectures in the order of their first configuration (a plan's: its best-ranked first), so each network is built once");
                 app.add_flag("--no-meter-check", c->no_meter_check, "skip the meter check recorded in the provenance (carb meter)");
                 app.add_flag("--lock-clocks", p.lock_clocks, "opt in to locking GPU clocks (only on a machine you own)");
                 app.add_flag("--realtime", p.realtime, "run under SCHED_FIFO (needs root): keeps other processes from preempting the timed passes");
                 app.add_flag("--reference", p.reference, "before every timed pass, time a fixed reference network (" + config_key(kReferenceConfig) + ") and record its mean as reference_ms: the host's speed at that moment");
                 app.add_flag("--keep-memory", p.keep_memory, "keep freed memory in the process (no mmap, no trim) so large buffers are not page-faulted in on every pass; recommended on CPU");
                 app.add_flag("--quiet", c->quiet, "no progress output");
                 add_format(app, c->format, {"table", "json"});
                 app.callback([c, &app] {
                   // The library sees values, so one of these given at its default value passed on the
                   // cpu backend where any other value is refused (ninety-seventh hostile pass).
                   if (c->o.backend == "cpu")
                     for (const char* flag : {"--util-window", "--min-energy-window", "--energy-ticks", "--util",
                                              "--cooldown-above"})
                       if (app.count(flag)) {
                         if (std::string(flag) == "--util") util_share(c->util);  // a malformed value said as such
                         throw InputError(std::string(flag) + " means nothing on the cpu backend (it measures no GPU "
                                          "window, utilization or temperature); leave it out or use --backend cuda");
                       }
                   run(*c, command_line());
                 });
               }});

}  // namespace
}  // namespace carb::cli
