"""carb: predict what a CNN configuration costs to run (energy, latency, peak memory) and screen
configuration spaces against deployment budgets.

    import carb
    model = carb.Model.load("models/cpu-2t")
    configs = carb.preset("screen")
    costs = model.predict(configs, confidence=0.9)      # numpy arrays per target
    best = carb.screen(configs, model, budgets={"latency": 50, "memory": 100})

Errors are carb.Error (InputError, DataError, ModelError, MeasureError) with carb's one-line
messages; all but MeasureError (a RuntimeError) are ValueErrors too. Warnings are carb.CarbWarning,
a RuntimeWarning: `warnings.simplefilter("error", carb.CarbWarning)` makes them errors.
"""
import math
import numbers
import os
import warnings
from collections.abc import Mapping


def _passive_openmp():
    # XGBoost's OpenMP threads spin while they wait; on a busy machine that made training and
    # prediction tens of times slower (the CLI sets the same for itself). libgomp reads the
    # variable once, when it is loaded: too late if an earlier import (numpy with an OpenMP BLAS)
    # loaded it already, and then the user is told how to fix it.
    if "OMP_WAIT_POLICY" in os.environ:
        return None
    try:
        with open("/proc/self/maps") as maps:
            loaded = "libgomp" in maps.read()
    except OSError:
        loaded = False
    if loaded:  # said once carb.CarbWarning exists, below
        return ("carb: OpenMP was loaded before carb with busy-waiting threads, which can make carb "
                "many times slower on a busy machine; start Python with OMP_WAIT_POLICY=PASSIVE")
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"


_openmp_busy = _passive_openmp()

try:  # predictions are numpy arrays: said at import, not at the first predict (a hostile tester); after
    import numpy  # noqa: F401,E402  the OpenMP setting above, as numpy's BLAS may load OpenMP
except ImportError:
    raise ImportError("carb's Python package needs numpy (Debian: apt-get install python3-numpy; "
                      "scripts/setup.sh installs it)") from None

from . import _carb  # noqa: E402  (after the OpenMP setting above)
from ._carb import (CarbWarning, Config, DataError, Error, InputError, MeasureError, ModelError, __version__,
                    preset_names)
from ._carb import features as _features
from ._args import _flag, _path, _paths, _scalar, _seed, _whole_arg
from . import _measure  # noqa: E402
from ._measure import export, profile, store_info  # noqa: E402

if _openmp_busy:
    warnings.warn(_openmp_busy, CarbWarning, stacklevel=2)

__all__ = ["CarbWarning", "Config", "Model", "Error", "InputError", "DataError", "ModelError", "MeasureError", "arch",
           "campaign_order", "characterize", "combine", "configs_from_columns", "dataset_info", "evaluate", "export",
           "features", "merge", "plan", "profile", "preset", "preset_names", "read_configs", "recommend", "screen",
           "store_info", "transfer", "validate", "__version__"]

_COLUMNS = ("family", "depth", "width", "resolution", "batch", "precision")


def preset(name):
    """The configurations of a named space (carb.preset_names()), as a list of carb.Config."""
    if not isinstance(name, str):  # a hostile tester: preset(None) was pybind11's TypeError, not carb's
        raise InputError(f"a preset is named by a string such as 'tiny', not {name!r}")
    return _carb.preset(name)


def arch(config, layers=False):
    """The analytic model of one configuration (as `carb arch --format json`): params, MACs, FLOPs,
    activation sizes; with layers=True every layer."""
    return _carb.arch(_config(config, "config"), _flag(layers, "layers"))


def _config(c, what):
    """One carb.Config (a hostile tester: a key string or None was a raw pybind11 TypeError)."""
    if not isinstance(c, Config):
        raise InputError(f"{what} is {c!r}, not a carb.Config")
    return c
_COSTS = {"energy": "energy_j", "latency": "latency_ms", "memory": "peak_memory_mb"}


def configs_from_columns(columns):
    """Configurations from columns: a mapping (a dict of lists or numpy arrays, a pandas DataFrame)
    with the six keys family, depth, width, resolution, batch, precision, all of one length."""
    if not (isinstance(columns, Mapping) or hasattr(columns, "columns")):
        raise InputError(f"columns is {type(columns).__name__}, not a mapping of the six configuration columns")
    rows = _column_rows(columns, _COLUMNS, "configuration")
    return [Config(_text(f, "family", i), _whole(d, "depth", i), _number(w, "width", i), _whole(r, "resolution", i),
                   _whole(b, "batch", i), _text(p, "precision", i))
            for i, (f, d, w, r, b, p) in enumerate(rows)]


def _column_rows(columns, names, what):
    """The rows of the named columns of a mapping, each column checked to be there, a list or array,
    and as long as the others."""
    missing = [c for c in names if c not in columns]
    if missing:
        raise InputError(f"missing {what} column(s): " + ", ".join(missing))
    for c in names:
        # A string is one value, not a column of its characters ("bas" read as 'b', 'a', 's'); a
        # scalar or a generator has no length (a hostile tester's finds).
        if isinstance(columns[c], (str, bytes)) or not hasattr(columns[c], "__len__"):
            raise InputError(f"column {c} is {columns[c]!r}, not a list or array of values")
    lengths = {len(columns[c]) for c in names}
    if len(lengths) != 1:
        raise InputError(f"{what} columns differ in length: " + ", ".join(map(str, sorted(lengths))))
    return zip(*(list(columns[c]) for c in names))


