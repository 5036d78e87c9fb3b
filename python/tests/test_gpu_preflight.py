# scripts/gpu_preflight.py: before a GPU lease spends its minutes, the stores, window study and plan
# it would continue are checked to be this GPU's (a review of scripts/gpu_profile.sh found an H100
# lease would resume the H200's files and be refused, or worse, only minutes in).
import json
import sqlite3
import subprocess
import sys

import pytest
from conftest import SOURCE

SCRIPT = SOURCE / "scripts" / "gpu_preflight.py"


def store(path, gpu, ticks=10, rows=3, platform="h200"):
    """A store with the tables the preflight reads (test data, not a measurement)."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE protocols (id TEXT PRIMARY KEY, settings TEXT NOT NULL)")
    con.execute("CREATE TABLE measurements (platform TEXT, protocol_id TEXT)")
    settings = {"backend": "cuda", "energy_ticks": ticks, "platform_info": {"gpu_name": gpu}}
    con.execute("INSERT INTO protocols VALUES ('p1', ?)", (json.dumps(settings),))
    con.executemany("INSERT INTO measurements VALUES (?, 'p1')", [(platform,)] * rows)
    con.commit()
    con.close()
    return path


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_this_gpus_store_resumes_with_its_energy_window(tmp_path):
    db = store(tmp_path / "h200-campaign.db", "NVIDIA H200", ticks=10)
    r = run("--platform", "h200", "--gpu-name", "NVIDIA H200", "--store", db, "--store", tmp_path / "absent.db")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "10"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h200-campaign.db"]  # nothing written beside it
    # No rows of this platform, or no ticks recorded: nothing to carry over.
    assert run("--platform", "h100", "--gpu-name", "NVIDIA H200", "--store", db).stdout.strip() == ""


def test_another_gpus_files_are_refused_before_anything_is_spent(tmp_path):
    db = store(tmp_path / "h200-campaign.db", "NVIDIA H200")
    r = run("--platform", "h200", "--gpu-name", "NVIDIA H100 80GB HBM3", "--store", db)
    assert r.returncode == 1
    assert "records protocol p1 as measured on 'NVIDIA H200', and this GPU is 'NVIDIA H100 80GB HBM3'" in r.stderr
    study = tmp_path / "study.csv"
    study.write_text("x\n")
    (tmp_path / "study.csv.json").write_text(json.dumps(
        {"platform_info": {"gpu_name": "NVIDIA H100 80GB HBM3"}, "resumed": [{"platform_info": {"gpu_name": "NVIDIA H200"}}]}))
    r = run("--platform", "h100", "--gpu-name", "NVIDIA H100 80GB HBM3", "--study", study)
    assert r.returncode == 1 and "holds traces measured on 'NVIDIA H200'" in r.stderr
    plan = tmp_path / "plan.csv"
    plan.write_text("family,depth,width,resolution,batch,precision\n")
    (tmp_path / "plan.json").write_text(json.dumps({"planned_for": {"platform": "h200"}}))
    r = run("--platform", "h100", "--gpu-name", "NVIDIA H100 80GB HBM3", "--plan", plan)
    assert r.returncode == 1 and "was planned for platform 'h200'" in r.stderr
    assert run("--platform", "h200", "--gpu-name", "NVIDIA H200", "--plan", plan).returncode == 0
    (tmp_path / "broken.db").write_text("not sqlite")
    r = run("--platform", "h200", "--gpu-name", "NVIDIA H200", "--store", tmp_path / "broken.db")
    assert r.returncode == 1 and "not a readable carb store" in r.stderr


def test_the_shipped_h200_files_pass_on_an_h200_only():
    args = ["--store", SOURCE / "data/gpu/h200-campaign.db", "--store", SOURCE / "data/gpu/h200-deploy.db",
            "--study", SOURCE / "data/gpu/h200-window-study.csv"]
    ok = run("--platform", "h200", "--gpu-name", "NVIDIA H200", *args)
    assert ok.returncode == 0 and ok.stdout.strip() == "10", ok.stderr
    assert run("--platform", "h200", "--gpu-name", "NVIDIA H100 80GB HBM3", *args).returncode == 1


def test_odd_records_are_refused_or_read_without_a_traceback(tmp_path):
    study = tmp_path / "study.csv"
    study.write_text("x\n")
    (tmp_path / "study.csv.json").write_text(json.dumps({"platform_info": {"gpu_name": "NVIDIA H200"}, "resumed": 3}))
    r = run("--platform", "h200", "--gpu-name", "NVIDIA H200", "--study", study)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    db = tmp_path / "s.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE protocols (id TEXT PRIMARY KEY, settings TEXT NOT NULL)")
    con.execute("CREATE TABLE measurements (platform TEXT, protocol_id TEXT)")
    con.execute("INSERT INTO protocols VALUES ('p1', '[1, 2]')")
    con.execute("INSERT INTO measurements VALUES ('h200', 'p1')")
    con.commit()
    con.close()
    r = run("--platform", "h200", "--gpu-name", "NVIDIA H200", "--store", db)
    assert r.returncode == 0 and "Traceback" not in r.stderr and r.stdout.strip() == "", r.stderr
