# What `import carb` does to the process: OpenMP threads that wait passively (see carb/__init__.py).
import os
import subprocess
import sys


def run_python(code):
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)


def test_import_makes_openmp_wait_passively():
    r = run_python("import carb, os; print(os.environ['OMP_WAIT_POLICY'], carb.__version__)")
    assert r.stdout.split()[0] == "PASSIVE"
    assert r.stdout.split()[1].count(".") == 2


def test_openmp_loaded_earlier_is_reported_not_ignored():
    code = ("import ctypes.util, ctypes; ctypes.CDLL(ctypes.util.find_library('gomp'));"
            "import warnings; warnings.simplefilter('always');"
            "import carb, os; print(os.environ.get('OMP_WAIT_POLICY'))")
    r = run_python(code)
    assert r.stdout.strip() == "None"
    assert "OMP_WAIT_POLICY=PASSIVE" in r.stderr
    # carb's own category, and said where the user imported carb, not inside carb or importlib.
    assert "<string>:1: CarbWarning: carb: OpenMP was loaded before carb" in r.stderr
