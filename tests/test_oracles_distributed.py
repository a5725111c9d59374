"""Distributed training equals single-device training on the same global batches (slow).

Two workers on 127.0.0.1 (`--strategy multi-worker`, elman's own loop in
core/multi_worker.py) and two logical CPU devices (`--strategy mirrored`, Keras' fit),
each against a plain run of the same config in this process: the same planned global
batches, so after two epochs the weights, the Adam moments and the logged history must
agree to float32 rounding. Only then is "the workers agree with each other" (checked in
test_distributed.py) worth anything: a wrong loss scaling or split would make both
workers equally wrong.

Settings: no dropout (the replicas would draw other masks than the single device) and
`train.clipnorm = 0` (Keras clips each replica's share of the gradient before the
all-reduce, see core/multi_worker.py, so with clipping active the runs may differ by
design). Multi-worker uses a global batch of 7, split 3 + 4, so that an example's weight
in the gradient depends on dividing by the global count; Adam would not see a constant
factor in the gradient, but the logged loss does.
"""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from elman.core import distributed
from tests.conftest import ROOT, TINY_SETTINGS
from tests.test_distributed import MIRRORED, WORKER

pytestmark = pytest.mark.slow

EXACT = ["--set", "encoder.dropout=0", "--set", "head.dropout=0", "--set", "train.clipnorm=0",
         "--set", "train.patience=99"]
HISTORY_KEYS = ("loss", "accuracy", "val_loss", "val_accuracy")


def _args(tiny, run, reports, batch_size, validation="validation"):
    return ["train", "sentiment", "--data", str(tiny["train"]), "--validation",
            str(tiny[validation]), "--out", str(run), "--reports", str(reports),
            *TINY_SETTINGS, *EXACT, "--set", f"train.batch_size={batch_size}"]


def _checkpoint(run, epoch=2):
    """{normalised variable path: value} of the committed model and its optimizer."""
    import keras

    from elman import models

    models.import_all()
    model = keras.saving.load_model(run / "checkpoints" / f"epoch-{epoch:03d}.keras",
                                    safe_mode=True)
    out = {}
    for v in list(model.weights) + list(model.optimizer.variables):
        if not v.path.endswith("seed_generator_state"):
            out[re.sub(r"_\d+/", "/", v.path)] = v.numpy()
    return out


def _history(run):
    state = json.loads((run / "checkpoints" / "state.json").read_text(encoding="utf-8"))
    assert state["epoch"] == 2
    return state["history"]


def _single_device(tiny, root, batch_size, validation="validation", extra=()):
    from elman import cli

    run = root / f"single-{batch_size}"
    args = _args(tiny, run, root / "reports-single", batch_size, validation) + list(extra)
    assert cli.main(args) == 0
    return run


def _assert_same_training(got, want, atol, steps):
    a, b = _checkpoint(got), _checkpoint(want)
    assert sorted(a) == sorted(b) and len(a) > 10
    (iteration,) = [k for k in a if k.endswith("/iteration")]  # adam/ or fused_adam/
    assert int(a[iteration]) == int(b[iteration]) == 2 * steps
    for key in a:
        np.testing.assert_allclose(a[key], b[key], rtol=0, atol=atol, err_msg=key)
    ha, hb = _history(got), _history(want)
    for key in HISTORY_KEYS:
        np.testing.assert_allclose(ha[key], hb[key], rtol=1e-5, err_msg=key)
    # training moved the weights far more than the tolerance: the comparison can tell
    first = _checkpoint(want, epoch=1)
    assert max(float(np.abs(b[k] - first[k]).max()) for k in b) > 1000 * atol


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tests.conftest import NEGATIVE, POSITIVE, write_csv

    root = tmp_path_factory.mktemp("distributed-oracle")
    rows = [(t, "positive") for t in POSITIVE] + [(t, "negative") for t in NEGATIVE]
    return {"root": root, "train": write_csv(root / "train.csv", rows * 3),
            "validation": write_csv(root / "validation.csv", rows),
            "validation7": write_csv(root / "validation7.csv", rows[::3])}


def test_two_workers_equal_one_device_on_the_same_global_batches(tiny):
    """60 examples in global batches of 7 (the last of 4): each worker takes a contiguous
    slice of every batch (3 + 4); after 18 steps the chief's committed weights, Adam
    moments and history equal those of a plain single-device run (atol 1e-5).

    Mutations that fail here (tried, core/multi_worker.py `replica_losses`): each
    replica's loss divided by its own example count (`/ n_all` → `/ n`: every replica
    then weighs like the whole batch); Keras' replica scaling not undone (`* replicas`
    dropped: the logged loss halves); both workers fed the first slice
    (`first = context.input_pipeline_id * local` → `first = 0`).
    """
    root = tiny["root"]
    record, worker_tmp = root / "record", root / "worker-tmp"
    record.mkdir()
    worker_tmp.mkdir()
    run = root / "multi-worker"
    argv = [sys.executable, "-c", WORKER, str(record),
            *_args(tiny, run, root / "reports-mw", 7), "--strategy", "multi-worker"]
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {"TF_CPP_MIN_LOG_LEVEL": "3", "CI": "1", "TMPDIR": str(worker_tmp),
           "PYTHONPATH": path}
    results = distributed.launch(argv, workers=2, deadline_s=500, log_dir=root / "logs",
                                 env=env, cwd=ROOT)
    for r in results:
        assert r.returncode == 0, r.log.read_text()[-3000:]
    assert "2 replica(s)" in results[0].log.read_text()
    single = _single_device(tiny, root, 7)
    _assert_same_training(run, single, atol=1e-5, steps=9)  # 8 batches of 7, one of 4


def test_mirrored_on_two_logical_cpus_equals_one_device(tiny):
    """`elman train --strategy mirrored` on two logical CPU devices, global batches of 8
    split 4 + 4 (the last 2 + 2), with adversarial training on (the sentiment model's
    own train_step) and 7 validation examples (one batch, split 4 + 3): the committed
    weights, Adam moments and history equal those of a plain single-device run (atol
    1e-5).

    Training batches split evenly on purpose: on an uneven split Keras averages the
    replicas' mean losses, which weighs the examples of the smaller share more (a
    global batch of 7 on two devices ends 0.036 away from the single-device weights
    after 18 steps); elman's multi-worker loop divides by the global count instead.

    Mutations that fail here (tried): the replica scaling of the logged loss not undone
    (`loss * replicas` → `loss`, models/sentiment_classifier.py `train_step`); the
    build before fit skipped (`_build_before_fit` returning at once, core/train.py:
    Keras then fails on the uneven validation batch).
    """
    root = tiny["root"]
    run = root / "mirrored"
    args = _args(tiny, run, root / "rep-m", 8, "validation7") + [
        "--set", "embedding.adversarial=0.1"]
    done = subprocess.run([sys.executable, "-c", MIRRORED, *args, "--strategy", "mirrored"],
                          cwd=ROOT,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CI="1"),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "strategy mirrored: 2 replica(s)" in done.stdout
    single = _single_device(tiny, root, 8, "validation7",
                            ["--set", "embedding.adversarial=0.1"])
    _assert_same_training(run, single, atol=1e-5, steps=8)  # 7 batches of 8, one of 4
