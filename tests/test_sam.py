"""Sharpness-aware minimisation in the sentiment and tagging training step
(elman.models.adversarial, `train.sam`).

The oracle is written out apart from the step. For the plain objective: a classifier with
the same weights, its cross-entropy gradient g at w taken with a tape, the weights moved
to w + ρ·g/‖g‖ (‖g‖ in NumPy over every weight), the gradient there, and the expected
update -lr times that second gradient. For SAM on top of adversarial training, the
adversarial step itself (tested in tests/test_adversarial.py) gives the objective's
gradient: with SGD at rate 1 a step from w lands on w - G(w).
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from elman.errors import UserError
from elman.models.adversarial import sharpness_steps
from elman.models.sentiment_classifier import SentimentClassifier
from tests.test_adversarial import SMALL, _batch, run_on_two_cpus


def _build(seed=11, **kw):
    keras.utils.set_random_seed(seed)
    return SentimentClassifier(30, 2, **SMALL, **kw)


def _gradients(model, ids, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(
            y, model(ids, training=True)))
    return [tf.convert_to_tensor(g).numpy()
            for g in tape.gradient(loss, model.trainable_weights)]


def test_steps_are_rho_along_the_global_gradient_direction():
    first = np.array([[3.0, 0.0]], dtype="float32")
    second = tf.IndexedSlices(tf.constant([[4.0], [0.0], [0.0]]), tf.constant([1, 0, 1]),
                              tf.constant([2, 1]))
    steps = sharpness_steps([first, None, second], 0.5)
    # the sparse rows sum into a dense [0, 4]; the global norm is sqrt(9 + 16) = 5
    np.testing.assert_allclose(steps[0], [[0.3, 0.0]], rtol=1e-6)
    assert steps[1] is None
    np.testing.assert_allclose(steps[2], [[0.0], [0.4]], rtol=1e-6)
    # an overflowed gradient (inf or nan anywhere) moves no weight, rather than all to nan
    for bad in (np.inf, np.nan):
        steps = sharpness_steps([np.array([bad, 1.0], dtype="float32"), first], 0.5)
        assert all(np.array_equal(np.asarray(t), np.zeros_like(t)) for t in steps)


@pytest.mark.parametrize("rho", [0.05, 0.5])
def test_a_step_descends_the_gradient_taken_at_the_moved_weights(rho):
    lr = 0.3
    ids, y = _batch()
    model = _build()
    start = model.get_weights()
    plain = _build()
    plain.set_weights(start)
    g = _gradients(plain, ids, y)
    norm = np.sqrt(sum(float((t.astype("float64") ** 2).sum()) for t in g))
    plain.set_weights([w + rho * t / norm for w, t in zip(start, g)])
    moved = _gradients(plain, ids, y)

    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr),
                  loss="sparse_categorical_crossentropy")
    model.sam = rho
    model.train_on_batch(ids, y)
    for w, before, grad in zip(model.trainable_weights, start, moved):
        np.testing.assert_allclose(w.numpy(), before - lr * grad, atol=2e-6, err_msg=w.path)
    # the test can tell SAM from a plain step: the gradients differ by more than tolerance
    assert max(float(np.abs(a - b).max()) for a, b in zip(moved, g)) > 1e-3


def _objective_step(model_weights, ids, y, epsilon):
    """G(w) of the adversarial objective: one SGD step at rate 1 from w is w - G(w)."""
    probe = _build(adversarial=epsilon)
    probe.set_weights(model_weights)
    probe.compile(optimizer=keras.optimizers.SGD(learning_rate=1.0),
                  loss="sparse_categorical_crossentropy")
    probe.train_on_batch(ids, y)
    return [before - after for before, after in zip(model_weights, probe.get_weights())]


def test_with_adversarial_training_the_whole_objective_is_taken_at_the_moved_weights():
    rho, lr, epsilon = 0.2, 0.5, 0.3
    ids, y = _batch()
    model = _build(adversarial=epsilon)
    start = model.get_weights()
    first = _objective_step(start, ids, y, epsilon)
    norm = np.sqrt(sum(float((t.astype("float64") ** 2).sum()) for t in first))
    second = _objective_step([w + rho * t / norm for w, t in zip(start, first)], ids, y, epsilon)

    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr),
                  loss="sparse_categorical_crossentropy")
    model.sam = rho
    model.train_on_batch(ids, y)
    for w, before, grad in zip(model.get_weights(), start, second):
        np.testing.assert_allclose(w, before - lr * grad, atol=3e-6)


def test_fit_hands_rho_to_the_model_and_refuses_models_without_the_step():
    from elman.config import TrainConfig
    from elman.core.train import sharpness_aware

    model = _build()
    sharpness_aware(model, TrainConfig(sam=0.07))
    assert model.sam == 0.07
    sharpness_aware(other := _build(), TrainConfig())
    assert getattr(other, "sam", 0.0) == 0.0
    plain = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    with pytest.raises(UserError, match="train.sam"):
        sharpness_aware(plain, TrainConfig(sam=0.05))


def test_config_refuses_negative_rho_and_the_multi_worker_loop():
    from elman.config import TrainConfig, check_adversarial_strategy, load_config
    from elman.core.train import sharpness_aware

    with pytest.raises(UserError, match="train.sam"):
        load_config("sentiment", None, ["train.sam=-0.1"])
    cfg = load_config("tagging", None, ["train.sam=0.05", "train.strategy=multi-worker"])
    with pytest.raises(UserError, match="train.sam is not available with train.strategy "
                       "'multi-worker'"):
        check_adversarial_strategy(cfg)
    for strategy in ("default", "mirrored"):
        check_adversarial_strategy(load_config(
            "tagging", None, ["train.sam=0.05", f"train.strategy={strategy}"]))
        model = _build()
        sharpness_aware(model, TrainConfig(sam=0.05, strategy=strategy))
        assert model.sam == 0.05
    with pytest.raises(UserError, match="not for translation"):
        load_config("translation", None, ["train.sam=0.05"])
    with pytest.raises(UserError, match="train.sam"):
        sharpness_aware(_build(), TrainConfig(sam=0.05, strategy="multi-worker"))


MIRRORED = r"""
def step(strategy, rho, start):
    with strategy.scope():
        model = SentimentClassifier(30, 2, adversarial=0.3, **settings)
        if start is not None:
            model.set_weights(start)
        model.compile(optimizer=keras.optimizers.SGD(0.5),
                      loss="sparse_categorical_crossentropy")
    first = model.get_weights()
    model.sam = rho
    model.fit(ids, y, batch_size=len(y), shuffle=False, verbose=0)
    return first, model.get_weights()

one = tf.distribute.get_strategy()
start, single = step(one, 0.5, None)
_, plain = step(one, 0.0, start)
mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
_, two = step(mirrored, 0.5, start)
gap = lambda a, b: max(float(np.abs(p - q).max()) for p, q in zip(a, b))
print(json.dumps({"replicas": mirrored.num_replicas_in_sync, "diff": gap(single, two),
                  "sam_vs_plain": gap(single, plain), "moved": gap(single, start)}))
"""


@pytest.mark.slow
def test_two_replicas_take_the_same_sam_step_as_one_device():
    """Under MirroredStrategy each replica holds half the batch: the move must come from
    the whole batch's gradient (summed across replicas) and move every copy of the
    weights alike, so one step ends where one device's does (with adversarial training,
    whose perturbation is per sentence and so unchanged by the split)."""
    out = run_on_two_cpus(MIRRORED)
    assert out["replicas"] == 2
    assert out["moved"] > 1e-3  # the step did something
    assert out["sam_vs_plain"] > 1e-3  # and SAM's step is told apart from a plain one
    assert out["diff"] < 1e-5
