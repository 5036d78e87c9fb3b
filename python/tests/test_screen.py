# Screening and recommendation from Python: the same documents as the CLI's --format json.
import re

import pytest

import carb
from conftest import FAST_MODEL_AND_200000_CONFIGS, interrupted


def test_screen_keeps_only_what_meets_the_budget(model):
    r = carb.screen("tiny", model, budgets={"latency": 20, "memory": 200})
    assert r["rank_by"] == "latency_ms"  # no energy model: ranks by latency, and says so
    assert r["rank_by_default"] is True
    assert r["budgets"] == {"latency_ms": 20.0, "peak_memory_mb": 200.0}
    assert r["pareto"], "the tiny preset has configurations within 20 ms"
    for p in r["pareto"]:
        assert p["latency_ms"] <= 20 and p["peak_memory_mb"] <= 200
    with pytest.raises(carb.InputError, match="energy"):
        carb.screen("tiny", model, budgets={"energy": 1})  # the CPU model has no energy
    # A misspelt cost is named as one (it read "a budget on lat needs lat, but the model ... predicts only").
    with pytest.raises(carb.InputError, match=r"^unknown budget 'lat' \(known: energy, latency, memory, or as the "
                                              r"targets: energy_j, latency_ms, peak_memory_mb\)$"):
        carb.screen("tiny", model, budgets={"lat": 50})


def test_two_stage_screen(model, model_dir):
    # The same bundle loaded again stands in for another platform's model (one object, or one path,
    # as both stages is refused, as the CLI refuses it: ninety-seventh hostile pass).
    r = carb.screen(carb.preset("tiny"), model, target=carb.Model.load(model_dir), top_k=5, rank_by="latency")
    assert r["two_stage"] is True
    assert [s["count"] for s in r["stages"]][:2] == [len(carb.preset("tiny")), 5]
    for source, target in ((model, model), (model_dir, str(model_dir) + "/")):
        with pytest.raises(carb.InputError, match="target is the source model"):
            carb.screen("tiny", source, target=target)


def test_recommend(model):
    r = carb.recommend(model, carb.Config("basic", 18, 0.5, 64), batches=[1, 8, 32], latency_max=200)
    assert r["best"]["batch"] in (1, 8, 32)
    with pytest.warns(RuntimeWarning, match="nothing to recommend: no batch size x precision meets the constraints"):
        none = carb.recommend(model, carb.Config("basic", 18, 0.5, 64), batches=[1], latency_max=1e-6)
    assert none["best"] is None and none["status"] == "infeasible" and none["message"]
    # One precision given as a name is that precision, not its letters (sixty-third hostile pass).
    one = carb.recommend(model, carb.Config("basic", 18, 0.5, 64), batches=[1, 8], precisions="fp32")
    assert one["evaluated"] == 2 and one["best"]["precision"] == "fp32"


def test_every_function_taking_a_model_takes_a_bundles_path(model, model_dir):
    # Thirty-fourth hostile pass: evaluate took a path, recommend failed on one (AttributeError).
    arch = carb.Config("basic", 18, 0.5, 64)
    assert carb.recommend(str(model_dir), arch, batches=[1, 8]) == carb.recommend(model, arch, batches=[1, 8])
    assert carb.screen("tiny", model, target=str(model_dir), top_k=3)["two_stage"] is True
    assert carb.screen("tiny", model_dir, target=model, top_k=3)["two_stage"] is True
    with pytest.raises(carb.InputError, match="carb.Model or a model bundle.s path"):
        carb.recommend(42, arch)


def test_recommend_judges_budgets_on_the_upper_bound_under_a_confidence(model):
    arch = carb.Config("basic", 18, 0.5, 64)
    r = carb.recommend(model, arch, batches=[1, 8, 32], latency_max=200, confidence=0.9)
    assert r["confidence"] == 0.9
    assert r["best"]["latency_ms_upper"] <= 200
    assert r["best"]["latency_ms_upper"] >= r["best"]["latency_ms"]
    with pytest.raises(carb.InputError):
        carb.recommend(model, arch, latency_max=200, confidence=0.85)


