# Active profiling from Python: carb.plan picks what to measure next, as `carb plan` does.
import os
import re
import warnings

import numpy as np
import pytest

import carb
from conftest import FAST_MODEL_AND_200000_CONFIGS, SOURCE, interrupted


def test_plan_never_repeats_what_is_measured_or_trained(model):
    measured = carb.preset("tiny")[:3]
    p = carb.plan("screen", model, measured=measured, count=12)
    configs = p["configs"]
    assert len(configs) == 12 and len(set(configs)) == 12
    assert not any(c in measured or model.trained_on(c) for c in configs)
    assert p["strategy"] == "uncertainty"
    assert np.all(p["cost_s"] > 0) and np.all(np.isfinite(p["uncertainty"]))
    again = carb.plan("screen", model, measured=measured, count=12)
    assert again["configs"] == configs  # same seed, same plan


def test_a_budget_is_kept_and_space_filling_needs_no_model(model):
    p = carb.plan("screen", model, budget_s=30.0, strategy="uncertainty-per-cost")
    assert 0 < p["total_cost_s"] <= 30.0
    assert float(np.sum(p["cost_s"])) == pytest.approx(p["total_cost_s"])
    start = carb.plan("screen", count=8)  # without a model the CLI's default start: stratified
    assert start["strategy"] == "stratified" and len(start["configs"]) == 8
    assert carb.plan("screen", count=8, strategy="space-filling")["strategy"] == "space-filling"
    assert np.all(np.isnan(start["cost_s"]))
    with pytest.raises(carb.InputError):
        carb.plan("screen", count=0)
    with pytest.raises(carb.InputError):
        carb.plan("screen", budget_s=10.0)  # a budget in seconds needs a model to predict them


def test_candidates_whose_measuring_time_cannot_be_predicted_are_counted(falling_model):
    # Thirty-sixth hostile pass: under budget_s they were passed over silently (the CLI counts them).
    cands = [carb.Config("basic", d, 0.5, 32, 4, "fp32") for d in (12, 16, 50, 66, 82)]
    with pytest.warns(RuntimeWarning, match="3 candidate"):
        p = carb.plan(cands, model=falling_model, budget_s=1e6, strategy="random")
    assert p["unknown_cost"] == 3
    assert len(p["configs"]) == 2


def test_planned_rows_whose_measuring_time_cannot_be_predicted_are_said(falling_model):
    # Thirty-seventh hostile pass: planned by count, they came back with NaN costs and no word.
    cands = [carb.Config("basic", d, 0.5, 32, 4, "fp32") for d in (12, 16, 50, 66, 82)]
    with pytest.warns(RuntimeWarning, match="3 planned row"):
        p = carb.plan(cands, model=falling_model, count=5, strategy="random")
    assert p["planned_unknown_cost"] == 3


def test_candidates_with_impossible_costs_are_counted_and_said(falling_model):
    # Thirty-ninth hostile pass: costs at or below zero among the candidates were neither counted nor said.
    cands = [carb.Config("basic", d, 0.5, 32, 4, "fp32") for d in (12, 16, 50, 66, 82)]
    with pytest.warns(RuntimeWarning, match=r"cost at or below zero for 3 candidate\(s\) \(\d planned\)"):
        p = carb.plan(cands, model=falling_model, count=3, strategy="space-filling")
    assert p["nonpositive_predictions"] == 3
    assert p["planned_nonpositive"] == sum(not lat > 0 for lat in p["latency_ms"])


def test_the_protocol_build_time_and_spread_price_the_plan_as_the_cli_does(model, model_dir, tmp_path):
    import csv
    import os
    import subprocess
    settings = dict(budget_s=40.0, strategy="uncertainty-per-cost", spread="log", build_s=2.8, backend="cuda",
                    protocol={"warmup": 5, "min_passes": 10, "max_passes": 100, "max_timed_s": 0.5, "cooldown": 2,
                              "min_energy_window": 0, "util_window": 0.5, "util": "sample:0.2"})
    p = carb.plan("screen", model, **settings)
    out = tmp_path / "plan.csv"
    subprocess.run([os.environ.get("CARB_BINARY", "carb"), "plan", "--model", str(model_dir), "--preset", "screen",
                    "--budget-s", "40", "--strategy", "uncertainty-per-cost", "--spread", "log", "--build-s", "2.8",
                    "--backend", "cuda", "--warmup", "5", "--min-passes", "10", "--max-passes", "100",
                    "--max-timed-s", "0.5", "--cooldown", "2", "--min-energy-window", "0", "--util-window", "0.5",
                    "--util", "sample:0.2", "--out", str(out)], check=True, capture_output=True)
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [carb.Config(r["family"], int(r["depth"]), float(r["width"]), int(r["resolution"]), int(r["batch"]),
                        r["precision"]) for r in rows] == p["configs"]
    assert [float(r["cost_s"]) for r in rows] == pytest.approx(p["cost_s"].tolist(), rel=1e-5)
    # The settings change the price: the defaults (100 passes, 1 s cooldown, no build) plan otherwise.
    plain = carb.plan("screen", model, budget_s=40.0, strategy="uncertainty-per-cost", spread="log")
    assert plain["configs"] != p["configs"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(protocol={"warmup": 5}), "without a model the plan has no costs"),
    (dict(backend="cuda"), "without a model the plan has no costs"),
    (dict(build_s=2.0), "needs a model"),
])
def test_pricing_without_a_model_is_refused(kwargs, message):
    with pytest.raises(carb.InputError, match=message):
        carb.plan("screen", count=4, **kwargs)


