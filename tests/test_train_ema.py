"""EMA of the weights: validation, the best checkpoint and the returned model use the average."""

import dataclasses

import keras
import numpy as np
import pytest
import tensorflow as tf

from elman.config import TrainConfig
from elman.errors import UserError
from elman.core.batching import dataset_from_plan, plan_eval
from elman.core.train import adam, fit

MOMENTUM = 0.8


class Recorder(keras.callbacks.Callback):
    """The raw weights after every training step, and at every epoch start."""

    def __init__(self):
        super().__init__()
        self.steps, self.epoch_starts = [], []

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch_starts.append([v.numpy().copy() for v in self.model.trainable_variables])

    def on_train_batch_end(self, batch, logs=None):
        self.steps.append([v.numpy().copy() for v in self.model.trainable_variables])


def data():
    rng = np.random.default_rng(0)
    rows = [rng.integers(2, 20, size=rng.integers(1, 6)).tolist() for _ in range(24)]
    labels = np.array([int(sum(r) % 2) for r in rows])
    return tf.ragged.constant(rows, dtype=tf.int64), tf.constant(labels), [len(r) for r in rows]


def _builder(cfg):
    """A build_and_compile for fit(): a tiny bag-of-embeddings classifier, seeded."""
    def build():
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.layers.Embedding(20, 4, mask_zero=True),
                                  keras.layers.GlobalAveragePooling1D(),
                                  keras.layers.Dense(2, activation="softmax")])
        model.compile(adam(cfg), "sparse_categorical_crossentropy")
        return model
    return build


def _with_callback(monkeypatch, callback):
    """Makes every keras.Model.fit in the test also run `callback`."""
    original_fit = keras.Model.fit
    monkeypatch.setattr(keras.Model, "fit", lambda self, *a, callbacks=(), **k: original_fit(
        self, *a, callbacks=[callback, *callbacks], **k))


def test_ema_is_what_validation_and_the_returned_model_use(tmp_path, monkeypatch):
    features, labels, lengths = data()
    validation = dataset_from_plan(features, labels, plan_eval(lengths, 8))
    cfg = dataclasses.replace(TrainConfig(), epochs=3, batch_size=4, patience=9, ema=MOMENTUM,
                              learning_rate=0.05, monitor="val_loss", max_minutes=0.0)
    recorder = Recorder()
    _with_callback(monkeypatch, recorder)
    result = fit(_builder(cfg), features, labels, lengths, validation, cfg, tmp_path,
                 log=lambda m: None, tensorboard=False)
    steps_per_epoch = len(recorder.steps) // cfg.epochs
    # An independent EMA of the recorded raw weights (the first step starts the average).
    averages, history = None, []
    for weights in recorder.steps:
        averages = [w.copy() for w in weights] if averages is None else [
            MOMENTUM * a + (1 - MOMENTUM) * w for a, w in zip(averages, weights)]
        history.append(averages)
    best = history[result.best_epoch * steps_per_epoch - 1]
    for got, want in zip(result.model.trainable_variables, best):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
    # The logged validation loss of the best epoch is the averaged model's loss.
    loss = result.model.evaluate(validation, verbose=0)
    assert loss == pytest.approx(result.history["val_loss"][result.best_epoch - 1], rel=1e-5)
    # Validation put the raw weights back exactly: epoch 2 starts where epoch 1's last step
    # left them.
    for start, last in zip(recorder.epoch_starts[1], recorder.steps[steps_per_epoch - 1]):
        np.testing.assert_array_equal(start, last)
    # ... and the raw weights differ from the average (the test would be vacuous otherwise).
    assert not np.allclose(recorder.steps[-1][0], history[-1][0])


def test_ema_out_of_range_is_a_user_error():
    with pytest.raises(UserError, match=r"train.ema must be in \[0, 1\)"):
        adam(dataclasses.replace(TrainConfig(), ema=1.0))


def test_lr_decay_is_per_epoch_and_survives_a_checkpoint(tmp_path, monkeypatch):
    features, labels, lengths = data()
    validation = dataset_from_plan(features, labels, plan_eval(lengths, 8))
    cfg = dataclasses.replace(TrainConfig(), epochs=3, batch_size=5, patience=9, lr_decay=0.5,
                              learning_rate=0.04, max_minutes=0.0)
    seen = []

    class LearningRates(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            seen.append(float(keras.ops.convert_to_numpy(self.model.optimizer.learning_rate)))

    _with_callback(monkeypatch, LearningRates())
    fit(_builder(cfg), features, labels, lengths, validation, cfg, tmp_path, log=lambda m: None,
        tensorboard=False)
    steps = -(-24 // 5)  # 24 examples in batches of 5
    expected = [0.04 * 0.5 ** (i // steps) for i in range(3 * steps)]
    np.testing.assert_allclose(seen, expected, rtol=1e-6)
    restored = keras.saving.load_model(tmp_path / "checkpoints" / "epoch-003.keras",
                                       safe_mode=True)
    assert float(keras.ops.convert_to_numpy(restored.optimizer.learning_rate)) == pytest.approx(
        0.04 * 0.5 ** 3)
    with pytest.raises(UserError, match="lr_decay"):
        adam(cfg)  # outside fit the epoch length is unknown


def test_ema_outside_the_shared_fit_is_a_user_error():
    # e.g. the language model's own stateful loop, which validates with the raw weights
    with pytest.raises(UserError, match="train.ema is not supported"):
        adam(dataclasses.replace(TrainConfig(), ema=0.9))


def test_sgd_with_momentum_steps_as_computed_by_hand():
    """`train.optimizer = "sgd"`: two steps on a linear least-squares model equal the
    momentum update written out in NumPy (v ← m·v − lr·g, w ← w + v), gradients by hand."""
    cfg = TrainConfig(optimizer="sgd", learning_rate=0.1, momentum=0.5, clipnorm=0.0)
    optimizer = adam(cfg)
    assert isinstance(optimizer, keras.optimizers.SGD)
    x = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]], dtype="float32")
    t = np.array([1.0, 0.0, 2.0], dtype="float32")
    w0 = np.array([0.2, -0.3], dtype="float32")
    w = tf.Variable(w0)
    for _ in range(2):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.linalg.matvec(x, w) - t) ** 2)
        optimizer.apply_gradients([(tape.gradient(loss, w), w)])
    expected, velocity = w0.astype("float64"), np.zeros(2)
    for _ in range(2):
        grad = 2.0 / len(t) * x.T.astype("float64") @ (x @ expected - t)
        velocity = 0.5 * velocity - 0.1 * grad
        expected = expected + velocity
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-5)
    assert isinstance(adam(TrainConfig()), keras.optimizers.Adam)


def test_optimizer_settings_are_checked():
    from elman import config as config_lib

    assert config_lib.load_config("tagging", None, ["train.optimizer=sgd",
                                                    "train.momentum=0.0"]).train.momentum == 0.0
    for bad in ("train.optimizer=rmsprop", "train.momentum=1.0", "train.momentum=-0.1"):
        with pytest.raises(UserError):
            config_lib.load_config("tagging", None, [bad])
