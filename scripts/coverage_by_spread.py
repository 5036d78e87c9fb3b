#!/usr/bin/python3
"""Whether the model's latency intervals hold as well on the rows whose measurement was noisy as on
the quiet ones. A dataset measured in rounds (`carb data combine`) records each row's spread across
its rounds (`latency_round_spread`, the rounds' range over their median); a new configuration has
none until it is measured, so an interval can widen only with what is known before measuring
(the batch regime and the predicted cost).

K-fold random split (seeded): train on K-1 folds, predict the held-out fold at --confidence, and
print the share of held-out values of --target inside their interval, the median interval width
(log upper / lower) and the median |log error|, by quartile of the measured spread (latency, where
the dataset records it), by quartile of the predicted value, by batch regime (batch <= 8, above),
by precision and by family.

Usage: PYTHONPATH=build/python /usr/bin/python3 scripts/coverage_by_spread.py data/cpu-2t.csv
       [--target latency_ms|energy_j|peak_memory_mb] [--confidence 0.9] [--folds 5] [--seed 7]
       [--fast | --trees N] [--size-bins N]
"""
import argparse
import csv
import math
import os
import random
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from leave_architecture_out import predict, write  # noqa: E402

import carb  # noqa: E402


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def quartiles(rows, key):
    rows = sorted(rows, key=key)
    k = len(rows) // 4
    return [rows[q * k:(q + 1) * k] if q < 3 else rows[3 * k:] for q in range(4)]


def line(name, group):
    return (f"  {name:34} n={len(group):4d}  coverage {100 * sum(g['covered'] for g in group) / len(group):5.1f}%"
            f"  median width {median(g['width'] for g in group):.3f}  median |log error| "
            f"{median(g['error'] for g in group):.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data")
    ap.add_argument("--confidence", type=float, default=0.9)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--fast", action="store_true")
    ap.add_argument("--trees", type=int, default=0)
    ap.add_argument("--target", default="latency_ms", choices=("latency_ms", "energy_j", "peak_memory_mb"))
    ap.add_argument("--size-bins", type=int, default=2, help="as `carb train --size-bins` (default 2, as carb train)")
    a = ap.parse_args()
    if not 0 < a.confidence < 1:
        sys.exit("error: --confidence must be between 0 and 1")
    if a.folds < 2:
        sys.exit("error: --folds must be at least 2")
    try:
        with open(a.data, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            rows = [r for r in reader if r.get("status") == "ok"]
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        sys.exit(f"error: {a.data}: {e}")
    if any(None in r for r in rows):
        sys.exit(f"error: {a.data}: a row has more fields than the header")
    for col in (a.target, "batch"):
        if col not in header:
            sys.exit(f"error: {a.data} has no {col} column")
    # The spread across rounds is latency's (`carb data combine` records it); other targets, and data
    # measured once, are grouped by what is known before measuring only.
    spread = a.target == "latency_ms" and "latency_round_spread" in header

    def finite(text, least):
        try:
            v = float(text)
        except (TypeError, ValueError):
            return False
        return math.isfinite(v) and v >= least

    # A latency or spread that is no finite number is no row to hold out (carb's reader refuses such
    # a file when training; here such rows are counted and left out first).
    usable = [r for r in rows if finite(r[a.target], 1e-300) and (not spread or finite(r["latency_round_spread"], 0))]
    what = a.target + (" or latency_round_spread" if spread else "")
    if len(usable) < len(rows):
        print(f"{len(rows) - len(usable)} ok rows left out: {what} missing or no finite positive number",
              file=sys.stderr)
    rows = usable
    if len(rows) < 4 * a.folds:
        sys.exit(f"error: {a.data} has {len(rows)} ok rows with {what}; {4 * a.folds} needed for {a.folds} folds")
    random.Random(a.seed).shuffle(rows)
    train_kw = {"fast": True} if a.fast else {"trees": a.trees}
    train_kw["size_bins"] = a.size_bins
    out = []
    with tempfile.TemporaryDirectory() as d, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the temporary CSVs have no provenance sidecar
        for k in range(a.folds):
            test = rows[k::a.folds]
            train = [r for i, r in enumerate(rows) if i % a.folds != k]
            path = os.path.join(d, "train.csv")
            write(path, header, train)
            try:
                p = predict(carb.Model.train([path], **train_kw), test, a.confidence)
            except (carb.Error, ValueError) as e:
                sys.exit(f"error: {a.data}: {e}")
            if a.target not in p:
                sys.exit(f"error: {a.data}: the model trained on it does not predict {a.target}")
            for i, r in enumerate(test):
                y, v = float(r[a.target]), p[a.target][i]
                lo, hi = p[a.target + "_lower"][i], p[a.target + "_upper"][i]
                out.append({"spread": float(r["latency_round_spread"]) if spread else None, "predicted": v,
                            "batch": int(r["batch"]), "precision": r["precision"], "family": r["family"],
                            "covered": lo <= y <= hi, "width": math.log(hi / lo) if lo > 0 else math.inf,
                            "error": abs(math.log(v / y)) if v > 0 else math.inf})
    unit = {"latency_ms": "ms", "energy_j": "J", "peak_memory_mb": "MB"}[a.target]
    print(f"{a.data}: {len(out)} rows held out in {a.folds} folds, {a.confidence:g} {a.target} intervals"
          + (f", {a.size_bins} size bins" if a.size_bins > 1 else ""))
    print(line("all", out))
    if spread:
        print("by the spread measured across rounds (not known before measuring):")
        for q, g in enumerate(quartiles(out, lambda g: g["spread"])):
            print(line(f"q{q + 1} spread {g[0]['spread']:.3f}-{g[-1]['spread']:.3f}", g))
    print(f"by the predicted {a.target} (known before measuring):")
    for q, g in enumerate(quartiles(out, lambda g: g["predicted"])):
        print(line(f"q{q + 1} predicted {g[0]['predicted']:.3g}-{g[-1]['predicted']:.3g} {unit}", g))
    print("by batch regime:")
    for name, g in (("batch <= 8", [g for g in out if g["batch"] <= 8]), ("batch > 8", [g for g in out if g["batch"] > 8])):
        if g:
            print(line(name, g))
    for key in ("precision", "family"):
        print(f"by {key}:")
        for value in sorted({g[key] for g in out}):
            print(line(value, [g for g in out if g[key] == value]))


if __name__ == "__main__":
    main()
