"""Virtual adversarial training (elman.models.adversarial, SentimentClassifier).

The oracle rebuilds one training step from plain classifiers (no perturbation layer),
as tests/test_adversarial.py does: each batch uses a word id at most once, so moving
a sentence's word vectors by r is moving those rows of the embedding matrix by r.
Without dropout, training and inference predictions agree, so the step is exactly:

    p = p(x);  probe = XI·‖v‖·d/‖d‖ (d the fixed random start);
    g = ∂ KL(p ‖ p(x + probe)) / ∂ probe;  r = ε·‖v‖·g/‖g‖;
    update = -lr · (∂ clean loss + ∂ KL(p ‖ p(x + r))).

What this cannot tell apart: choices that agree to second order in r, such as
KL(p ‖ q) against KL(q ‖ p), or another small probe length (the power iteration's
direction does not depend on it while it is small). What it does catch: a random
direction instead of the power iteration's, another ε, a loss left out or counted twice.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from elman.models.adversarial import VIRTUAL_XI
from elman.models.sentiment_classifier import SentimentClassifier
from tests.test_adversarial import (SMALL, _batch, _loss_and_grads, _numpy_direction,
                                    shift_rows)

START = np.random.default_rng(11).normal(size=(4, 5, 6)).astype("float32")


class FixedStart(SentimentClassifier):
    """The classifier with the power iteration's random start fixed to START."""

    def virtual_noise(self, shape):
        return tf.constant(START)


def _kl(p, q):
    """KL(p ‖ q) per sentence, averaged: written out in TensorFlow, apart from the model."""
    return tf.reduce_mean(tf.reduce_sum(p * (tf.math.log(p) - tf.math.log(q)), axis=-1))


def _shifted(weights, ids, rows_by_position, cell="lstm"):
    """A plain classifier with the given weights whose embedding rows for `ids` moved."""
    return shift_rows(SentimentClassifier(30, 2, cell=cell, **SMALL), weights, "embedding",
                      ids, rows_by_position)


def _kl_and_grads(model, ids, target):
    with tf.GradientTape() as tape:
        loss = _kl(target, model(ids, training=True))
    return float(loss), [tf.convert_to_tensor(g) for g in
                         tape.gradient(loss, model.trainable_weights)]


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_a_step_minimises_clean_loss_plus_the_virtual_divergence(cell):
    epsilon, lr = 0.5, 0.5
    ids, y = _batch()
    mask = ids != 0
    keras.utils.set_random_seed(6)
    model = FixedStart(30, 2, cell=cell, virtual_adversarial=epsilon, **SMALL)
    start = model.get_weights()
    plain = SentimentClassifier(30, 2, cell=cell, **SMALL)
    plain.set_weights(start)
    names = [w.path for w in plain.trainable_weights]
    matrix = plain.get_layer("embedding").embeddings.numpy()
    vectors = matrix[ids]

    clean_loss, clean = _loss_and_grads(plain, ids, y)
    target = plain(ids, training=False)
    probe = _numpy_direction(vectors, START, mask, VIRTUAL_XI)
    probed = _shifted(start, ids, probe, cell)
    _, probed_grads = _kl_and_grads(probed, ids, target)
    rows = probed_grads[names.index(probed.get_layer("embedding").embeddings.path)].numpy()
    r = _numpy_direction(vectors, rows[ids], mask, epsilon)
    moved = _shifted(start, ids, r, cell)
    divergence, virtual = _kl_and_grads(moved, ids, target)
    assert divergence > 1e-6  # the moved prediction differs from the clean one
    # the power iteration found a direction that changes the prediction more than a
    # random one of the same length
    random_r = _numpy_direction(vectors, START, mask, epsilon)
    assert divergence > _kl_and_grads(_shifted(start, ids, random_r, cell), ids, target)[0]

    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr),
                  loss="sparse_categorical_crossentropy")
    reported = model.train_on_batch(ids, y)
    assert reported == pytest.approx(clean_loss, rel=1e-5)  # the clean loss is reported
    assert [w.path for w in model.trainable_weights] == names
    for w, before, g1, g2 in zip(model.trainable_weights, start, clean, virtual):
        np.testing.assert_allclose(w.numpy(), before - lr * (g1.numpy() + g2.numpy()),
                                   atol=2e-6, err_msg=w.path)


def test_with_both_losses_the_step_adds_the_three_gradients():
    """adversarial and virtual_adversarial together: the update is the clean gradient
    plus each extra loss's own (each alone is checked against its oracle); measured here
    as the sum of the two single-loss updates minus the clean one counted twice."""
    ids, y = _batch()
    keras.utils.set_random_seed(8)
    both = FixedStart(30, 2, adversarial=0.3, virtual_adversarial=0.5, **SMALL)
    start = both.get_weights()
    steps = {}
    for name, kw in {"plain": {}, "adversarial": dict(adversarial=0.3),
                     "virtual": dict(virtual_adversarial=0.5), "both": None}.items():
        model = both if kw is None else FixedStart(30, 2, **SMALL, **kw)
        model.set_weights(start)
        model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.5),
                      loss="sparse_categorical_crossentropy")
        model.train_on_batch(ids, y)
        steps[name] = [w - s for w, s in zip(model.get_weights(), start)]
    for p, a, v, b in zip(*steps.values()):
        np.testing.assert_allclose(b, a + v - p, atol=2e-6)
    assert max(float(np.abs(v - p).max()) for p, v in zip(steps["plain"], steps["virtual"])) > 1e-4


def test_the_start_is_drawn_from_the_step_count():
    """Two steps draw different starts; the same step count draws the same start."""
    model = SentimentClassifier(30, 2, virtual_adversarial=0.2, **SMALL)
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    model.optimizer.build(model.trainable_weights)
    first = model.virtual_noise((2, 3)).numpy()
    np.testing.assert_array_equal(first, model.virtual_noise((2, 3)).numpy())
    model.optimizer.iterations.assign(1)
    assert not np.allclose(first, model.virtual_noise((2, 3)).numpy())
    assert abs(float(np.mean(model.virtual_noise((1000,)).numpy()))) < 0.15
