"""Cases B–E: the tanh recurrence by hand, a review read end to end, one LSTM cell update,
and vanishing and exploding products.

Each case runs through Keras layers with explicitly set float64 weights: a scalar
`SimpleRNN` (B, C, E), a `Dense` classifier with `tf.GradientTape` for BPTT (C),
an `LSTMCell` whose gates are forced to the given values (D), and the measured
gradient flow of `elman.core.diagnostics` (E).
"""

import math
from fractions import Fraction
from pathlib import Path

from elman.tasks.textbook.common import DTYPE, mat, to_py, vec


def _simple_rnn(units, activation, W_x, W_h, b, name):
    """A float64 `SimpleRNN` (sequences returned) with the given weights."""
    import keras

    layer = keras.layers.SimpleRNN(units, activation=activation, return_sequences=True,
                                   dtype=DTYPE, name=name)
    layer.build((None, None, len(W_x)))
    layer.set_weights([mat(W_x), mat(W_h), vec(b)])
    return layer


def case_b():
    """Case B: scalar tanh RNN, W_xh = 1, W_hh = 0.5, inputs 1, 0.

    Returns:
        dict with `x` and `h` (h_1, h_2).
    """
    import numpy as np

    layer = _simple_rnn(1, "tanh", [[1]], [[0.5]], [0], "case_b_rnn")
    x = [1.0, 0.0]
    h = layer(np.array(x, dtype=DTYPE)[None, :, None]).numpy()[0, :, 0]
    return {"x": x, "h": to_py(h), "W_xh": 1.0, "W_hh": 0.5, "b_h": 0.0}


def case_c():
    """Case C: the review 服务 / 慢 / 但 / 很好 through SimpleRNN(tanh) + a sigmoid classifier.

    The gradient of the loss (nats) with respect to every input x_t is taken by
    `tf.GradientTape` through the same Keras layers (BPTT).

    Returns:
        dict with `tokens`, `x`, `h`, `z`, `p`, `loss_nat`, `loss_bit`, `grad_x`, `grad_x_bit`.
    """
    import keras
    import numpy as np
    import tensorflow as tf

    tokens, xs = ["服务", "慢", "但", "很好"], [0.0, -1.0, 0.5, 1.0]
    rnn = _simple_rnn(1, "tanh", [[1]], [[0.5]], [0], "case_c_rnn")
    head = keras.layers.Dense(1, dtype=DTYPE, name="classifier")
    head.build((None, 1))
    head.set_weights([np.array([[2.0]]), np.array([0.0])])
    x = tf.constant(np.array(xs, dtype=DTYPE)[None, :, None])
    y = tf.constant([[1.0]], dtype=DTYPE)  # gold label: positive
    with tf.GradientTape() as tape:
        tape.watch(x)
        h = rnn(x)
        z = head(h[:, -1])
        loss_nat = keras.losses.binary_crossentropy(y, z, from_logits=True)[0]
    grad = tape.gradient(loss_nat, x).numpy()[0, :, 0]
    p = keras.activations.sigmoid(z).numpy()[0, 0]
    ln2 = math.log(2.0)
    return {"tokens": tokens, "x": xs, "h": to_py(h.numpy()[0, :, 0]), "z": to_py(z.numpy()[0, 0]),
            "p": to_py(p), "label": 1, "loss_nat": to_py(loss_nat.numpy()),
            "loss_bit": to_py(loss_nat.numpy()) / ln2, "grad_x": to_py(grad),
            "grad_x_bit": to_py(grad / ln2)}


def _logit(q):
    return math.log(q / (1.0 - q))


def _gate_bias(target, activation, inverse):
    """The float64 bias whose activation (as Keras computes it) is nearest to `target`.

    Starts from the analytic inverse and looks a few ulps either side, because
    e.g. tanh(artanh(0.5)) is 0.49999999999999994 in float64, not 0.5.
    """
    import keras
    import numpy as np

    start = np.float64(inverse(target))
    candidates, lo, hi = [start], start, start
    for _ in range(16):
        lo, hi = np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)
        candidates += [lo, hi]
    # One (1, 1) tensor at a time, as inside the cell: TensorFlow's vectorised tanh on a
    # long array can round differently from the same op on one element.
    values = [float(keras.ops.convert_to_numpy(
        activation(keras.ops.convert_to_tensor([[c]], dtype=DTYPE)))[0, 0]) for c in candidates]
    errors = [abs(v - target) for v in values]
    return float(candidates[errors.index(min(errors))])  # first = nearest to the inverse