# Column values are checked, not converted: int(18.7) is 18, and a configuration nobody asked for
# was predicted without a word (sixteenth hostile pass); the CLI refuses such a cell too.
def _number(v, column, i):
    if isinstance(v, bool) or type(v).__name__ == "bool_" or not isinstance(v, numbers.Real):  # numpy's too
        raise InputError(f"row {i + 1}: {column} is {v!r}, not a number")
    x = float(v)
    if not math.isfinite(x):
        raise InputError(f"row {i + 1}: {column} is {v!r}, not a finite number")
    return x


def _whole(v, column, i):
    x = _number(v, column, i)
    if x != math.floor(x) or abs(x) > 2**31 - 1:
        raise InputError(f"row {i + 1}: {column} is {v!r}, not a whole number")
    return int(x)


def _text(v, column, i):
    if not isinstance(v, str):  # numpy's str_ is a str
        raise InputError(f"row {i + 1}: {column} is {v!r}, not a name")
    return str(v)


def features(configs):
    """The analytic features carb's models learn from: (matrix, names), a float32 numpy array of
    one row per configuration and the column names. `configs` as for Model.predict."""
    return _features(_configs(configs))


def read_configs(path):
    """The configurations of a CSV (a dataset, a plan or a configuration list; its six configuration
    columns, the others ignored), as `carb predict --configs` and `carb plan --exclude` read one."""
    return list(_carb.read_configs(_path(path, "path"))[0])


def _is_csv_path(x):
    """A file where configurations go: an os.PathLike, or text naming a .csv (no preset name does),
    a path or an existing file that is not a preset's name ("runs.txt" was an unknown preset)."""
    if hasattr(x, "__fspath__"):
        return True
    if not isinstance(x, (str, bytes)):
        return False
    name = os.fsdecode(x)
    return name.lower().endswith(".csv") or (
        name not in preset_names() and ("/" in name or os.sep in name or os.path.isfile(name)))


def _configs(configs):
    # A README walkthrough: measured="data/cpu-2t.csv" was "unknown preset 'data/cpu-2t.csv'", where
    # the CLI's --exclude takes the file.
    if _is_csv_path(configs):
        return read_configs(configs)
    if isinstance(configs, str):
        return preset(configs)
    if isinstance(configs, Config):
        return [configs]
    if isinstance(configs, Mapping) or hasattr(configs, "columns"):
        return configs_from_columns(configs)
    try:
        configs = list(configs)
    except TypeError:  # None, a number: a raw TypeError before
        raise InputError(f"configurations are {configs!r}: give carb.Config objects, a preset name, a CSV file or "
                         "a mapping of columns") from None
    if configs and all(_is_csv_path(c) for c in configs):  # several files, as Model.train takes them
        return [c for f in configs for c in read_configs(f)]
    if not all(isinstance(c, Config) for c in configs):
        raise InputError("configurations must be carb.Config objects, a preset name, a CSV file (or a list of them) "
                         "or a mapping of columns")
    return configs


