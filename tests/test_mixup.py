"""Mixup of the sentiment classifier's sentence vectors (elman.models.mixup, `head.mixup`).

The draw is checked against Beta(α, α) itself (scipy's density integrated), the layer
against NumPy, and a training step against one rebuilt from a plain classifier with the
same weights: its pooled vectors mixed by hand, its head's layers applied to them, and
the expected update -lr · ∂[λ·CE(y, p) + (1 - λ)·CE(y shuffled, p)].
"""

import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from scipy import integrate, stats

from elman.models.mixup import SentenceMixup, mixup_draw
from elman.models.sentiment_classifier import SentimentClassifier
from tests.test_adversarial import _batch

SMALL = dict(embedding_dim=6, units=5, pooling="max", hidden=4, dropout=0.0, head_dropout=0.0)


@pytest.mark.parametrize("alpha", [1.0, 0.2])
def test_the_draw_follows_the_folded_beta(alpha):
    draws = [mixup_draw(alpha, step, 7) for step in range(1500)]
    lams = np.array([float(lam) for lam, _ in draws])
    assert lams.min() >= 0.5 and lams.max() <= 1.0
    # E[max(B, 1 - B)] for B ~ Beta(α, α): twice the integral of x·f(x) over [1/2, 1]
    expected = 2 * integrate.quad(lambda x: x * stats.beta.pdf(x, alpha, alpha), 0.5, 1)[0]
    spread = np.sqrt(2 * integrate.quad(
        lambda x: (x - expected) ** 2 * stats.beta.pdf(x, alpha, alpha), 0.5, 1)[0])
    assert abs(lams.mean() - expected) < 4 * spread / np.sqrt(len(lams))
    for _, order in draws[:50]:
        assert sorted(np.asarray(order).tolist()) == list(range(7))
    orders = {tuple(np.asarray(order).tolist()) for _, order in draws[:50]}
    assert len(orders) > 40  # shuffles differ from step to step
    again = mixup_draw(alpha, 3, 7)  # a function of the step: a seed gives the same run
    assert float(again[0]) == lams[3]
    assert np.array_equal(np.asarray(again[1]), np.asarray(draws[3][1]))


def test_the_layer_mixes_rows_only_inside_a_step():
    x = np.arange(12, dtype="float32").reshape(4, 3)
    layer = SentenceMixup()
    np.testing.assert_array_equal(np.asarray(layer(x)), x)
    order = np.array([2, 0, 3, 1])
    with layer.mixing(0.7, order):
        got = np.asarray(layer(x))
    np.testing.assert_allclose(got, 0.7 * x + 0.3 * x[order], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(layer(x)), x)  # the block is over


def test_a_step_minimises_the_mixed_loss_of_the_mixed_vectors():
    lr, alpha = 0.5, 0.4
    ids, y = _batch()
    keras.utils.set_random_seed(5)
    model = SentimentClassifier(30, 2, mixup=alpha, **SMALL)
    plain = SentimentClassifier(30, 2, **SMALL)
    start = model.get_weights()
    plain.set_weights(start)
    assert [w.path.split("/")[-2:] for w in model.trainable_weights] == [
        w.path.split("/")[-2:] for w in plain.trainable_weights]
    lam, order = (np.asarray(a) for a in mixup_draw(alpha, 0, len(y)))  # the first step's
    assert lam < 0.99 and not np.array_equal(order, np.arange(len(y)))  # a real mix
    pooled_of = keras.Model(plain.input, plain.get_layer("pooling").output)
    with tf.GradientTape() as tape:
        pooled = pooled_of(ids, training=True)
        mixed = lam * pooled + (1.0 - lam) * tf.gather(pooled, order)
        p = plain.get_layer("probabilities")(plain.get_layer("hidden")(mixed))
        loss = tf.reduce_mean(lam * keras.losses.sparse_categorical_crossentropy(y, p)
                              + (1.0 - lam) * keras.losses.sparse_categorical_crossentropy(
                                  y[order], p))
    grads = [tf.convert_to_tensor(g) for g in tape.gradient(loss, plain.trainable_weights)]

    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr),
                  loss="sparse_categorical_crossentropy")
    reported = model.train_on_batch(ids, y)
    assert reported == pytest.approx(float(loss), rel=1e-5)
    moved = 0.0
    for w, before, g in zip(model.trainable_weights, start, grads):
        np.testing.assert_allclose(w.numpy(), before - lr * g.numpy(), atol=2e-6,
                                   err_msg=w.path)
        moved = max(moved, float(np.abs(w.numpy() - before).max()))
    assert moved > 1e-3


def test_mixup_survives_saving_changes_nothing_at_inference_and_refuses_below_zero(tmp_path):
    keras.utils.set_random_seed(2)
    model = SentimentClassifier(30, 2, mixup=0.3, **SMALL)
    plain = SentimentClassifier(30, 2, **SMALL)
    plain.set_weights(model.get_weights())
    ids, _ = _batch()
    np.testing.assert_allclose(model(ids), plain(ids), rtol=1e-6)
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert loaded.mixup == 0.3 and "mixup" not in {layer.name for layer in plain.layers}
    np.testing.assert_allclose(loaded(ids), model(ids), rtol=1e-6)
    with pytest.raises(ValueError, match="mixup >= 0"):
        SentimentClassifier(30, 2, mixup=-0.1, **SMALL)


def test_cli_trains_with_mixup_and_refuses_a_negative_alpha(tmp_path):
    def cli(*settings):
        return subprocess.run(
            [sys.executable, "-m", "elman.cli", "train", "sentiment", "--out",
             str(tmp_path / "run"), "--reports", str(tmp_path / "reports"),
             "--set", "train.epochs=1", "--set", "encoder.units=8", "--set", "embedding.dim=8",
             "--set", "head.pooling=max", *[a for s in settings for a in ("--set", s)]],
            capture_output=True, text=True, timeout=600)

    bad = cli("head.mixup=-1")
    assert bad.returncode == 2 and "head.mixup" in bad.stderr
    assert "Traceback" not in bad.stderr
    good = cli("head.mixup=0.4")
    assert good.returncode == 0, good.stderr[-2000:]
    report = next((tmp_path / "reports").rglob("report.md")).read_text()
    assert "mixup α 0.4" in report
