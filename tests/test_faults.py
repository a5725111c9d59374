"""Fault injection: a run killed at any point resumes to the uninterrupted run's weights;
a full disk is one clear line and a resumable run.

Each fault runs `elman train` in a fresh process whose code is patched from outside
(no test hooks in the product): the patched function sends the process SIGKILL.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.test_resume import SETTINGS, WEIGHTS, command

KILL = r"""
import os, signal, sys
point = sys.argv[1]
import elman.core.run as run_module, elman.core.train as train_module
import elman.core.committer as committer_module
from elman.tasks.base import Task

def die(*_, **__):
    os.kill(os.getpid(), signal.SIGKILL)

if point == "during-epoch":  # epoch 2, batch 3
    original = train_module.EpochCommitter.on_train_batch_end
    def batch_end(self, batch, logs=None):
        if self.state["epoch"] == 1 and batch == 2:
            die()
        return original(self, batch, logs)
    train_module.EpochCommitter.on_train_batch_end = batch_end
elif point == "before-first-epoch":  # epoch 1, batch 2
    original = train_module.EpochCommitter.on_train_batch_end
    def batch_end(self, batch, logs=None):
        if self.state["epoch"] == 0 and batch == 1:
            die()
        return original(self, batch, logs)
    train_module.EpochCommitter.on_train_batch_end = batch_end
elif point == "during-commit":  # epoch 3's model file is written, its state is not
    original = committer_module.commit_epoch
    def commit(ckpt_dir, state, files):
        if state["epoch"] == 3:
            die()
        return original(ckpt_dir, state, files)
    committer_module.commit_epoch = commit
elif point == "after-model-save":
    Task.export = die
elif point == "during-report":
    run_module._publish = die
from elman import cli
sys.exit(cli.main(sys.argv[2:]))
"""

POINTS = ["during-epoch", "before-first-epoch", "during-commit", "after-model-save",
          "during-report"]


def _env():
    return dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CI="1")


def _weights(paths):
    done = subprocess.run([sys.executable, "-c", WEIGHTS, *map(str, paths)], cwd=ROOT,
                          env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def straight(tmp_path_factory, tiny_sentiment_module):
    root = tmp_path_factory.mktemp("straight")
    done = subprocess.run(command(tiny_sentiment_module, root / "run", root / "rep"),
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "run"


@pytest.fixture(scope="module")
def tiny_sentiment_module(tmp_path_factory):
    from tests.conftest import NEGATIVE, POSITIVE, write_csv

    root = tmp_path_factory.mktemp("tiny")
    rows = [(t, "positive") for t in POSITIVE] + [(t, "negative") for t in NEGATIVE]
    return {"train": write_csv(root / "train.csv", rows * 3),
            "validation": write_csv(root / "validation.csv", rows)}


@pytest.mark.slow
@pytest.mark.parametrize("point", POINTS)
def test_killed_anywhere_resumes_to_the_same_weights(point, straight, tiny_sentiment_module,
                                                     tmp_path):
    run, reports = tmp_path / "run", tmp_path / "rep"
    args = command(tiny_sentiment_module, run, reports)[3:]  # after `-m elman.cli`
    killed = subprocess.run([sys.executable, "-c", KILL, point, *args], cwd=ROOT, env=_env(),
                            capture_output=True, text=True, timeout=600)
    assert killed.returncode == -9, (point, killed.stderr[-2000:])
    assert not (run / "run.json").exists()
    resumed = subprocess.run(command(tiny_sentiment_module, run, reports, resume=True),
                             cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    report = reports / "sentiment" / "run"
    for name in ("report.md", "report.html", "metrics.json", "predictions.tsv"):
        assert (report / name).is_file(), name  # the report folder is complete
    assert not list(reports.glob("sentiment/.*")), "a staging folder was left behind"
    assert not [p for p in run.rglob("*") if ".tmp" in p.name], "temporary files left"
    weights = _weights([straight / "model.keras", run / "model.keras"])
    a, b = weights[str(straight / "model.keras")], weights[str(run / "model.keras")]
    assert len(a) == len(b) > 5
    for (name, x), (_, y) in zip(a, b):
        np.testing.assert_array_equal(np.array(x), np.array(y), err_msg=f"{point}: {name}")


FULL_DISK = r"""
import resource, sys
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from elman import cli
sys.exit(cli.main(sys.argv[2:]))
"""


@pytest.mark.slow
def test_a_full_disk_is_one_line_and_the_run_resumes(tiny_sentiment_module, tmp_path):
    run, reports = tmp_path / "run", tmp_path / "rep"
    args = command(tiny_sentiment_module, run, reports)[3:]
    full = subprocess.run([sys.executable, "-c", FULL_DISK, str(64 * 1024), *args], cwd=ROOT,
                          env=_env(), capture_output=True, text=True, timeout=600)
    assert full.returncode == 2, full.stderr[-3000:]
    assert "Traceback" not in full.stderr
    errors = [line for line in full.stderr.splitlines() if line.startswith("elman: error:")]
    assert len(errors) == 1 and "cannot write" in errors[0] and "MiB free" in errors[0]
    assert not [p for p in run.rglob("*") if ".tmp" in p.name], "temporary files left"
    resumed = subprocess.run(command(tiny_sentiment_module, run, reports, resume=True),
                             cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert (run / "run.json").is_file()
