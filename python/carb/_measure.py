"""Measuring from Python: the protocol settings (as `carb profile`'s flags, with underscores),
carb.profile (a resumable measurement store, as `carb profile`) and carb.export (the store as a
dataset CSV with its provenance, as `carb data export`)."""
import re
import warnings
from collections.abc import Mapping

from . import _carb
from ._args import _flag, _path, _scalar, _whole_arg
from ._carb import CarbWarning, InputError

# Every setting of the protocol, by kind. A plan is priced under PLAN_PROTOCOL only (`carb plan`).
_WHOLE = ("warmup", "min_passes", "max_passes", "threads", "energy_ticks")
_FLAGS = ("reference", "keep_memory", "channels_last", "realtime", "rebuild_networks")
_NUMBERS = ("target_ci", "max_timed_s", "cooldown", "min_energy_window", "util_window", "cooldown_above")
PROFILE_PROTOCOL = _WHOLE + _FLAGS + _NUMBERS + ("util",)
PLAN_PROTOCOL = ("warmup", "min_passes", "max_passes", "max_timed_s", "cooldown", "reference", "min_energy_window",
                 "util_window", "util")
_PLAN_CUDA_ONLY = ("min_energy_window", "util_window", "util")


def _util_share(v):
    """`util` as `carb profile --util` takes it: "all", "none", "sample:P", or the share P itself."""
    if v == "all":
        return 1.0
    if v == "none":
        return 0.0
    text = v[7:] if isinstance(v, str) and v.startswith("sample:") else v
    try:
        # Decimal text only, as the CLI reads it (a hostile tester: " 0.5" and "1e-400", which
        # underflows to 0, were taken where `--util` refuses them).
        if isinstance(text, str) and (not re.fullmatch(r"[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?", text) or
                                      (float(text) == 0 and re.search(r"[1-9]", text.split("e")[0].split("E")[0]))):
            raise ValueError(text)
        p = _scalar(float(text) if isinstance(text, str) else text, "util")
    except (ValueError, InputError):
        p = float("nan")
    if not 0 <= p <= 1:
        raise InputError(f"protocol util is {v!r}, not all, none or sample:P with P between 0 and 1")
    return p


def protocol_settings(protocol, known):
    """The checked protocol mapping, as numbers for the binding (which refuses what contradicts
    itself or means nothing on the backend, as the CLI does)."""
    if protocol is None:
        return {}
    if not isinstance(protocol, Mapping):
        raise InputError(f"protocol must be a mapping such as {{'warmup': 5}}, not {type(protocol).__name__}")
    out = {}
    for key, value in protocol.items():
        if key not in known:
            raise InputError(f"unknown protocol setting {key!r} (known: {', '.join(known)})")
        if key in _FLAGS:
            out[key] = 1.0 if _flag(value, f"protocol {key}") else 0.0
        elif key == "util":
            out[key] = _util_share(value)
        elif key in _WHOLE:
            out[key] = float(_whole_arg(value, f"protocol {key}"))
        else:
            out[key] = _scalar(value, f"protocol {key}")
    return out


def _backend(backend):
    if not isinstance(backend, str) or backend not in ("cpu", "cuda"):
        raise InputError(f"backend is {backend!r}, not 'cpu' or 'cuda'")
    return backend


def plan_pricing(protocol, backend, model):
    """The protocol a plan is priced under (see carb.plan), refused as `carb plan` refuses it."""
    _backend(backend)
    if model is None and (protocol or backend != "cpu"):
        # As `carb plan`: without a model nothing is priced, so the settings would change nothing.
        raise InputError("the protocol and backend price the measuring time from a model's predicted latency; "
                         "without a model the plan has no costs: give a model or leave them out")
    settings = protocol_settings(protocol, PLAN_PROTOCOL)
    for key in settings:
        if key in _PLAN_CUDA_ONLY and backend != "cuda":
            raise InputError(f"protocol {key} prices a window only the cuda backend measures; give "
                             "backend='cuda' or leave it out")
    return settings


