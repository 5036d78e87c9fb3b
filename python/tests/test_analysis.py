# carb.transfer and carb.characterize: the CLI's documents from Python, with the CLI's checks.
import json
import os
import subprocess

import pytest

import carb
from conftest import SOURCE, interrupted

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


def test_transfer_warns_what_its_model_scores_rest_on(model):
    # Hundred-and-fourth hostile pass: a model of another platform, scores of configurations it
    # trained on, were said only in doc["model"]["note"]. The fixture model is cpu-2t's, trained on
    # 599 of cpu-2t's rows: here cpu-2t is the target, so it is not a source-platform model.
    with pytest.warns(RuntimeWarning) as raised:
        doc = carb.transfer(DATA / "cpu-1t.csv", DATA / "cpu-2t.csv", model=model, k=5, repeats=2)
    note = doc["model"]["note"]
    assert "not on a source platform" in note and "in-sample" in note
    assert "carb: " + note in [str(w.message) for w in raised]
    assert all(w.filename == __file__ for w in raised)  # at the caller's line


def test_ctrl_c_stops_a_long_transfer():
    # Hundred-and-fourth hostile pass: SIGINT and SIGTERM reached a Python caller only after every
    # draw of a long transfer (24 s); the draws now stop at the next one.
    rc, out, err, first, took = interrupted("", f"carb.transfer({str(DATA / 'cpu-2t.csv')!r}, "
                                                f"{str(DATA / 'cpu-1t.csv')!r}, k=list(range(2, 600, 3)), repeats=10000)",
                                            1.5)  # reading the two files, then inside the draws (tens of seconds)
    assert first.startswith("start"), err
    assert rc == 3, (out, err)
    assert "transfer interrupted by SIGINT" in out, out
    assert took < 5, "stopped at the next draw, not at the end"


def test_arguments_that_are_no_number_or_no_path_are_refused_in_carbs_words():
    import decimal
    # A signalling NaN cannot become a float: a raw ValueError before (hundred-and-fourth hostile pass).
    with pytest.raises(carb.InputError, match="not a number"):
        carb.characterize(DATA / "h200.csv", sm_threshold=decimal.Decimal("sNaN"))
    with pytest.raises(carb.InputError, match="not a number"):
        carb.transfer(DATA / "cpu-2t.csv", DATA / "cpu-1t.csv", repeats=decimal.Decimal("sNaN"))
    # No bundle is named "": it read "no model bundle at  (missing manifest.json)".
    with pytest.raises(carb.ModelError, match="^no model bundle at an empty path$"):
        carb.transfer(DATA / "cpu-2t.csv", DATA / "cpu-1t.csv", model="")
    with pytest.raises(carb.ModelError, match="^no model bundle at an empty path$"):
        carb.Model.load("")
    # A k listed twice is refused before the files are read, as the CLI refuses it.
    with pytest.raises(carb.InputError, match="k lists a calibration set size twice"):
        carb.transfer("absent-a.csv", "absent-b.csv", k=[5, 5])


def cli_validate(path):
    # The CLI exits 1 for an invalid dataset, and prints its document all the same.
    r = subprocess.run([os.environ["CARB_BINARY"], "data", "validate", str(path), "--format", "json"],
                       capture_output=True, text=True)
    return r.returncode, json.loads(r.stdout)


def test_validate_is_the_clis_document(tmp_path):
    rc, want = cli_validate(DATA / "h200.csv")
    assert rc == 0 and want["valid"] and want["problems"] == []
    assert carb.validate(DATA / "h200.csv") == want
    # A damaged copy: problems with their lines, as the CLI lists them, and nothing raised.
    lines = (DATA / "cpu-2t.csv").read_text().splitlines()
    lines.append(lines[5])  # a duplicate
    cells = lines[9].split(",")
    cells[8] = "-3"  # a negative latency
    lines[9] = ",".join(cells)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    rc, want = cli_validate(bad)
    assert rc == 1 and not want["valid"]
    assert any(":10: " in p for p in want["problems"]) and any("duplicate of line 6" in p for p in want["problems"])
    assert carb.validate(str(bad)) == want
    assert carb.validate(os.fsencode(str(bad))) == want


def test_dataset_info_is_the_clis_document(tmp_path):
    # Thirty-first session: `carb data info` had no Python peer; it says the measuring device too.
    for name in ("h200.csv", "cpu-2t.csv"):
        doc = carb.dataset_info(DATA / name)
        assert doc == cli_json("data", "info", DATA / name)
        assert doc["rows"] > 100 and doc["problems"] == 0
    doc = carb.dataset_info(str(DATA / "h200.csv"))
    assert [d["device"] for d in doc["devices"]] == ["cuda NVIDIA H200"]
    # A row that does not parse raises, as every reader does; a path that is none is refused.
    bad = tmp_path / "bad.csv"
    bad.write_text((DATA / "cpu-2t.csv").read_text().splitlines()[0] + "\ncpu-2t,basic,18,1,64\n")
    with pytest.raises(carb.DataError):
        carb.dataset_info(bad)
    with pytest.raises(carb.InputError, match="not a path"):
        carb.dataset_info(3)


