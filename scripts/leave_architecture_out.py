#!/usr/bin/python3
"""Leave-one-architecture-out accuracy of the CARB model on a dataset measured one architecture at a
time (`carb profile --arch-order`): for each architecture (family, depth, width, at every precision),
train on every other architecture's rows and predict all of its resolutions and batches. A random row split of
such a dataset puts each test row's architecture in training too and flatters the model; this asks
what a user asks of it, a cost for a network nobody measured. Prints R^2 and MAPE per target, pooled
over every left-out row, and the same per architecture.

With --confidence L, also the share of left-out rows inside the model's L interval, for the rows
inside the trained ranges (where the interval is the conformal width alone: for an architecture never
trained, the one calibrated by holding whole architectures out) and for those outside (widened by the
distance), and the median interval width as upper / lower.

Usage: PYTHONPATH=build/python /usr/bin/python3 scripts/leave_architecture_out.py data/h200.csv
       [--trees N] [--fast] [--also OTHER.csv] [--confidence 0.9] [--size-bins N]
       (--also: train on all of the dataset, score OTHER)
"""
import argparse
import csv
import math
import os
import sys
import tempfile
import warnings

import carb

TARGETS = ["peak_memory_mb", "energy_j", "latency_ms"]
KEY = ["family", "depth", "width", "resolution", "batch", "precision"]


def arch(r):
    # The network, not its precision: the same network at another precision would stay in training
    # and flatter the score.
    return (r["family"], r["depth"], r["width"])


def scores(pairs):
    if len(pairs) < 2:
        return float("nan"), float("nan")
    ys = [y for y, _ in pairs]
    mean = sum(ys) / len(ys)
    ss = sum((y - mean) ** 2 for y in ys)
    r2 = 1 - sum((y - p) ** 2 for y, p in pairs) / ss if ss > 0 else float("nan")
    mape = 100 * sum(abs(p - y) / y for y, p in pairs) / len(pairs)
    return r2, mape


def write(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerows(rows)


def predict(model, rows, confidence=None):
    cols = {k: [r[k] for r in rows] for k in KEY}
    cols["depth"] = [int(v) for v in cols["depth"]]
    cols["resolution"] = [int(v) for v in cols["resolution"]]
    cols["batch"] = [int(v) for v in cols["batch"]]
    cols["width"] = [float(v) for v in cols["width"]]
    return model.predict(cols, confidence=confidence)


def coverage(rows, p):
    """target -> {"inside"/"outside": [(covered, upper / lower)]} over the rows that measured it."""
    out = {t: {"inside": [], "outside": []} for t in TARGETS if t in p}
    for t in out:
        for i, r in enumerate(rows):
            if r[t] == "":
                continue
            y, lo, hi = float(r[t]), p[t + "_lower"][i], p[t + "_upper"][i]
            out[t]["outside" if p["outside"][i] else "inside"].append((lo <= y <= hi, hi / lo if lo > 0 else math.inf))
    return out


def print_coverage(cov, confidence):
    print(f"{confidence:g} intervals of the left-out architectures: share holding the measurement, median upper/lower")
    for t, parts in cov.items():
        line = []
        for where, v in parts.items():
            if v:
                widths = sorted(w for _, w in v)
                line.append(f"{where} the ranges {100 * sum(c for c, _ in v) / len(v):5.1f}% of {len(v):4d} "
                            f"(x{widths[len(widths) // 2]:.2f})")
        print(f"  {t:15} " + "; ".join(line))


def measured_vs_predicted(rows, p):
    """target -> [(measured, predicted)] over the rows that measured it."""
    # A target the platform cannot measure (energy on a CPU) has no predictions and no pairs.
    return {t: [(float(r[t]), float(v)) for r, v in zip(rows, p[t]) if r.get(t, "") != ""] if t in p else []
            for t in TARGETS}


def print_scores(pairs):
    for t in TARGETS:
        if not pairs[t]:
            continue
        r2, mape = scores(pairs[t])
        print(f"  {t:15} n={len(pairs[t]):4d}  R2 {r2:.4f}  MAPE {mape:.1f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    ap.add_argument("--trees", type=int, default=0)
    ap.add_argument("--fast", action="store_true")
    ap.add_argument("--also", help="a second dataset to score a model trained on all of DATA against")
    ap.add_argument("--confidence", type=float, help="also report the coverage of intervals at this level")
    ap.add_argument("--size-bins", type=int, default=2, help="as `carb train --size-bins` (default 2, as carb train)")
    a = ap.parse_args()
    with open(a.data, newline="") as f:
        rd = csv.DictReader(f)
        header = rd.fieldnames
        rows = [r for r in rd if r["status"] == "ok"]
    archs = sorted({arch(r) for r in rows})
    if len(archs) < 2:
        sys.exit(f"{a.data}: {len(archs)} architecture(s); leaving one out needs two or more")
    train_kw = {"fast": True} if a.fast else {"trees": a.trees}
    train_kw["size_bins"] = a.size_bins
    pooled = {t: [] for t in TARGETS}
    cov = {}
    print(f"{a.data}: {len(rows)} ok rows, {len(archs)} architectures")
    print(f"{'left out':34} {'rows':>4}  " + "  ".join(f"{t + ' MAPE':>20}" for t in TARGETS))
    with tempfile.TemporaryDirectory() as d, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the temporary CSVs have no provenance sidecar
        for A in archs:
            train = [r for r in rows if arch(r) != A]
            test = [r for r in rows if arch(r) == A]
            path = os.path.join(d, "train.csv")
            write(path, header, train)
            model = carb.Model.train([path], **train_kw)
            p = predict(model, test, a.confidence)
            pairs = measured_vs_predicted(test, p)
            if a.confidence:
                for t, parts in coverage(test, p).items():
                    for where, v in parts.items():
                        cov.setdefault(t, {"inside": [], "outside": []})[where] += v
            line = []
            for t in TARGETS:
                pooled[t] += pairs[t]
                line.append(f"{scores(pairs[t])[1]:19.1f}%")
            print(f"{'-'.join(A):34} {len(test):4d}  " + "  ".join(line))
        print("pooled over every left-out row:")
        print_scores(pooled)
        if a.confidence:
            print_coverage(cov, a.confidence)
        if a.also:
            model = carb.Model.train([a.data], **train_kw)
            with open(a.also, newline="") as f:
                other = [r for r in csv.DictReader(f) if r["status"] == "ok"]
            print(f"trained on all of {a.data}, scored on {a.also} ({len(other)} rows, "
                  f"{len({arch(r) for r in other})} architectures):")
            print_scores(measured_vs_predicted(other, predict(model, other)))


if __name__ == "__main__":
    main()
