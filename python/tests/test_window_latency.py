# scripts/window_latency.py: a GPU row's loop latency against its energy window's mean pass time,
# and the rows whose energy over latency falls below the meter check's idle power.
import csv
import json
import subprocess
import sys

import pytest
from conftest import SOURCE

SCRIPT = SOURCE / "scripts" / "window_latency.py"
HEADER = ["platform", "family", "depth", "width", "resolution", "batch", "precision", "status", "latency_ms",
          "energy_j", "protocol_id", "energy_window_s", "energy_passes", "passes", "timed_s"]


def dataset(path, rows, idle_w=None):
    """Rows (batch, loop latency ms, window s, passes, energy J): test data, not measurements."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        for batch, loop, window_s, passes, energy in rows:
            w.writerow(["h200", "basic", 18, 1, 32, batch, "fp32", "ok", loop, energy, "p1", window_s, passes, 10,
                        loop * 10 / 1000 if isinstance(loop, (int, float)) else ""])
        w.writerow(["h200", "basic", 18, 1, 32, 999, "fp32", "error", "", "", "p1", "", "", "", ""])
    if idle_w is not None:
        path.with_suffix(".json").write_text(json.dumps({"protocols": {"p1": {"meter_check": {"idle_power_w": idle_w}}}}))
    return path


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_ratios_and_power_below_idle(tmp_path):
    # Window mean pass time 1 ms in each; loop latencies 1, 2 and 1.05 ms; energy 0.15 J a pass:
    # 150 W over the window, 75 W over the 2 ms loop latency, below an idle 100 W.
    data = dataset(tmp_path / "d.csv", [(1, 1.0, 1.0, 1000, 0.15), (2, 2.0, 1.0, 1000, 0.15), (4, 1.05, 0.5, 500, 0.15)],
                   idle_w=100.0)
    r = run(data)
    assert r.returncode == 0, r.stderr
    assert "3 rows with an energy window" in r.stdout
    assert "max 2.000, min 1.000" in r.stdout
    assert "differ by more than 10%: 1 of 3" in r.stdout
    assert "idle power recorded by the meter check: 100.0 W" in r.stdout
    assert "below it: 1 with the loop's latency, 0 with the window's" in r.stdout


def test_repeat_agreement_scores_each_latency(tmp_path):
    first = dataset(tmp_path / "a.csv", [(1, 1.0, 1.0, 1000, 0.1), (2, 2.0, 2.0, 1000, 0.2), (4, 4.0, 4.0, 1000, 0.4)])
    # The repeat's window means equal the first's exactly; its loop latencies do not (batch 1 and 4
    # are 50% and 25% off, batch 2 exact: median 25%). Its rows in another order: paired by
    # configuration, not by position.
    again = dataset(tmp_path / "b.csv", [(4, 3.0, 4.0, 1000, 0.4), (1, 1.5, 1.0, 1000, 0.1), (2, 2.0, 2.0, 1000, 0.2)])
    r = run(first, "--repeat", again)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    agreement = lines[next(i for i, l in enumerate(lines) if l.startswith("agreement with")) + 1:]
    window = next(l for l in agreement if l.strip().startswith("window mean"))
    loop = next(l for l in agreement if l.strip().startswith("loop latency"))
    assert "R2 1.000" in window and "median |dev| 0.0%" in window
    assert "R2 1.000" not in loop and "median |dev| 25.0%" in loop
    assert "idle power" not in r.stdout  # no sidecar, nothing said of power


def test_refuses_what_it_cannot_read(tmp_path):
    r = run(tmp_path / "absent.csv")
    assert r.returncode != 0 and r.stderr.startswith("error:")
    cpu = tmp_path / "cpu.csv"
    cpu.write_text("platform,status,latency_ms\ncpu-2t,ok,1.0\n")
    r = run(cpu)
    assert r.returncode != 0 and "no ok row" in r.stderr
    first = dataset(tmp_path / "a.csv", [(1, 1.0, 1.0, 1000, 0.1)])
    other = dataset(tmp_path / "o.csv", [(2, 1.0, 1.0, 1000, 0.1)])
    r = run(first, "--repeat", other)
    assert r.returncode != 0 and "fewer than 2" in r.stderr


def test_writes_the_window_latency_to_a_new_file_only(tmp_path):
    data = dataset(tmp_path / "d.csv", [(1, 2.0, 1.0, 1000, 0.15), (2, 1.0, 1.0, 1000, 0.15)])
    out = tmp_path / "w.csv"
    r = run(data, "--write-window", out)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(open(out)))
    assert [float(x["latency_ms"]) for x in rows if x["status"] == "ok"] == [1.0, 1.0]
    assert [x["passes"] for x in rows if x["status"] == "ok"] == ["1000", "1000"]
    assert len(rows) == 3 and rows[2]["status"] == "error" and rows[2]["latency_ms"] == ""
    before = out.read_bytes()
    r = run(data, "--write-window", out)
    assert r.returncode != 0 and "exists" in r.stderr and r.stdout == ""
    assert out.read_bytes() == before


# Pass 100: a configuration twice was collapsed to its last row; impossible windows (negative passes,
# infinite seconds, zero) were written as latencies or ended in a traceback; a row with an extra
# field left a truncated output behind; a malformed sidecar was a traceback.
def test_a_configuration_twice_is_refused(tmp_path):
    data = dataset(tmp_path / "d.csv", [(1, 1.0, 1.0, 1000, 0.15), (1, 2.0, 1.0, 1000, 0.15)])
    r = run(data)
    assert r.returncode != 0 and r.stderr.startswith("error:") and "again (line 2)" in r.stderr


def test_impossible_windows_are_left_out_and_kept_as_measured(tmp_path):
    data = dataset(tmp_path / "d.csv", [(1, 1.0, 1.0, 1000, 0.15), (2, 1.0, 1.0, -5, 0.15), (4, 1.0, "inf", 1000, 0.15),
                                        (8, 1.0, 0, 1000, 0.15), (16, "nan", 1.0, 1000, 0.15), (32, 0, 1.0, 1000, 0.15),
                                        (64, 1.0, 1.0, 10.5, 0.15)], idle_w=100.0)
    out = tmp_path / "w.csv"
    r = run(data, "--write-window", out)
    assert r.returncode == 0, r.stderr
    assert "1 rows with an energy window" in r.stdout and "6 other ok rows left out" in r.stdout
    assert "min 1.000" in r.stdout and "nan" not in r.stdout
    assert "1 of 8 rows with the window's latency; 6 ok rows without a usable window keep the loop's" in r.stdout
    written = {x["batch"]: x for x in csv.DictReader(open(out))}
    original = {x["batch"]: x for x in csv.DictReader(open(data))}
    for b in ("2", "4", "8", "16", "32", "64"):
        assert written[b] == original[b]


def test_a_failed_write_leaves_nothing_behind(tmp_path):
    data = dataset(tmp_path / "d.csv", [(1, 1.0, 1.0, 1000, 0.15), (2, 1.0, 1.0, 1000, 0.15)])
    lines = data.read_text().splitlines()
    lines[2] += ",EXTRA"
    data.write_text("\n".join(lines) + "\n")
    r = run(data, "--write-window", tmp_path / "w.csv")
    assert r.returncode != 0 and "line 3 has more fields" in r.stderr
    r = run(tmp_path / "d.csv", "--write-window", tmp_path / "absent" / "w.csv")
    assert r.returncode != 0 and "no folder" in r.stderr and r.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv"]


def test_a_sidecar_that_is_none_is_said_and_left_out(tmp_path):
    data = dataset(tmp_path / "d.csv", [(1, 2.0, 1.0, 1000, 0.15), (2, 1.0, 1.0, 1000, 0.15)])
    for text in ("[1, 2]", '{"protocols": null}', '{"protocols": {"p1": {"meter_check": {"idle_power_w": "121"}}}}',
                 "\xff\xfe"):
        (tmp_path / "d.json").write_bytes(text.encode("latin-1"))
        r = run(data)
        assert r.returncode == 0, r.stderr
        assert "warning:" in r.stderr and "idle power recorded" not in r.stdout, text


def load_script():
    import importlib.util
    spec = importlib.util.spec_from_file_location("window_latency", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_write_that_fails_at_the_last_step_leaves_no_temporary(tmp_path, monkeypatch):
    # The output appears by linking a whole temporary into place; a link that fails (the name taken
    # meanwhile, a full disk) must leave neither the output nor the temporary.
    data = dataset(tmp_path / "d.csv", [(1, 2.0, 1.0, 1000, 0.15), (2, 1.0, 1.0, 1000, 0.15)])
    script = load_script()

    def taken(src, dst):
        raise FileExistsError(17, "File exists", str(dst))

    monkeypatch.setattr(script.os, "link", taken)
    monkeypatch.setattr(sys, "argv", ["window_latency.py", str(data), "--write-window", str(tmp_path / "w.csv")])
    with pytest.raises(SystemExit) as e:
        script.main()
    assert "error:" in str(e.value.code) and "File exists" in str(e.value.code)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv"]


def test_the_output_has_the_permissions_a_new_file_gets(tmp_path):
    data = dataset(tmp_path / "d.csv", [(1, 2.0, 1.0, 1000, 0.15), (2, 1.0, 1.0, 1000, 0.15)])
    out = tmp_path / "w.csv"
    r = subprocess.run(["sh", "-c", f'umask 022 && "{sys.executable}" "{SCRIPT}" "{data}" --write-window "{out}"'],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_mode & 0o777 == 0o644  # mkstemp alone makes 0600


def test_input_from_a_pipe_is_read_once(tmp_path):
    data = dataset(tmp_path / "d.csv", [(1, 2.0, 1.0, 1000, 0.15), (2, 1.0, 1.0, 1000, 0.15)])
    out = tmp_path / "w.csv"
    with open(data) as stdin:
        r = subprocess.run([sys.executable, str(SCRIPT), "/dev/stdin", "--write-window", str(out)], stdin=stdin,
                           capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert len(out.read_text().splitlines()) == 4  # header, two ok rows, the error row
