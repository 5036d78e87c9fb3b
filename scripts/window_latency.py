#!/usr/bin/python3
"""Two latencies one GPU row holds: `latency_ms`, the mean of the timing loop's passes (stopped at a
1% confidence interval, so as few as 10 passes, tens of milliseconds), and the mean pass time of the
whole energy window the loop opens (`energy_window_s` / `energy_passes`, about 1 s, every pass
synchronized alike). Energy per pass comes from the window, so `energy_j / latency_ms` is the
device's power only where the two agree.

Prints, for a dataset, how far the loop's latency sits from the window's (the ratio's quantiles), how
many rows' energy over loop latency falls below the idle power the meter check recorded (a power no
running GPU draws), and, with --repeat, how well each latency agrees with a second measurement of the
same configurations (R^2 and median |deviation|).

--write-window OUT.csv writes the dataset with latency_ms taken from the window (passes and timed_s
the window's too, the loop's spread columns emptied), to train and score a model on that latency: a
derived file, kept out of data/.

Usage: /usr/bin/python3 scripts/window_latency.py data/h200.csv [--repeat data/gpu/h200-repeat.csv]
       [--write-window /tmp/h200-window.csv]
"""
import argparse
import csv
import json
import math
import os
import sys

KEY = ["family", "depth", "width", "resolution", "batch", "precision"]


def rows_of(path):
    with open(path, newline="") as f:
        out = {}
        for r in csv.DictReader(f):
            if r.get("status") != "ok":
                continue
            try:
                loop = float(r["latency_ms"])
                window = float(r["energy_window_s"]) * 1000 / float(r["energy_passes"])
                energy = float(r["energy_j"])
            except (KeyError, ValueError, ZeroDivisionError):
                continue
            out[tuple(r[k] for k in KEY)] = (loop, window, energy, r.get("protocol_id", ""))
        return out


def idle_power(path):
    """The idle power of each protocol's meter check, from the CSV's provenance sidecar."""
    side = os.path.splitext(path)[0] + ".json"
    try:
        with open(side) as f:
            protocols = json.load(f).get("protocols", {})
    except (OSError, ValueError):
        return {}
    return {k: v["meter_check"]["idle_power_w"] for k, v in protocols.items()
            if isinstance(v, dict) and isinstance(v.get("meter_check"), dict) and "idle_power_w" in v["meter_check"]}


def quantile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def r2(xs, ys):
    m = sum(ys) / len(ys)
    ss = sum((y - m) ** 2 for y in ys)
    return 1 - sum((x - y) ** 2 for x, y in zip(xs, ys)) / ss if ss > 0 else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data")
    ap.add_argument("--repeat", help="a second measurement of some of the same configurations")
    ap.add_argument("--write-window", metavar="OUT", help="write the dataset with the window's latency to OUT")
    a = ap.parse_args()
    if a.write_window and os.path.exists(a.write_window):
        sys.exit(f"error: {a.write_window} exists; give a new file")
    try:
        rows = rows_of(a.data)
    except OSError as e:
        sys.exit(f"error: {e}")
    if not rows:
        sys.exit(f"error: {a.data} has no ok row with latency_ms, energy_j, energy_window_s and energy_passes")
    ratios = [loop / window for loop, window, _, _ in rows.values()]
    print(f"{a.data}: {len(rows)} rows with an energy window")
    print("loop latency / window mean pass time: " +
          ", ".join(f"p{int(q * 100)} {quantile(ratios, q):.3f}" for q in (0.1, 0.5, 0.9)) +
          f", max {max(ratios):.3f}, min {min(ratios):.3f}")
    off = sum(abs(r - 1) > 0.1 for r in ratios)
    print(f"rows whose two latencies differ by more than 10%: {off} of {len(rows)}")
    idle = idle_power(a.data)
    if idle:
        below_loop = sum(e / loop * 1000 < idle.get(p, 0) for loop, _, e, p in rows.values())
        below_window = sum(e / window * 1000 < idle.get(p, 0) for _, window, e, p in rows.values())
        print("idle power recorded by the meter check: " + ", ".join(f"{v:.1f} W" for v in sorted(idle.values())))
        print(f"rows whose energy over latency is below it: {below_loop} with the loop's latency, "
              f"{below_window} with the window's")
    if a.repeat:
        try:
            again = rows_of(a.repeat)
        except OSError as e:
            sys.exit(f"error: {e}")
        keys = [k for k in again if k in rows]
        if len(keys) < 2:
            sys.exit(f"error: {a.repeat} shares fewer than 2 configurations with {a.data}")
        print(f"agreement with {a.repeat} ({len(keys)} configurations measured again):")
        for name, i in (("loop latency", 0), ("window mean", 1)):
            # The repeat scored against the dataset's row, as data/gpu/README.md scores it.
            xs = [again[k][i] for k in keys]
            ys = [rows[k][i] for k in keys]
            dev = [abs(x / y - 1) for x, y in zip(xs, ys)]
            print(f"  {name:13s} R2 {r2(xs, ys):.3f}  log R2 {r2([math.log(x) for x in xs], [math.log(y) for y in ys]):.3f}"
                  f"  median |dev| {100 * quantile(dev, 0.5):.1f}%  p90 {100 * quantile(dev, 0.9):.1f}%")

    if a.write_window:
        write_window(a.data, a.write_window)


def write_window(src, dst):
    with open(src, newline="") as f:
        reader = csv.DictReader(f)
        header, rows = reader.fieldnames, list(reader)
    n = 0
    for r in rows:
        try:
            window_ms = float(r["energy_window_s"]) * 1000 / float(r["energy_passes"])
        except (KeyError, ValueError, ZeroDivisionError):
            continue
        if r.get("status") != "ok":
            continue
        r["latency_ms"] = repr(window_ms)
        for c, v in (("passes", r["energy_passes"]), ("timed_s", r["energy_window_s"]), ("latency_median_ms", ""),
                     ("latency_std_ms", ""), ("latency_cv", ""), ("latency_rel_ci95", "")):
            if c in header:
                r[c] = v
        n += 1
    with open(dst, "x", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {dst}: {n} of {len(rows)} rows with the window's latency")


if __name__ == "__main__":
    main()
