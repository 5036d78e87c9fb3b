# A hostile tester's pass on the Python surface (2026-12-05): each case was a raw TypeError, an
# answer the CLI refuses, a warning the CLI gives and Python did not, or a Ctrl-C that did not stop.
import os
import signal
import subprocess
import sys
import textwrap
import warnings

import pytest

import carb
from conftest import SOURCE


def test_ctrl_c_stops_training_at_the_next_fit(tmp_path):
    # Python's own SIGINT handler runs only when C++ returns: Model.train ran to its end through three
    # Ctrl-Cs, then discarded the model. carb's stop reaches the fits, as the CLI's does; its message
    # (not Python's bare KeyboardInterrupt) shows which stopped it.
    script = textwrap.dedent(f"""
        import signal, sys, threading, os
        signal.signal(signal.SIGINT, signal.default_int_handler)
        import carb
        threading.Timer(1.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            carb.Model.train({str(SOURCE / "data" / "h200.csv")!r}, trees=20000, correctors=False)
        except KeyboardInterrupt as e:
            print("stopped:", e)
            sys.exit(3)
        print("ran to the end")
        """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, OMP_WAIT_POLICY="PASSIVE"))
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert "training interrupted by SIGINT" in r.stdout, r.stdout


def test_train_says_which_failed_rows_it_left_out_as_the_cli_does(tmp_path):
    lines = (SOURCE / "data" / "h200.csv").read_text().splitlines()
    header = lines[0].split(",")
    status, cost_columns = header.index("status"), [header.index(c) for c in ("latency_ms", "energy_j", "peak_memory_mb")]
    cells = lines[1].split(",")
    cells[status] = "oom"
    for c in cost_columns:
        cells[c] = ""
    path = tmp_path / "h.csv"
    path.write_text("\n".join([lines[0], ",".join(cells)] + lines[2:]) + "\n")
    # carb.CarbWarning (a RuntimeWarning), from the library's own warning handler.
    with pytest.warns(carb.CarbWarning, match="1 row measured as oom or error is not trained on"):
        carb.Model.train(path, fast=True)
    with pytest.raises(carb.InputError, match="trees is 1000000, not 0 .* to 100000"):
        carb.Model.train(path, trees=10**6)


def test_warnings_about_an_input_are_said_on_every_call(tmp_path):
    import json
    csv_path = tmp_path / "h.csv"
    csv_path.write_bytes((SOURCE / "data" / "h200.csv").read_bytes())
    side = json.loads((SOURCE / "data" / "h200.json").read_text())
    side["note"] = "added by hand"
    (tmp_path / "h.json").write_text(json.dumps(side))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):  # the second call trained without a word before
            with pytest.raises(RuntimeWarning, match="was edited since carb wrote it"):
                carb.Model.train(csv_path, fast=True)


def test_a_config_equals_only_a_config():
    c = carb.Config()
    assert (c == None) is False and (c != None) is True  # noqa: E711
    assert c != "basic-18-w1-r224-b1-fp32"
    assert c in [None, "x", c] and c == carb.Config()
    for kwargs, says in ((dict(family=None), "family is None, not a name"), (dict(precision=1), "precision is 1"),
                         (dict(depth=18.0), "depth is 18.0, not an integer"), (dict(width="1"), "width is '1'")):
        with pytest.raises(carb.InputError, match=says):
            carb.Config(**kwargs)
    with pytest.raises(carb.InputError, match="carb.Model.load"):
        carb.Model("cpu-2t")


