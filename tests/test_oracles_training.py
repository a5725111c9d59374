"""Independent oracles for training behaviours the README promises (fast ones).

- `train.clipnorm` and `train.weight_decay`: the house optimizer (`core.train.adam`, built
  from a config parsed with `--set`) against Adam, global-norm clipping and decoupled
  weight decay written out here in float64 NumPy, on gradients chosen by hand.
- The NaN-loss stop: a run whose weights turn NaN in epoch 2 stops with its message, and
  the last good checkpoint (epoch 1) is committed, intact and resumable.
- Sentiment word dropout (`embedding.dropout`): the share of dropped token vectors over
  many batches, within a binomial bound; kept vectors are scaled by 1 / (1 - rate).
- `reports/index.md`: newest run first.
"""

import dataclasses
import math
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

from elman import config as config_lib
from elman.core.train import adam

# --------------------------------------------------- clipping and weight decay by hand

# Gradients for a kernel [3, 2] and a bias [2], chosen so that their global norm is
# sometimes far above, sometimes below the clipping threshold 0.5.
GRADIENTS = [
    (np.array([[3.0, -4.0], [0.0, 1.0], [2.0, 2.0]]), np.array([1.0, -1.0])),  # norm 6.1
    (np.array([[0.1, 0.0], [-0.2, 0.1], [0.0, 0.05]]), np.array([0.1, 0.0])),  # norm 0.27
    (np.array([[-8.0, 1.0], [4.0, 0.0], [0.5, -2.0]]), np.array([0.0, 3.0])),  # norm 9.7
    (np.array([[0.3, 0.2], [0.0, -0.1], [0.1, 0.1]]), np.array([-0.2, 0.1])),  # norm 0.46
]
START_KERNEL = np.array([[0.5, -0.3], [0.2, 0.8], [-1.0, 0.4]])
START_BIAS = np.array([0.25, -0.5])


def adam_by_hand(lr, clipnorm, weight_decay, steps):
    """Keras' Adam (beta 0.9 / 0.999, epsilon 1e-7 added to sqrt(v)), with the gradients
    first scaled to a global norm of at most `clipnorm`, then each weight first shrunk by
    lr * weight_decay * weight (decoupled, AdamW), in float64. Returns the weights after
    each step and the global norm of each gradient Adam saw."""
    weights = [START_KERNEL.copy(), START_BIAS.copy()]
    m = [np.zeros_like(w) for w in weights]
    v = [np.zeros_like(w) for w in weights]
    trajectory, seen_norms = [], []
    for t, grads in enumerate(GRADIENTS[:steps], start=1):
        norm = math.sqrt(sum(float((g ** 2).sum()) for g in grads))
        if clipnorm:
            grads = [g * clipnorm / max(norm, clipnorm) for g in grads]
        seen_norms.append(math.sqrt(sum(float((g ** 2).sum()) for g in grads)))
        weights = [w - lr * weight_decay * w for w in weights]
        alpha = lr * math.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        for i, g in enumerate(grads):
            m[i] = m[i] + (g - m[i]) * (1 - 0.9)
            v[i] = v[i] + (g * g - v[i]) * (1 - 0.999)
            weights[i] = weights[i] - m[i] * alpha / (np.sqrt(v[i]) + 1e-7)
        trajectory.append([w.copy() for w in weights])
    return trajectory, seen_norms


def house_optimizer_steps(overrides):
    """The weights after each step of the optimizer `adam(cfg)` builds for a sentiment
    config with these `--set` overrides."""
    cfg = config_lib.load_config("sentiment", overrides=overrides).train
    optimizer = adam(cfg)
    kernel = keras.Variable(START_KERNEL.astype("float32"))
    bias = keras.Variable(START_BIAS.astype("float32"))
    out = []
    for grads in GRADIENTS:
        optimizer.apply([tf.constant(g, tf.float32) for g in grads], [kernel, bias])
        out.append([kernel.numpy().astype("float64"), bias.numpy().astype("float64")])
    return out


