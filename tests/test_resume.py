"""SIGKILL a training run mid-way; --resume must end with the uninterrupted run's weights."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import numpy as np

from tests.conftest import ROOT

SETTINGS = ["--set", "embedding.dim=8", "--set", "encoder.units=8", "--set", "head.hidden=8",
            "--set", "train.batch_size=4", "--set", "train.epochs=5",
            "--set", "train.patience=99", "--set", "encoder.dropout=0.3"]

WEIGHTS = r"""
import json, sys, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import keras
import elman.models.sentiment_classifier
import elman.models.encoders
import elman.text.tokenize
out = {}
for path in sys.argv[1:]:
    m = keras.saving.load_model(path, safe_mode=True)
    # seed-generator states are not stored in .keras files (Keras 3.15); skip them
    out[path] = [[v.path, v.numpy().tolist()] for v in m.variables
                 if not v.path.endswith("seed_generator_state")]
    if getattr(m, "optimizer", None) is not None:
        out[path] += [[v.path, v.numpy().tolist()] for v in m.optimizer.variables]
print(json.dumps(out))
"""


def command(tiny, out, reports, resume=False):
    return [sys.executable, "-m", "elman.cli", "train", "sentiment",
            "--data", str(tiny["train"]), "--validation", str(tiny["validation"]),
            "--out", str(out), "--reports", str(reports), *SETTINGS] + (
                ["--resume"] if resume else [])


@pytest.mark.slow
def test_killed_run_resumes_to_identical_weights(tmp_path, tiny_sentiment):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CI="1")
    straight = tmp_path / "straight"
    done = subprocess.run(command(tiny_sentiment, straight, tmp_path / "rep"), cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]

    killed = tmp_path / "killed"
    proc = subprocess.Popen(command(tiny_sentiment, killed, tmp_path / "rep2"), cwd=ROOT,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = killed / "checkpoints" / "state.json"
    deadline = time.monotonic() + 400
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if state.is_file() and json.loads(state.read_text())["epoch"] >= 2:
                break
            time.sleep(0.02)
        assert proc.poll() is None, "training finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    epoch_at_kill = json.loads(state.read_text())["epoch"]
    assert 2 <= epoch_at_kill < 5
    assert not (killed / "model.keras").exists()

    resumed = subprocess.run(command(tiny_sentiment, killed, tmp_path / "rep2", resume=True),
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming after epoch {epoch_at_kill}" in resumed.stdout + resumed.stderr

    last = "checkpoints/epoch-005.keras"
    paths = [straight / "model.keras", killed / "model.keras", straight / last, killed / last]
    loaded = subprocess.run([sys.executable, "-c", WEIGHTS, *map(str, paths)], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=300)
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    weights = json.loads(loaded.stdout.strip().splitlines()[-1])
    for a, b in ((paths[0], paths[1]), (paths[2], paths[3])):
        wa, wb = weights[str(a)], weights[str(b)]
        assert len(wa) == len(wb) and len(wa) > 5
        for (name, x), (_, y) in zip(wa, wb):
            np.testing.assert_array_equal(np.array(x), np.array(y), err_msg=name)
    history = [json.loads((d / "checkpoints" / "state.json").read_text())["history"]
               for d in (straight, killed)]
    assert history[0] == history[1]


def test_an_epoch_far_past_the_time_budget_is_cut_inside_and_resumes(tiny_sentiment, tmp_path,
                                                                     capsys, monkeypatch):
    """A budget overrun inside an epoch (the grace set to 0 here; a real run allows a
    tenth of the budget, at least a minute) stops after the batch that overran it: Keras
    validates that part epoch, it commits like a whole one, and --resume goes on with
    the next epoch."""
    from elman import cli
    from elman.core.train import EpochCommitter

    monkeypatch.setattr(EpochCommitter, "CUT_GRACE_SECONDS", 0.0)
    run, reports = tmp_path / "run", tmp_path / "reports"
    args = ["train", "sentiment", "--data", str(tiny_sentiment["train"]), "--validation",
            str(tiny_sentiment["validation"]), "--out", str(run), "--reports", str(reports),
            *SETTINGS]
    assert cli.main(args + ["--set", "train.max_minutes=0.000001"]) == 0
    log = capsys.readouterr().out
    train_rows = len(tiny_sentiment["train"].read_text(encoding="utf-8").splitlines()) - 1
    batches = -(-train_rows // 4)  # batch_size 4
    assert batches > 1
    assert (f"stopped inside epoch 1, after 1 of {batches} batches: train.max_minutes=1e-06 "
            "was overrun; that part epoch was validated and kept (--resume continues with "
            "epoch 2)") in log
    state = json.loads((run / "checkpoints" / "state.json").read_text(encoding="utf-8"))
    assert state["epoch"] == 1 and state["cut_epoch"] == {"epoch": 1, "batches": 1,
                                                          "of": batches}
    assert len(state["history"]["val_accuracy"]) == 1  # the part epoch was validated
    import keras

    import elman.models

    elman.models.import_all()
    import elman.text.tokenize  # noqa: F401

    saved = keras.saving.load_model(run / "checkpoints" / "epoch-001.keras", safe_mode=True)
    assert int(saved.optimizer.iterations.numpy()) == 1  # one batch was trained, not four
    metrics = json.loads(next(reports.rglob("metrics.json")).read_text(encoding="utf-8"))
    assert metrics["cut_epoch"] == {"epoch": 1, "batches": 1, "of": batches}
    report = next(reports.rglob("report.md")).read_text(encoding="utf-8")
    assert f"epoch 1 stopped by the time budget after 1 of {batches} batches" in report
    monkeypatch.setattr(EpochCommitter, "CUT_GRACE_SECONDS", 60.0)
    assert cli.main(args + ["--resume", "--set", "train.epochs=2"]) == 0
    assert "resuming after epoch 1" in capsys.readouterr().out
    state = json.loads((run / "checkpoints" / "state.json").read_text(encoding="utf-8"))
    assert state["epoch"] == 2 and len(state["history"]["val_accuracy"]) == 2
