#!/usr/bin/python3
"""Reads a window study (carb meter --study ... --out study.csv) and prints, per window length and
method, the median and 90th-percentile |deviation| of energy per pass from the reference (the whole
trace, tick-aligned), and the repeat CV of the reference across a configuration's traces. Then the
shortest tick-aligned window whose p90 deviation is at most --max-p90 (3%), and the --energy-ticks
that gives it at the counter period the study's sidecar (study.csv.json) recorded.

Energy per pass is power x time per pass, and a window can miss the reference through either. The
time per pass is the workload's own speed over that window (on a GPU fed by a busy host, launch-bound
networks run faster and slower from one second to the next: the latency measurement sees the same),
while the power over whole counter periods is what the meter contributes. So the table splits each
deviation into its time-per-pass and its power part, and the window is chosen by the power part
(`shortest_ok_window_s`): the shortest window over which the meter's reading is as good as the 5 s
reference's. `shortest_ok_energy_window_s` is the same by energy per pass, which no window may meet
where the workload's speed itself wanders.

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
            refs[tuple(r[k] for k in KEY) + (r["repeat"],)] = r
    devs = defaultdict(lambda: ([], [], []))  # energy per pass, time per pass, power
    for r in rows:
        if r["reference"] == "1":
            continue
        ref = refs.get(tuple(r[k] for k in KEY) + (r["repeat"],))
        if not ref:
            continue
        e, e_ref = float(r["energy_per_pass_j"]), float(ref["energy_per_pass_j"])
        if e_ref <= 0 or int(r["passes"]) <= 0 or int(ref["passes"]) <= 0:
            continue
        t = float(r["seconds"]) / int(r["passes"])
        t_ref = float(ref["seconds"]) / int(ref["passes"])
        d = devs[(r["method"], float(r["window_s"]))]
        d[0].append(abs(e - e_ref) / e_ref)
        d[1].append(abs(t / t_ref - 1))
        d[2].append(abs((e / t) / (e_ref / t_ref) - 1))
    by_config = defaultdict(list)
    for k, v in refs.items():
        by_config[k[:-1]].append(float(v["energy_per_pass_j"]))
    cvs = [statistics.stdev(v) / statistics.mean(v) for v in by_config.values() if len(v) > 1]
    table = [{"method": m, "window_s": w, "windows": len(d[0]), "median_dev": statistics.median(d[0]),
              "p90_dev": quantile(d[0], 0.9), "p90_time_dev": quantile(d[1], 0.9),
              "median_power_dev": statistics.median(d[2]), "p90_power_dev": quantile(d[2], 0.9)}
             for (m, w), d in sorted(devs.items())]
    ok_power = [t["window_s"] for t in table if t["method"] == "ticks" and t["p90_power_dev"] <= max_p90]
    ok_energy = [t["window_s"] for t in table if t["method"] == "ticks" and t["p90_dev"] <= max_p90]
    return {"configurations": len(by_config), "traces": len(refs), "table": table,
            "repeat_cv_median": statistics.median(cvs) if cvs else None,
            "repeat_cv_p90": quantile(cvs, 0.9) if cvs else None,
            "shortest_ok_window_s": min(ok_power) if ok_power else None,
            "shortest_ok_energy_window_s": min(ok_energy) if ok_energy else None}


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
    print("deviation from the reference (the whole trace) of energy per pass, of its time per pass and of")
    print("its power (energy per pass / time per pass: the meter's part)")
    print(f"{'method':7} {'window s':>8} {'windows':>7} {'E median':>9} {'E p90':>7} {'time p90':>8} "
          f"{'power median':>12} {'power p90':>9}")
    for t in res["table"]:
        print(f"{t['method']:7} {t['window_s']:8g} {t['windows']:7d} {fmt(t['median_dev']):>9} "
              f"{fmt(t['p90_dev']):>7} {fmt(t['p90_time_dev']):>8} {fmt(t['median_power_dev']):>12} "
              f"{fmt(t['p90_power_dev']):>9}")
    e = res["shortest_ok_energy_window_s"]
    print(f"by energy per pass: " + (f"{e:g} s" if e is not None else
          f"no tick-aligned window reaches p90 <= {100 * a.max_p90:g}% (the workload's speed wanders)"))
    if w is None:
        print(f"no tick-aligned window reaches power p90 |dev| <= {100 * a.max_p90:g}%: keep the reference length")
    else:
        print(f"shortest tick-aligned window with power p90 |dev| <= {100 * a.max_p90:g}%: {w:g} s"
              + (f" = --energy-ticks {res['energy_ticks']} at a {period_ms:g} ms counter period" if "energy_ticks" in res else ""))


def fmt(v):
    return "-" if v is None or v != v else f"{100 * v:.2f}%"


if __name__ == "__main__":
    main()