@pytest.mark.parametrize("kwargs, message", [
    (dict(protocol={"passes": 5}), "unknown protocol setting 'passes'"),
    (dict(protocol={"util_window": 1}), "only the cuda backend measures"),
    (dict(protocol={"reference": 1}), "not True or False"),
    (dict(protocol={"warmup": 2.5}), "not a whole number"),
    (dict(protocol={"cooldown": "1"}), "not a number"),
    (dict(protocol={"min_passes": 200, "max_passes": 100}), "more than max_passes"),
    (dict(protocol={"util": "sample:2"}, backend="cuda"), "sample:P with P between 0 and 1"),
    (dict(protocol=[("warmup", 5)]), "must be a mapping"),
    (dict(backend="tpu"), "not 'cpu' or 'cuda'"),
    (dict(spread="linear"), "spread"),
    (dict(build_s=-1.0), "build time"),
    (dict(count=-1), "count is -1, not 1 to 1000000000"),  # raw TypeErrors before
    (dict(count=2 * 10**9), "not 1 to 1000000000"),
    (dict(diversity=1000), "diversity is 1000, not between 0 and 100"),
    (dict(strategy=1), "strategy is 1, not a name"),
    (dict(seed=-1), "seed is -1, not a whole number in 0..4294967295"),
])
def test_bad_pricing_settings_are_refused(model, kwargs, message):
    with pytest.raises(carb.InputError, match=message):
        carb.plan("screen", model, **{"count": 4, **kwargs})


def test_measured_none_is_nothing_measured(model):
    assert carb.plan("screen", model, count=4, measured=None)["configs"] == carb.plan("screen", model, count=4)["configs"]


def test_measured_and_candidates_can_be_csv_files(model, tmp_path):
    # A README walkthrough: measured="data/cpu-2t.csv" was "unknown preset 'data/cpu-2t.csv'", where
    # `carb plan --exclude` takes the file.
    data = SOURCE / "data" / "cpu-2t.csv"
    rows = carb.read_configs(data)
    assert len(rows) == 1958 and all(isinstance(c, carb.Config) for c in rows)
    assert carb.read_configs(str(data)) == rows
    done = {str(c) for c in rows}
    for measured in (data, str(data)):
        p = carb.plan("paper", model, measured=measured, count=5)
        assert p["configs"] and not any(str(c) in done for c in p["configs"])
    # Rows of another platform than the model's are not measured on it, and that is said.
    h200 = SOURCE / "data" / "h200.csv"
    with pytest.warns(carb.CarbWarning, match=r"^carb: 260 rows of .*h200.csv \(platform 'h200'\) are not of the model's platform 'cpu-2t'"):
        carb.plan("paper", model, measured=h200, count=3)  # "carb: " as every warning of carb's (107th pass)
    plan_file = tmp_path / "c.csv"
    plan_file.write_text("family,depth,width,resolution,batch,precision\nbasic,18,0.5,224,4,fp32\n")
    assert carb.plan(plan_file, model, count=1)["configs"] == [carb.Config("basic", 18, 0.5, 224, 4, "fp32")]
    with pytest.raises(carb.InputError, match="unknown preset"):
        carb.plan("cpu-2t", model, count=1)


def test_what_would_not_fit_the_device_is_not_planned():
    # An out-of-memory row spends a lease's seconds and teaches no cost.
    m = carb.Model.train(SOURCE / "data" / "h200.csv", fast=True, device_memory_mb=5000)
    with pytest.warns(RuntimeWarning, match=r"candidate\(s\) were left out: the model predicts more peak memory than "
                                             r"its device has \(5000 MB\)"):
        p = carb.plan("paper", m, count=2000)
    assert p["over_device_memory"] > 0
    with warnings.catch_warnings():
        # the power note of answers past the grid, tested in test_model
        warnings.filterwarnings("ignore", message=".*power limit", category=RuntimeWarning)
        assert (m.predict(p["configs"])["peak_memory_mb"] <= 5000).all()
    assert len(p["configs"]) == 2000 and p["candidates"] - p["excluded"] - p["over_device_memory"] >= 2000


