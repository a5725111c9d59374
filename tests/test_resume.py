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
