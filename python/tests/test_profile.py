# Measuring from Python: carb.profile and carb.export do what `carb profile` and `carb data export`
# do, on the same store, under the same protocol id.
import csv
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest

import carb

QUICK = {"warmup": 1, "min_passes": 2, "max_passes": 2, "cooldown": 0, "threads": 1}
QUICK_FLAGS = ["--warmup", "1", "--min-passes", "2", "--max-passes", "2", "--cooldown", "0", "--threads", "1"]
CLI = os.environ.get("CARB_BINARY", "carb")
# Eight networks within 2.5x of one another's FLOPs, one configuration each: the export's plausibility
# checks compare a network across batches and against one with 4x its FLOPs, and a measurement of a
# few passes on a busy machine (ctest -j2) can be disturbed enough to fail them.
SPREAD_EXPR = '[carb.Config("basic", d, 0.25, 32, 1, "fp32") for d in (8, 10, 12, 14, 16, 18, 20, 22)]'
SPREAD = eval(SPREAD_EXPR)
SPREAD_CSV = "family,depth,width,resolution,batch,precision\n" + "".join(
    f"basic,{d},0.25,32,1,fp32\n" for d in (8, 10, 12, 14, 16, 18, 20, 22))


def test_profile_resumes_and_shares_its_store_with_the_cli(tmp_path):
    db = tmp_path / "tiny.db"
    first = carb.profile(SPREAD, db, protocol=QUICK, check_meter=False, progress=False)
    assert (first["total"], first["ok"], first["skipped"]) == (8, 8, 0)
    assert first["platform"] == "cpu-1t" and not first["interrupted"]
    again = carb.profile(SPREAD[:5], db, protocol=QUICK, check_meter=False, progress=False)
    assert (again["ok"], again["skipped"]) == (0, 5)  # resumed: nothing measured twice
    # The CLI with the same settings finds the same protocol, and measures nothing again.
    (tmp_path / "spread.csv").write_text(SPREAD_CSV)
    run = subprocess.run([CLI, "profile", "--configs", str(tmp_path / "spread.csv"), "--db", str(db), "--no-meter-check", "--quiet",
                          "--format", "json", *QUICK_FLAGS], check=True, capture_output=True, text=True)
    import json
    cli = json.loads(run.stdout)
    assert cli["protocol_id"] == first["protocol_id"] and cli["skipped"] == 8 and cli["ok"] == 0
    # Another protocol is another measurement: measured again, not mixed with the first.
    other = carb.profile(SPREAD[:2], db, protocol=dict(QUICK, warmup=2), check_meter=False, progress=False)
    assert other["ok"] == 2 and other["protocol_id"] != first["protocol_id"]
    out = carb.export(db, tmp_path / "tiny.csv", protocol=first["protocol_id"])
    assert out["rows"] == 8 and out["platforms"] == ["cpu-1t"]
    # As `carb data export --platform ""`: every platform (a review: Python looked for platform "").
    every = carb.export(db, tmp_path / "every.csv", platform="", protocol=first["protocol_id"])
    assert every["rows"] == 8
    with open(tmp_path / "tiny.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 8 and all(r["status"] == "ok" and float(r["latency_ms"]) > 0 for r in rows)
    # Energy where the host's meter (RAPL) is readable, else empty, never estimated: all rows alike.
    assert len({r["energy_j"] == "" for r in rows}) == 1
    assert (tmp_path / "tiny.json").exists()
    assert "carb.profile(8 configurations" in (tmp_path / "tiny.json").read_text()


def test_an_export_of_an_unfinished_campaign_says_so(tmp_path):
    import sqlite3
    db = tmp_path / "u.db"
    carb.profile(SPREAD, db, protocol=QUICK, check_meter=False, progress=False)
    whole = carb.export(db, tmp_path / "whole.csv")
    assert (whole["planned"], whole["unmeasured"]) == (8, 0)
    # Three rows gone, as if the run had stopped before them: the store still knows they were planned.
    with sqlite3.connect(db) as con:
        con.execute("DELETE FROM measurements WHERE depth IN (18, 20, 22)")
    con.close()
    with pytest.warns(RuntimeWarning, match=r"unfinished campaign: 3 of the 8 configurations"):
        part = carb.export(db, tmp_path / "part.csv")
    assert (part["rows"], part["planned"], part["unmeasured"]) == (5, 8, 3)
    # The store itself says the same, with the command that resumes it.
    info = carb.store_info(db)
    assert info["rows"] == 5 and len(info["campaigns"]) == 1
    c = info["campaigns"][0]
    assert (c["platform"], c["ok"], c["planned"], c["unmeasured"]) == ("cpu-1t", 5, 8, 3)
    assert len(c["commands"]) == 1 and "carb.profile(" in c["commands"][0]
    cli = subprocess.run([CLI, "data", "info", str(db), "--format", "json"], check=True, capture_output=True, text=True)
    import json
    assert json.loads(cli.stdout)["campaigns"] == info["campaigns"]
    with pytest.raises(carb.InputError, match="no such measurement store"):
        carb.store_info(tmp_path / "missing.db")
    # replan=True: the five measured become the whole plan, and nothing is unfinished any more.
    again = carb.profile(SPREAD[:5], db, protocol=QUICK, check_meter=False, progress=False, replan=True)
    assert again["skipped"] == 5
    c = carb.store_info(db)["campaigns"][0]
    assert (c["planned"], c["unmeasured"]) == (5, 0)


def test_export_never_replaces_a_file_it_did_not_write(tmp_path):
    db = tmp_path / "t.db"
    carb.profile(SPREAD[:1], db, protocol=QUICK, check_meter=False, progress=False)
    mine = tmp_path / "mine.csv"
    mine.write_text("precious\n")
    with pytest.raises(carb.InputError, match="is not a dataset CSV carb wrote"):
        carb.export(db, mine)
    assert mine.read_text() == "precious\n"
    # With force=True it is kept beside, and the warning says so in Python's words (it said "--force").
    with pytest.warns(RuntimeWarning, match=r"held a file carb did not write that force=True replaces") as said:
        carb.export(db, mine, force=True)
    assert "--force" not in str(said[0].message)
    assert (tmp_path / "mine.earlier.csv").read_text() == "precious\n"
    # Reading the store left nothing beside it (an empty -wal and a -shm were left).
    assert sorted(p.name for p in tmp_path.glob("t.db*")) == ["t.db"]
    with pytest.raises(carb.InputError):
        carb.export(tmp_path / "missing.db", tmp_path / "x.csv")


def test_a_warning_made_an_error_stops_an_export_only_once_it_is_written(tmp_path):
    # A hostile tester: with warnings as errors, export(force=True) kept the user's file, raised, and
    # wrote nothing; every retry kept another copy. The warning is said once both files are written.
    import warnings
    db = tmp_path / "w.db"
    carb.profile(SPREAD[:2], db, protocol=QUICK, check_meter=False, progress=False)
    mine = tmp_path / "out.csv"
    mine.write_text("my precious\n")
    raised = []  # a test audit: the check of the warning ran only if it was raised
    for _ in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                carb.export(db, mine, force=True)
                raised.append(False)
            except RuntimeWarning as e:
                assert "kept as" in str(e)
                raised.append(True)
    assert raised == [True, False]  # the user's file kept once; carb's own export then replaced
    assert mine.read_text().startswith("platform,")  # the export, written in full
    assert (tmp_path / "out.earlier.csv").read_text() == "my precious\n"
    assert not (tmp_path / "out.earlier-1.csv").exists()  # the second call replaced carb's own export


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(protocol={"passes": 5}), carb.InputError, "unknown protocol setting 'passes'"),
    (dict(protocol={"lock_clocks": True}), carb.InputError, "unknown protocol setting"),
    (dict(protocol={"reference": 1}), carb.InputError, "not True or False"),
    (dict(protocol={"warmup": 1.5}), carb.InputError, "not a whole number"),
    (dict(protocol={"util_window": 1}), carb.InputError, "means nothing on the cpu backend"),
    (dict(protocol={"min_passes": 5, "max_passes": 2}), carb.InputError, "more than max_passes"),
    (dict(protocol={"target_ci": 5.0}), carb.InputError, "target_ci must be at most 1"),  # the CLI's ranges
    (dict(protocol={"threads": 2000}), carb.InputError, "threads must be between 1 and 1024"),
    (dict(protocol={"cooldown": 7200}), carb.InputError, "cooldown must be at most 3600"),
    (dict(protocol={"warmup": 2e9}), carb.InputError, "out of range"),
    (dict(backend="tpu"), carb.InputError, "not 'cpu' or 'cuda'"),
    (dict(platform=7), carb.InputError, "not a name"),
    # Hundred-and-thirty-first hostile pass: taken for the default, a pybind11 TypeError listing the
    # whole signature, and a platform of its own that `data merge` refused beside cpu-2t.
    (dict(platform=""), carb.InputError, "platform is empty"),
    (dict(platform="x\udcff"), carb.InputError, "is not UTF-8"),
    (dict(platform=" cpu-1t"), carb.InputError, "begins or ends with a space"),
    (dict(configs=carb.preset("tiny")[:2] * 2), carb.InputError, r"configuration 2 \(basic-10-w0.25-r32-b1-fp32\) "
                                                                 "repeats configuration 0"),
    (dict(configs=[carb.Config("basic", 10, 0.25, 32, 1, "fp32"), carb.Config("basic", 10, 0.251, 32, 1, "fp32")]),
     carb.InputError, r"configuration 1 \(basic-10-w0.251-r32-b1-fp32\) repeats configuration 0"),
    (dict(retry_errors="yes"), carb.InputError, "not True or False"),
])
def test_bad_settings_are_refused_and_nothing_is_written(tmp_path, kwargs, error, message):
    db = tmp_path / "never.db"
    configs = kwargs.pop("configs", "tiny")
    with pytest.raises(error, match=message):
        carb.profile(configs, db, check_meter=False, progress=False, **kwargs)
    assert not db.exists()