@pytest.mark.parametrize("call, says", [
    (lambda m: carb.screen("tiny", m, budgets={"latency": 1e16}), "between 1e-9 and 1e15"),
    (lambda m: carb.screen("tiny", m, budgets={1: 5}), "a budget's name is 1"),
    (lambda m: carb.screen("tiny", m, top_k=-1), "top_k is -1"),
    (lambda m: carb.screen("tiny", m, rank_by=None), "rank_by is None"),
    (lambda m: carb.recommend(m, carb.Config(), latency_max=1e-12), "between 1e-9 and 1e15"),
    (lambda m: carb.recommend(m, carb.Config(), batches="16"), "batches is '16', not a list"),
    (lambda m: carb.recommend(m, carb.Config(), precisions=[None]), "a precision is None"),
    (lambda m: carb.recommend(m, None), "arch is None, not a carb.Config"),
    (lambda m: carb.plan([], m, count=1), "no candidate configurations were given"),
    (lambda m: carb.plan(None, m, count=1), "configurations are None"),
    (lambda m: carb.plan("screen", m, count=2, backend="cuda", protocol={"util": "sample:1e-400"}), "protocol util"),
    (lambda m: carb.plan("screen", m, count=2, backend="cuda", protocol={"util": " 0.5"}), "protocol util"),
    (lambda m: m.predict(None), "configurations are None"),
    (lambda m: carb.configs_from_columns({"family": "bas", "depth": [18], "width": [1], "resolution": [64],
                                          "batch": [1], "precision": ["fp32"]}), "column family is 'bas'"),
    (lambda m: carb.configs_from_columns(None), "not a mapping"),
    (lambda m: carb.evaluate(m, str(SOURCE / "data" / "cpu-1t.csv"), external=True, seed=-1), "seed is -1"),
    (lambda m: carb.evaluate(m, 5), "data is 5, not a path or a list of paths"),
    (lambda m: carb.Model.train(5), "data is 5, not a path or a list of paths"),
    (lambda m: carb.Model.train("h\0.csv"), "NUL character"),
    (lambda m: m.save("ab\0cd"), "NUL character"),
    (lambda m: m.trained_on("basic-18-w1-r224-b1-fp32"), "config is 'basic-18-w1-r224-b1-fp32', not a carb.Config"),
    (lambda m: carb.arch("basic-18"), "config is 'basic-18', not a carb.Config"),
    (lambda m: carb.arch(carb.Config(), layers="yes"), "layers is 'yes', not True or False"),
    (lambda m: carb.features(None), "configurations are None"),
    # A seed or count past any float, or not finite: raw ValueError and OverflowError before.
    (lambda m: carb.evaluate(m, str(SOURCE / "data" / "cpu-1t.csv"), external=True, seed=float("nan")), "seed is nan"),
    (lambda m: carb.Model.train(str(SOURCE / "data" / "h200.csv"), seed=float("inf")), "seed is inf"),
    (lambda m: carb.Model.train(str(SOURCE / "data" / "h200.csv"), seed=10**400), "seed is 1000"),
    (lambda m: carb.Model.train(str(SOURCE / "data" / "h200.csv"), trees=float("inf")), "trees is inf"),
    (lambda m: carb.plan("screen", m, count=10**400), "count is 1000"),
])
def test_what_the_cli_refuses_python_refuses_with_a_carb_error(model, call, says):
    with pytest.raises(carb.InputError, match=says):
        call(model)


def test_one_configuration_is_a_measured_list(model):
    one = carb.Config("basic", 10, 0.25, 32, 1)  # "has no len()" before
    assert one not in carb.plan("screen", model, count=3, measured=one)["configs"]


def test_evaluate_records_its_data_and_model_as_the_cli_does(model_dir, rows_csv):
    with pytest.warns(RuntimeWarning, match="in-sample"):  # the model trained on these rows
        doc = carb.evaluate(str(model_dir), rows_csv, external=True)
        assert doc["data"] == [str(rows_csv)] and doc["model"] == str(model_dir)
        assert "model" not in carb.evaluate(carb.Model.load(model_dir), rows_csv, external=True)