def test_a_bool_or_a_string_is_not_a_budget(model):
    # Seventeenth hostile pass: {"latency": True} was a 1 ms budget, "0.5" a budget float() read.
    for bad in (True, "0.5", None):
        with pytest.raises(carb.InputError, match="not a number"):
            carb.screen("tiny", model, budgets={"latency": bad})
    with pytest.raises(carb.InputError, match="not a number"):
        carb.recommend(model, carb.Config("basic", 18, 0.5, 64), latency_max=True)
    # A Decimal is a number: the same answer as the float.
    from decimal import Decimal
    as_float = carb.screen("tiny", model, budgets={"latency": 50.5})
    assert carb.screen("tiny", model, budgets={"latency": Decimal("50.5")}) == as_float
    with pytest.raises(carb.InputError, match="positive|finite|not"):
        carb.screen("tiny", model, budgets={"latency": Decimal("NaN")})


def test_counts_and_batch_lists_refuse_bools_and_empty_lists(model):
    # Eighteenth hostile pass: batches=[True] was batch 1, count=True one row, budget_s=True a 1 s
    # budget, top_k=True a shortlist of 1; an empty batch list silently meant the default one.
    arch = carb.Config("basic", 18, 0.5, 64)
    cases = [lambda: carb.recommend(model, arch, batches=[True]),
             lambda: carb.recommend(model, arch, batches=[]),
             lambda: carb.recommend(model, arch, precisions=[]),
             lambda: carb.plan("tiny", model, count=True),
             lambda: carb.plan("tiny", model, budget_s=True),
             lambda: carb.screen("tiny", model, top_k=True)]
    for call in cases:
        with pytest.raises(carb.InputError):
            call()
    assert carb.recommend(model, arch, batches=[1, 8])["evaluated"] == 4


def test_a_budget_named_twice_and_float32_levels(model):
    # Nineteenth hostile pass: {"latency": 50, "latency_ms": 0.001} kept whichever came last, and a
    # numpy float32 0.9 was refused as "not a calibrated level".
    import numpy as np
    with pytest.raises(carb.InputError, match="twice"):
        carb.screen("tiny", model, budgets={"latency": 50, "latency_ms": 0.001})
    a = model.predict("tiny", confidence=np.float32(0.9))["latency_ms_upper"]
    b = model.predict("tiny", confidence=0.9)["latency_ms_upper"]
    assert (a == b).all()
    with pytest.raises(carb.InputError, match="nothing to plan"):
        carb.plan("tiny", model, measured="tiny", count=3)
    with pytest.raises(carb.InputError, match="mapping"):
        carb.screen("tiny", model, budgets=[("latency", 1)])


def test_recommend_and_screen_warn_what_the_cli_notes(model):
    # Sixty-sixth hostile pass: Python's recommend chose fp16, a precision the model never trained,
    # with no warning; the CLI notes it. Each note the CLI prints is a RuntimeWarning here.
    import warnings
    arch = carb.Config("basic", 10, 0.5, 64)
    with warnings.catch_warnings(record=True) as quiet:
        warnings.simplefilter("always")
        measured = carb.recommend(model, arch, batches=[1, 2], precisions=["fp32"], latency_max=1000)
    assert measured["best"] is not None and measured["best"]["outside"] == []
    assert [str(w.message) for w in quiet] == []
    with pytest.warns(RuntimeWarning, match=r"never trained\)?, which no level bounds") as said:
        r = carb.recommend(model, arch, batches=[1, 2], precisions=["fp16"], latency_max=1000)
    assert r["never_trained_precisions"] == ["fp16"]
    assert any("lies outside the ranges the model trained on" in str(w.message) for w in said)
    assert all("--" not in str(w.message) for w in said), "in Python's words"
    # Named as carb's, as the package's own warnings are (the library's came without the prefix).
    assert all(str(w.message).startswith("carb: ") and not str(w.message).startswith("carb: carb: ")
               for w in said), [str(w.message) for w in said]
    # No budget under a confidence: the intervals judge nothing. Only worth knowing where they are
    # bounded (no warning); where some are not, said as a warning.
    with warnings.catch_warnings(record=True) as bounded:
        warnings.simplefilter("always")
        carb.recommend(model, arch, batches=[1, 2], precisions=["fp32"], confidence=0.9)
    assert [str(w.message) for w in bounded] == []
    with pytest.warns(RuntimeWarning, match="no budget was given.*2 of the 2 candidates ranked have no bounded 90%"):
        carb.recommend(model, arch, batches=[1, 2], precisions=["fp16"], confidence=0.9)
    # Nothing to recommend: the CLI exits 1; Python said nothing and returned best None (a hostile
    # tester: r["best"]["batch"] was a TypeError with no word of why).
    with pytest.warns(RuntimeWarning, match="nothing to recommend: ") as none:
        r = carb.recommend(model, arch, batches=[1, 2], precisions=["fp32"], latency_max=1e-9)
    assert r["best"] is None and r["status"] == "infeasible"
    assert {w.filename for w in none} == {__file__}
    # screen: the guesses within budget are said too.
    with pytest.warns(RuntimeWarning, match="within budget lie outside what the model trained on") as where:
        s = carb.screen([carb.Config("basic", 10, 0.5, 224, 1, "fp32")], model, budgets={"latency": 1e6})
    assert s["within_budget_guesses"] == 1
    # Each points at the caller's line, not inside carb (a hostile tester: every one named __init__.py).
    assert {w.filename for w in where} | {w.filename for w in said} == {__file__}


