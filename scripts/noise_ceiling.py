#!/usr/bin/env python3
"""How close a model comes to a re-measurement, on configurations it did not train on.

usage: scripts/noise_ceiling.py MODEL_DIR FIRST.csv REPEAT.csv [CARB]

FIRST.csv is the data the model trained on (its held-out part), REPEAT.csv an independent second
measurement of some of the same configurations. On the configurations measured ok in both files
and absent from MODEL_DIR/trained_configs.txt, for each target the model predicts, prints R^2 and
MAPE of: the repeat against the first run (the measurement's own reproducibility), the model
against the first run, the model against the repeat, and the model against the mean of both runs.
A model whose R^2 against the first run equals the repeat's is as good as measuring again.
CARB is the carb executable (default build/carb).
"""
import csv
import io
import subprocess
import sys

KEY = ("family", "depth", "width", "resolution", "batch", "precision")


def key(r):
    return (r["family"], int(r["depth"]), float(r["width"]), int(r["resolution"]), int(r["batch"]), r["precision"])


def load(path):
    return {key(r): r for r in csv.DictReader(open(path)) if r["status"] == "ok"}


def config_name(r):
    return f"{r['family']}-{r['depth']}-w{r['width']}-r{r['resolution']}-b{r['batch']}-{r['precision']}"


def stats(truth, pred):
    mean = sum(truth) / len(truth)
    ss = sum((y - mean) ** 2 for y in truth)
    res = sum((y - p) ** 2 for y, p in zip(truth, pred))
    mape = 100 * sum(abs(y - p) / y for y, p in zip(truth, pred)) / len(truth)
    return f"R2={1 - res / ss:.4f} MAPE={mape:.1f}%"


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    model, first_csv, repeat_csv = sys.argv[1:4]
    carb = sys.argv[4] if len(sys.argv) == 5 else "build/carb"
    trained = set(open(f"{model}/trained_configs.txt").read().split())
    a, b = load(first_csv), load(repeat_csv)
    keys = [k for k in b if k in a]
    held = [k for k in keys if config_name(a[k]) not in trained]
    if len(held) < 3:
        sys.exit("fewer than 3 held-out configurations measured ok in both files")
    configs = io.StringIO()
    w = csv.writer(configs)
    w.writerow(KEY)
    w.writerows([a[k][c] for c in KEY] for k in held)
    out = subprocess.run([carb, "predict", "--model", model, "--configs", "/dev/stdin", "--format", "csv"],
                         input=configs.getvalue(), capture_output=True, text=True, check=True).stdout
    pred = {key(r): r for r in csv.DictReader(io.StringIO(out))}
    print(f"{len(held)} held-out configurations measured twice (of {len(keys)} in both files)")
    targets = [t for t in ("peak_memory_mb", "energy_j", "latency_ms") if t in next(iter(pred.values()))]
    for t in targets:
        first = [float(a[k][t]) for k in held]
        rep = [float(b[k][t]) for k in held]
        p = [float(pred[k][t]) for k in held]
        both = [(x + y) / 2 for x, y in zip(first, rep)]
        print(f"{t}: repeat vs first {stats(first, rep)} | model vs first {stats(first, p)} | "
              f"model vs repeat {stats(rep, p)} | model vs mean of both {stats(both, p)}")


if __name__ == "__main__":
    main()