def profile(configs, db, backend="cpu", platform=None, protocol=None, group_architectures=False, check_meter=True,
            retry_errors=False, progress=True, redo=False, replan=False):
    """Measures `configs` (a list of carb.Config, a preset name or columns), in their order, into
    the SQLite store `db`, as `carb profile` does: resumable (what the store holds under the same
    platform and protocol is skipped), each row committed as it completes. `protocol`: a mapping of
    `carb profile`'s settings with underscores (warmup, min_passes, max_passes, target_ci,
    max_timed_s, cooldown, threads, channels_last, reference, keep_memory, realtime,
    rebuild_networks; on cuda min_energy_window, util_window, util, energy_ticks, cooldown_above);
    those left out keep the CLI's defaults, so the same settings give the same protocol id and
    either resumes the other's store. `platform` defaults to cpu-<threads>t or the backend.
    `group_architectures` measures one architecture at a time, in the order of their first
    configuration (carb.campaign_order gives the seeded order). `redo` measures the configurations
    again where the store holds them ok too, each new row replacing the stored one (`--redo`: for
    measurements `data export` refuses as disturbed). `replan` makes `configs` the store's whole plan
    for this platform and protocol (`--replan`): what earlier calls were given and this one is not
    is no longer counted as unmeasured by export and store_info. Returns the summary as a dict
    (`carb profile --format json`). SIGINT or SIGTERM stops it after the configuration in flight,
    keeping every row measured, and raises KeyboardInterrupt; calling it again resumes (a signal
    during the last configuration leaves nothing unmeasured: the call returns). As in the CLI, a
    second SIGINT a second or more after the first ends the process at once (in Jupyter, the
    kernel): the way out of a configuration that does not finish. `realtime` and `keep_memory`
    change the whole process (its scheduling, its allocator), and stay in force after the call."""
    from . import _configs  # the package's, which knows presets and columns
    configs = _configs(configs)
    if not configs:
        raise InputError("nothing to profile: no configurations were given")
    db = _path(db, "db")
    backend = _backend(backend)
    if platform is not None and not isinstance(platform, str):
        raise InputError(f"platform is {platform!r}, not a name")
    # As the CLI's --platform: an empty name is refused, not taken for the default; a name Python
    # cannot write as UTF-8 is refused in one line (hundred-and-thirty-first hostile pass: a TypeError
    # listing the binding's whole signature).
    if platform == "":
        raise InputError("platform is empty: leave it out (None) for the default, cpu-<threads>t or the backend")
    if platform is not None:
        try:
            platform.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"platform {platform!r} is not UTF-8; give a printable name (e.g. cpu-2t)") from None
    settings = protocol_settings(protocol, PROFILE_PROTOCOL)
    flags = {name: _flag(v, name) for name, v in (("group_architectures", group_architectures),
                                                 ("check_meter", check_meter), ("retry_errors", retry_errors),
                                                 ("progress", progress), ("redo", redo), ("replan", replan))}
    command = (f"carb.profile({len(configs)} configurations, db={db!r}, backend={backend!r}, "
               f"platform={platform!r}, protocol={dict(protocol or {})!r}, "
               + ", ".join(f"{k}={v!r}" for k, v in flags.items()) + ") [Python]")
    s = _carb.profile(configs, db, backend, platform or "", settings, flags["group_architectures"],
                      flags["check_meter"], flags["retry_errors"], flags["progress"], command, flags["redo"],
                      flags["replan"])
    if s.get("export_problems"):
        warnings.warn(f"carb: `data export` would refuse this store's rows of this platform and protocol: "
                      f"{s['export_problems']} problem(s) (first: {s.get('first_export_problem')}); measure those "
                      "configurations again with redo=True", CarbWarning, stacklevel=2)
    if s.get("store_moved"):
        warnings.warn(f"carb: {db} was renamed, moved or replaced during the run; the rows are in the file that had "
                      "that name, under its new name", CarbWarning, stacklevel=2)
    if s["interrupted"]:
        signal = {2: "SIGINT", 15: "SIGTERM"}.get(s.get("signal"), f"signal {s.get('signal')}")
        again = ("a call with redo=True measures every configuration given again, those redone already too: give "
                 "only the rest" if flags["redo"] else "call it again to resume")
        raise KeyboardInterrupt(f"carb.profile interrupted by {signal}: {s['ok'] + s['oom'] + s['error']} "
                                f"configurations measured and kept in {db}; {again}")
    return s


def export(db, out, platform=None, protocol=None, force=False):
    """Writes the rows of the store `db` as a dataset CSV at `out` with its provenance sidecar, as
    `carb data export` does (`platform`: only its rows; `protocol`: only rows of that protocol id;
    `out` replaces only an earlier export of carb's unless `force`). Returns {"rows", "platforms",
    "csv", "provenance", "planned", "unmeasured"}: `planned` the configurations the store's runs
    were given for the exported rows' platform and protocol, `unmeasured` those with no row (None
    for a store made before carb recorded them); an unfinished campaign is also said as a
    carb.CarbWarning. The CSV is what carb.Model.train reads."""
    db, out = _path(db, "db"), _path(out, "out")
    for name, v in (("platform", platform), ("protocol", protocol)):
        if v is not None and not isinstance(v, str):
            raise InputError(f"{name} is {v!r}, not a name")
    # As `carb data export`, where an empty --platform or --protocol means every one.
    platform, protocol = platform or None, protocol or None
    command = f"carb.export(db={db!r}, out={out!r}, platform={platform!r}, protocol={protocol!r}, force={force!r}) [Python]"
    return _carb.export(db, out, platform, protocol, _flag(force, "force"), command)


def store_info(db):
    """What the measurement store `db` holds, as `carb data info STORE.db` says it, without exporting
    it: {"store", "rows", "campaigns": [{"platform", "protocol_id", "ok", "oom", "error", "planned",
    "unmeasured", "commands"}]}, one campaign per platform and protocol; `planned` is how many
    configurations its runs were given and `unmeasured` how many of them have no row yet (both None
    for a store made before carb recorded them), `commands` those of the runs that planned it, oldest
    first (a run measures what it was given and lacks when called again)."""
    return _carb.store_info(_path(db, "db"))
