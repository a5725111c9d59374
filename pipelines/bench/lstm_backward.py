"""An LSTM loop with a hand-written backward pass, raced against autodiff's (issue 20).

`python -m elman.bench.lstm_backward [--lengths 20,60]`: a BiLSTM (units 64 over 32 rows
of 128-wide inputs, the bench's sizes), forward and backward, three ways in one
process, best of 5 × 30 calls each:

- `autodiff`: the loop elman's right-padded layers run (Keras' `backend.rnn` over the
  inputs projected beforehand), differentiated by TensorFlow;
- `hand`: `lstm_sequence`, whose forward loop keeps every step's gates and cell state
  and whose backward loop does one matmul and a few elementwise ops a step, the
  recurrent kernel's gradient as one matmul after the loop;
- `hand_xla`: the same two loops compiled by XLA (one compilation per length and row
  count).

The result is in docs/speed.md ("Tried and left out"); the layers do not use it.
`tests/test_lstm_backward.py` checks the hand-written gradients against autodiff's.
"""

import sys
import time


def _forward_loop(xw, h0, c0, kernel):
    """Every step's [h, c, i, f, g, o] for time-major projected inputs xw [T, B, 4U]."""
    import tensorflow as tf

    steps = tf.shape(xw)[0]

    def body(t, h, c, out):
        i, f, g, o = tf.split(xw[t] + tf.matmul(h, kernel), 4, axis=-1)
        i, f, g, o = tf.sigmoid(i), tf.sigmoid(f), tf.tanh(g), tf.sigmoid(o)
        c = f * c + i * g
        h = o * tf.tanh(c)
        return t + 1, h, c, out.write(t, tf.concat([h, c, i, f, g, o], axis=-1))

    out = tf.TensorArray(xw.dtype, size=steps)
    _, _, _, out = tf.while_loop(lambda t, *_: t < steps, body, (0, h0, c0, out),
                                 maximum_iterations=steps)
    return out.stack()


def _backward_loop(per_step, factors, kernel, h0, c0):
    """Every step's gate-input gradient dz [T, B, 4U], and dh0, dc0, from the incoming
    gradients and the forward pass's per-step factors (see `lstm_sequence`)."""
    import tensorflow as tf

    steps = tf.shape(per_step)[0]
    kernel_t = tf.transpose(kernel)

    def body(t, dh_next, dc_next, out):
        dh_t, dc_t, k, f = tf.split(per_step[t], 4, axis=-1)
        dh = dh_t + dh_next
        dc = dc_t + dc_next + dh * k
        dz = factors[t] * tf.concat([dc, dc, dc, dh], axis=-1)
        return t - 1, tf.matmul(dz, kernel_t), dc * f, out.write(t, dz)

    out = tf.TensorArray(per_step.dtype, size=steps)
    _, dh0, dc0, out = tf.while_loop(lambda t, *_: t >= 0, body,
                                     (steps - 1, tf.zeros_like(h0), tf.zeros_like(c0), out),
                                     maximum_iterations=steps)
    return out.stack(), dh0, dc0


def lstm_sequence(xw, h0, c0, kernel, jit_compile=False):
    """(H, C) [T, B, U] of an LSTM (Keras' gate order i, f, c, o; sigmoid and tanh) over
    time-major projected inputs xw [T, B, 4U], with the backward pass written out."""
    import tensorflow as tf

    forward, backward = _forward_loop, _backward_loop
    if jit_compile:
        forward = tf.function(forward, jit_compile=True)
        backward = tf.function(backward, jit_compile=True)

    @tf.custom_gradient
    def run(xw, h0, c0, kernel):
        h, c, i, f, g, o = tf.split(forward(xw, h0, c0, kernel), 6, axis=-1)

        def grad(dh, dc):
            units = h0.shape[-1]
            c_prev = tf.concat([c0[None], c[:-1]], 0)
            h_prev = tf.concat([h0[None], h[:-1]], 0)
            tanh_c = tf.tanh(c)
            # dc_t += dh_t · o (1 - tanh² c); dz = factors · [dc, dc, dc, dh]
            k = o * (1 - tanh_c * tanh_c)
            factors = tf.concat([g * i * (1 - i), c_prev * f * (1 - f), i * (1 - g * g),
                                 tanh_c * o * (1 - o)], -1)
            dz, dh0, dc0 = backward(tf.concat([dh, dc, k, f], -1), factors, kernel, h0, c0)
            rows = tf.shape(dz)[0] * tf.shape(dz)[1]
            dkernel = tf.matmul(tf.reshape(h_prev, [rows, units]),
                                tf.reshape(dz, [rows, 4 * units]), transpose_a=True)
            return dz, dh0, dc0, dkernel

        return (h, c), grad

    return run(xw, h0, c0, kernel)


