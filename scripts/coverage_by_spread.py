#!/usr/bin/python3
"""Whether the model's latency intervals hold as well on the rows whose measurement was noisy as on
the quiet ones. A dataset measured in rounds (`carb data combine`) records each row's spread across
its rounds (`latency_round_spread`, the rounds' range over their median); a new configuration has
none until it is measured, so an interval can widen only with what is known before measuring
(the batch regime and the predicted cost).

K-fold random split (seeded): train on K-1 folds, predict the held-out fold at --confidence, and
print the share of held-out latencies inside their interval, the median interval width (log upper /
lower) and the median |log error|, by quartile of the measured spread, by quartile of the predicted
latency, and by batch regime (batch <= 8, above).

Usage: PYTHONPATH=build/python /usr/bin/python3 scripts/coverage_by_spread.py data/cpu-2t.csv
       [--confidence 0.9] [--folds 5] [--seed 7] [--fast | --trees N]
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
    for col in ("latency_ms", "latency_round_spread", "batch"):
        if col not in header:
            sys.exit(f"error: {a.data} has no {col} column (a dataset combined from rounds has latency_round_spread)")
    def finite(text, least):
        try:
            v = float(text)
        except (TypeError, ValueError):
            return False
        return math.isfinite(v) and v >= least

    # A latency or spread that is no finite number is no row to hold out (carb's reader refuses such
    # a file when training; here such rows are counted and left out first).
    usable = [r for r in rows if finite(r["latency_ms"], 1e-300) and finite(r["latency_round_spread"], 0)]
    if len(usable) < len(rows):
        print(f"{len(rows) - len(usable)} ok rows left out: latency_ms or latency_round_spread missing or no finite "
              "number", file=sys.stderr)
    rows = usable
    if len(rows) < 4 * a.folds:
        sys.exit(f"error: {a.data} has {len(rows)} ok rows with a round spread; {4 * a.folds} needed for {a.folds} folds")
    random.Random(a.seed).shuffle(rows)
    train_kw = {"fast": True} if a.fast else {"trees": a.trees}
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
            for i, r in enumerate(test):
                y, v = float(r["latency_ms"]), p["latency_ms"][i]
                lo, hi = p["latency_ms_lower"][i], p["latency_ms_upper"][i]
                out.append({"spread": float(r["latency_round_spread"]), "predicted": v, "batch": int(r["batch"]),
                            "covered": lo <= y <= hi, "width": math.log(hi / lo) if lo > 0 else math.inf,
                            "error": abs(math.log(v / y)) if v > 0 else math.inf})
    print(f"{a.data}: {len(out)} rows held out in {a.folds} folds, {a.confidence:g} latency intervals")
    print(line("all", out))
    print("by the spread measured across rounds (not known before measuring):")
    for q, g in enumerate(quartiles(out, lambda g: g["spread"])):
        print(line(f"q{q + 1} spread {g[0]['spread']:.3f}-{g[-1]['spread']:.3f}", g))
    print("by the predicted latency (known before measuring):")
    for q, g in enumerate(quartiles(out, lambda g: g["predicted"])):
        print(line(f"q{q + 1} predicted {g[0]['predicted']:.3g}-{g[-1]['predicted']:.3g} ms", g))
    print("by batch regime:")
    for name, g in (("batch <= 8", [g for g in out if g["batch"] <= 8]), ("batch > 8", [g for g in out if g["batch"] > 8])):
        if g:
            print(line(name, g))


if __name__ == "__main__":
    main()
