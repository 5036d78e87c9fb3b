# scripts/coverage_by_spread.py: held-out interval coverage by the measured round spread, by the
# predicted value, by batch regime, precision and family, for any target; refusals of what it
# cannot use.
import re
import subprocess
import sys

from conftest import SOURCE

SCRIPT = SOURCE / "scripts" / "coverage_by_spread.py"


def run(*args):
    # The carb package the suite imports (PYTHONPATH) is the one the script imports.
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def groups(stdout):
    """The n= counts and coverage shares of each 'by ...' section, keyed by its heading."""
    out, name = {}, "all"
    for line in stdout.splitlines():
        if line.startswith("by "):
            name = line
        elif "n=" in line:
            out.setdefault(name, []).append((int(re.search(r"n=\s*(\d+)", line).group(1)),
                                             float(re.search(r"coverage\s+([\d.]+)%", line).group(1))))
    return out


def test_every_row_is_held_out_once_and_each_grouping_covers_them_all(rows_csv):
    r = run(rows_csv, "--fast", "--folds", "2", "--confidence", "0.8")
    assert r.returncode == 0, r.stderr
    ok = sum(1 for l in rows_csv.read_text().splitlines()[1:] if ",ok," in l)
    assert f": {ok} rows held out in 2 folds, 0.8 latency_ms intervals" in r.stdout
    g = groups(r.stdout)
    assert g["all"] == [(ok, g["all"][0][1])]
    # The spread (a combined dataset records it), the predicted value, batch, precision and family.
    assert len(g) == 6, list(g)
    assert any(k.startswith("by the spread") for k in g)
    for heading, rows in g.items():
        assert sum(n for n, _ in rows) == ok, heading
        # Overall coverage is the rows' mean over any grouping.
        assert abs(sum(n * s for n, s in rows) / ok - g["all"][0][1]) < 0.2, heading
    # Intervals the right way round hold most of the rows at 0.8 (a swapped lower and upper holds none).
    assert g["all"][0][1] >= 60


def test_any_target_and_size_bins(rows_csv, tmp_path):
    # Memory has no round spread: grouped by what is known before measuring only.
    r = run(rows_csv, "--fast", "--folds", "2", "--target", "peak_memory_mb", "--size-bins", "2")
    assert r.returncode == 0, r.stderr
    assert "0.9 peak_memory_mb intervals, 2 size bins" in r.stdout
    assert "spread" not in r.stdout and " MB " in r.stdout
    assert len(groups(r.stdout)) == 5
    # A dataset measured once (no latency_round_spread) is studied without the spread grouping.
    lines = rows_csv.read_text().splitlines()
    col = lines[0].split(",").index("latency_round_spread")
    once = tmp_path / "once.csv"
    once.write_text("\n".join(",".join(f for i, f in enumerate(l.split(",")) if i != col) for l in lines) + "\n")
    r = run(once, "--fast", "--folds", "2")
    assert r.returncode == 0, r.stderr
    assert "spread" not in r.stdout and len(groups(r.stdout)) == 5
    # The CPU measures no energy: said, not a traceback.
    r = run(rows_csv, "--fast", "--target", "energy_j")
    assert r.returncode != 0 and r.stderr.splitlines()[-1].startswith("error:") and "0 ok rows with energy_j" in r.stderr


def test_refuses_what_it_cannot_use(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("platform,family,depth,width,resolution,batch,precision,status,latency_ms\n")
    r = run(data)
    assert r.returncode != 0 and r.stderr.startswith("error:") and "0 ok rows" in r.stderr, r.stderr
    r = run(tmp_path / "absent.csv")
    assert r.returncode != 0 and r.stderr.startswith("error:")
    r = run(data, "--confidence", "1.5")
    assert r.returncode != 0 and "--confidence" in r.stderr
    r = run(data, "--target", "power")
    assert r.returncode != 0 and "--target" in r.stderr
