#!/usr/bin/env python3
"""Between-run repeatability of two measurements of the same configurations.

usage: scripts/repeatability.py FIRST.csv REPEAT.csv

For latency (and, when both files have reference_ms, latency corrected for host-speed drift as
`carb train --drift-correct` does, with R the median reference time of FIRST) and peak memory:
R^2 of the repeat as a predictor of the first run, median and 90th-percentile relative difference.
Also the lag-1 autocorrelation of the log latency ratio in the repeat's measuring order: near 0
means independent noise per configuration, near 1 a slowly drifting host.
"""
import csv
import math
import statistics as st
import sys


def load(path):
    rows = [r for r in csv.DictReader(open(path)) if r["status"] == "ok"]
    key = lambda r: (r["family"], r["depth"], r["width"], r["resolution"], r["batch"], r["precision"])
    return {key(r): r for r in rows}, [key(r) for r in rows]


def report(name, first, repeat):
    mean = st.mean(first)
    ss = sum((y - mean) ** 2 for y in first)
    res = sum((y - x) ** 2 for x, y in zip(repeat, first))
    rel = sorted(abs(x - y) / y for x, y in zip(repeat, first))
    print(f"{name:18s} n={len(first)}  R2={1 - res / ss:.4f}  median |rel diff|={rel[len(rel) // 2]:.3f}"
          f"  p90={rel[int(0.9 * len(rel))]:.3f}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, _ = load(sys.argv[1])
    b, order = load(sys.argv[2])
    keys = [k for k in order if k in a]
    if len(keys) < 3:
        sys.exit("fewer than 3 configurations measured ok in both files")
    lat = lambda d, k: float(d[k]["latency_ms"])
    report("latency_ms", [lat(a, k) for k in keys], [lat(b, k) for k in keys])
    if all(a[k].get("reference_ms") and b[k].get("reference_ms") for k in keys):
        R = st.median(float(r["reference_ms"]) for r in a.values())
        cor = lambda d, k: lat(d, k) * R / float(d[k]["reference_ms"])
        report("latency corrected", [cor(a, k) for k in keys], [cor(b, k) for k in keys])
    mem = lambda d, k: float(d[k]["peak_memory_mb"])
    report("peak_memory_mb", [mem(a, k) for k in keys], [mem(b, k) for k in keys])
    lr = [math.log(lat(b, k) / lat(a, k)) for k in keys]
    m = st.mean(lr)
    ac = sum((lr[i] - m) * (lr[i + 1] - m) for i in range(len(lr) - 1)) / sum((x - m) ** 2 for x in lr)
    print(f"lag-1 autocorrelation of log(latency repeat / first) in measuring order: {ac:.2f}")


if __name__ == "__main__":
    main()