def case_d():
    """Case D: one LSTMCell update with gates forced to f = 0.9, i = 0.2, c̃ = 0.5.

    Kernels are zero, so each gate is its activation of its bias: sigmoid(logit(q))
    for i, f, o and tanh(artanh(0.5)) for the candidate, each bias nudged by a few
    ulps to the float64 value whose activation is nearest the target. The written
    part is the cell's own output for c_{t-1} = 0; the kept part is the forget
    gate (read from the cell's bias through `keras.ops.sigmoid`) times c_{t-1}.

    Returns:
        dict with `c`, `kept`, `written`, `c_prev`, `gates`, `gates_given`, `biases`, `h`.
    """
    import keras
    import numpy as np

    c_prev, f, i, c_tilde, o = 0.8, 0.9, 0.2, 0.5, 0.5  # o is not given by the text
    sig, tanh = keras.ops.sigmoid, keras.ops.tanh
    cell = keras.layers.LSTMCell(1, dtype=DTYPE, name="case_d_lstm")
    cell.build((None, 1))
    bias = np.array([_gate_bias(i, sig, _logit), _gate_bias(f, sig, _logit),
                     _gate_bias(c_tilde, tanh, math.atanh), _gate_bias(o, sig, _logit)],
                    dtype=DTYPE)
    cell.set_weights([np.zeros((1, 4)), np.zeros((1, 4)), bias])  # Keras gate order: i, f, c, o
    x, h_prev = np.zeros((1, 1), dtype=DTYPE), np.zeros((1, 1), dtype=DTYPE)
    h, (_, c) = cell(x, [h_prev, np.array([[c_prev]], dtype=DTYPE)])
    _, (_, c_zero) = cell(x, [h_prev, np.zeros((1, 1), dtype=DTYPE)])
    b = [keras.ops.convert_to_tensor([[v]], dtype=DTYPE) for v in cell.get_weights()[2]]
    gates = {"i": sig(b[0]), "f": sig(b[1]), "c_tilde": tanh(b[2]), "o": sig(b[3])}
    kept = keras.ops.multiply(gates["f"], keras.ops.convert_to_tensor(c_prev, dtype=DTYPE))
    num = lambda t: float(keras.ops.convert_to_numpy(t).reshape(-1)[0])  # noqa: E731
    return {"c_prev": c_prev, "gates": {k: num(v) for k, v in gates.items()},
            "gates_given": {"i": i, "f": f, "c_tilde": c_tilde}, "o_chosen": o,
            "biases": dict(zip(("i", "f", "c_tilde", "o"), to_py(bias))),
            "c": to_py(c.numpy()[0, 0]), "kept": num(kept), "written": to_py(c_zero.numpy()[0, 0]),
            "h": to_py(h.numpy()[0, 0])}


def _product_through_rnn(factor, steps):
    """d h_steps / d h_0 of a linear scalar SimpleRNN with W_hh = factor (Keras, GradientTape)."""
    import numpy as np
    import tensorflow as tf

    layer = _simple_rnn(1, "linear", [[1]], [[factor]], [0], "case_e_rnn")
    h0 = tf.constant([[1.0]], dtype=DTYPE)
    x = tf.constant(np.zeros((1, steps, 1), dtype=DTYPE))
    with tf.GradientTape() as tape:
        tape.watch(h0)
        h = layer(x, initial_state=[h0])[:, -1]
    return float(tape.gradient(h, h0).numpy()[0, 0])


def case_e(report_dir, units=32, length=120):
    """Case E: the products 0.5^10 and 1.5^10 through Keras, then the measured gradient flow.

    Args:
        report_dir: Path, where `case_e_gradients.png` is written.
        units: int, the width of the measured layers. Default 32.
        length: int, the sequence length. Default 120.

    Returns:
        dict with `vanish`, `explode` (floats), `products`, `gradient_flow` (a summary at the
        table distances) and `_flow` (the full measurement; `run_textbook` keeps it out of
        run.json).
    """
    from elman.core import diagnostics

    products = {}
    for key, factor in (("vanish", Fraction(1, 2)), ("explode", Fraction(3, 2))):
        products[key] = {"factor": float(factor), "steps": 10,
                         "keras": _product_through_rnn(float(factor), 10),
                         "exact": str(factor ** 10)}
    flow = diagnostics.gradient_flow(units=units, length=length, seed=0, clip_norm=1.0)
    diagnostics.plot_gradient_flow(flow, Path(report_dir) / "case_e_gradients.png")
    summary = {k: flow[k] for k in ("units", "length", "seed", "clip_norm", "explode_radius",
                                    "loss", "far_distance", "table_distances")}
    summary["cells"] = {
        name: {"label": c["label"],
               "norms_at": {str(d): c["norms"][d] for d in flow["table_distances"]},
               "clipped_norms_at": {str(d): c["clipped_norms"][d] for d in flow["table_distances"]},
               **{k: c[k] for k in ("clip_scale", "far_near_ratio", "far_near_ratio_clipped",
                                    "input_grad_global_norm", "weight_grad_global_norm",
                                    "weight_grad_global_norm_clipped", "underflow_from")}}
        for name, c in flow["cells"].items()}
    return {"vanish": products["vanish"]["keras"], "explode": products["explode"]["keras"],
            "products": products, "gradient_flow": summary, "_flow": flow}

