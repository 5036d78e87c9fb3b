#!/usr/bin/python3
"""`carb train` against the same method written in Python with scikit-learn and xgboost, on the
same split of the same data, side by side in one run (issue 13, part 3).

The method, as carb's (src/learn/carb_train.cpp) with the plain target form (--normalize off):
for each target in cascade order (memory, then energy when present, then latency), log target;
features = carb's analytic features (carb.features) + the upstream targets' corrected out-of-fold
predictions; three learners -- XGBoost depth-wise (800 rounds, depth 9, eta 0.05, hist), XGBoost
loss-guide (800 rounds, 127 leaves) and ExtraTrees (400 trees); carb's defaults gbdt_depthwise and
gbdt_leafwise are its own implementation of those two boosters, and a third carb row runs XGBoost's -- each with 5-fold out-of-fold
predictions and a fit on all rows; blend weights on a 0.1 grid minimising the out-of-fold squared
error; a low-batch corrector (loss-guide XGBoost, 200 rounds, 15 leaves) on the out-of-fold
residuals of batch <= 8 rows, damped by 0.9. The peer uses every learner's own threads
(n_jobs = --threads), the way one writes it first, and a second time with the fits side by side
(joblib threads over the folds and learners, each single-threaded), as carb does; the ratio is
against the faster of the two.

Timed: carb's `carb train` process (wall) and the peer's fitting (wall, features excluded: they
come from carb). Scored: R^2 and MAPE per target on the held-out rows (carb: `carb evaluate
--external`). Usage:
  OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 bench/train_vs_python.py --carb build/carb
      [--data data/cpu-2t.csv] [--test-fraction 0.2] [--threads 2] [--seed 42] [--json]
Needs python3-sklearn and python3-xgboost (scripts/setup.sh --bench) and carb's Python module
(build/python; the script adds it to the path).
"""
import argparse
import csv
import json
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "build", "python"))
import carb  # noqa: E402
from sklearn.ensemble import ExtraTreesRegressor  # noqa: E402
from xgboost import XGBRegressor  # noqa: E402

CASCADE = ["peak_memory_mb", "energy_j", "latency_ms"]
PEER_SIDE = "Python, fits side by side (joblib threads)"
COLS = ["family", "depth", "width", "resolution", "batch", "precision"]


def learners(threads, seed):
    return {
        "xgb_depthwise": lambda: XGBRegressor(n_estimators=800, max_depth=9, learning_rate=0.05, tree_method="hist",
                                              min_child_weight=1, n_jobs=threads, random_state=seed, verbosity=0),
        "xgb_lossguide": lambda: XGBRegressor(n_estimators=800, max_depth=0, max_leaves=127, grow_policy="lossguide",
                                              learning_rate=0.05, tree_method="hist", min_child_weight=1,
                                              n_jobs=threads, random_state=seed, verbosity=0),
        "extra_trees": lambda: ExtraTreesRegressor(n_estimators=400, max_features=1.0, n_jobs=threads,
                                                   random_state=seed),
    }


def corrector(threads, seed):
    return XGBRegressor(n_estimators=200, max_depth=0, max_leaves=15, grow_policy="lossguide", learning_rate=0.05,
                        tree_method="hist", min_child_weight=1, n_jobs=threads, random_state=seed, verbosity=0)


def fit_predict(make, X, y, X_pred):
    m = make()
    m.fit(X, y)
    return m.predict(X_pred)


def run_fits(tasks, threads, side_by_side):
    """tasks: (make, X, y, X_pred). Side by side: joblib threads over the fits (each learner
    single-threaded, the makers were built so); else one after another (each learner threaded)."""
    if not side_by_side:
        return [fit_predict(*t) for t in tasks]
    from joblib import Parallel, delayed
    return Parallel(n_jobs=threads, backend="threading")(delayed(fit_predict)(*t) for t in tasks)


def oof_tasks(make, X, y, folds, k):
    return [(make, X[folds != f], y[folds != f], X[folds == f]) for f in range(k)]


def gather(preds, folds, k, n):
    out = np.zeros(n)
    for f in range(k):
        out[folds == f] = preds[f]
    return out


def blend_weights(oofs, y, step=0.1):
    units = round(1 / step)
    best, best_err = None, float("inf")

    def rec(prefix, left):
        nonlocal best, best_err
        if len(prefix) == len(oofs) - 1:
            w = [p / units for p in prefix + [left]]
            err = float(np.sum((sum(wi * o for wi, o in zip(w, oofs)) - y) ** 2))
            if err < best_err:
                best, best_err = w, err
            return
        for a in range(left, -1, -1):
            rec(prefix + [a], left - a)

    rec([], units)
    return best