def test_a_store_named_with_a_byte_that_is_not_utf8_is_measured(tmp_path):
    # Hundred-and-thirty-first hostile pass: a RuntimeError (the summary's JSON) after the work was done.
    db = os.fsencode(tmp_path) + b"/s\xff.db"
    s = carb.profile(SPREAD[:1], db, protocol=QUICK, check_meter=False, progress=False)
    assert s["ok"] == 1 and os.path.exists(db)


def test_nothing_to_profile_and_a_directory_as_store_are_refused(tmp_path):
    with pytest.raises(carb.InputError, match="nothing to profile"):
        carb.profile([], tmp_path / "x.db")
    with pytest.raises(carb.MeasureError, match="is a directory"):
        carb.profile("tiny", tmp_path, check_meter=False, progress=False)


def test_an_interrupted_profile_keeps_its_rows_and_resumes(tmp_path):
    # SIGINT stops it after the configuration in flight: KeyboardInterrupt, the rows kept; a second
    # call measures only the rest.
    db = tmp_path / "stop.db"
    script = textwrap.dedent(f"""
        import carb, sys
        try:
            carb.profile({SPREAD_EXPR}, {str(db)!r}, protocol={{"warmup": 1, "min_passes": 2, "max_passes": 2,
                         "cooldown": 1.0, "threads": 1}}, check_meter=False, progress=False)
        except KeyboardInterrupt as e:
            print("stopped:", e)
            sys.exit(3)
        print("finished")
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=os.environ)
    deadline = time.monotonic() + 60
    while not db.exists() and time.monotonic() < deadline:  # the run has begun once its store exists
        time.sleep(0.05)
    # Until the first row is stored (a test audit: a fixed 1.5 s sleep could signal a slow loaded
    # run before any row, and read as a failure to keep rows).
    def stored():
        try:
            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
            try:
                return con.execute("SELECT count(*) FROM measurements").fetchone()[0]
            finally:
                con.close()
        except sqlite3.Error:
            return 0
    while stored() < 1 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 3, (out, err)
    assert "carb.profile interrupted by SIGINT" in out and "call it again to resume" in out
    kept = int(out.split("SIGINT: ")[1].split()[0])
    assert 1 <= kept < 8, out
    rest = carb.profile(SPREAD, db, protocol={"warmup": 1, "min_passes": 2, "max_passes": 2, "cooldown": 1.0,
                                              "threads": 1}, check_meter=False, progress=False)
    assert rest["skipped"] == kept and rest["ok"] == 8 - kept


def test_a_signal_as_the_profile_starts_stops_it_before_it_measures_everything(tmp_path):
    # A review: a SIGINT while the backend loaded or the run started went unseen until every
    # configuration was measured (8 of 8, then a bare KeyboardInterrupt).
    db = tmp_path / "early.db"
    script = textwrap.dedent(f"""
        import carb, sys
        try:  # a signal that lands while "ready" is still being written is caught too
            print("ready", flush=True)
            carb.profile({SPREAD_EXPR}, {str(db)!r}, protocol={{"warmup": 1, "min_passes": 2, "max_passes": 2,
                         "cooldown": 1.0, "threads": 1}}, check_meter=False, progress=False)
        except KeyboardInterrupt:
            print("stopped", flush=True)
            sys.exit(3)
        print("finished")
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=os.environ)
    assert child.stdout.readline().strip() == "ready"
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 3 and "stopped" in out, (out, err)
    measured = 0
    if db.exists():
        try:
            measured = carb.export(db, tmp_path / "early.csv")["rows"]
        except carb.InputError as e:  # a store with no rows yet: nothing to export
            assert "no rows" in str(e) or "nothing" in str(e), e
    assert measured < 8
