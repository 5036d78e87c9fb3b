# scripts/coverage_by_spread.py: held-out interval coverage by the measured round spread, by the
# predicted latency and by batch regime; refusals of what it cannot use.
import re
import subprocess
import sys

from conftest import SOURCE

SCRIPT = SOURCE / "scripts" / "coverage_by_spread.py"


def run(*args):
    # The carb package the suite imports (PYTHONPATH) is the one the script imports.
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_every_row_is_held_out_once_and_each_grouping_covers_them_all(rows_csv):
    r = run(rows_csv, "--fast", "--folds", "2", "--confidence", "0.8")
    assert r.returncode == 0, r.stderr
    ok = sum(1 for l in rows_csv.read_text().splitlines()[1:] if ",ok," in l)
    assert f": {ok} rows held out in 2 folds, 0.8 latency intervals" in r.stdout
    counts = [int(n) for n in re.findall(r"n=\s*(\d+)", r.stdout)]
    assert counts[0] == ok
    assert sum(counts[1:5]) == ok and sum(counts[5:9]) == ok and sum(counts[9:]) == ok
    shares = [float(s) for s in re.findall(r"coverage\s+([\d.]+)%", r.stdout)]
    # Intervals the right way round hold most of the rows at 0.8 (a swapped lower and upper holds none).
    assert shares[0] >= 60
    # Overall coverage is the rows' mean over any grouping.
    assert abs(sum(c * s for c, s in zip(counts[1:5], shares[1:5])) / ok - shares[0]) < 0.2


def test_refuses_a_dataset_without_round_spread(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("platform,family,depth,width,resolution,batch,precision,status,latency_ms\n")
    r = run(data)
    assert r.returncode != 0 and r.stderr.startswith("error:") and "latency_round_spread" in r.stderr
    r = run(tmp_path / "absent.csv")
    assert r.returncode != 0 and r.stderr.startswith("error:")
    r = run(data, "--confidence", "1.5")
    assert r.returncode != 0 and "--confidence" in r.stderr
