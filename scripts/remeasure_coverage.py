#!/usr/bin/env python3
"""How often a model's intervals hold a new measurement of the configurations, not only the
training campaign's own.

usage: scripts/remeasure_coverage.py MODEL_DIR DATA.csv AGAIN.csv [--target latency_ms] [--carb build/carb]
       scripts/remeasure_coverage.py --cross-fit DATA.csv AGAIN.csv [--target ...] [--carb ...] [--seed 1]

DATA.csv is the campaign the model was trained from, AGAIN.csv an independent measurement of some of
the same configurations. For every level, on the configurations measured ok in both, prints the
share of AGAIN's measurements inside the model's interval, the share of DATA's, and the median
interval's upper / lower.

--cross-fit: splits AGAIN.csv in two seeded halves, trains `carb train --data DATA --remeasured
HALF --seed 42 --test-fraction 0.2` on each, and scores each model on the other half: the spread's
coverage on measurements that did not calibrate it.
"""
import argparse
import csv
import io
import os
import random
import statistics
import subprocess
import sys
import tempfile

KEY = ("family", "depth", "width", "resolution", "batch", "precision")
LEVELS = ("0.8", "0.9", "0.95", "0.99")


def key(r):
    return (r["family"], int(r["depth"]), float(r["width"]), int(r["resolution"]), int(r["batch"]), r["precision"])


def load(path):
    return {key(r): r for r in csv.DictReader(open(path)) if r["status"] == "ok"}


def coverage(carb, model, data, again, target, tmp):
    first, second = load(data), load(again)
    common = sorted(k for k in set(first) & set(second) if first[k][target] and second[k][target])
    configs = os.path.join(tmp, "configs.csv")
    with open(configs, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(KEY)
        w.writerows(common)
    rows = []
    for level in LEVELS:
        run = subprocess.run([carb, "predict", "--model", model, "--configs", configs, "--confidence", level,
                              "--format", "csv"], capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(run.stderr.strip())
        out = run.stdout
        pred = {key(r): r for r in csv.DictReader(io.StringIO(out))}
        held = {"again": 0, "data": 0}
        widths = []
        for k in common:
            lo, hi = float(pred[k][target + "_lower"]), float(pred[k][target + "_upper"])
            held["again"] += lo <= float(second[k][target]) <= hi
            held["data"] += lo <= float(first[k][target]) <= hi
            widths.append(hi / lo if lo > 0 else float("inf"))
        rows.append((level, held["again"] / len(common), held["data"] / len(common), statistics.median(widths)))
    return len(common), rows


def show(title, n, rows):
    print(f"{title} ({n} configurations measured in both)")
    print(f"  {'level':6} {'holds AGAIN':>12} {'holds DATA':>11} {'median upper/lower':>19}")
    for level, a, d, w in rows:
        print(f"  {level:6} {100 * a:11.1f}% {100 * d:10.1f}% {w:18.3f}x")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="MODEL_DIR DATA.csv AGAIN.csv, or with --cross-fit DATA.csv AGAIN.csv")
    ap.add_argument("--target", default="latency_ms")
    ap.add_argument("--carb", default="build/carb")
    ap.add_argument("--cross-fit", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if not a.cross_fit:
            if len(a.files) != 3:
                sys.exit("give MODEL_DIR DATA.csv AGAIN.csv")
            show(f"{a.files[0]}, {a.target}", *coverage(a.carb, *a.files, a.target, tmp))
            return
        if len(a.files) != 2:
            sys.exit("--cross-fit takes DATA.csv AGAIN.csv")
        data, again = a.files
        with open(again, newline="") as f:
            rd = csv.DictReader(f)
            header, rows = rd.fieldnames, list(rd)
        order = list(range(len(rows)))
        random.Random(a.seed).shuffle(order)
        halves = [sorted(order[::2]), sorted(order[1::2])]
        for h in (0, 1):
            for name, part in (("fit", halves[h]), ("score", halves[1 - h])):
                with open(os.path.join(tmp, f"{name}{h}.csv"), "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=header)
                    w.writeheader()
                    w.writerows(rows[i] for i in part)
            model = os.path.join(tmp, f"model{h}")
            subprocess.run([a.carb, "train", "--data", data, "--remeasured", os.path.join(tmp, f"fit{h}.csv"), "--out",
                            model, "--seed", "42", "--test-fraction", "0.2"], check=True, capture_output=True)
            show(f"spread from half {h + 1} of {again}, scored on half {2 - h}, {a.target}",
                 *coverage(a.carb, model, data, os.path.join(tmp, f"score{h}.csv"), a.target, tmp))


if __name__ == "__main__":
    main()