def test_profile_refuses_a_platform_with_a_control_character_and_an_empty_store_name(tmp_path):
    quick = {"threads": 1, "warmup": 0, "min_passes": 2, "max_passes": 2, "cooldown": 0}
    one = [carb.Config("basic", 10, 0.25, 32, 1, "fp32")]
    with pytest.raises(carb.InputError, match="control character"):
        carb.profile(one, tmp_path / "nl.db", platform="gpu\nbox", protocol=quick, check_meter=False, progress=False)
    assert not (tmp_path / "nl.db").exists()
    with pytest.raises(carb.Error, match="file name is empty"):
        carb.profile(one, "", protocol=quick, check_meter=False, progress=False)


def test_a_flag_in_the_users_own_text_is_left_as_it_is():
    # Input errors name Python's keywords for the CLI's flags (force=True for --force), but a name the
    # user gave is quoted as given: the preset '--force' read 'force=True', a path "--old/s.db" "old/s.db".
    for name in ("--force", "--old:s.db", "--resnet", "x --seed", "a's --force", "'--seed"):
        with pytest.raises(carb.InputError, match=f"unknown preset '{name}'"):
            carb.features(name)
    with pytest.raises(carb.DataError, match="^--old/s.db: cannot open"):  # a path is a file, read as one
        carb.features("--old/s.db")
    # Outside the quotes, and past an apostrophe (which opens no quote), a flag is still a keyword.
    with pytest.raises(carb.InputError, match=r"network's build time .* needs a model \(model\)$"):
        carb.plan("tiny", build_s=5.0, strategy="space-filling", count=3)


def test_an_integer_too_long_to_print_is_refused_by_its_size():
    # repr() of an int over 4,300 digits raises ValueError: the check's own message did.
    with pytest.raises(carb.InputError, match="seed is an integer of about 5001 digits"):
        carb.Model.train(str(SOURCE / "data" / "h200.csv"), seed=10**5000)


def test_a_ctrl_c_after_the_last_check_raises_keyboard_interrupt():
    # Caught by carb's handler after the work checked for the last time, it was once swallowed, then
    # re-raised through the OS, where another call's scope could take it for a second signal.
    with pytest.raises(KeyboardInterrupt):
        carb._carb._signal_after_the_last_check(signal.SIGINT)


def test_work_stopped_inside_the_library_raises_keyboard_interrupt_not_carb_error():
    # Ninety-sixth pass's fixes: export and every dataset write stop on a signal inside their own
    # scope; what escapes is Python's KeyboardInterrupt with carb's words, as a stoppable call's is.
    with pytest.raises(KeyboardInterrupt, match="work interrupted by a signal"):
        carb._carb._stopped_inside_the_library(signal.SIGINT)


def test_a_sigterm_after_the_last_check_ends_the_process_as_sigterm_does():
    # Python leaves SIGTERM at its default: handed to Python's handler it was ignored, and the
    # process that `kill -TERM` should end ran on.
    code = "import signal, carb; carb._carb._signal_after_the_last_check(signal.SIGTERM); print('ran on')"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == -signal.SIGTERM and "ran on" not in r.stdout, (r.returncode, r.stdout, r.stderr)


def test_warnings_from_two_threads_at_once_never_hang(tmp_path):
    # Eighty-ninth hostile pass: screen and recommend warning from two threads hung the process
    # (carb's lock held while the handler waited for the GIL, which the other thread held). Run in a
    # child process so that a hang fails this test instead of stalling the suite.
    script = tmp_path / "two.py"
    script.write_text(textwrap.dedent(f"""
        import threading, warnings
        import carb
        m = carb.Model.train({str(SOURCE / "data" / "cpu-1t.csv")!r}, fast=True)
        cs = [carb.Config("basic", 18, 1.0, 512, 1)]  # past the trained ranges: both calls warn
        arch = carb.Config("basic", 18, 1.0, 512)
        def work(i):
            for _ in range(30):
                carb.screen(cs, m) if i % 2 else carb.recommend(m, arch)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
            [t.start() for t in ts]
            [t.join() for t in ts]
        print("done", len(w) >= 120)
    """))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "done True", r.stdout