class Model:
    """A trained CARB predictor: the cascade memory -> energy -> latency with conformal intervals."""

    def __init__(self, native):
        # A hostile tester's finding: Model("cpu-2t") was taken, and failed later with AttributeErrors.
        if not isinstance(native, _carb.Model):
            raise InputError(f"carb.Model({native!r}): load a bundle with carb.Model.load(path), or train one "
                             "with carb.Model.train(data)")
        self._m = native

    def __reduce__(self):
        # A model is a bundle on disk, not a value to pickle (a hostile tester: pybind11's "cannot pickle
        # 'carb._carb.Model' object" said nothing of what to do).
        raise TypeError("a carb.Model cannot be pickled or copied: save it (Model.save(path)) and load it "
                        "where it is needed (carb.Model.load(path)); a loaded model is safe to share between threads")

    @classmethod
    def load(cls, path):
        """Loads a bundle written by `carb train` or Model.save (carb.ModelError if damaged)."""
        return cls(_carb.Model.load(_path(path, "path")))

    @classmethod
    def train(cls, data, trees=0, correctors=True, normalize="auto", seed=42, threads=2, fast=False, remeasured=None,
              device_memory_mb=None, size_bins=2, telemetry=False):
        """Trains on every ok row of one or more dataset CSVs, holding none out (unlike `carb train`,
        which holds out 20% to score the model): to measure accuracy, use `carb train` or evaluate
        on other measurements (`carb.evaluate` warns, and counts in split.in_sample_rows, the scored
        rows the model trained on).
        trees=0 means the paper's 800/800/400; fast=True takes `carb train --fast`'s settings
        (100 trees, 3 folds, no correctors: for planning rounds). remeasured: one or more CSVs of an
        independent re-measurement of some of the data's configurations (same platform, at least 20
        in common; another protocol is warned of), as `carb train --remeasured`: its spread from the data is added to
        every interval, which then holds a new measurement, not only one of the training campaign's.
        device_memory_mb: the device's memory in MB, as `carb train --device-memory-mb`: predictions
        needing more are warned of as not fitting, and recommend never picks them; by default the
        memory the data's provenance records (the machine's, for the cpu backend). The power limit
        comes from the data's provenance; both are read back by Model.device.
        size_bins: interval widths per bin of the predicted value inside each batch regime, as
        `carb train --size-bins` (by default 2: small and large predictions apart; 1: one width
        per regime, the default until 2026-12-06).
        telemetry: learn from the utilization measured for each row too (avg_sm_util, avg_mem_util),
        as `carb train --telemetry`; such a model predicts from readings (Model.predict's telemetry).
        seed: for the folds and the learners, as `carb train --seed`; the same seed, data and
        settings give the same bundle. threads: the learners' threads.
        Ctrl-C stops it at the next fit and raises KeyboardInterrupt; a second Ctrl-C a second or
        more later ends the process, as it does `carb train`."""
        files = _paths(data, "data")
        # Checked, not converted (twentieth hostile pass: trees=True trained 1 tree per learner,
        # trees=False the 800/800/400 defaults, seed=True seed 1).
        trees, seed, threads = _whole_arg(trees, "trees"), _seed(seed), _whole_arg(threads, "threads")
        if normalize not in ("auto", "on", "off"):  # as `carb train --normalize` (a raw TypeError for None)
            raise InputError(f"normalize is {normalize!r}, not 'auto', 'on' or 'off'")
        if not 0 <= trees <= 100_000:  # as `carb train --trees`
            raise InputError(f"trees is {trees}, not 0 (the defaults) to 100000")
        if not 1 <= threads <= 1024:
            raise InputError(f"threads is {threads}, not in 1..1024")
        _flag(correctors, "correctors"), _flag(fast, "fast"), _flag(telemetry, "telemetry")
        again = [] if remeasured is None else _paths(remeasured, "remeasured")
        memory = None
        if device_memory_mb is not None:  # as `carb train --device-memory-mb`
            memory = _scalar(device_memory_mb, "device_memory_mb")
            if not 1e-3 <= memory <= 1e12:
                raise InputError(f"device_memory_mb is {device_memory_mb!r}, not between 1e-3 and 1e12")
        size_bins = _whole_arg(size_bins, "size_bins")
        if not 1 <= size_bins <= _carb.max_size_bins:  # as `carb train --size-bins`
            raise InputError(f"size_bins is {size_bins}, not 1 to {_carb.max_size_bins}")
        return cls(_carb.Model.train(files, trees, correctors, normalize, seed, threads, fast, again, memory,
                                     size_bins, telemetry))

    def save(self, path, force=False):
        try:
            self._m.save(_path(path, "path"), _flag(force, "force"))
        except Error as e:  # the CLI's "choose another --out" is another path here (a README walkthrough)
            said = str(e)
            if "choose another out" not in said:
                raise
            raise type(e)(said.replace("choose another out", "choose another path")) from None

    @property
    def platform(self):
        return self._m.platform

    @property
    def targets(self):
        return list(self._m.targets)

    @property
    def device(self):
        """What the model knows of its device: {"memory_mb": ..., "power_limit_w": ...}, None where unknown."""
        return dict(self._m.device)

    def trained_on(self, config):
        return self._m.trained_on(_config(config, "config"))

    def trained_architecture(self, config):
        """Whether the model trained on this configuration's architecture (family, depth, width,
        precision) at any resolution and batch. Intervals of an architecture it never trained on are
        calibrated by holding whole architectures out of training, and are wider."""
        return self._m.trained_architecture(_config(config, "config"))

    @property
    def unseen_calibration_networks(self):
        """How many networks calibrated the intervals of networks never trained (0 when the bundle has
        none): a level L bounds a new network's interval only with ceil(L / (1 - L)) of them (0.9: 9)."""
        return self._m.unseen_calibration_networks

    @property
    def uses_telemetry(self):
        """Whether the model was trained with telemetry (`carb train --telemetry`): it predicts from
        the utilization measured for each configuration (avg_sm_util, avg_mem_util, 0-100 %)."""
        return self._m.uses_telemetry

    def predict(self, configs, confidence=None, telemetry=None):
        """Predicts every target. `configs`: a list of carb.Config, one Config, a preset name, a
        mapping of columns, or a CSV file's path (the six configuration columns). A model that uses
        telemetry (Model.uses_telemetry) predicts from the utilization measured for each
        configuration: a CSV's or a mapping's avg_sm_util and avg_mem_util columns (as `carb
        predict --configs` reads them), or `telemetry`, one (avg_sm_util, avg_mem_util) pair per
        configuration or a mapping of those two columns. Returns {target: numpy array} (with target_lower/_upper under a
        confidence) and "outside": per configuration, where it lies past the trained ranges. A
        drift-corrected model adds "drift_reference_ms": its latency holds at the host speed where the
        reference network takes that long. "trained_architecture": a bool array, False for a network
        (family, depth, width, precision) the model never measured at any resolution or batch; its
        interval is the wider one calibrated by holding whole networks out. A model that knows its
        device's memory (Model.device) adds "fits_device_memory": a bool array, False where the predicted
        peak memory is above it; one that knows its power limit and predicts energy and latency adds
        "within_power_limit", False where the energy over the latency implies more than 1.1 times that
        limit (the energy or latency is off there). What `carb predict` notes
        as a doubt comes as a carb.CarbWarning with the same words: a cost at or below zero, an upper
        bound of inf (outside the trained ranges, or inside them where the model's rows, or its
        networks for a new one, cannot bound the level), new networks' intervals no calibration covers."""
        level = _confidence(confidence)
        listed, readings = self._with_readings(configs, telemetry)
        out = self._m.predict(listed, level, readings)
        # The CLI's notes, counted and worded once in C++ (carb/prediction_notes.hpp): costs at or below
        # zero (thirty-fifth hostile pass), upper bounds a level cannot have and why (thirtieth), the
        # intervals of networks never trained that no calibration covers. What is only worth knowing
        # (new networks' intervals, calibrated for them) is in "trained_architecture", not a warning.
        for text, caution in out.pop("notes"):
            if caution:
                warnings.warn("carb: " + text, CarbWarning, stacklevel=2)
        return out

    def _with_readings(self, configs, telemetry):
        """The configurations and, for a telemetry model, each one's (avg_sm_util, avg_mem_util)."""
        if telemetry is not None:
            if not self.uses_telemetry:
                raise InputError("this model was trained without telemetry and does not read utilization: leave "
                                 "telemetry out (or use a model trained with telemetry=True)")
            return _configs(configs), _readings(telemetry)
        if not self.uses_telemetry:
            return _configs(configs), []
        if _is_csv_path(configs):
            listed, readings = _carb.read_utilization_csv(_path(configs, "configs"))
            return list(listed), list(readings)
        if (isinstance(configs, Mapping) or hasattr(configs, "columns")) and all(c in configs for c in _UTILIZATION):
            return configs_from_columns(configs), _readings(configs)
        raise InputError("this model was trained with telemetry: it predicts from the utilization measured for each "
                         "configuration; give a CSV path or a mapping of columns with avg_sm_util and avg_mem_util, "
                         "or telemetry=[(avg_sm_util, avg_mem_util), ...], one per configuration")

    def __repr__(self):
        return f"carb.Model(platform={self.platform!r}, targets={self.targets!r})"