@pytest.mark.parametrize("clipnorm, weight_decay", [(0.5, 0.0), (0.0, 0.1), (0.5, 0.1)])
def test_clipnorm_and_weight_decay_match_adam_by_hand(clipnorm, weight_decay):
    """The applied updates equal Adam on gradients clipped to global norm `clipnorm`
    (every gradient Adam saw has norm <= 0.5) with decoupled weight decay, four steps;
    the unclipped / undecayed trajectory is far from it, so the test can tell.

    Mutations that fail here (tried, core/train.py `adam`): `global_clipnorm=` →
    `clipnorm=` (per-variable clipping); the clipping dropped (`global_clipnorm=None`);
    the weight decay dropped (`weight_decay=None`); the decay doubled
    (`weight_decay=2 * cfg.weight_decay`).
    """
    lr = 0.05
    got = house_optimizer_steps([f"train.learning_rate={lr}", f"train.clipnorm={clipnorm}",
                                 f"train.weight_decay={weight_decay}", "train.ema=0",
                                 "train.lr_decay=1"])
    want, seen = adam_by_hand(lr, clipnorm, weight_decay, len(GRADIENTS))
    for step, (g, w) in enumerate(zip(got, want)):
        for a, b in zip(g, w):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"step {step + 1}")
    if clipnorm:
        assert max(seen) <= clipnorm * (1 + 1e-12)
    other, _ = adam_by_hand(lr, 0.0 if clipnorm else 0.5, 0.0 if weight_decay else 0.1,
                            len(GRADIENTS))
    assert max(np.abs(a - b).max() for a, b in zip(other[-1], want[-1])) > 1e-3


def test_clipnorm_zero_means_no_clipping():
    """train.clipnorm = 0 turns clipping off: Adam on the raw gradients (norms up to 9.7)."""
    got = house_optimizer_steps(["train.learning_rate=0.05", "train.clipnorm=0",
                                 "train.weight_decay=0"])
    want, seen = adam_by_hand(0.05, 0.0, 0.0, len(GRADIENTS))
    assert max(seen) > 9
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------ NaN stop

def _tiny_data():
    rng = np.random.default_rng(0)
    rows = [rng.integers(2, 20, size=rng.integers(1, 6)).tolist() for _ in range(24)]
    labels = np.array([int(sum(r) % 2) for r in rows])
    return tf.ragged.constant(rows, dtype=tf.int64), tf.constant(labels), [len(r) for r in rows]


def _tiny_builder(cfg):
    def build():
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.layers.Embedding(20, 4, mask_zero=True),
                                  keras.layers.GlobalAveragePooling1D(),
                                  keras.layers.Dense(2, activation="softmax")])
        model.compile(adam(cfg), "sparse_categorical_crossentropy")
        return model
    return build


class PoisonAtEpoch(keras.callbacks.Callback):
    """At the start of `epoch` (0-based) records the weights, then makes one weight NaN."""

    def __init__(self, epoch):
        super().__init__()
        self.epoch, self.before = epoch, None

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.epoch:
            self.before = [v.numpy().copy() for v in self.model.weights]
            variable = self.model.trainable_variables[-1]
            variable.assign(np.full(variable.shape, np.nan, "float32"))


def test_nan_loss_stops_with_its_message_and_keeps_the_last_good_epoch(tmp_path, monkeypatch):
    """The weights turn NaN at the start of epoch 2: training stops at epoch 2, batch 1
    with the documented message; state.json still points at epoch 1, whose files are
    intact (checksums) and hold exactly the weights epoch 2 started from; nothing of
    epoch 2 was committed; `resume` continues from epoch 1 to the end.

    Mutations that fail here (tried, core/train.py): the NaN check in
    `EpochCommitter.on_train_batch_end` disabled; the early return for a NaN run in
    `on_epoch_end` removed (epoch 2 is committed); the UserError in `_after_epochs`
    not raised.
    """
    from elman.core.batching import dataset_from_plan, plan_eval
    from elman.core.train import fit, read_state
    from elman.errors import UserError

    features, labels, lengths = _tiny_data()
    validation = dataset_from_plan(features, labels, plan_eval(lengths, 8))
    cfg = dataclasses.replace(config_lib.TrainConfig(), epochs=3, batch_size=4, patience=9,
                              learning_rate=0.01, max_minutes=0.0)
    poison = PoisonAtEpoch(1)
    original_fit = keras.Model.fit
    monkeypatch.setattr(keras.Model, "fit", lambda self, *a, callbacks=(), **k: original_fit(
        self, *a, callbacks=[poison, *callbacks], **k))
    with pytest.raises(UserError) as info:
        fit(_tiny_builder(cfg), features, labels, lengths, validation, cfg, tmp_path,
            log=lambda m: None, tensorboard=False)
    ckpt = tmp_path / "checkpoints"
    assert str(info.value).startswith(
        "training stopped: the loss became NaN at epoch 2, batch 1; lower "
        "train.learning_rate or keep train.clipnorm on")
    assert f"(the last good epoch is kept in {ckpt})" in str(info.value)

    state = read_state(tmp_path)  # checks every committed file's SHA-256
    assert state["epoch"] == 1 and state["files"]["model"] == "epoch-001.keras"
    assert not list(ckpt.glob("*002*"))
    assert len(state["history"]["loss"]) == 1
    saved = keras.saving.load_model(ckpt / "epoch-001.keras", safe_mode=True)
    assert len(saved.weights) == len(poison.before)
    for got, want in zip(saved.weights, poison.before):
        assert np.isfinite(got.numpy()).all()
        np.testing.assert_array_equal(got.numpy(), want)
    csv = (tmp_path / "logs" / "training.csv").read_text(encoding="utf-8").splitlines()
    assert [row.split(",")[0] for row in csv[1:]] == ["1"]

    monkeypatch.setattr(keras.Model, "fit", original_fit)
    result = fit(_tiny_builder(cfg), features, labels, lengths, validation, cfg, tmp_path,
                 resume=True, log=lambda m: None, tensorboard=False)
    assert result.epochs_run == 3
    assert all(np.isfinite(v.numpy()).all() for v in result.model.weights)


