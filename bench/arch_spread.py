#!/usr/bin/python3
"""How many configurations per architecture should a GPU campaign measure before it moves on?

A campaign measured one architecture at a time (`carb profile --arch-order`) builds each network
once, but a lease then covers few architectures: the H200 lease of 2026-12-04 measured all 36
configurations of 8 of the paper preset's 120. `--arch-order SEED --per-arch K` visits the
architectures in rounds and measures K of each one's configurations per visit (spread over its
resolutions and batches), so a lease covers about 36/K times as many networks, at the price of
building each network once per visit.

This bench simulates both on a shipped dataset as the oracle (default `data/cpu-2t.csv`: 56
architectures, 23-40 configurations each). A seeded fifth of the networks (every precision of
each) is hidden; the campaign orders the other architectures with the profiler's own code
(`carb.campaign_order`) and stops at a budget. The model (`carb train --fast`, or --trees N) is scored on the hidden networks, the
question a campaign that measures 30 of 120 architectures has to answer for the other 90.

Budgets are in rows and in GPU seconds. The seconds use the H200 lease's own costs, from the
row times in `data/gpu/h200-campaign.db`: per row `--row-s` 1.26 s (the mean time between two rows
of one built network under the campaign protocol, utilization windows included) and per network
build `--build-s` 2.82 s (the mean extra time of an architecture's first row, 7 of them).

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/arch_spread.py [--data data/cpu-2t.csv]
       [--seeds 5] [--per-arch 0,12,6,3] [--rows 100,200,400] [--seconds 400,800] [--fast | --trees N]
(--per-arch 0 is the whole architecture, as --arch-order alone.)
"""
import argparse
import csv
import os
import random
import statistics
import sys
import tempfile
import warnings

import carb

TARGETS = ["peak_memory_mb", "latency_ms", "energy_j"]
KEY = ["family", "depth", "width", "resolution", "batch", "precision"]


def network(r):
    return (r["family"], r["depth"], r["width"])


def architecture(r):
    return (r["family"], r["depth"], r["width"], r["precision"])


def campaign(rows, per_arch, seed):
    """[(row, builds_network)] in the order `carb profile --arch-order SEED --per-arch K` measures
    them (carb.campaign_order: the profiler's own code), a build at each change of architecture."""
    configs = [carb.Config(r["family"], int(r["depth"]), float(r["width"]), int(r["resolution"]), int(r["batch"]),
                           r["precision"]) for r in rows]
    by_key = {c.key: r for c, r in zip(configs, rows)}
    order = carb.campaign_order(configs, seed, per_arch)
    out, last = [], None
    for c in order:
        a = (c.family, c.depth, c.width, c.precision)
        out.append((by_key[c.key], a != last))
        last = a
    return out


def prefix_by_seconds(order, seconds, row_s, build_s):
    t, n = 0.0, 0
    for _, builds in order:
        t += row_s + (build_s if builds else 0)
        if t > seconds:
            break
        n += 1
    return n


