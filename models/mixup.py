"""Mixup of sentence vectors (Zhang et al. 2018; for sentences, Guo et al. 2019).

A training step with mixup draws λ from Beta(α, α) and a shuffle of the batch; every
sentence's pooled vector becomes λ·v_i + (1 - λ)·v_π(i), and the loss becomes
λ·loss(y_i) + (1 - λ)·loss(y_π(i)). λ is folded to max(λ, 1 - λ), which leaves the
mixture's distribution unchanged (Beta(α, α) is symmetric and the shuffle is uniform)
and makes y_i the larger share, so the logged training accuracy still reads against
the gold labels. A model so trained sees its labels as weights on a line between two
examples, not as points, which makes it less sure of any one of them: Zhang et al.
report that this resists labels that are sometimes wrong.

`SentenceMixup` is the layer (identity outside a step, no weights, so a saved model is
unchanged); `mixup_draw` gives a step's λ and shuffle from the step count, so a run
with one seed draws the same ones.
"""

import contextlib
import threading

import keras


@keras.saving.register_keras_serializable(package="elman")
class SentenceMixup(keras.layers.Layer):
    """Identity on [batch, features], except inside `mixing(lam, order)`, where row i
    becomes lam·x[i] + (1 - lam)·x[order[i]]. The setting is per thread, as replicas
    of a `tf.distribute` strategy trace in their own threads."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        object.__setattr__(self, "_local", threading.local())  # not tracked by Keras

    def call(self, inputs):
        mix = getattr(self._local, "mix", None)
        if mix is None:
            return inputs
        lam, order = mix
        lam = keras.ops.cast(lam, inputs.dtype)
        return lam * inputs + (1.0 - lam) * keras.ops.take(inputs, order, axis=0)

    @contextlib.contextmanager
    def mixing(self, lam, order):
        """Calls inside this block mix the batch's rows."""
        self._local.mix = (lam, order)
        try:
            yield
        finally:
            self._local.mix = None

    def compute_output_shape(self, input_shape):
        return input_shape


MIXUP_SEED = 104729  # the stateless draws' first seed word; the step count is the second


def mixup_draw(alpha, step, batch):
    """(λ, order) for one step: λ = max(B, 1 - B) with B ~ Beta(alpha, alpha), drawn as
    G1 / (G1 + G2) from two Gamma(alpha) draws, and `order` a uniform shuffle of
    range(batch) (the argsort of uniform draws). Both are stateless functions of `step`."""
    import tensorflow as tf

    seed = tf.stack([tf.constant(MIXUP_SEED), tf.cast(step, "int32")])
    gammas = tf.random.stateless_gamma([2], seed=seed, alpha=alpha)
    share = gammas[0] / (gammas[0] + gammas[1])
    lam = tf.maximum(share, 1.0 - share)
    keys = tf.random.stateless_uniform([batch], seed=seed + tf.constant([0, 1 << 20]))
    return lam, tf.argsort(keys)
