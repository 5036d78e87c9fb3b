# carb.transfer and carb.characterize: the CLI's documents from Python, with the CLI's checks.
import json
import os
import subprocess

import pytest

import carb
from conftest import SOURCE

DATA = SOURCE / "data"


def cli_json(*args):
    r = subprocess.run([os.environ["CARB_BINARY"], *map(str, args), "--format", "json"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_transfer_is_the_clis_document(model, model_dir):
    # Another platform, a source model, chosen k, repeats and seed: every figure as the CLI's.
    doc = carb.transfer(DATA / "cpu-2t.csv", str(DATA / "cpu-1t.csv"), model=model_dir, k=[3, 7], repeats=5,
                        seed=9)
    want = cli_json("transfer", "--source", DATA / "cpu-2t.csv", "--target", DATA / "cpu-1t.csv",
                    "--model-source", model_dir, "--k", 3, "--k", 7, "--repeats", 5, "--seed", 9)
    assert doc == want
    assert [p["k"] for p in doc["few_shot"]["latency_ms"]] == [3, 7]
    assert doc["targets"]["latency_ms"]["n"] > 100 and "zero_shot" in doc
    # A carb.Model is the bundle it was loaded from.
    assert carb.transfer(DATA / "cpu-2t.csv", DATA / "cpu-1t.csv", model=model, k=[3, 7], repeats=5, seed=9) == want
    # Defaults are the CLI's.
    assert carb.transfer(DATA / "cpu-2t.csv", DATA / "cpu-1t.csv") == \
        cli_json("transfer", "--source", DATA / "cpu-2t.csv", "--target", DATA / "cpu-1t.csv")


def test_transfer_raises_its_notes_as_warnings():
    # One platform measured twice is a repeatability, not a transfer: said in the document and raised.
    with pytest.warns(RuntimeWarning, match="compares two measurements of one platform") as raised:
        doc = carb.transfer(DATA / "cpu-2t-round1.csv", DATA / "cpu-2t-round2.csv", k=5)
    assert doc["notes"] and [str(w.message) for w in raised] == ["carb: " + n for n in doc["notes"]]
    assert [p["k"] for p in doc["few_shot"]["latency_ms"]] == [5]


def test_transfer_refuses_what_the_cli_refuses(tmp_path):
    a, b = DATA / "cpu-2t.csv", DATA / "cpu-1t.csv"
    with pytest.raises(carb.InputError, match="^source and target are the same file"):
        carb.transfer(a, str(a))
    link = tmp_path / "link.csv"
    link.symlink_to(a)
    with pytest.raises(carb.InputError, match="same file"):
        carb.transfer(a, link)
    for bad in ({"k": [5, 5]}, {"k": [1]}, {"k": []}, {"k": [2.5]}, {"k": True}, {"k": "5"}, {"repeats": 0},
                {"repeats": 10001}, {"seed": -1}, {"model": 3}):
        with pytest.raises(carb.InputError):
            carb.transfer(a, b, **bad)
    with pytest.raises(carb.Error, match="absent.csv"):
        carb.transfer(a, tmp_path / "absent.csv")
    # A copy of the source under another name holds the same values on the same platform.
    copy = tmp_path / "copy.csv"
    copy.write_bytes(a.read_bytes())
    with pytest.raises(carb.InputError, match="fits y = x by construction"):
        carb.transfer(a, copy)


def test_characterize_is_the_clis_document():
    assert carb.characterize(DATA / "h200.csv") == cli_json("characterize", "--data", DATA / "h200.csv")
    doc = carb.characterize(str(DATA / "h200.csv"), sm_threshold=40)
    assert doc == cli_json("characterize", "--data", DATA / "h200.csv", "--sm-threshold", 40)
    assert doc["divergence"]["sm_threshold"] == 40 and doc["divergence"]["sm_threshold_rule"] == "given"
    # A section the data cannot fill says why: the CPU rows have no SM utilization.
    cpu = carb.characterize(DATA / "cpu-2t.csv")
    assert cpu["divergence"]["available"] is False and cpu["divergence"]["reason"]


def test_characterize_refuses_what_the_cli_refuses(tmp_path):
    for bad in (-1, 100.5, float("nan"), True, "50"):
        with pytest.raises(carb.InputError):
            carb.characterize(DATA / "h200.csv", sm_threshold=bad)
    empty = tmp_path / "failed.csv"
    empty.write_text("platform,family,depth,width,resolution,batch,precision,status,latency_ms,energy_j,"
                     "peak_memory_mb,avg_sm_util,avg_mem_util\nx,basic,18,1,32,1,fp32,oom,,,,,\n")
    with pytest.raises(carb.DataError, match="no ok rows"):
        carb.characterize(empty)