_UTILIZATION = ("avg_sm_util", "avg_mem_util")


def _readings(telemetry):
    """(avg_sm_util, avg_mem_util) pairs from pairs or from a mapping of those two columns; each a
    number (its range, 0-100 %, is checked where the model reads it, naming the configuration)."""
    if isinstance(telemetry, Mapping) or hasattr(telemetry, "columns"):
        pairs = _column_rows(telemetry, _UTILIZATION, "telemetry")
    else:
        try:
            pairs = list(telemetry)
        except TypeError:
            raise InputError(f"telemetry is {telemetry!r}: give (avg_sm_util, avg_mem_util) pairs, one per "
                             "configuration, or a mapping of those two columns") from None
    out = []
    for i, pair in enumerate(pairs):
        if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise InputError(f"telemetry row {i + 1} is {pair!r}, not an (avg_sm_util, avg_mem_util) pair")
        out.append((_number(pair[0], "avg_sm_util", i), _number(pair[1], "avg_mem_util", i)))
    return out


def _budgets(budgets):
    if budgets is not None and not isinstance(budgets, Mapping):
        raise InputError(f"budgets must be a mapping such as {{'latency': 50}}, not {type(budgets).__name__}")
    out = {}
    for name, value in (budgets or {}).items():
        target = _COSTS.get(name, name)
        if target in out:  # "latency" and "latency_ms" both given: the last one won (nineteenth pass)
            raise InputError(f"the {target} budget is given twice (as {name!r} and another name)")
        if not isinstance(name, str):
            raise InputError(f"a budget's name is {name!r}, not a cost such as 'latency'")
        if target not in _COSTS.values():  # {"lat": 50} read "a budget on lat needs lat, but the model ..."
            raise InputError(f"unknown budget {name!r} (known: energy, latency, memory, or as the targets: "
                             f"{', '.join(_COSTS.values())})")
        out[target] = _budget(value, f"the {name} budget")
    return out


def _budget(value, what):
    """A budget as the CLI's flags take one: a number in [1e-9, 1e15]."""
    x = _scalar(value, what)
    if not 1e-9 <= x <= 1e15:
        raise InputError(f"{what} is {value!r}, not between 1e-9 and 1e15")
    return x


def _confidence(c):
    """A confidence level: a number, one of the calibrated levels; a float32 0.9 (0.8999999762) is 0.9."""
    if c is None:
        return None
    x = _scalar(c, "confidence")
    for level in (0.8, 0.9, 0.95, 0.99):
        if abs(x - level) < 1e-6:
            return level
    return x