# -------------------------------------------------------------- sentiment word dropout

def test_sentiment_word_dropout_drops_that_share_of_whole_token_vectors():
    """`embedding.dropout = 0.3` in a sentiment config: over 40 training-mode batches
    (about 29,000 real tokens) the share of token vectors zeroed whole is 0.3 within six
    binomial standard deviations, every other vector is the embedding times 1 / 0.7, and
    at inference nothing is dropped.

    Mutations that fail here (tried): the noise shape dropped (`noise_shape=(None,
    None, 1)` → `None`, models/sentiment_classifier.py: single numbers are dropped, not
    whole vectors); the config's rate not passed on (`word_dropout=cfg.embedding.dropout`
    → `cfg.embedding.unk_dropout`, tasks/sentiment/model.py); the rate halved in the
    layer (`Dropout(word_dropout / 2, ...)`).
    """
    from elman.tasks.sentiment.model import classifier_from_config

    rate = 0.3
    cfg = config_lib.load_config("sentiment", overrides=[
        f"embedding.dropout={rate}", "embedding.dim=6", "encoder.units=4", "head.hidden=4"])
    keras.utils.set_random_seed(0)
    model = classifier_from_config(cfg, vocabulary_size=40, num_classes=2)
    dropped_layer = keras.Model(model.inputs, model.get_layer("word_dropout").output)
    embedding = keras.Model(model.inputs, model.get_layer("embedding").output)

    rng = np.random.default_rng(0)
    ids = rng.integers(1, 40, size=(64, 12)).astype("int32")
    for row, length in enumerate(rng.integers(3, 13, size=64)):
        ids[row, length:] = 0  # right padding
    real = ids != 0
    vectors = np.asarray(embedding([ids]))
    np.testing.assert_array_equal(np.asarray(dropped_layer([ids], training=False))[real],
                                  vectors[real])
    dropped = total = 0
    for _ in range(40):
        out = np.asarray(dropped_layer([ids], training=True))[real]
        zero = (out == 0).all(axis=-1)
        np.testing.assert_allclose(out[~zero], vectors[real][~zero] / (1 - rate), rtol=1e-5)
        assert not ((out == 0).any(axis=-1) & ~zero).any()  # whole vectors or nothing
        dropped += int(zero.sum())
        total += int(real.sum())
    share = dropped / total
    bound = 6 * math.sqrt(rate * (1 - rate) / total)
    assert abs(share - rate) < bound, (share, bound)


# ----------------------------------------------------------------- reports index order

def test_reports_index_lists_the_newest_run_first(tmp_path):
    """Five runs of three tasks, written in scrambled order, with finishing times that
    cross midnight and a month: index.md lists them by finishing time, newest first.

    Mutation that fails here (tried, core/report.py `update_index`): `reverse=True`
    dropped from the sort.
    """
    import json

    from elman.core.report import update_index

    finished = {("sentiment", "b"): "2025-03-01T00:00:05",
                ("tagging", "a"): "2025-02-28T23:59:59",
                ("lm", "z"): "2025-03-01T10:00:00",
                ("sentiment", "old"): "2024-12-31T12:00:00",
                ("translation", "m"): "2025-03-01T00:00:04"}
    for (task, run), when in finished.items():
        folder = tmp_path / task / run
        folder.mkdir(parents=True)
        interval = {"interval": {"low": 0.25, "high": 0.75}} if run == "z" else {}
        (folder / "metrics.json").write_text(json.dumps({
            "task": task, "finished": when, "split": "test", "main_metric": "accuracy",
            "scores": {"accuracy": 0.5}, **interval}), encoding="utf-8")
    update_index(tmp_path)
    text = (tmp_path / "index.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines()
            if re.match(r"\| *\d{4}-\d\d-\d\dT", line)]
    order = [re.search(r"\[([^\]]+)\]\(([^)]+)\)", line).group(2) for line in rows]
    expected = sorted(finished, key=finished.get, reverse=True)
    assert order == [f"{task}/{run}/report.md" for task, run in expected]
    # the main score's interval where the report has one, "-" where it has none
    assert [line.split("|")[7].strip() for line in rows] == [
        "0.2500–0.7500" if run == "z" else "-" for _, run in expected]
