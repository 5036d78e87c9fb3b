#!/usr/bin/python3
"""Profiling throughput before and after issue 12's campaign changes, side by side in one run.

"before" is how campaigns ran: configurations in a seeded random order, every network built anew
(--rebuild-networks). "after" measures the same configurations one architecture at a time
(--arch-order), each network built once for all of its resolutions and batch sizes. Same
protocol otherwise (the GPU script's, with the cooldown off: on the cpu backend there is no
temperature to cool down by, no energy window and no utilization window, so this bench shows only
what building once per architecture and ordering buy).

Slices: the `tiny` preset (8 configurations), and 100 configurations of the `cpu` preset: the
first 100 of a campaign in architecture order (whole architectures, as a stopped campaign has them).
Modes alternate (before, after, before, after, ...) so that a slow spell of the host hits both.

Usage:
  /usr/bin/python3 bench/profile_throughput.py --carb build/carb [--rounds 2] [--threads 2] [--json]
"""
import argparse
import csv
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

PROTOCOL = ["--warmup", "5", "--min-passes", "10", "--max-passes", "100", "--target-ci", "0.01",
            "--max-timed-s", "0.5", "--cooldown", "0", "--no-meter-check", "--quiet", "--format", "json"]
HEADER = ["family", "depth", "width", "resolution", "batch", "precision"]


def space(carb, preset):
    out = subprocess.run([carb, "space", "--preset", preset], check=True, capture_output=True, text=True).stdout
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == HEADER, rows[0]
    return rows[1:]


def arch(row):
    return tuple(row[:3] + row[5:])


def campaign_slice(rows, n, seed):
    """The first n configurations of whole architectures taken in a seeded random order."""
    archs = sorted({arch(r) for r in rows})
    random.Random(seed).shuffle(archs)
    out = []
    for a in archs:
        out += [r for r in rows if arch(r) == a]
        if len(out) >= n:
            break
    return out[:n]


def write(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        w.writerows(rows)


def profile(carb, configs, db, threads, extra):
    cmd = [carb, "profile", "--configs", configs, "--db", db, "--threads", str(threads)] + PROTOCOL + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("profile failed: " + " ".join(cmd) + "\n" + r.stderr)
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--carb", default="build/carb")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20261201)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="carb_throughput_")
    slices = {"tiny (8)": space(a.carb, "tiny"), "cpu, first 100 of a campaign": campaign_slice(space(a.carb, "cpu"), 100, a.seed)}
    results = {}
    for name, rows in slices.items():
        shuffled = rows[:]
        random.Random(a.seed).shuffle(shuffled)  # the earlier campaign order: configurations at random
        before_csv, after_csv = os.path.join(tmp, "before.csv"), os.path.join(tmp, "after.csv")
        write(shuffled, before_csv)
        write(rows, after_csv)
        runs = {"before": [], "after": []}
        for k in range(a.rounds):
            for mode in ("before", "after"):
                db = os.path.join(tmp, f"{mode}-{k}-{len(results)}.db")
                extra = ["--rebuild-networks"] if mode == "before" else ["--arch-order", str(a.seed)]
                s = profile(a.carb, before_csv if mode == "before" else after_csv, db, a.threads, extra)
                runs[mode].append(s)
                print(f"  {name}: {mode} round {k + 1}: {s['configs_per_s']:.3f} configurations/s, "
                      f"compute share {100 * s['compute_share']:.1f}%", file=sys.stderr)
        results[name] = {
            "configurations": len(rows),
            "architectures": len({arch(r) for r in rows}),
            **{m: {"configs_per_s": statistics.median(r["configs_per_s"] for r in runs[m]),
                   "compute_share": statistics.median(r["compute_share"] for r in runs[m])} for m in runs},
        }
    if a.json:
        print(json.dumps(results, indent=2))
        return
    print(f"profiling throughput, cpu backend, {a.threads} threads, median of {a.rounds} alternating rounds")
    print(f"{'slice':32} {'configs':>7} {'archs':>5} {'before cfg/s':>12} {'after cfg/s':>11} {'ratio':>6} "
          f"{'before share':>12} {'after share':>11}")
    for name, r in results.items():
        b, f = r["before"], r["after"]
        print(f"{name:32} {r['configurations']:7d} {r['architectures']:5d} {b['configs_per_s']:12.3f} "
              f"{f['configs_per_s']:11.3f} {f['configs_per_s'] / b['configs_per_s']:5.2f}x "
              f"{100 * b['compute_share']:11.1f}% {100 * f['compute_share']:10.1f}%")


if __name__ == "__main__":
    main()