def _model(model, what="model"):
    """A carb.Model as given, or the bundle at a path (thirty-fourth hostile pass: evaluate took a
    path, recommend failed on one with an AttributeError)."""
    if isinstance(model, Model):
        return model
    if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__"):
        return Model.load(model)
    raise InputError(f"{what} must be a carb.Model or a model bundle's path, not {type(model).__name__}")


def screen(configs, source, target=None, rank_by="", top_k=None, budgets=None, confidence=None, capacity=""):
    """Two-stage screening: rank by the source model, re-score the top_k with the target model,
    keep what meets the budgets ({"latency": ms, "energy": J, "memory": MB}) and return the
    result as a dict (the same document as `carb screen --format json`)."""
    top_k = None if top_k is None else _whole_arg(top_k, "top_k")
    if top_k is not None and top_k < 1:
        raise InputError(f"top_k is {top_k}, not 1 or more")
    for v, what in ((rank_by, "rank_by"), (capacity, "capacity")):
        if not isinstance(v, str):
            raise InputError(f"{what} is {v!r}, not a name (or '' for the default)")
    same_path = all(isinstance(m, (str, bytes)) or hasattr(m, "__fspath__") for m in (source, target)) and \
        os.path.realpath(os.fsdecode(source)) == os.path.realpath(os.fsdecode(target))
    source = _model(source, "source")
    target = None if target is None else _model(target, "target")
    if target is not None and (same_path or target._m is source._m):  # as the CLI refuses one bundle twice
        raise InputError("target is the source model: a two-stage screen re-scores the shortlist with another "
                         "platform's model; screen with the one model alone (target=None)")
    return _carb.screen(_configs(configs), source._m, target._m if target is not None else None, rank_by, top_k,
                        _budgets(budgets), _confidence(confidence), capacity)


def campaign_order(configs, seed, per_arch=0):
    """The order in which `carb profile --arch-order SEED --per-arch K` measures `configs` (a list,
    a preset name or columns): architectures (family, depth, width, precision) in a seeded random
    order, all of each one's configurations in one visit (per_arch 0) or per_arch of them per
    visit, in rounds, spread over its resolutions and batches."""
    # The CLI's ranges (--arch-order 0..1e15, --per-arch 0..1e6), not _whole_arg's int32 bound.
    checked = []
    for v, what, top in ((seed, "seed", 10**15), (per_arch, "per_arch", 10**6)):
        x = _scalar(v, what)
        if x != math.floor(x) or not 0 <= x <= top:
            raise InputError(f"{what} is {v!r}, not a whole number from 0 to {top:g}")
        checked.append(int(x))
    return _carb.campaign_order(_configs(configs), *checked)


