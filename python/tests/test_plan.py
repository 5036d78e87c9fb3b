# Active profiling from Python: carb.plan picks what to measure next, as `carb plan` does.
import numpy as np
import pytest

import carb


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
