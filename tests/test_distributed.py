"""Distributed training: the launcher, chief-only writes, multi-worker and mirrored runs."""

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from elman.core import distributed
from tests.conftest import ROOT, TINY_SETTINGS

# A worker: runs `elman train` and, after training, records where it wrote and the
# trained weights (the non-chief's own folder is removed when it finishes).
WORKER = r"""
import json, os, sys
import numpy as np
from elman.core import train as train_stage
record = sys.argv[1]
original = train_stage.fit

def fit(*args, **kwargs):
    result = original(*args, **kwargs)
    index = json.loads(os.environ["TF_CONFIG"])["task"]["index"]
    np.savez(f"{record}/weights-{index}.npz",
             *[v.numpy() for v in result.model.weights
               if not v.path.endswith("seed_generator_state")])
    with open(f"{record}/run_dir-{index}.txt", "w") as handle:
        handle.write(str(args[6]) if len(args) > 6 else str(kwargs["run_dir"]))
    return result

train_stage.fit = fit
from elman.cli import main
sys.exit(main(sys.argv[2:]))
"""


def test_free_ports_are_distinct_and_bindable():
    import socket

    ports = distributed.free_ports(4)
    assert len(set(ports)) == 4
    for port in ports:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))


def test_chief_is_worker_zero_unless_a_chief_is_named():
    two = ["127.0.0.1:1", "127.0.0.1:2"]
    assert distributed.is_chief(distributed.tf_config(two, 0))
    assert not distributed.is_chief(distributed.tf_config(two, 1))
    named = {"cluster": {"chief": ["h:1"], "worker": ["h:2"]},
             "task": {"type": "worker", "index": 0}}
    assert not distributed.is_chief(named)
    named["task"] = {"type": "chief", "index": 0}
    assert distributed.is_chief(named)


def test_bad_tf_config_is_a_user_error(monkeypatch):
    from elman.errors import UserError

    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"worker": ["a:1"]}, "task": {"index": 3}}')
    with pytest.raises(UserError, match="TF_CONFIG is not valid"):
        distributed.read_tf_config()


def test_non_chief_writes_to_a_temporary_folder_that_cleanup_removes(tmp_path, monkeypatch):
    config = distributed.tf_config(["127.0.0.1:1", "127.0.0.1:2"], 1)
    monkeypatch.setenv("TF_CONFIG", json.dumps(config))
    run, report, cleanup = distributed.worker_dirs(tmp_path / "run", tmp_path / "rep" / "t" / "r")
    assert tmp_path not in run.parents and tmp_path not in report.parents
    run.mkdir(parents=True)
    (run / "model.keras").write_text("x")
    root = run.parent
    cleanup()
    assert not root.exists()
    assert not (tmp_path / "run").exists()
    monkeypatch.setenv("TF_CONFIG", json.dumps(distributed.tf_config(["a:1", "a:2"], 0)))
    run, report, cleanup = distributed.worker_dirs(tmp_path / "run", tmp_path / "rep")
    assert run == tmp_path / "run" and report == tmp_path / "rep"


def test_launcher_gives_each_worker_its_tf_config_and_stops_them_by_pid(tmp_path):
    script = ("import json, os, sys, time\n"
              "c = json.loads(os.environ['TF_CONFIG'])\n"
              "print(c['task']['index'], len(c['cluster']['worker']), flush=True)\n"
              "time.sleep(0 if c['task']['index'] == 0 else 120)\n")
    began = time.monotonic()
    results = distributed.launch([sys.executable, "-c", script], workers=2, deadline_s=3,
                                 log_dir=tmp_path)
    assert time.monotonic() - began < 30
    assert results[0].returncode == 0 and not results[0].stopped
    assert results[1].stopped and results[1].returncode is None
    for r in results:
        assert r.log.read_text().split() == [str(r.index), "2"]
        with pytest.raises(ProcessLookupError):
            os.kill(r.pid, 0)


@pytest.mark.slow
def test_two_workers_train_to_identical_weights_and_only_the_chief_writes(tmp_path,
                                                                           tiny_sentiment):
    record = tmp_path / "record"
    record.mkdir()
    worker_tmp = tmp_path / "worker-tmp"
    worker_tmp.mkdir()
    run, reports = tmp_path / "run", tmp_path / "reports"
    argv = [sys.executable, "-c", WORKER, str(record), "train", "sentiment",
            "--strategy", "multi-worker", "--data", str(tiny_sentiment["train"]),
            "--validation", str(tiny_sentiment["validation"]), "--out", str(run),
            "--reports", str(reports), *TINY_SETTINGS]
    env = {"TF_CPP_MIN_LOG_LEVEL": "3", "CI": "1", "TMPDIR": str(worker_tmp),
           "PYTHONPATH": str(ROOT)}
    began = time.monotonic()
    results = distributed.launch(argv, workers=2, deadline_s=400, log_dir=tmp_path / "logs",
                                 env=env, cwd=ROOT)
    assert time.monotonic() - began < 420  # stopped by PID at the deadline at the latest
    for r in results:
        assert r.returncode == 0, r.log.read_text()[-3000:]
        with pytest.raises(ProcessLookupError):
            os.kill(r.pid, 0)
    log0 = results[0].log.read_text()
    assert "2 replica(s)" in log0 and "epoch 2/2" in log0

    # both workers trained the same model
    a, b = (np.load(record / f"weights-{i}.npz") for i in (0, 1))
    assert len(a.files) == len(b.files) > 5
    for key in a.files:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)

    # the chief wrote the run folder and the report; the other worker wrote into a
    # temporary folder that is gone now
    assert (record / "run_dir-0.txt").read_text() == str(run)
    other = Path((record / "run_dir-1.txt").read_text())
    assert worker_tmp in other.parents
    assert not other.exists()
    assert [p for p in worker_tmp.iterdir() if p.name.startswith("elman-")] == []
    assert (run / "run.json").is_file() and (run / "model.keras").is_file()
    assert (reports / "sentiment" / "run" / "report.md").is_file()
    state = json.loads((run / "checkpoints" / "state.json").read_text())
    assert state["epoch"] == 2 and len(state["history"]["val_loss"]) == 2


MIRRORED = r"""
import sys
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
from elman.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_mirrored_strategy_trains_on_two_logical_cpus(tmp_path, tiny_sentiment):
    import subprocess

    run, reports = tmp_path / "run", tmp_path / "reports"
    done = subprocess.run(
        [sys.executable, "-c", MIRRORED, "train", "sentiment", "--strategy", "mirrored",
         "--data", str(tiny_sentiment["train"]), "--validation",
         str(tiny_sentiment["validation"]), "--out", str(run), "--reports", str(reports),
         *TINY_SETTINGS],
        cwd=ROOT, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CI="1"),
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "strategy mirrored: 2 replica(s)" in done.stdout
    metrics = json.loads((reports / "sentiment" / "run" / "metrics.json").read_text())
    device = metrics["reproducibility"]["device"]
    assert device["replicas"] == 2 and device["strategy"] == "mirrored"
    assert (run / "run.json").is_file()