def test_merge_and_combine_are_the_clis(tmp_path):
    # Thirty-first session: `carb data merge` and `combine` had no Python peers.
    r1, r2 = DATA / "cpu-2t-round1.csv", DATA / "cpu-2t-round2.csv"
    with pytest.warns(carb.CarbWarning, match="measured differently from the row kept") as said:
        doc = carb.merge([r1, str(r2)], tmp_path / "m.csv")
    assert said[0].filename == __file__  # at the caller's line, not inside carb
    want = cli_json("data", "merge", "--out", tmp_path / "cli.csv", r1, r2)
    for d in (doc, want):
        d.pop("csv"), d.pop("provenance")
    assert doc == want
    assert doc["rows_out"] == 1958 and doc["dropped_duplicates"] == 1958 and doc["warnings"]
    assert carb.dataset_info(tmp_path / "m.csv")["rows"] == 1958
    sidecar = json.loads((tmp_path / "m.json").read_text())
    assert "carb.merge(" in json.dumps(sidecar)
    comb = carb.combine((r1, r2), tmp_path / "c.csv")
    want = cli_json("data", "combine", "--out", tmp_path / "cli-c.csv", r1, r2)
    for d in (comb, want):
        d.pop("csv"), d.pop("provenance")
    assert comb == want and comb["rows_out"] == 1958 and comb["combined"] == 1958
    # A file carb did not write is kept unless force=True, which keeps it beside.
    mine = tmp_path / "mine.csv"
    mine.write_text("precious\n")
    with pytest.raises(carb.InputError, match="not a dataset CSV carb wrote"):
        carb.merge([r1], mine)
    assert mine.read_text() == "precious\n"
    with pytest.warns(RuntimeWarning, match="force=True"):
        carb.combine([r1, r2], mine, force=True)
    assert (tmp_path / "mine.earlier.csv").read_text() == "precious\n"
    with pytest.raises(carb.InputError, match="at least two measuring rounds"):
        carb.combine([r1], tmp_path / "one.csv")
    with pytest.raises(carb.InputError):
        carb.merge(3, tmp_path / "x.csv")
    with pytest.raises(carb.InputError):
        carb.merge([r1], tmp_path / "x.csv", force="yes")
    with pytest.raises(carb.InputError, match="is a set"):
        carb.merge({str(r1), str(r2)}, tmp_path / "x.csv")
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "one.csv").exists()


def test_a_warning_naming_a_path_that_is_no_utf8_is_said(tmp_path):
    # A hostile tester: a byte that is no UTF-8 in a path within a warning raised UnicodeDecodeError,
    # from merge after it had written its output. Said with the byte escaped, as errors are.
    name = os.fsencode(str(tmp_path)) + b"/e\xff.csv"
    lines = (DATA / "cpu-2t-round1.csv").read_text().splitlines()
    cells = lines[3].split(",")
    cells[18] = "0.123"  # load_avg_1m: the CSV is no longer the one its provenance was written with
    lines[3] = ",".join(cells)
    with open(name, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(name[:-4] + b".json", "w") as f:
        f.write((DATA / "cpu-2t-round1.json").read_text())
    with pytest.warns(carb.CarbWarning, match=r"e\\xff\.csv") as said:
        carb.dataset_info(name)
    assert said
    with pytest.warns(carb.CarbWarning, match=r"\\xff"):
        doc = carb.merge([name], tmp_path / "m.csv")
    assert doc["rows_out"] == 1958


def test_validate_says_what_cannot_be_read(tmp_path):
    # Not raised: one problem naming why, as the CLI lists an empty file.
    doc = carb.validate(tmp_path / "none.csv")
    assert not doc["valid"] and doc["problems"] == [f"{tmp_path / 'none.csv'}: cannot open for reading: No such file or directory"]
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert carb.validate(empty) == cli_validate(empty)[1]
    assert carb.validate(empty)["problems"] == [f"{empty}: empty file (no header row)"]
    assert carb.validate(tmp_path)["problems"] == [f"{tmp_path}: is a directory, not a CSV file"]
    # The CLI lists them alike, with its document (it refused them before reading, with none).
    for unreadable in (tmp_path, tmp_path / "none.csv", empty):
        rc, doc = cli_validate(unreadable)
        assert rc == 1 and doc == carb.validate(unreadable), doc
    with pytest.raises(carb.InputError, match="not a path"):
        carb.validate(3)