def peer(train, test, targets, threads, seed, side_by_side, folds_k=5, low_batch=8, lam=0.9):
    Xtr, _ = carb.features([row_config(r) for r in train])
    Xte, _ = carb.features([row_config(r) for r in test])
    Xtr, Xte = Xtr.astype(np.float64), Xte.astype(np.float64)
    rng = np.random.default_rng(seed)
    folds = np.arange(len(train)) % folds_k
    rng.shuffle(folds)
    low_tr = np.array([int(r["batch"]) <= low_batch for r in train])
    low_te = np.array([int(r["batch"]) <= low_batch for r in test])
    up_tr, up_te, preds = [], [], {}
    t0 = time.perf_counter()
    for t in targets:
        y = np.log(np.array([float(r[t]) for r in train]))
        A = np.column_stack([Xtr] + up_tr) if up_tr else Xtr
        B = np.column_stack([Xte] + up_te) if up_te else Xte
        learner_threads = 1 if side_by_side else threads
        makers = list(learners(learner_threads, seed).values())
        tasks = [(make, A, y, B) for make in makers]
        for make in makers:
            tasks += oof_tasks(make, A, y, folds, folds_k)
        out = run_fits(tasks, threads, side_by_side)
        full = out[:len(makers)]
        oofs = [gather(out[len(makers) + j * folds_k:len(makers) + (j + 1) * folds_k], folds, folds_k, len(y))
                for j in range(len(makers))]
        w = blend_weights(oofs, y)
        p_oof = sum(wi * o for wi, o in zip(w, oofs))
        p_te = sum(wi * o for wi, o in zip(w, full))
        if low_tr.sum() >= 4 * folds_k:
            r = y[low_tr] - p_oof[low_tr]
            make_c = lambda: corrector(learner_threads, seed)  # noqa: E731
            fl = folds[low_tr]
            out = run_fits([(make_c, A[low_tr], r, B[low_te] if low_te.any() else B[:1])] +
                           oof_tasks(make_c, A[low_tr], r, fl, folds_k), threads, side_by_side)
            p_oof[low_tr] += lam * gather(out[1:], fl, folds_k, len(r))
            if low_te.any():
                p_te[low_te] += lam * out[0]
        up_tr.append(p_oof)
        up_te.append(p_te)
        preds[t] = np.exp(p_te)
    return time.perf_counter() - t0, preds


def row_config(r):
    return carb.Config(r["family"], int(r["depth"]), float(r["width"]), int(r["resolution"]), int(r["batch"]),
                       r["precision"])


def scores(y, p):
    y, p = np.asarray(y, float), np.asarray(p, float)
    r2 = 1 - np.sum((y - p) ** 2) / np.sum((y - y.mean()) ** 2)
    return {"r2": float(r2), "mape": float(100 * np.mean(np.abs(p - y) / y))}


def run_carb(carb_bin, train_csv, test_csv, out, threads, seed, normalize, learners):
    t0 = time.perf_counter()
    subprocess.run([carb_bin, "train", "--data", train_csv, "--out", out, "--test-fraction", "0", "--threads",
                    str(threads), "--seed", str(seed), "--normalize", normalize, "--format", "json",
                    "--learners", *learners], check=True, capture_output=True)
    wall = time.perf_counter() - t0
    ev = subprocess.run([carb_bin, "evaluate", "--model", out, "--data", test_csv, "--external", "--quick",
                         "--format", "json"], check=True, capture_output=True, text=True).stdout
    return wall, json.loads(ev)


def carb_scores(ev, targets):
    out = {}
    for t in targets:
        m = ev["targets"][t]
        out[t] = {"r2": m["r2"], "mape": m["mape"]}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--carb", default="build/carb")
    ap.add_argument("--data", default="data/cpu-2t.csv")
    ap.add_argument("--test-fraction", type=float, default=0.2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with open(a.data, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["status"] == "ok"]
    targets = [t for t in CASCADE if all(r.get(t) for r in rows)]
    random.Random(a.seed).shuffle(rows)
    n_test = round(len(rows) * a.test_fraction)
    test, train = rows[:n_test], rows[n_test:]
    tmp = tempfile.mkdtemp(prefix="carb_train_bench_")
    fields = list(csv.DictReader(open(a.data)).fieldnames)
    for name, part in (("train.csv", train), ("test.csv", test)):
        with open(os.path.join(tmp, name), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(part)
    truth = {t: [float(r[t]) for r in test] for t in targets}
    results = {}
    ours = ["gbdt_depthwise", "gbdt_leafwise", "extra_trees"]  # carb's default learners
    xgb = ["xgb_depthwise", "xgb_lossguide", "extra_trees"]    # the same with XGBoost's boosters
    for label, normalize, learners in (("carb train --normalize off (the same method)", "off", ours),
                                       ("carb train (default: --normalize auto)", "auto", ours),
                                       ("carb train --normalize off, XGBoost boosters", "off", xgb)):
        wall, ev = run_carb(a.carb, os.path.join(tmp, "train.csv"), os.path.join(tmp, "test.csv"),
                            os.path.join(tmp, "model-" + normalize + "-" + learners[0]), a.threads, a.seed,
                            normalize, learners)
        results[label] = {"seconds": wall, "scores": carb_scores(ev, targets)}
        print(f"  {label}: {wall:.1f} s", file=sys.stderr)
    for label, side in ((PEER_SIDE, True), ("Python, each learner on all threads", False)):
        secs, preds = peer(train, test, targets, a.threads, a.seed, side)
        results[label] = {"seconds": secs, "scores": {t: scores(truth[t], preds[t]) for t in targets}}
        print(f"  {label}: {secs:.1f} s", file=sys.stderr)
    if a.json:
        print(json.dumps(results, indent=2))
        return
    peer_s = results[PEER_SIDE]["seconds"]  # the faster peer is the one to beat
    print(f"train on {len(train)} rows of {a.data}, test on {len(test)}, {a.threads} threads, seed {a.seed}")
    head = f"{'':48} {'seconds':>8} {'vs peer':>8}"
    for t in targets:
        head += f" {t + ' R2':>20} {'MAPE':>7}"
    print(head)
    for label, r in results.items():
        line = f"{label:48} {r['seconds']:8.1f} {r['seconds'] / peer_s:7.2f}x"
        for t in targets:
            line += f" {r['scores'][t]['r2']:20.5f} {r['scores'][t]['mape']:6.2f}%"
        print(line)


if __name__ == "__main__":
    main()
