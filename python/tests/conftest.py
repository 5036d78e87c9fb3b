# Shared fixtures: a small model trained once per session on the head of the shipped CPU data
# (real measurements; few trees, so the suite stays quick).
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import carb

SOURCE = pathlib.Path(os.environ.get("CARB_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="session")
def rows_csv(tmp_path_factory):
    lines = (SOURCE / "data" / "cpu-2t.csv").read_text().splitlines()
    path = tmp_path_factory.mktemp("data") / "rows.csv"
    path.write_text("\n".join(lines[:600]) + "\n")
    return path


@pytest.fixture(scope="session")
def model_dir(rows_csv, tmp_path_factory):
    out = tmp_path_factory.mktemp("models") / "small"
    carb.Model.train(rows_csv, trees=30).save(out)
    return out


@pytest.fixture(scope="session")
def model(model_dir):
    return carb.Model.load(model_dir)


@pytest.fixture(scope="session")
def falling_model(tmp_path_factory):
    """A raw-target linear model whose latency falls with depth: past depth 45 it predicts costs at or
    below zero, as such a model can (test data made by formula, never measured; it falls gently
    enough that no row costs under 0.3x a row it outdoes with 4x its FLOPs, which data validate
    refuses)."""
    d = tmp_path_factory.mktemp("falling")
    rows = ["platform,family,depth,width,resolution,batch,precision,status,latency_ms,energy_j,peak_memory_mb,"
            "avg_sm_util,avg_mem_util"]
    for depth in (10, 14, 18, 22, 26):
        for batch in (1, 2, 4, 8):
            rows.append(f"synthetic,basic,{depth},0.5,32,{batch},fp32,ok,{60 - 1.5 * depth + batch},,{40 + 2 * depth},,")
    (d / "falling.csv").write_text("\n".join(rows) + "\n")
    subprocess.run([os.environ.get("CARB_BINARY", "carb"), "train", "--data", str(d / "falling.csv"), "--out",
                    str(d / "model"), "--learners", "linear", "--raw-target", "--normalize", "off", "--folds", "2"],
                   check=True, capture_output=True)
    return carb.Model.load(d / "model")


# A child's setup for the Ctrl-C tests of long calls: a fast model of the H200 data (m) and 200,000
# distinct configurations (configs), which take it seconds to predict.
FAST_MODEL_AND_200000_CONFIGS = f"""
    m = carb.Model.train({str(SOURCE / "data" / "h200.csv")!r}, fast=True)
    grid = [(d, w, r, b, p) for d in range(10, 30, 2) for w in range(1, 11) for r in range(25)
            for b in range(1, 41) for p in ("fp32", "fp16")]
    cols = {{"family": ["basic"] * len(grid), "depth": [g[0] for g in grid], "width": [0.25 * g[1] for g in grid],
            "resolution": [32 + 4 * g[2] for g in grid], "batch": [g[3] for g in grid],
            "precision": [g[4] for g in grid]}}
    configs = carb.configs_from_columns(cols)
"""


def interrupted(setup, call, after_s):
    """Runs `setup` then `call` (Python source) in a child, sends SIGINT `after_s` seconds after
    setup, and returns (returncode, stdout, stderr, first line, seconds from the signal to the end).
    The child prints "stopped: <message>" and exits 3 on KeyboardInterrupt, "finished" otherwise."""
    code = textwrap.dedent(setup) + textwrap.dedent(f"""
        print("start", len(globals().get("configs", [])), flush=True)
        try:
            {call}
        except KeyboardInterrupt as e:
            print("stopped:", e, flush=True)
            sys.exit(3)
        print("finished", flush=True)
    """)
    child = subprocess.Popen([sys.executable, "-c", "import sys, carb\n" + code], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=os.environ)
    first = child.stdout.readline()
    time.sleep(after_s)
    child.send_signal(signal.SIGINT)
    began = time.monotonic()
    out, err = child.communicate(timeout=120)
    return child.returncode, out, err, first, time.monotonic() - began