def plan(candidates, model=None, measured=(), count=None, budget_s=None, strategy=None, diversity=1.0, seed=42,
         spread="units", build_s=0.0, backend="cpu", protocol=None):
    """Which configurations to measure next (as `carb plan`): among `candidates` (a list, a preset
    name, columns or a CSV file), never one in `measured` (the same, e.g. a dataset CSV as `--exclude`
    takes one: its rows of another platform than the model's are not counted) or one the model trained on, ranked by the model's
    spread (strategy "uncertainty", the default with a model; "uncertainty-per-cost";
    "stratified", the default without one, as in `carb plan`; "space-filling"; "random"), at most
    `count` rows or `budget_s`
    predicted seconds of measuring. Returns {"configs": [...], "score", "uncertainty",
    "latency_ms", "cost_s": numpy arrays, "total_cost_s", "unknown_cost" (candidates passed over under
    budget_s because their measuring time cannot be predicted, with a carb.CarbWarning),
    "nonpositive_predictions" and "planned_nonpositive" (candidates, and planned rows, for which the
    model predicts a cost at or below zero, with a carb.CarbWarning), ...}.

    As `carb plan`'s flags: `spread` ("units" or "log") is where the model's spread is measured;
    `build_s` the seconds to build a network, counted once per architecture planned; `backend`
    ("cpu" or "cuda") and `protocol` the measuring protocol the costs are priced under, a mapping of
    warmup, min_passes, max_passes, max_timed_s, cooldown, reference (a bool) and, on cuda,
    min_energy_window, util_window and util ("all", "none", "sample:P" or P); those left out keep
    `carb plan`'s defaults. The protocol, backend and build_s need a model."""
    count = None if count is None else _whole_arg(count, "count")
    if count is not None and not 1 <= count <= 10**9:  # as `carb plan --count` (a raw TypeError before)
        raise InputError(f"count is {count}, not 1 to 1000000000")
    budget_s = None if budget_s is None else _scalar(budget_s, "budget_s")
    diversity = _scalar(diversity, "diversity")
    if not 0 <= diversity <= 100:  # as `carb plan --diversity`
        raise InputError(f"diversity is {diversity:g}, not between 0 and 100")
    if strategy is not None and not isinstance(strategy, str):
        raise InputError(f"strategy is {strategy!r}, not a name")
    seed = _seed(seed)
    measured = () if measured is None else measured
    build_s = _scalar(build_s, "build_s")
    if not isinstance(spread, str):
        raise InputError(f"spread is {spread!r}, not 'units' or 'log'")
    model = None if model is None else _model(model)
    settings = _measure.plan_pricing(protocol, backend, model)
    if strategy is None:
        strategy = "uncertainty" if model is not None else "stratified"
    files = [measured] if _is_csv_path(measured) else measured if (
        isinstance(measured, (list, tuple)) and measured and all(_is_csv_path(f) for f in measured)) else None
    if files is not None and model is not None:
        # As `carb plan --exclude` (thirty-third hostile pass): rows of another platform than the
        # model's are not measured on it.
        measured = []
        for f in files:
            name = _path(f, "measured")
            configs, platforms = _carb.read_configs(name)
            other = sorted({p for p in platforms if p and p != model.platform})
            mine = [c for c, p in zip(configs, platforms) if not p or p == model.platform]
            measured += mine
            if other:
                n = len(configs) - len(mine)
                warnings.warn(f"carb: {n} row{'s' if n != 1 else ''} of {name} (platform {', '.join(repr(p) for p in other)}) "
                              f"{'is' if n == 1 else 'are'} not of the model's platform {model.platform!r}: not "
                              "counted as measured", CarbWarning, stacklevel=2)
    candidates = _configs(candidates)
    if not candidates:  # as `carb plan` says it (the empty plan's message blamed the budget)
        raise InputError("nothing to plan: no candidate configurations were given")
    p = _carb.plan(candidates, _configs(measured),
                   model._m if model is not None else None, strategy, count, budget_s, diversity, seed, spread,
                   build_s, backend, settings)
    departure = p.pop("protocol_departure")
    if departure:  # as `carb plan` warns: priced under other settings than the model's data was measured with
        warnings.warn(f"carb: {departure}", CarbWarning, stacklevel=2)
    if not len(p["configs"]):  # as `carb plan` refuses it (an empty plan measures nothing), saying why
        n, out, mem, unknown = p["candidates"], p["excluded"], p["over_device_memory"], p["unknown_cost"]
        if out == n:
            why = f"all {n} candidates are measured or trained on"
        elif mem and out + mem == n:
            why = f"of the {n} candidates, {out} are measured or trained on and the other {mem} would not fit the device's memory"
        elif unknown and out + mem + unknown == n:
            why = f"the measuring time of none of the {unknown} open candidates can be predicted, so none fits budget_s"
        elif budget_s is not None:
            why = f"no open candidate fits within budget_s {budget_s:g} s"
        else:
            why = "no candidate is open"
        raise InputError(f"nothing to plan: {why}")
    if p["planned_unknown_cost"]:
        # Thirty-seventh hostile pass: planned by count, they came back with NaN costs and no word.
        warnings.warn(f"carb: {p['planned_unknown_cost']} planned row(s) have a predicted latency at or below zero: "
                      "their measuring time (cost_s) is unknown, and so is total_cost_s", CarbWarning, stacklevel=2)
    if p["nonpositive_predictions"]:
        # Thirty-ninth hostile pass: a memory (or any cost) at or below zero was neither counted nor said.
        warnings.warn(f"carb: the model predicts a cost at or below zero for {p['nonpositive_predictions']} "
                      f"candidate(s) ({p['planned_nonpositive']} planned): an impossible value, so there the "
                      "score says where the model is wrong, not how unsure it is", CarbWarning, stacklevel=2)
    if p["over_device_memory"]:
        warnings.warn(f"carb: {p['over_device_memory']} candidate(s) were left out: the model predicts more peak "
                      f"memory than its device has ({model.device['memory_mb']:g} MB)", CarbWarning, stacklevel=2)
    if p["unknown_cost"]:
        warnings.warn(f"carb: {p['unknown_cost']} candidate(s) were passed over: the model cannot predict their "
                      "measuring time (latency at or below zero, or not a number), so they fit no budget_s",
                      CarbWarning, stacklevel=2)
    if p["planned_over_an_hour"]:  # as `carb plan` notes
        config, seconds = p.pop("longest_planned")
        warnings.warn(f"carb: {p['planned_over_an_hour']} planned row(s) are predicted to take more than an hour each "
                      f"to measure (the longest, {config.key}, {seconds:.3g} s): leave such configurations out of the "
                      "candidates, or give budget_s to keep the plan within a time", CarbWarning, stacklevel=2)
    return p