def test_several_measured_files_and_the_reason_nothing_is_left(model):
    # A hostile tester: measured=[path, ...] was "configurations must be carb.Config objects", and an
    # empty plan listed every possible cause instead of its own.
    h200, cpu = SOURCE / "data" / "h200.csv", SOURCE / "data" / "cpu-2t.csv"
    with pytest.warns(RuntimeWarning, match="not of the model's platform 'cpu-2t'"):
        p = carb.plan("paper", model, measured=[cpu, str(h200)], count=3)
    assert len(p["configs"]) == 3
    m = carb.Model.train(h200, fast=True)
    with pytest.warns(RuntimeWarning, match=r"measured on the 'cuda' backend; this plan's costs are priced for 'cpu'"), \
            pytest.raises(carb.InputError, match=r"nothing to plan: all 260 candidates are measured or trained on"):
        carb.plan(h200, m, measured=h200, count=3)
    with pytest.raises(carb.InputError, match=r"nothing to plan: all 260 candidates are measured or trained on"):
        carb.plan(h200, None, measured=h200, count=3)


def test_file_names_that_are_no_text_are_said_in_the_error(tmp_path):
    # A hostile tester: a path that is not UTF-8 gave an error with an empty message, and one with a
    # lone surrogate a raw TypeError.
    with pytest.raises(carb.DataError, match=r"nope\\xfe\.csv"):
        carb.read_configs(os.fsencode(str(tmp_path)) + b"/nope\xfe.csv")
    with pytest.raises(carb.InputError, match="cannot be encoded as a file name"):
        carb.read_configs(str(tmp_path) + "/x\ud800.csv")


def test_a_plan_priced_unlike_the_models_data_warns_as_the_cli_does(tmp_path):
    # A README walkthrough: a plan priced under the defaults (10 warm-up, 100 timed passes) for a model
    # whose data took 5 and 10 said nothing; its costs and budget were another protocol's.
    import shutil
    for name in ("cpu-1t.csv", "cpu-1t.json"):
        shutil.copy(SOURCE / "data" / name, tmp_path / name)
    m = carb.Model.train(tmp_path / "cpu-1t.csv", fast=True)
    with pytest.warns(RuntimeWarning, match=r"was measured with warmup 5 \(this plan: 10\), min_passes 10 \(this plan: 100\)"):
        carb.plan("cpu", m, count=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        carb.plan("cpu", m, count=3, protocol={"warmup": 5, "min_passes": 10, "max_timed_s": 2, "cooldown": 0.5,
                                               "reference": True})


def test_ctrl_c_stops_a_long_plan_at_its_next_row():
    # A hostile tester: carb.plan ran to its end through Ctrl-C and threw the result away; it stops at
    # the next row chosen now, as `carb plan` does.
    rc, out, err, first, waited = interrupted("""
        grid = [(d, w, r, b) for d in range(10, 30, 2) for w in range(1, 11) for r in range(25) for b in range(1, 41)]
        cols = {"family": ["basic"] * len(grid), "depth": [g[0] for g in grid], "width": [0.25 * g[1] for g in grid],
                "resolution": [32 + 4 * g[2] for g in grid], "batch": [g[3] for g in grid],
                "precision": ["fp32"] * len(grid)}
        configs = carb.configs_from_columns(cols)
    """, "carb.plan(configs, count=50000, strategy='space-filling')", 1.0)
    assert first.startswith("start 100000"), (first, err)
    assert rc == 3, (out, err)
    assert "carb.plan interrupted by a signal after" in out and "rows chosen; nothing was returned" in out, out
    assert waited < 10, waited


def test_ctrl_c_stops_a_plan_while_its_model_scores_the_candidates():
    # Before its first row the model predicts every candidate (half a minute for these 200,000 with
    # a fast model), which heard no Ctrl-C; it stops at the next 5,000 now.
    rc, out, err, first, waited = interrupted(FAST_MODEL_AND_200000_CONFIGS, "carb.plan(configs, m, count=5, backend='cuda')", 1.5)
    assert first.startswith("start 200000"), (first, err)
    assert rc == 3, (out, err)
    # Of those not trained on (the model's own 48 are never planned).
    assert re.search(r"carb.plan interrupted by a signal after \d+ of 199952 candidates predicted; nothing was returned", out), out
    assert waited < 10, waited


def test_rows_predicted_to_take_more_than_an_hour_are_said_as_the_cli_says(model):
    huge = [carb.Config("basic", 200, 8, 1024, 4096, "fp32"), carb.Config("basic", 10, 0.75, 32, 1, "fp32")]
    with pytest.warns(RuntimeWarning, match=r"1 planned row\(s\) are predicted to take more than an hour each to "
                                            r"measure \(the longest, basic-200-w8-r1024-b4096-fp32, "):
        p = carb.plan(huge, model, count=2)
    assert p["planned_over_an_hour"] == 1 and "longest_planned" not in p