def test_ctrl_c_stops_a_screen_while_its_model_predicts_the_space():
    # carb.screen heard Ctrl-C only when it returned; it stops at the next 5,000 configurations now.
    rc, out, err, first, waited = interrupted(FAST_MODEL_AND_200000_CONFIGS, "carb.screen(configs, m, budgets={'latency': 50})", 1.0)
    assert first.startswith("start 200000"), (first, err)
    assert rc == 3, (out, err)
    assert re.search(r"carb.screen interrupted by a signal after \d+ of 200000 configurations predicted; "
                     r"nothing was returned", out), out
    assert waited < 10, waited


def test_recommend_ranks_a_power_no_device_draws_behind_what_is_plausible():
    # Hundred-and-thirty-third hostile pass: past the grid, the H200 model's energy for batch 4096 of
    # a tiny network fell further than its latency (882 W implied on the 700 W device, here), and that
    # underestimate made it the best. A power beyond the device is ranked behind plausible ones.
    import warnings
    from conftest import SOURCE
    m = carb.Model.train(SOURCE / "data" / "h200.csv", fast=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = carb.recommend(m, carb.Config("basic", 8, 0.05, 32, 1, "fp32"),
                           batches=[2 ** k for k in range(13)], precisions=["fp32", "fp16", "bf16"])
        big = m.predict([carb.Config("basic", 8, 0.05, 32, 4096, "fp32")])
    best = r["best"]
    assert best["energy_j"] / (best["latency_ms"] / 1000) <= 1.1 * 700, best
    # The candidate that won before: cheaper per image, and beyond the device (or this checks nothing).
    assert big["energy_j"][0] / 4096 < best["energy_j"] / best["batch"]
    assert big["energy_j"][0] / (big["latency_ms"][0] / 1000) > 1.1 * 700


def test_recommend_notes_are_in_pythons_words_and_a_clean_pick_raises_nothing():
    # Hundred-and-thirty-seventh hostile pass: the dict's notes said "--confidence" where its warnings
    # said "confidence", and with warnings made errors a clean pick could not be had because
    # candidates above the device's memory were left out (worth knowing, no doubt on the pick).
    import warnings
    from conftest import SOURCE
    m = carb.Model.train(SOURCE / "data" / "h200.csv", fast=True, device_memory_mb=4300)
    arch = carb.Config("basic", 34, 4.0, 128, 1, "fp32")  # measured on the H200, to batch 256 (3,567 MB)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = carb.recommend(m, arch, batches=[1, 2, 4, 8, 16, 32, 64, 128, 256, 512], precisions=["fp32"])
    assert r["over_device_memory"] == 1 and r["best"]["leaves_memory_room"]
    assert r["best"]["batch"] == 128  # batch 256 fits 4,300 MB, but leaves no room beside its tensors
    assert any("left out" in n for n in r["notes"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = carb.recommend(m, carb.Config("basic", 18, 0.5, 32, 1, "fp32"), confidence=0.9)
    assert q["notes"] and all("--" not in n for n in q["notes"]), q["notes"]