def evaluate(model, data, external=False, quick=True, seed=None, test_fraction=None):
    """The paper's evaluation of `model` (a carb.Model or a bundle's path) on one or more dataset CSVs, as a dict (the same document
    as `carb evaluate --format json`): held-out accuracy per target, baselines, importance,
    residuals, interval coverage, components; leave-one-batch-tier-out and the ablation unless
    quick (they retrain).
    external=True scores every row of the data as held out (a file the model did not train on).
    Scored rows the model trained on are counted in split.in_sample_rows: their errors are in-sample
    (a Model.train model trained on every row). Each of doc["warnings"] (those rows, another
    platform's data, answers past the trained ranges, ...) is also raised as a carb.CarbWarning, but
    the note that quick=True skipped the sections that retrain, which the caller asked for.
    Ctrl-C stops it at the next step and raises KeyboardInterrupt; a second Ctrl-C a second or more
    later ends the process, as it does `carb evaluate`."""
    path = None if isinstance(model, Model) else _path(model, "model")
    model = _model(model)
    files = _paths(data, "data")
    seed = None if seed is None else _seed(seed)
    test_fraction = None if test_fraction is None else _scalar(test_fraction, "test_fraction")
    doc = _carb.evaluate(model._m, files, _flag(external, "external"), _flag(quick, "quick"), seed, test_fraction)
    # As `carb evaluate --format json` records them (a hostile tester: Python's lacked both); a
    # carb.Model has no path to record.
    doc["data"] = files
    if path is not None:
        doc["model"] = path
    # Every warning `carb evaluate` prints (seventy-first hostile pass: another platform's data and
    # answers past the trained ranges were only in doc["warnings"]), in-sample rows among them; not
    # the note that quick=True skipped the retraining sections, which the caller asked for.
    for text in doc.get("warnings", []):
        if not text.startswith("--quick:"):
            warnings.warn("carb: " + text, CarbWarning, stacklevel=2)
    return doc


def transfer(source, target, model=None, k=(5, 10, 20, 50), repeats=20, seed=42):
    """How one platform's measurements map onto another's, on the configurations both dataset CSVs
    measured, as a dict (the same document as `carb transfer --format json`): per target the line
    y_target = slope * y_source + intercept with R² and Spearman's rank correlation, and the error
    of few-shot calibration (the line fitted on k of the target's measurements, scored on the rest,
    averaged over `repeats` seeded draws). With `model` (a carb.Model or a bundle's path trained on
    the source platform), also the model's zero-shot and few-shot error on the target. Each of
    doc["notes"] (one platform measured twice: a repeatability, not a transfer; differing
    protocols) is also raised as a carb.CarbWarning, and so is doc["model"]["note"] (a model of
    another platform, scores of configurations it trained on or can only guess).
    A k listed twice is refused before the data is read, as the CLI refuses it."""
    src, dst = _path(source, "source"), _path(target, "target")
    try:
        same = os.path.samefile(src, dst)
    except OSError:
        same = False  # a file that cannot be read is said by the reader, in its words
    if same:
        raise InputError("source and target are the same file; a platform compared with itself fits y = x by "
                         "construction")
    if isinstance(k, (str, bytes)) or not hasattr(k, "__iter__"):
        k = [k]
    ks = [_whole_arg(x, "k") for x in k]
    if len(set(ks)) != len(ks):  # before the files are read, as `carb transfer --k` (a hostile tester)
        raise InputError("k lists a calibration set size twice")
    if not ks:
        raise InputError("k is empty: name the calibration set sizes (each at least 2)")
    for x in ks:
        if not 2 <= x <= 1000000:
            raise InputError(f"k = {x} is not a calibration set size between 2 and 1000000")
    repeats = _whole_arg(repeats, "repeats")
    if not 1 <= repeats <= 10000:
        raise InputError(f"repeats is {repeats}, not between 1 and 10000")
    model = None if model is None else _model(model)  # the arguments first, then the bundle
    doc = _carb.transfer(src, dst, None if model is None else model._m, ks, repeats, _seed(seed))
    # And what the model's scores rest on (hundred-and-fourth hostile pass: another platform's model,
    # in-sample scores and guesses were only in doc["model"]["note"]).
    said = doc.get("notes", []) + ([doc["model"]["note"]] if doc.get("model", {}).get("note") else [])
    for text in said:
        warnings.warn("carb: " + text, CarbWarning, stacklevel=2)
    return doc


def validate(data):
    """Every problem `carb data validate` finds in one dataset CSV, as its document (the same as
    `carb data validate --format json`): {"file", "valid", "problems"}, each problem one line naming
    the file and line it is on, in file order. An invalid dataset raises nothing: "valid" is False
    and the problems say why (a file that cannot be read at all, or is empty, is one problem)."""
    return _carb.validate(_path(data, "data"))


def dataset_info(data):
    """What one dataset CSV holds, as `carb data info FILE.csv --format json` says it: {"file", "rows",
    "status", "family", "precision", "platforms", "depth", "width", "resolution", "batch",
    "extra_columns", "duplicates", "problems", "campaign", "devices"}. `problems` counts what every
    reader refuses the file for (carb.validate lists them); `campaign` is what an export of an
    unfinished campaign recorded (None otherwise); `devices`, per protocol the rows name, the device
    its sidecar records them as measured on and that device's memory in MB (None where not
    recorded). A file whose rows do not parse raises carb.DataError; a sidecar readers refuse is
    said as a carb.CarbWarning and the CSV summarised alone."""
    return _carb.dataset_info(_path(data, "data"))


