#!/usr/bin/python3
"""Reads a window study (carb meter --study ... --out study.csv) and prints, per window length and
method, the median and 90th-percentile |deviation| of energy per pass from the reference (the whole
trace, tick-aligned), and the repeat CV of the reference across a configuration's traces. Then the
shortest tick-aligned window whose p90 deviation is at most --max-p90 (3%), and the --energy-ticks
that gives it at the counter period the study's sidecar (study.csv.json) recorded.

Usage: /usr/bin/python3 scripts/window_study.py data/gpu/h200-window-study.csv [--max-p90 0.03] [--json]
"""
import argparse
import csv
import json
import math
import os
import statistics
import sys
from collections import defaultdict

KEY = ["family", "depth", "width", "resolution", "batch", "precision"]


def quantile(v, q):
    v = sorted(v)
    if not v:
        return float("nan")
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


def analyse(rows, max_p90):
    refs = {}
    for r in rows:
        if r["reference"] == "1":
            refs[tuple(r[k] for k in KEY) + (r["repeat"],)] = float(r["energy_per_pass_j"])
    devs = defaultdict(list)
    for r in rows:
        if r["reference"] == "1":
            continue
        ref = refs.get(tuple(r[k] for k in KEY) + (r["repeat"],))
        if ref and ref > 0:
            devs[(r["method"], float(r["window_s"]))].append(abs(float(r["energy_per_pass_j"]) - ref) / ref)
    by_config = defaultdict(list)
    for k, v in refs.items():
        by_config[k[:-1]].append(v)
    cvs = [statistics.stdev(v) / statistics.mean(v) for v in by_config.values() if len(v) > 1]
    table = [{"method": m, "window_s": w, "windows": len(d), "median_dev": statistics.median(d),
              "p90_dev": quantile(d, 0.9)} for (m, w), d in sorted(devs.items())]
    ok = [t["window_s"] for t in table if t["method"] == "ticks" and t["p90_dev"] <= max_p90]
    return {"configurations": len(by_config), "traces": len(refs), "table": table,
            "repeat_cv_median": statistics.median(cvs) if cvs else None,
            "repeat_cv_p90": quantile(cvs, 0.9) if cvs else None,
            "shortest_ok_window_s": min(ok) if ok else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("study")
    ap.add_argument("--max-p90", type=float, default=0.03)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with open(a.study, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"{a.study}: no rows")
    res = analyse(rows, a.max_p90)
    period_ms = None
    side = a.study + ".json"
    if os.path.exists(side):
        period_ms = json.load(open(side)).get("meter_check", {}).get("period_ms")
    w = res["shortest_ok_window_s"]
    if w is not None and period_ms:
        # At least the window the study verified, but a period measured at 100.1 ms must not turn
        # 1 s into 11 ticks one lease and 10 the next (the tick count is part of the protocol id).
        res["energy_ticks"] = max(1, math.ceil(w * 1e3 / period_ms - 0.05))
    if a.json:
        print(json.dumps(res, indent=2))
        return
    print(f"{res['configurations']} configurations, {res['traces']} traces; "
          f"reference repeat CV median {fmt(res['repeat_cv_median'])}, p90 {fmt(res['repeat_cv_p90'])}")
    print(f"{'method':7} {'window s':>8} {'windows':>7} {'median |dev|':>12} {'p90 |dev|':>9}")
    for t in res["table"]:
        print(f"{t['method']:7} {t['window_s']:8g} {t['windows']:7d} {fmt(t['median_dev']):>12} {fmt(t['p90_dev']):>9}")
    if w is None:
        print(f"no tick-aligned window reaches p90 |dev| <= {100 * a.max_p90:g}%: keep the reference length")
    else:
        print(f"shortest tick-aligned window with p90 |dev| <= {100 * a.max_p90:g}%: {w:g} s"
              + (f" = --energy-ticks {res['energy_ticks']} at a {period_ms:g} ms counter period" if "energy_ticks" in res else ""))


def fmt(v):
    return "-" if v is None or v != v else f"{100 * v:.2f}%"


if __name__ == "__main__":
    main()