def _autodiff_direction(x, kernel, recurrent):
    import tensorflow as tf
    from keras.src import backend

    def step(xw_t, states):
        h, c = states
        i, f, g, o = tf.split(xw_t + tf.matmul(h, recurrent), 4, axis=-1)
        c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
        h = tf.sigmoid(o) * tf.tanh(c)
        return h, [h, c]

    zeros = tf.zeros((tf.shape(x)[0], recurrent.shape[0]))
    _, out, _ = backend.rnn(step, tf.matmul(x, kernel), [zeros, zeros], mask=None,
                            unroll=False, return_all_outputs=True)
    return out


def _hand_direction(jit_compile):
    def direction(x, kernel, recurrent):
        import tensorflow as tf

        zeros = tf.zeros((tf.shape(x)[0], recurrent.shape[0]))
        xw = tf.transpose(tf.matmul(x, kernel), [1, 0, 2])
        h, _ = lstm_sequence(xw, zeros, zeros, recurrent, jit_compile)
        return tf.transpose(h, [1, 0, 2])

    return direction


def bilstm_step(direction, weights):
    """A tf.function: a BiLSTM's loss and its gradients wrt the inputs and weights."""
    import tensorflow as tf

    @tf.function(reduce_retracing=True)
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            a = direction(x, weights[0], weights[1])
            b = direction(tf.reverse(x, [1]), weights[2], weights[3])
            loss = tf.reduce_sum(a * a) + tf.reduce_sum(tf.sin(b))
        return loss, tape.gradient(loss, [x, *weights])

    return step


def variants(weights):
    return {"autodiff": bilstm_step(_autodiff_direction, weights),
            "hand": bilstm_step(_hand_direction(False), weights),
            "hand_xla": bilstm_step(_hand_direction(True), weights)}


def main(argv=None):
    import argparse

    import numpy as np
    import tensorflow as tf

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default="20,60")
    parser.add_argument("--rows", type=int, default=32)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    inputs, units = 128, 64
    weights = [tf.Variable(rng.normal(scale=0.1, size=shape).astype("float32"))
               for shape in [(inputs, 4 * units), (units, 4 * units)] * 2]
    steps = variants(weights)
    for length in (int(v) for v in args.lengths.split(",")):
        x = tf.constant(rng.normal(size=(args.rows, length, inputs)).astype("float32"))
        best = {}
        for name, step in steps.items():
            began = time.perf_counter()
            step(x)
            print(f"length {length}: {name} traced (and compiled) in "
                  f"{time.perf_counter() - began:.2f} s", flush=True)
            best[name] = float("inf")
        for _ in range(5):
            for name, step in steps.items():
                began = time.perf_counter()
                for _ in range(30):
                    out = step(x)
                float(out[0])
                best[name] = min(best[name], (time.perf_counter() - began) / 30 * 1000)
        line = ", ".join(f"{name} {ms:.2f} ms ({best['autodiff'] / ms:.2f}×)"
                         for name, ms in best.items())
        print(f"length {length}, {args.rows} rows, forward + backward: {line}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