def score(model, test):
    cols = {k: [r[k] for r in test] for k in KEY}
    for k in ("depth", "resolution", "batch"):
        cols[k] = [int(v) for v in cols[k]]
    cols["width"] = [float(v) for v in cols["width"]]
    p = model.predict(cols)
    out = {}
    for t in TARGETS:
        pairs = [(float(r[t]), float(v)) for r, v in zip(test, p[t]) if r.get(t, "") != ""] if t in p else []
        if len(pairs) < 2:
            continue
        mean = sum(y for y, _ in pairs) / len(pairs)
        ss = sum((y - mean) ** 2 for y, _ in pairs)
        r2 = 1 - sum((y - q) ** 2 for y, q in pairs) / ss
        mape = 100 * sum(abs(q - y) / y for y, q in pairs) / len(pairs)
        out[t] = (r2, mape)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="data/cpu-2t.csv")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--per-arch", default="0,12,6,3")
    ap.add_argument("--rows", default="100,200,400")
    ap.add_argument("--seconds", default="400,800")
    ap.add_argument("--row-s", type=float, default=1.26)
    ap.add_argument("--build-s", type=float, default=2.82)
    ap.add_argument("--hide", type=float, default=0.2, help="share of networks hidden as the test set")
    ap.add_argument("--fast", action="store_true")
    ap.add_argument("--trees", type=int, default=0)
    a = ap.parse_args()
    try:
        ks = [int(x) for x in a.per_arch.split(",")]
        budgets = [("rows", int(x)) for x in a.rows.split(",") if x] + \
                  [("s", float(x)) for x in a.seconds.split(",") if x]
    except ValueError as e:
        sys.exit(f"arch_spread: {e}")
    with open(a.data, newline="") as f:
        rd = csv.DictReader(f)
        header = rd.fieldnames
        rows = [r for r in rd if r["status"] == "ok"]
    nets = sorted({network(r) for r in rows})
    train_kw = {"trees": a.trees} if a.trees else {"fast": True}
    print(f"{a.data}: {len(rows)} ok rows, {len(nets)} networks, {len({architecture(r) for r in rows})} "
          f"architectures; {a.seeds} seeds, {a.hide:.0%} of the networks hidden; "
          f"{'carb train --fast' if not a.trees else f'carb train --trees {a.trees}'}; "
          f"cost {a.row_s} s a row + {a.build_s} s a network build")
    results = {}  # (budget, k) -> target -> [(r2, mape)], plus ("rows"/"archs")
    with tempfile.TemporaryDirectory() as d, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # temporary CSVs without provenance
        path = os.path.join(d, "train.csv")
        for seed in range(a.seeds):
            rng = random.Random(1000 + seed)
            hidden = set(rng.sample(nets, max(1, round(a.hide * len(nets)))))
            test = [r for r in rows if network(r) in hidden]
            pool = [r for r in rows if network(r) not in hidden]
            for k in ks:
                order = campaign(pool, k, seed)
                for kind, b in budgets:
                    n = min(b, len(order)) if kind == "rows" else prefix_by_seconds(order, b, a.row_s, a.build_s)
                    chosen = [r for r, _ in order[:n]]
                    with open(path, "w", newline="") as f:
                        w = csv.DictWriter(f, fieldnames=header)
                        w.writeheader()
                        w.writerows(chosen)
                    s = score(carb.Model.train([path], **train_kw), test)
                    cell = results.setdefault((kind, b, k), {"n": [], "archs": [], "nets": []})
                    cell["n"].append(n)
                    cell["archs"].append(len({architecture(r) for r in chosen}))
                    cell["nets"].append(len({network(r) for r in chosen}))
                    for t, v in s.items():
                        cell.setdefault(t, []).append(v)
            print(f"seed {seed} done", file=sys.stderr, flush=True)
    targets = [t for t in TARGETS if any(t in c for c in results.values())]
    print(f"\nscored on the hidden networks' rows: R2 mean over seeds (median) / MAPE mean (median)")
    print(f"{'budget':>10} {'per arch':>8} {'rows':>6} {'archs':>6} {'nets':>5}  " + "  ".join(f"{t:>34}" for t in targets))
    for kind, b in budgets:
        for k in ks:
            c = results[(kind, b, k)]
            cells = []
            for t in targets:
                r2, r2_med = statistics.mean(v[0] for v in c[t]), statistics.median(v[0] for v in c[t])
                mape, mape_med = statistics.mean(v[1] for v in c[t]), statistics.median(v[1] for v in c[t])
                cells.append(f"{r2:.4f} ({r2_med:.4f}) / {mape:4.1f}% ({mape_med:4.1f}%)")
            label = f"{b} rows" if kind == "rows" else f"{b:g} s"
            print(f"{label:>10} {('all' if k == 0 else k):>8} {statistics.mean(c['n']):6.0f} "
                  f"{statistics.mean(c['archs']):6.1f} {statistics.mean(c['nets']):5.1f}  " + "  ".join(f"{x:>34}" for x in cells))


if __name__ == "__main__":
    main()
