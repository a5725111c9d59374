"""The hand-written LSTM backward pass of `elman.bench.lstm_backward` (issue 20's
experiment) against TensorFlow's autodiff of an unrolled Python loop."""

import numpy as np
import pytest
import tensorflow as tf

from elman.bench.lstm_backward import lstm_sequence


def _unrolled(xw, h, c, kernel):
    hs, cs = [], []
    for t in range(xw.shape[0]):
        z = xw[t] + h @ kernel
        i, f, g, o = np.split(np.arange(z.shape[-1]), 4)
        c = tf.sigmoid(tf.gather(z, f, axis=1)) * c + \
            tf.sigmoid(tf.gather(z, i, axis=1)) * tf.tanh(tf.gather(z, g, axis=1))
        h = tf.sigmoid(tf.gather(z, o, axis=1)) * tf.tanh(c)
        hs.append(h)
        cs.append(c)
    return tf.stack(hs), tf.stack(cs)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_hand_written_gradients_equal_autodiff(jit_compile):
    rng = np.random.default_rng(7)
    steps, rows, units = 5, 3, 4
    values = [tf.constant(rng.normal(scale=s, size=shape).astype("float64"))
              for s, shape in [(1.0, (steps, rows, 4 * units)), (0.5, (rows, units)),
                               (0.5, (rows, units)), (0.4, (units, 4 * units))]]
    # a loss that weighs every step's h and c differently
    wh = tf.constant(rng.normal(size=(steps, rows, units)))
    wc = tf.constant(rng.normal(size=(steps, rows, units)))
    results = []
    for run in (lambda *v: lstm_sequence(*v, jit_compile=jit_compile), _unrolled):
        @tf.function  # as the bench runs it (an XLA loop's lists stay inside the graph)
        def step(values):
            with tf.GradientTape() as tape:
                tape.watch(values)
                h, c = run(*values)
                loss = tf.reduce_sum(wh * h) + tf.reduce_sum(wc * tf.sin(c))
            return h, c, tape.gradient(loss, values)
        results.append(step(values))
    (h1, c1, g1), (h2, c2, g2) = results
    np.testing.assert_allclose(h1, h2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(c1, c2, rtol=1e-10, atol=1e-12)
    for a, b in zip(g1, g2):  # inputs, h0, c0, recurrent kernel
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