def test_carb_errors_are_the_builtin_errors_a_user_catches_and_warnings_one_category(tmp_path):
    # `except ValueError` caught none of carb's errors, and carb's warnings shared RuntimeWarning with
    # everyone else's: a user could not silence or raise on carb's alone.
    with pytest.raises(ValueError, match="invalid depth 7"):
        carb.Config(depth=7)
    with pytest.raises(ValueError, match="unknown preset"):
        carb.preset("nope")
    bad = tmp_path / "bad.csv"
    bad.write_text("family,depth\nbasic,eighteen\n")
    with pytest.raises(ValueError) as raised:
        carb.Model.train(bad, fast=True)
    assert isinstance(raised.value, carb.DataError)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "manifest.json").write_text("{")
    with pytest.raises(ValueError) as raised:
        carb.Model.load(tmp_path / "m")
    assert isinstance(raised.value, carb.ModelError)
    assert issubclass(carb.MeasureError, RuntimeError) and issubclass(carb.MeasureError, carb.Error)
    assert not issubclass(carb.MeasureError, ValueError)
    assert issubclass(carb.CarbWarning, RuntimeWarning) and carb.CarbWarning.__module__ == "carb"
    h200 = carb.Model.train(SOURCE / "data" / "h200.csv", fast=True, device_memory_mb=5000)
    big = carb.Config("bottleneck", 200, 4.0, 128, 256, "fp32")
    with warnings.catch_warnings():
        warnings.simplefilter("error", carb.CarbWarning)
        with pytest.raises(carb.CarbWarning, match="needs more memory than the device has"):
            h200.predict([big])
        warnings.simplefilter("ignore", carb.CarbWarning)
        warnings.simplefilter("error", UserWarning)  # others' filters untouched: nothing raised
        assert h200.predict([big])["fits_device_memory"].tolist() == [False]


def test_a_configuration_file_by_any_name_is_read_not_taken_for_a_preset(tmp_path):
    # "runs.txt" was "unknown preset 'runs.txt'"; a .csv or a PathLike was the only way in.
    runs = tmp_path / "runs.txt"
    runs.write_text("family,depth,width,resolution,batch,precision\nbasic,18,1,32,4,fp32\n")
    assert carb.read_configs(str(runs)) == [carb.Config("basic", 18, 1.0, 32, 4, "fp32")]
    assert carb.features(str(runs))[0].shape[0] == 1
    assert carb.campaign_order(str(runs), seed=1) == [carb.Config("basic", 18, 1.0, 32, 4, "fp32")]
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        assert carb.features("runs.txt")[0].shape[0] == 1  # a file here, no directory named
        (tmp_path / "tiny").write_text("family,depth,width,resolution,batch,precision\nbasic,18,1,32,4,fp32\n")
        assert carb.features("tiny")[0].shape[0] == len(carb.preset("tiny"))  # a preset's name stays the preset
    finally:
        os.chdir(cwd)
    with pytest.raises(carb.Error, match="nope.txt"):
        carb.features(str(tmp_path / "nope.txt"))


def test_save_and_telemetry_refusals_name_python_arguments(tmp_path):
    # A README walkthrough: Model.save said "choose another out" (it has no out) and predict's
    # telemetry refusal "a model trained with --telemetry".
    m = carb.Model.train(SOURCE / "data" / "h200.csv", fast=True)
    plain = tmp_path / "plain.txt"
    plain.write_text("mine\n")
    with pytest.raises(carb.InputError, match=r"is not a model bundle directory; choose another path, or pass force=True"):
        m.save(plain)
    assert plain.read_text() == "mine\n"
    with pytest.raises(carb.InputError, match=r"\(or use a model trained with telemetry=True\)$"):
        m.predict("tiny", telemetry=[(1, 2)] * len(carb.preset("tiny")))