def _write_dataset(op, what, files, out, force):
    """carb.merge's and carb.combine's one path: the arguments checked, the command recorded in the
    output's sidecar, each warning of the summary said as a carb.CarbWarning at the caller's line."""
    # Merge keeps the first input's row of a duplicate: an unordered collection would make the output
    # depend on Python's hash seed (a hostile tester: a set gave round 1's rows or round 2's by turns).
    if isinstance(files, (set, frozenset)):
        raise InputError(f"{what} is a set, whose order Python does not keep: give a list or tuple, in the order "
                         "to prefer")
    paths = _paths(files, what)
    out = _path(out, "out")
    force = _flag(force, "force")
    command = f"carb.{op}({what}={[str(p) for p in paths]!r}, out={str(out)!r}, force={force!r}) [Python]"
    doc = getattr(_carb, op)(paths, out, force, command)
    for text in doc["warnings"]:
        warnings.warn("carb: " + text, CarbWarning, stacklevel=3)
    return doc


def merge(inputs, out, force=False):
    """Merges dataset CSVs (in priority order) into `out` with its provenance sidecar, as `carb data
    merge` does: a platform and configuration seen twice keeps its first ok row (a failed row only
    where no input measured it ok); `out` replaces only an earlier merge of carb's unless `force`,
    which keeps what was there first as STEM.earlier.csv. Returns {"rows_in", "rows_out",
    "dropped_duplicates", "disagreeing_duplicates", "conflicts", "warnings", "csv", "provenance",
    ...}, the document of `carb data merge --format json`; each of its "warnings" (duplicates that
    measured differently, protocol conflicts, an earlier output's values replaced) is also said as a
    carb.CarbWarning, once the output is written: with warnings made errors the call raises after
    writing it. `inputs` is a list or tuple (a set has no order to prefer by)."""
    return _write_dataset("merge", "inputs", inputs, out, force)


def combine(rounds, out, force=False):
    """Combines measuring rounds of one protocol (two or more dataset CSVs) into `out`, per
    configuration the median over the rounds that measured it ok, with `rounds` and
    `latency_round_spread` columns, as `carb data combine` does (`force` as for carb.merge). Returns
    {"rounds", "rows_out", "combined", "warnings", "csv", "provenance"}, the document of `carb data
    combine --format json`; each of its "warnings" (rounds that disagree, rounds not measured apart,
    protocol records that differ) is also said as a carb.CarbWarning, once the output is written."""
    return _write_dataset("combine", "rounds", rounds, out, force)


def characterize(data, sm_threshold=None):
    """One dataset CSV characterized, as a dict (the same document as `carb characterize --format
    json`): how each target scales along each knob, family and precision ratios on matched
    configurations, J / ms / MB per GFLOP per batch tier, and the energy-latency divergence across
    SM-utilization x batch tiers (sm_threshold in %, default the median avg_sm_util). A section the
    data cannot fill says why ("available": false and its reason), never an estimate."""
    path = _path(data, "data")
    if sm_threshold is not None:
        sm_threshold = _scalar(sm_threshold, "sm_threshold")
        if not 0 <= sm_threshold <= 100:
            raise InputError(f"sm_threshold is {sm_threshold!r}, not a utilization between 0 and 100 (%)")
    return _carb.characterize(path, sm_threshold)


def recommend(model, arch, batches=None, precisions=None, latency_max=None, memory_max=None, confidence=None):
    """Best batch size and precision for an architecture (a carb.Config; its batch and precision
    are ignored), as a dict (the same document as `carb recommend --format json`). batches=None is
    1..64 in powers of two, precisions=None those the model was trained on with this family; an empty list is refused.
    confidence (0.8, 0.9, 0.95 or 0.99) judges the budgets on the interval's upper bound. `model`
    is a carb.Model or a bundle's path. Where no candidate meets the budgets (or fits the device's
    memory), "best" is None, "status" is "infeasible", and a carb.CarbWarning says why (where
    `carb recommend` exits 1)."""
    model = _model(model)
    if not isinstance(arch, Config):
        raise InputError(f"arch is {arch!r}, not a carb.Config (its family, depth, width and resolution are used)")
    if batches is not None:
        if isinstance(batches, (str, bytes)) or not hasattr(batches, "__iter__"):
            raise InputError(f"batches is {batches!r}, not a list of batch sizes")
        batches = [_whole_arg(b, "a batch size") for b in batches]
        if not batches:
            raise InputError("no batch sizes to evaluate")
    if precisions is not None:
        # One name is one precision (the sixty-third hostile pass: "fp32" was read as "f", "p", ...).
        precisions = [precisions] if isinstance(precisions, str) else list(precisions)
        if not precisions:
            raise InputError("precisions is empty")
        for x in precisions:
            if not isinstance(x, str):
                raise InputError(f"a precision is {x!r}, not a name such as 'fp32'")
    latency_max = None if latency_max is None else _budget(latency_max, "latency_max")
    memory_max = None if memory_max is None else _budget(memory_max, "memory_max")
    r = _carb.recommend(model._m, arch, batches or [], precisions or [], latency_max, memory_max,
                        _confidence(confidence))
    if r["best"] is None:  # a hostile tester: silent, where the CLI exits 1, and r["best"]["batch"] a TypeError
        warnings.warn("carb: nothing to recommend: " + r.get("message", "no candidate meets the budgets"),
                      CarbWarning, stacklevel=2)
    return r
