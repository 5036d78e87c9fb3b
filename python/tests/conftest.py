# Shared fixtures: a small model trained once per session on the head of the shipped CPU data
# (real measurements; few trees, so the suite stays quick).
import os
import pathlib

import pytest

import carb

SOURCE = pathlib.Path(os.environ.get("CARB_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="session")
def rows_csv(tmp_path_factory):
    lines = (SOURCE / "data" / "cpu-2t.csv").read_text().splitlines()
    path = tmp_path_factory.mktemp("data") / "rows.csv"
    path.write_text("\n".join(lines[:600]) + "\n")
    return path


@pytest.fixture(scope="session")
def model_dir(rows_csv, tmp_path_factory):
    out = tmp_path_factory.mktemp("models") / "small"
    carb.Model.train(rows_csv, trees=30).save(out)
    return out


@pytest.fixture(scope="session")
def model(model_dir):
    return carb.Model.load(model_dir)
