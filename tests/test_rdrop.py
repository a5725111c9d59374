"""R-Drop (Liang et al. 2021) in the sentiment classifier's training step
(elman.models.adversarial, `head.rdrop`).

The oracle is written out in TensorFlow, apart from the step: a plain classifier with
the same weights and the same dropout seeds is called twice in training mode (the same
two dropout draws the step makes, as both models' seed generators start alike), and the
expected update is -lr · ∂[(CE(p1) + CE(p2)) / 2 + α (KL(p1 ‖ p2) + KL(p2 ‖ p1)) / 2].
It catches a missing or doubled term, a wrong α and two passes that share one dropout
draw. It cannot tell KL(p1 ‖ p2) from the symmetric mean: near p1 = p2 their gradients
agree to first order in p1 - p2.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from elman.models.sentiment_classifier import SentimentClassifier
from tests.test_adversarial import _batch

DROPPY = dict(embedding_dim=6, units=5, pooling="max", hidden=8, dropout=0.0,
              head_dropout=0.5)


def _kl(p, q):
    return tf.reduce_mean(tf.reduce_sum(p * (tf.math.log(p) - tf.math.log(q)), axis=-1))


def _build(seed, **kw):
    keras.utils.set_random_seed(seed)
    return SentimentClassifier(30, 2, **DROPPY, **kw)


@pytest.mark.parametrize("alpha", [1.0, 4.0])
def test_a_step_minimises_both_losses_and_their_symmetric_divergence(alpha):
    lr = 0.5
    ids, y = _batch()
    model = _build(21, rdrop=alpha)
    plain = _build(21)
    start = model.get_weights()
    plain.set_weights(start)
    with tf.GradientTape() as tape:
        p1, p2 = plain(ids, training=True), plain(ids, training=True)
        ce = [tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(y, p)) for p in (p1, p2)]
        objective = (ce[0] + ce[1]) / 2 + alpha * (_kl(p1, p2) + _kl(p2, p1)) / 2
    grads = [tf.convert_to_tensor(g) for g in tape.gradient(objective, plain.trainable_weights)]
    assert float(tf.reduce_max(tf.abs(p1 - p2))) > 1e-3  # two dropout draws, not one

    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr),
                  loss="sparse_categorical_crossentropy")
    reported = model.train_on_batch(ids, y)
    assert reported == pytest.approx(float(ce[0]), rel=1e-5)  # the first pass's loss
    for w, before, g in zip(model.trainable_weights, start, grads):
        np.testing.assert_allclose(w.numpy(), before - lr * g.numpy(), atol=2e-6,
                                   err_msg=w.path)


def test_rdrop_survives_saving_and_is_refused_below_zero(tmp_path):
    model = _build(3, rdrop=0.7)
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert loaded.rdrop == 0.7
    ids, _ = _batch()
    np.testing.assert_allclose(loaded(ids), model(ids), rtol=1e-6)  # inference: no change
    with pytest.raises(ValueError, match="rdrop >= 0"):
        _build(3, rdrop=-0.1)
