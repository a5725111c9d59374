"""`elman textbook`: the course texts' worked examples (Cases A–G), recomputed with Keras.

Every case runs through real Keras layers whose weights are set explicitly
(float64, so that the comparison with exact arithmetic is limited by float64
alone): a ReLU `SimpleRNN` with the given matrices, an `LSTMCell` whose gates are
forced to the given values, a `Bidirectional` layer, a small encoder–decoder and
a small language model. Case A is checked against exact fractions derived
independently by `data/textbook/derive_expected.py`; every value the texts print
(`data/textbook/printed_values.json`) is compared with the computed one and
flagged beyond its printed precision. Printed values are never used as results.

Writes `report.md`, a self-contained `report.html`, PNG plots and `run.json`
(the run record, sorted keys) to the report folder.
"""

import argparse
import hashlib
import importlib.util
import json
import math
import platform
import re
import sys
from fractions import Fraction
from pathlib import Path

from elman.errors import UserError
from elman.core.html import render_html, write_bytes_atomic, write_text_atomic

DTYPE = "float64"


# ----------------------------------------------------------------------------- helpers


def _num(value):
    """A JSON number or an "a/b" string as a float."""
    return float(Fraction(str(value)))


def _mat(value):
    import numpy as np

    return np.array([[_num(v) for v in row] for row in value], dtype=DTYPE)


def _vec(value):
    import numpy as np

    return np.array([_num(v) for v in value], dtype=DTYPE)


def _py(value):
    """Numpy arrays and scalars to plain Python floats and lists."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return [_py(v) for v in value.tolist()] if value.ndim else float(value)
    if isinstance(value, (list, tuple)):
        return [_py(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return float(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    return value


def _choose(probs, candidates):
    """The candidate with the highest probability; an exact tie goes to the earlier one."""
    return candidates[list(probs).index(max(probs))]


def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _read_json(path):
    path = Path(path)
    if not path.is_file():
        raise UserError("file not found", path=path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise UserError(f"not valid JSON: {err.msg}", path=path, line=err.lineno) from None


def _load_oracle(data_dir):
    """Imports data_dir/derive_expected.py (standard library only) as a module."""
    path = Path(data_dir) / "derive_expected.py"
    if not path.is_file():
        raise UserError("the exact-arithmetic oracle is missing", path=path)
    spec = importlib.util.spec_from_file_location("elman_textbook_oracle", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _fmt(v, digits=8):
    """Short float text: up to `digits` significant digits."""
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x, digits) for x in v) + "]"
    if isinstance(v, str):
        return v
    if v is None:
        return "—"
    return f"{v:.{digits}g}"


def _fmtp(v):
    """Probabilities: six decimals, as the texts print them."""
    if isinstance(v, list):
        return "[" + ", ".join(_fmtp(x) for x in v) + "]"
    return f"{v:.6f}"


def _frac(v):
    return "[" + ", ".join(v) + "]" if isinstance(v, list) else v


# ----------------------------------------------------------------------------- Case A


def _case_a_models(case, W_h=None):
    """The RNN and the window model of Case A, sharing one embedding and one output head."""
    import keras

    vocab, emb = case["vocabulary"], _mat(case["embeddings"])
    rnn_spec, head_spec, win = case["rnn"], case["head"], case["window"]
    W_x, W_h = _mat(rnn_spec["W_x"]), _mat(rnn_spec["W_h"] if W_h is None else W_h)
    W_y, b_y = _mat(head_spec["W_y"]), _vec(head_spec["b_y"])
    units, n_out = W_h.shape[0], W_y.shape[1]

    embedding = keras.layers.Embedding(len(vocab), emb.shape[1], trainable=False, dtype=DTYPE,
                                       name="embedding")
    rnn = keras.layers.SimpleRNN(units, activation=rnn_spec["activation"], return_sequences=True,
                                 dtype=DTYPE, name="rnn")
    head = keras.layers.Dense(n_out, dtype=DTYPE, name="head")
    softmax = keras.layers.Softmax(dtype=DTYPE, name="probs")
    ids = keras.Input(shape=(None,), dtype="int32", name="ids")
    h0 = keras.Input(shape=(units,), dtype=DTYPE, name="h0")
    x = embedding(ids)
    h = rnn(x, initial_state=[h0])
    logits = head(h)
    rnn_model = keras.Model([ids, h0], {"x": x, "h": h, "logits": logits, "probs": softmax(logits)},
                            name="case_a_rnn")

    W = _mat(win["W"])
    win_ids = keras.Input(shape=(int(win["size"]),), dtype="int32", name="window_ids")
    concat = keras.layers.Flatten(dtype=DTYPE, name="concat")(embedding(win_ids))
    hidden = keras.layers.Dense(W.shape[1], activation=win["activation"], dtype=DTYPE,
                                name="window_hidden")
    wh = hidden(concat)
    wlogits = head(wh)
    window_model = keras.Model(win_ids, {"hidden": wh, "logits": wlogits,
                                         "probs": softmax(wlogits)}, name="case_a_window")

    embedding.set_weights([emb])
    rnn.set_weights([W_x, W_h, _vec(rnn_spec["b_h"])])
    head.set_weights([W_y, b_y])
    hidden.set_weights([W, _vec(win["b"])])
    return rnn_model, window_model


def _ids(case, text, case_path):
    vocab = case["vocabulary"]
    tokens = text.split(" ")
    unknown = [t for t in tokens if t not in vocab]
    if unknown:
        raise UserError(f"input {text!r} has tokens {unknown} outside the vocabulary {vocab}",
                        path=case_path)
    return tokens, [vocab.index(t) for t in tokens]


def _run_rnn(model, case, text, case_path, reset_every_token=False):
    """Runs the Keras RNN on one input; returns the per-step log and the choice."""
    import numpy as np

    tokens, ids = _ids(case, text, case_path)
    h0 = _vec(case["rnn"]["h_0"])
    if reset_every_token:  # every token is its own sequence, each starting from h_0
        out = model([np.array(ids, dtype="int32")[:, None], np.tile(h0, (len(ids), 1))])
        seq = {k: v.numpy()[:, 0] for k, v in out.items()}
        prev = [h0] * len(ids)
    else:
        out = model([np.array([ids], dtype="int32"), h0[None]])
        seq = {k: v.numpy()[0] for k, v in out.items()}
        prev = [h0] + list(seq["h"][:-1])
    steps = [{"token": t, "id": i, "x": _py(seq["x"][k]), "h_prev": _py(prev[k]),
              "h": _py(seq["h"][k]), "logits": _py(seq["logits"][k]), "probs": _py(seq["probs"][k])}
             for k, (t, i) in enumerate(zip(tokens, ids))]
    return {"tokens": tokens, "steps": steps,
            "choice": _choose(steps[-1]["probs"], case["candidates"])}


def _run_window(model, case, text, case_path):
    import numpy as np

    tokens, ids = _ids(case, text, case_path)
    size = int(case["window"]["size"])
    if len(ids) < size:
        raise UserError(f"input {text!r} is shorter than the window ({size})", path=case_path)
    out = model(np.array([ids[-size:]], dtype="int32"))
    res = {k: _py(v.numpy()[0]) for k, v in out.items()}
    return {"tokens": tokens[-size:], "hidden": res["hidden"], "logits": res["logits"],
            "probs": res["probs"], "choice": _choose(res["probs"], case["candidates"])}


def _max_diff(floats, exact):
    """Largest |float - Fraction(string)| over nested lists."""
    if isinstance(floats, list):
        return max((_max_diff(f, e) for f, e in zip(floats, exact)), default=0.0)
    return abs(floats - float(Fraction(exact)))


def case_a(data_dir):
    """Case A with Keras: both models on every input, E1 (search), E2, E3, and the exact oracle.

    Args:
        data_dir: Path, the folder holding case_a.json, case_a_expected.json, derive_expected.py.

    Returns:
        dict, the `A` part of the run record.
    """
    case_path = Path(data_dir) / "case_a.json"
    case = _read_json(case_path)
    oracle = _load_oracle(data_dir)
    exact = oracle.derive(oracle.load_case(case_path))
    expected_path = Path(data_dir) / "case_a_expected.json"
    stored = _read_json(expected_path) if expected_path.is_file() else None
    current = bool(stored) and stored.get("derived_from", {}).get("sha256") == _sha256(case_path)
    same = current and all(stored.get(k) == exact[k] for k in ("rnn", "window", "E1", "E2", "E3"))

    rnn_model, window_model = _case_a_models(case)
    cands = case["candidates"]
    rec = {"candidates": cands, "inputs": list(case["inputs"]), "rnn": {}, "window": {}}
    for text in case["inputs"]:
        rec["rnn"][text] = _run_rnn(rnn_model, case, text, case_path)
        rec["window"][text] = _run_window(window_model, case, text, case_path)

    e1 = case["exercises"]["E1"]
    searched, found = [], None
    for n in range(int(e1["max_fillers"]) + 1):
        text = " ".join([e1["cue"]] + [e1["filler"]] * n + [e1["suffix"]])
        r = _run_rnn(rnn_model, case, text, case_path)
        last = r["steps"][-1]
        searched.append({"fillers": n, "h": last["h"], "logits": last["logits"],
                         "probs": last["probs"], "choice": r["choice"]})
        if r["choice"] == e1["target"]:
            found = {"fillers": n, "input": text, "h": last["h"], "logits": last["logits"],
                     "probs": last["probs"], "choice": r["choice"]}
            break
    rec["E1"] = {**(found or {"fillers": None, "input": None, "h": None, "logits": None,
                              "probs": None, "choice": None}),
                 "target": e1["target"], "searched": searched}

    e2 = case["exercises"]["E2"]
    W_h = [[e2["W_h_diagonal"] if i == j else v for j, v in enumerate(row)]
           for i, row in enumerate(case["rnn"]["W_h"])]
    r = _run_rnn(_case_a_models(case, W_h=W_h)[0], case, e2["input"], case_path)
    rec["E2"] = {"input": e2["input"], "W_h": [[_num(v) for v in row] for row in W_h],
                 "h": r["steps"][-1]["h"], "logits": r["steps"][-1]["logits"],
                 "probs": r["steps"][-1]["probs"], "choice": r["choice"]}

    e3 = case["exercises"]["E3"]
    reset = _run_rnn(rnn_model, case, e3["input"], case_path, reset_every_token=True)
    once = _run_rnn(rnn_model, case, e3["input"], case_path)
    cue = next((t for t in e3["input"].split(" ") if t in cands), None)
    rec["E3"] = {"input": e3["input"], "correct": cue,
                 "reset_every_token": {"steps": reset["steps"], "choice": reset["choice"]},
                 "reset_once": {"h": once["steps"][-1]["h"], "logits": once["steps"][-1]["logits"],
                                "probs": once["steps"][-1]["probs"], "choice": once["choice"]},
                 "destroyed": once["choice"] == cue and reset["choice"] != cue}

    # The oracle: Keras floats against exact fractions, and the lesson in exact terms.
    diffs = []
    for text in case["inputs"]:
        for s, es in zip(rec["rnn"][text]["steps"], exact["rnn"][text]["steps"]):
            diffs += [_max_diff(s["h"], es["h"]), _max_diff(s["logits"], es["logits"])]
        diffs.append(_max_diff(rec["window"][text]["logits"], exact["window"][text]["logits"]))
    choices_agree = (all(rec["rnn"][t]["choice"] == exact["rnn"][t]["choice"]
                         and rec["window"][t]["choice"] == exact["window"][t]["choice"]
                         for t in case["inputs"])
                     and rec["E1"]["fillers"] == (exact["E1"]["answer"] or {}).get("fillers")
                     and rec["E2"]["choice"] == exact["E2"]["choice"]
                     and rec["E3"]["reset_every_token"]["choice"]
                     == exact["E3"]["reset_every_token"]["choice"])
    rec["exact"] = exact
    rec["oracle_check"] = {"max_abs_diff": max(diffs), "choices_agree": choices_agree,
                           "expected_file": str(expected_path), "expected_file_current": same}
    rec["lesson"] = _case_a_lesson(case, rec, exact)
    rec["data"] = {"file": str(case_path), "sha256": _sha256(case_path)}
    return rec


def _case_a_lesson(case, rec, exact):
    """Long inputs: window distributions identical, RNN distributions differ, cue below bias."""
    long_inputs = [t for t in case["inputs"] if len(t.split(" ")) > int(case["window"]["size"]) + 1]
    by_cue = {}
    for text in long_inputs:
        by_cue.setdefault(text.split(" ")[0], text)
    out = {"long_inputs": long_inputs}
    if {"red", "blue"} <= set(by_cue):
        r, b = by_cue["red"], by_cue["blue"]
        out["window_identical"] = rec["window"][r]["probs"] == rec["window"][b]["probs"]
        last = {t: rec["rnn"][t]["steps"][-1]["probs"] for t in (r, b)}
        out["rnn_differs"] = last[r] != last[b]
        eh = [Fraction(v) for v in exact["rnn"][b]["steps"][-1]["h"]]
        el = [Fraction(v) for v in exact["rnn"][b]["steps"][-1]["logits"]]
        bias = [Fraction(str(v)) for v in case["head"]["b_y"]]
        out["blue_long"] = {"input": b, "cue_left_exact": str(eh[1]),
                            "red_bias_exact": str(bias[0]), "logit_gap_exact": str(el[0] - el[1]),
                            "cue_below_bias": el[1] < el[0], "choice": rec["rnn"][b]["choice"]}
    return out


# ----------------------------------------------------------------------------- Cases B–E


def _simple_rnn(units, activation, W_x, W_h, b, name):
    import keras

    layer = keras.layers.SimpleRNN(units, activation=activation, return_sequences=True,
                                   dtype=DTYPE, name=name)
    layer.build((None, None, len(W_x)))
    layer.set_weights([_mat(W_x), _mat(W_h), _vec(b)])
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
    return {"x": x, "h": _py(h), "W_xh": 1.0, "W_hh": 0.5, "b_h": 0.0}


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
    return {"tokens": tokens, "x": xs, "h": _py(h.numpy()[0, :, 0]), "z": _py(z.numpy()[0, 0]),
            "p": _py(p), "label": 1, "loss_nat": _py(loss_nat.numpy()),
            "loss_bit": _py(loss_nat.numpy()) / ln2, "grad_x": _py(grad),
            "grad_x_bit": _py(grad / ln2)}


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
            "biases": dict(zip(("i", "f", "c_tilde", "o"), _py(bias))),
            "c": _py(c.numpy()[0, 0]), "kept": num(kept), "written": _py(c_zero.numpy()[0, 0]),
            "h": _py(h.numpy()[0, 0])}


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


# ----------------------------------------------------------------------------- Cases F, G


def _seeded(seed):
    import keras

    return {"kernel_initializer": keras.initializers.GlorotUniform(seed=seed),
            "recurrent_initializer": keras.initializers.Orthogonal(seed=seed + 1)}


def _train(loss_fn, variables, steps, lr):
    """A few Adam steps in one compiled function; returns the last loss."""
    import keras
    import tensorflow as tf

    opt = keras.optimizers.Adam(learning_rate=lr)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn()
        opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    loss = None
    for _ in range(steps):
        loss = step()
    return float(loss_fn())


def case_f():
    """Case F: Bidirectional(SimpleRNN(3)) gives 6 numbers per position; seq2seq lengths 8 → 6.

    The encoder–decoder (GRU, width 16) is fitted to the one pair, then decoded
    greedily: start token, own previous prediction fed back, stop at <eos> or the cap.

    Returns:
        dict with `bidirectional` and `seq2seq`.
    """
    import keras
    import numpy as np
    import tensorflow as tf

    source = "我爱自然语言处理"
    chars = list(source)
    target = ["I", "love", "natural", "language", "processing", "<eos>"]
    src_vocab = sorted(set(chars))
    tgt_vocab = ["<start>", "<eos>", "I", "love", "natural", "language", "processing"]
    src_ids = np.array([[src_vocab.index(c) for c in chars]], dtype="int32")

    emb = keras.layers.Embedding(len(src_vocab), 4, name="bi_embedding",
                                 embeddings_initializer=keras.initializers.RandomUniform(seed=0))
    bi = keras.layers.Bidirectional(
        keras.layers.SimpleRNN(3, return_sequences=True, **_seeded(1)), name="bidirectional")
    x = emb(src_ids)
    out = bi(x).numpy()
    fwd = bi.forward_layer(x).numpy()
    bwd = bi.backward_layer(x).numpy()[:, ::-1]  # go_backwards: reverse back to positions
    split_ok = bool(np.allclose(out[..., :3], fwd, atol=1e-6)
                    and np.allclose(out[..., 3:], bwd, atol=1e-6))
    bidirectional = {"units_per_direction": 3, "input_length": len(chars),
                     "output_shape": list(out.shape), "per_position": int(out.shape[-1]),
                     "concat_is_forward_then_backward": split_ok,
                     "position_0": _py(out[0, 0])}

    units = 16
    uniform = keras.initializers.RandomUniform
    enc_emb = keras.layers.Embedding(len(src_vocab), 8, name="enc_embedding",
                                     embeddings_initializer=uniform(seed=2))
    encoder = keras.layers.GRU(units, return_state=True, name="encoder", **_seeded(3))
    dec_emb = keras.layers.Embedding(len(tgt_vocab), 8, name="dec_embedding",
                                     embeddings_initializer=uniform(seed=5))
    decoder = keras.layers.GRU(units, return_sequences=True, return_state=True, name="decoder",
                               **_seeded(6))
    proj = keras.layers.Dense(len(tgt_vocab), name="projection",
                              kernel_initializer=keras.initializers.GlorotUniform(seed=8))
    dec_in = np.array([[tgt_vocab.index(t) for t in ["<start>"] + target[:-1]]], dtype="int32")
    dec_out = np.array([[tgt_vocab.index(t) for t in target]], dtype="int32")

    def logits_fn():
        _, state = encoder(enc_emb(src_ids))
        seq, _ = decoder(dec_emb(dec_in), initial_state=state)
        return proj(seq)

    logits_fn()
    scce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    variables = (enc_emb.trainable_variables + encoder.trainable_variables
                 + dec_emb.trainable_variables + decoder.trainable_variables
                 + proj.trainable_variables)
    steps = 30
    final_loss = _train(lambda: scce(dec_out, logits_fn()), variables, steps, 0.1)

    cap = 10
    _, state = encoder(enc_emb(src_ids))
    token, decoded = tgt_vocab.index("<start>"), []
    for _ in range(cap):  # state carried forward; the prefix is never re-run
        seq, state = decoder(dec_emb(np.array([[token]], dtype="int32")), initial_state=state)
        token = int(tf.argmax(proj(seq)[0, -1]))
        decoded.append(tgt_vocab[token])
        if decoded[-1] == "<eos>":
            break
    return {"bidirectional": bidirectional,
            "seq2seq": {"source": source, "source_tokens": chars, "input_length": len(chars),
                        "target_tokens": target, "output_length": len(target),
                        "train_steps": steps, "optimizer": "Adam(0.1)", "final_loss": final_loss,
                        "length_cap": cap,
                        "decoded": decoded, "stopped_at_eos": bool(decoded)
                        and decoded[-1] == "<eos>", "decoded_matches_target": decoded == target}}


def case_g():
    """Case G: an RNN language model on 我 / 喜欢 / 深度 / 学习.

    Per-step cross-entropy; the gradient of the summed loss on the shared weights
    equals the sum of the per-step gradients (checked numerically); truncated BPTT
    with K = 2; greedy generation re-running the prefix against carrying the state.

    Returns:
        dict with `tokens`, `per_step_loss`, `loss_sum`, `loss_mean`, `grad_check`,
        `tbptt`, `generation`.
    """
    import keras
    import numpy as np
    import tensorflow as tf

    tokens = ["我", "喜欢", "深度", "学习"]
    vocab = list(tokens)
    ids = np.array([[vocab.index(t) for t in tokens]], dtype="int32")
    inp, tgt = ids[:, :-1], ids[:, 1:]
    emb = keras.layers.Embedding(len(vocab), 4, dtype=DTYPE, name="lm_embedding",
                                 embeddings_initializer=keras.initializers.RandomUniform(
                                     -0.5, 0.5, seed=10))
    rnn = keras.layers.SimpleRNN(8, return_sequences=True, return_state=True, dtype=DTYPE,
                                 name="lm_rnn", **_seeded(11))
    head = keras.layers.Dense(len(vocab), dtype=DTYPE, name="lm_head",
                              kernel_initializer=keras.initializers.GlorotUniform(seed=13))
    scce = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None,
                                                      dtype=DTYPE)

    def forward(x, state=None):
        seq, last = rnn(emb(x), initial_state=None if state is None else [state])
        return head(seq), last

    forward(inp)
    weights = emb.trainable_variables + rnn.trainable_variables + head.trainable_variables
    names = [w.path for w in weights]
    with tf.GradientTape(persistent=True) as tape:
        logits, _ = forward(inp)
        per_step = scce(tgt, logits)[0]
        parts = [per_step[t] for t in range(per_step.shape[0])]  # sliced on the tape
        total = tf.reduce_sum(per_step)
    def dense(grads):  # IndexedSlices (embedding) to tensors; an unused weight's None to zeros
        return [tf.zeros_like(w) if g is None else tf.convert_to_tensor(g)
                for g, w in zip(grads, weights)]

    g_total = dense(tape.gradient(total, weights))
    g_steps = [dense(tape.gradient(part, weights)) for part in parts]
    del tape
    diffs = [float(tf.reduce_max(tf.abs(gt - tf.add_n([gs[k] for gs in g_steps]))))
             for k, gt in enumerate(g_total)]
    scale = max(float(tf.reduce_max(tf.abs(g))) for g in g_total)
    grad_check = {"weights": names, "max_abs_diff": max(diffs), "max_abs_grad": scale,
                  "equal": max(diffs) <= 1e-12 * max(1.0, scale)}

    # Truncated BPTT, K = 2: the state crosses the chunk boundary, the gradient does not.
    K = 2
    with tf.GradientTape(persistent=True) as tape:
        x1 = emb(inp[:, :K])
        tape.watch(x1)
        seq1, h1 = rnn(x1)
        l1 = tf.reduce_sum(scce(tgt[:, :K], head(seq1)))
        seq2, _ = rnn(emb(inp[:, K:]), initial_state=[tf.stop_gradient(h1)])
        l2 = tf.reduce_sum(scce(tgt[:, K:], head(seq2)))
        tb_total = l1 + l2
    cross = tape.gradient(l2, x1)
    g_tb = tape.gradient(tb_total, rnn.trainable_variables)
    del tape
    with tf.GradientTape() as tape:
        full_total = tf.reduce_sum(scce(tgt, forward(inp)[0]))
    g_full = tape.gradient(full_total, rnn.trainable_variables)
    tbptt = {"K": K, "loss_tbptt": float(tb_total), "loss_full": float(full_total),
             "same_loss": abs(float(tb_total) - float(full_total)) <= 1e-12,
             "cross_boundary_grad": 0.0 if cross is None else float(tf.reduce_max(tf.abs(cross))),
             "grad_difference_norm": float(tf.linalg.global_norm(
                 [a - b for a, b in zip(g_tb, g_full)]))}

    steps = 80
    final = _train(lambda: tf.reduce_mean(scce(tgt, forward(inp)[0])), weights, steps, 0.05)
    trained = [float(v) for v in scce(tgt, forward(inp)[0])[0]]

    prefix, n_new = ["我"], len(tokens) - 1
    naive = list(prefix)
    for _ in range(n_new):  # quadratic: the whole prefix again at every step
        logits, _ = forward(np.array([[vocab.index(t) for t in naive]], dtype="int32"))
        naive.append(vocab[int(tf.argmax(logits[0, -1]))])
    logits, state = forward(np.array([[vocab.index(t) for t in prefix]], dtype="int32"))
    carried = list(prefix)
    for _ in range(n_new):  # linear: one step per token, the state carried forward
        carried.append(vocab[int(tf.argmax(logits[0, -1]))])
        logits, state = forward(np.array([[vocab.index(carried[-1])]], dtype="int32"), state)
    return {"tokens": tokens, "inputs": tokens[:-1], "targets": tokens[1:],
            "per_step_loss": _py(per_step.numpy()), "loss_sum": float(total),
            "loss_mean": float(total) / int(per_step.shape[0]), "grad_check": grad_check,
            "tbptt": tbptt,
            "training": {"steps": steps, "optimizer": "Adam(0.05)", "final_mean_loss": final,
                         "per_step_loss_after": trained},
            "generation": {"prefix": prefix, "naive": naive, "carried_state": carried,
                           "identical": naive == carried, "default": "carried_state"}}


# ----------------------------------------------------------------------------- printed values


_NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?$")


def _parse_printed(text):
    """A printed value as a list of (value, tolerance) pairs, or a word."""
    text = text.strip()
    inner = text[1:-1] if text.startswith("[") and text.endswith("]") else None
    parts = [p.strip() for p in (inner.split(",") if inner is not None else [text])]
    out = []
    for part in parts:
        if "/" in part:
            out.append((float(Fraction(part)), 0.0))
        elif _NUMBER.match(part):
            decimals = len(part.split(".")[1]) if "." in part else None
            out.append((float(part), 0.0 if decimals is None else 0.5 * 10.0 ** -decimals))
        else:
            return text if inner is None else None
    return out if inner is not None else out[0]


def _lookup(record, path):
    v = record
    for key in path:
        v = v[key]
    return v


def _compare(printed, computed):
    """Returns (difference, tolerance, agrees); words compare equal or not."""
    parsed = _parse_printed(printed)
    if isinstance(parsed, str) or parsed is None:
        return None, None, str(computed) == printed.strip()
    pairs = parsed if isinstance(parsed, list) else [parsed]
    vals = computed if isinstance(computed, list) else [computed]
    if len(vals) != len(pairs) or any(v is None for v in vals):
        return None, None, False
    worst, tol_worst, ok = 0.0, 0.0, True
    for (pv, tol), cv in zip(pairs, vals):
        diff = abs(float(cv) - pv)
        slack = tol if tol > 0 else 1e-12 * max(1.0, abs(pv))  # exact values: float64 rounding
        if diff > worst or (diff == worst and tol > tol_worst):
            worst, tol_worst = diff, tol
        ok = ok and diff <= slack
    return worst, tol_worst, ok


def _sig(p):
    return 1.0 / (1.0 + math.exp(-p))


# What each printed value would be if computed from the printed value before it
# (the texts' own chain): tells a new error from an inherited one.
_FROM_PRINTED = {
    "B.h_2": lambda P: math.tanh(0.5 * P["B.h_1"]),
    "C.h_2": lambda P: math.tanh(-1.0 + 0.5 * P["C.h_1"]),
    "C.h_3": lambda P: math.tanh(0.5 + 0.5 * P["C.h_2"]),
    "C.h_4": lambda P: math.tanh(1.0 + 0.5 * P["C.h_3"]),
    "C.z": lambda P: 2.0 * P["C.h_4"],
    "C.p": lambda P: _sig(P["C.z"]),
    "C.loss_nat": lambda P: -math.log(P["C.p"]),
    "C.loss_bit": lambda P: P["C.loss_nat"] / math.log(2.0),
}


def check_printed(record, printed_values):
    """Compares every printed value with the computed one; flags differences beyond precision.

    A decimal printed with n digits after the point agrees when the computed value is
    within half a unit of its last digit (0.5·10⁻ⁿ); an integer or a fraction is exact;
    words must match. Within one series (an input, or a case's chain), a flag's `step`
    is the step where a difference first appears.

    Args:
        record: dict, the run record (cases A–G computed).
        printed_values: list of dict, entries of data/textbook/printed_values.json.

    Returns:
        tuple (checks, flags): every comparison, and the mismatches as dicts with `case`,
        `quantity`, `printed`, `computed`, `step`, `quantity_step`, `first_quantity`,
        `difference`, `tolerance`, `follows_from_printed`.
    """
    numeric = {}
    for entry in printed_values:
        parsed = _parse_printed(entry["printed"])
        if isinstance(parsed, tuple):
            numeric[entry["id"]] = parsed[0]
    checks, first = [], {}
    for entry in printed_values:
        try:
            computed = _lookup(record, entry["path"])
        except (KeyError, IndexError, TypeError):
            computed = None
        diff, tol, ok = _compare(entry["printed"], computed)
        follows = None
        fn = _FROM_PRINTED.get(entry["id"])
        if fn is not None and numeric.get(entry["id"]) is not None:
            try:
                would = fn(numeric)
                follows = _compare(entry["printed"], would)[2]
            except (KeyError, ValueError):
                follows = None
        check = {"id": entry["id"], "case": entry["case"], "series": entry["series"],
                 "quantity": entry["quantity"], "printed": entry["printed"],
                 "computed": computed, "difference": diff, "tolerance": tol, "agrees": ok,
                 "quantity_step": entry.get("step"), "follows_from_printed": follows}
        if not ok and entry["series"] not in first:
            first[entry["series"]] = (entry.get("step"), entry["quantity"])
        checks.append(check)
    flags = []
    for check in checks:
        if not check["agrees"]:
            step, quantity = first[check["series"]]
            flags.append({"case": check["case"], "quantity": check["quantity"],
                          "printed": check["printed"], "computed": check["computed"],
                          "step": step, "first_quantity": quantity,
                          "quantity_step": check["quantity_step"],
                          "difference": check["difference"], "tolerance": check["tolerance"],
                          "follows_from_printed": check["follows_from_printed"], "id": check["id"]})
    return checks, flags


# ----------------------------------------------------------------------------- plots


def _plot_case_a(rec, png_path):
    """Left: p(red) after every token for all inputs. Right: the end of the long inputs, zoomed."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, zoom) = plt.subplots(1, 2, figsize=(11, 4.4), dpi=110,
                                   gridspec_kw={"width_ratios": [3, 2]})
    long_inputs = rec["lesson"].get("long_inputs", [])
    for i, text in enumerate(rec["inputs"]):
        steps = rec["rnn"][text]["steps"]
        xs = list(range(1, len(steps) + 1))
        ys = [s["probs"][0] for s in steps]
        is_long = text in long_inputs
        style = dict(color=f"C{i}", linestyle="--" if is_long else "-",
                     marker="o" if is_long else "s", markersize=4 if is_long else 7,
                     label=f"RNN: {text}")
        ax.plot(xs, ys, **style)
        ax.plot([xs[-1] + 0.3], [rec["window"][text]["probs"][0]], "D", color=f"C{i}",
                markerfacecolor="none", markersize=9)
        if is_long:
            zoom.plot(xs[-4:], ys[-4:], **style)
            zoom.plot([xs[-1] + 0.3], [rec["window"][text]["probs"][0]], "D", color=f"C{i}",
                      markerfacecolor="none", markersize=10)
    for a in (ax, zoom):
        a.axhline(0.5, color="grey", linewidth=0.8, linestyle=":")
        a.set_xlabel("step (token read)")
        a.grid(True, alpha=0.3)
    ax.set_ylabel("p(red)")
    ax.set_title("p(red) after each token (◇: window model)", fontsize=10)
    zoom.set_title("long inputs, last steps: the RNN differs,\nthe window (◇) is identical; "
                   "both above 0.5", fontsize=9)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    write_bytes_atomic(png_path, buf.getvalue())


# ----------------------------------------------------------------------------- report


def _status(check):
    return "ok" if check["agrees"] else "**FLAG**"


def _computed_text(value):
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return str(value)
    return _fmt(value, 8)


def _flag_rows(flags):
    rows = ["| case | quantity | printed | computed | difference | tolerance | first appears "
            "| follows from the printed value before it |", "|---|---|---|---|---:|---:|---|---|"]
    for f in flags:
        follows = {True: "yes (inherited)", False: "no (a new error here)", None: "—"}[
            f["follows_from_printed"]]
        first = f"step {f['step']} ({f['first_quantity']})" if f["step"] is not None else \
            f["first_quantity"]
        diff = "—" if f["difference"] is None else f"{f['difference']:.2e}"
        tol = "—" if f["tolerance"] is None else f"{f['tolerance']:.1e}"
        rows.append(f"| {f['case']} | {f['quantity']} | {f['printed']} | "
                    f"{_computed_text(f['computed'])} | {diff} | {tol} | {first} | {follows} |")
    return rows


def _printed_for(checks):
    """Printed text by record path-like key, for side-by-side columns."""
    return {c["id"]: c for c in checks}


def _report_markdown(record, checks):
    A, B, C, D, E, F, G = (record[k] for k in "ABCDEFG")
    flags = record["flags"]
    by_id = _printed_for(checks)
    lines = [
        "# Textbook cases A–G, recomputed with Keras",
        "",
        "Every number below comes from real Keras layers whose weights are set explicitly "
        "(float64). Case A is checked against exact fractions derived independently from the "
        "weights by `data/textbook/derive_expected.py` (standard library only). Every value "
        "the course texts print is shown beside the computed one; a difference beyond the "
        "printed precision (half a unit of the last printed digit; integers and fractions "
        "exact) is flagged, with the step where it first appears. Printed values are never "
        "used as results.",
        "",
        "## Flags: printed values that differ from the computation",
        "",
    ]
    if flags:
        lines += _flag_rows(flags)
        lines += ["", f"{len(flags)} of {len(checks)} printed values differ. "
                  "\"Follows from the printed value before it\" recomputes the printed value "
                  "from the text's own previous printed value: *yes* means the error was "
                  "inherited, *no* means a new one appears at that step.", ""]
    else:
        lines += [f"None: all {len(checks)} printed values agree within their precision.", ""]

    # ---- Case A
    ex = A["exact"]
    lines += [
        "## Case A — the red/blue key task",
        "",
        "`h_t = ReLU(x_t·W_x + h_{t-1}·W_h + b_h)`, `z_t = h_t·W_y + b_y`, `p_t = softmax(z_t)`; "
        "W_x = W_y = I₂, W_h = 0.5·I₂, b_h = 0, b_y = [0.125, 0]; candidates "
        f"{A['candidates']} (tie → the earlier). Keras: `Embedding` → `SimpleRNN(relu)` → "
        "`Dense` head → `Softmax`. Exact columns: the oracle's fractions.",
        "",
    ]
    for text in A["inputs"]:
        run, exr = A["rnn"][text], ex["rnn"][text]
        lines += [f"### `{text}`", "",
                  "| step | token | x | h_{t-1} | h_t | h_t exact | logits | logits exact "
                  "| p = [red, blue] | printed |", "|---:|---|---|---|---|---|---|---|---|---|"]
        for i, (s, es) in enumerate(zip(run["steps"], exr["steps"])):
            printed = [c for c in checks if c["series"] == text and c["quantity_step"] == i + 1]
            ptxt = "; ".join(f"{c['quantity'].split('_')[0]} {c['printed']}"
                             + ("" if c["agrees"] else " **FLAG**") for c in printed) or ""
            lines.append(f"| {i + 1} | {s['token']} | {_fmt(s['x'])} | {_fmt(s['h_prev'])} | "
                         f"{_fmt(s['h'])} | {_frac(es['h'])} | {_fmt(s['logits'])} | "
                         f"{_frac(es['logits'])} | {_fmtp(s['probs'])} | {ptxt} |")
        lines += ["", f"RNN choice: **{run['choice']}** (oracle: {exr['choice']}).", ""]
    lines += ["### Window baseline (last two tokens)", "",
              "| input | window | logits | logits exact | p = [red, blue] | choice |",
              "|---|---|---|---|---|---|"]
    for text in A["inputs"]:
        w, ew = A["window"][text], ex["window"][text]
        lines.append(f"| `{text}` | {' '.join(w['tokens'])} | {_fmt(w['logits'])} | "
                     f"{_frac(ew['logits'])} | {_fmtp(w['probs'])} | {w['choice']} |")
    les = A["lesson"]
    if "blue_long" in les:
        bl = les["blue_long"]
        lines += [
            "", "**The lesson.** On the long inputs the window model gives *identical* "
            f"distributions for red and blue (identical: {les['window_identical']}): the cue "
            "never enters its computation. The RNN's distributions *differ* (differ: "
            f"{les['rnn_differs']}), but for the blue input the cue has decayed to exactly "
            f"{bl['cue_left_exact']} while the red bias is {bl['red_bias_exact']}: the red logit "
            f"leads by exactly {bl['logit_gap_exact']}, so the RNN answers **{bl['choice']}**. "
            "The path exists, the advantage does not survive — and this is exact arithmetic, "
            "not a floating-point underflow.", ""]
    lines += ["![Case A: p(red) per step](case_a_probs.png)", ""]

    e1 = A["E1"]
    lines += ["### E1 — how many fillers make the RNN choose red for a blue cue?", "",
              "| fillers | final h | logits | p = [red, blue] | choice |", "|---:|---|---|---|---|"]
    for s in e1["searched"]:
        lines.append(f"| {s['fillers']} | {_fmt(s['h'])} | {_fmt(s['logits'])} | "
                     f"{_fmtp(s['probs'])} | {s['choice']} |")
    ans = ex["E1"]["answer"] or {}
    if e1["fillers"] is None:
        lines += ["", "No filler count up to the search limit makes the RNN choose red.", ""]
    else:
        tie = e1["probs"][0] == e1["probs"][1]
        lines += ["", f"Answer (by search): **{e1['fillers']}** filler(s): `{e1['input']}`, final "
                  f"state {_fmt(e1['h'])} (exact {_frac(ans.get('h', '?'))}), logits "
                  f"{_fmt(e1['logits'])} (exact {_frac(ans.get('logits', '?'))}), choice "
                  f"**{e1['choice']}**" + (" — an exact tie, red by the tie rule." if tie else "."),
                  ""]
    e2 = A["E2"]
    lines += ["### E2 — W_h diagonal set to 1", "",
              f"Input `{e2['input']}`: final state {_fmt(e2['h'])} (exact {_frac(ex['E2']['h'])}), "
              f"logits {_fmt(e2['logits'])} (exact {_frac(ex['E2']['logits'])}), p = "
              f"{_fmtp(e2['probs'])}, choice **{e2['choice']}**: with no decay the cue survives.",
              ""]
    e3 = A["E3"]
    lines += ["### E3 — resetting the state before every token", "",
              "| step | token | h_{t-1} | h_t | logits | p = [red, blue] |",
              "|---:|---|---|---|---|---|"]
    for i, s in enumerate(e3["reset_every_token"]["steps"]):
        lines.append(f"| {i + 1} | {s['token']} | {_fmt(s['h_prev'])} | {_fmt(s['h'])} | "
                     f"{_fmt(s['logits'])} | {_fmtp(s['probs'])} |")
    lines += ["", "Reset before every token: choice "
              f"**{e3['reset_every_token']['choice']}**; reset "
              f"once per input: **{e3['reset_once']['choice']}**; correct: {e3['correct']}. "
              f"Answer destroyed: {e3['destroyed']} — the final state only sees `is`.", ""]
    oc = A["oracle_check"]
    lines += [f"Oracle check: largest |Keras − exact| over all states and logits = "
              f"{oc['max_abs_diff']:.3g}; choices agree: {oc['choices_agree']}; stored expected "
              f"file up to date: {oc['expected_file_current']}.", ""]

    # ---- Case B
    lines += ["## Case B — the tanh RNN by hand (scalar state)", "",
              "`h_t = tanh(W_xh·x_t + W_hh·h_{t-1} + b_h)`, W_xh = 1, W_hh = 0.5, b_h = 0, "
              "inputs 1, 0 (Keras `SimpleRNN(1, tanh)`).", "",
              "| step | x_t | h_t (computed) | printed | status |", "|---:|---:|---:|---:|---|"]
    for i, (x, h) in enumerate(zip(B["x"], B["h"])):
        c = by_id.get(f"B.h_{i + 1}")
        lines.append(f"| {i + 1} | {x:g} | {h:#.5g} ({h:.10f}) | {c['printed'] if c else '—'} | "
                     f"{_status(c) if c else ''} |")
    lines += ["", "The second input is zero, yet the state is not: h_2 = tanh(0.5·h_1).", ""]

    # ---- Case C
    lines += ["## Case C — reading a review, start to finish", "",
              "`h_t = tanh(x_t + 0.5·h_{t-1})`, `p = σ(2·h_4)`, gold label positive; Keras "
              "`SimpleRNN(1, tanh)` + `Dense(1)` classifier, binary cross-entropy from the logit. "
              "The gradients are ∂L/∂x_t by `tf.GradientTape` through the same layers (BPTT).", "",
              "| step | token | x_t | h_t (computed) | printed | status | ∂L/∂x_t (nat) |",
              "|---:|---|---:|---:|---:|---|---:|"]
    for i, (t, x, h, g) in enumerate(zip(C["tokens"], C["x"], C["h"], C["grad_x"])):
        c = by_id.get(f"C.h_{i + 1}")
        lines.append(f"| {i + 1} | {t} | {x:g} | {h:#.5g} ({h:.10f}) | "
                     f"{c['printed'] if c else '—'} | {_status(c) if c else ''} | {g:.6g} |")
    lines += ["", "| quantity | computed | printed | status |", "|---|---:|---:|---|"]
    for key, label in (("z", "z = 2·h_4"), ("p", "p = σ(z)"), ("loss_nat", "L (nat)"),
                       ("loss_bit", "L (bit) = L (nat) / ln 2")):
        c = by_id.get(f"C.{key}")
        lines.append(f"| {label} | {C[key]:#.5g} ({C[key]:.10f}) | {c['printed'] if c else '—'} | "
                     f"{_status(c) if c else ''} |")
    lines += ["", "Nats use the natural log, bits log base 2; the two are never mixed: "
              "L(bit) = L(nat) / ln 2, and likewise for the gradients "
              f"(∂L_bit/∂x = {_fmt(C['grad_x_bit'], 6)}). The error reaches x_1 only through "
              "h_3, h_2, h_1, shrinking by 0.5·(1 − h_t²) at every step back.", ""]

    # ---- Case D
    g = D["gates"]
    lines += ["## Case D — one LSTM cell update", "",
              "A Keras `LSTMCell(1)` with zero kernels and biases logit(0.2), logit(0.9), "
              "artanh(0.5), logit(0.5) (gate order i, f, c̃, o), so the gates take the given "
              f"values: i = {g['i']!r}, f = {g['f']!r}, c̃ = {g['c_tilde']!r} (o = {g['o']!r}, "
              "not given by the text). Each bias is the float64 number whose activation, as "
              "Keras computes it, is nearest the target; where a gate shows a last-digit "
              "difference, no float64 bias reaches the target exactly.", "",
              "| quantity | computed | printed | status |", "|---|---:|---:|---|"]
    for key, label in (("kept", "kept = f·c_{t-1}"), ("written", "written = i·c̃ (cell output "
                                                               "for c_{t-1} = 0)"), ("c", "c_t")):
        c = by_id.get(f"D.{key}")
        lines.append(f"| {label} | {D[key]:.10g} | {c['printed'] if c else '—'} | "
                     f"{_status(c) if c else ''} |")
    lines += ["", f"c_t = {D['kept']:.4g} + {D['written']:.4g} = {D['c']:.4g}; h_t = o·tanh(c_t) = "
              f"{D['h']:.6g}.", ""]

    # ---- Case E
    from elman.core import diagnostics

    lines += ["## Case E — vanishing and exploding products", "",
              "Measured through Keras: ∂h_10/∂h_0 of a linear scalar `SimpleRNN` with W_hh = 0.5 "
              "and 1.5 (GradientTape).", "",
              "| product | computed | exact | printed | status |", "|---|---:|---:|---:|---|"]
    for key, label in (("vanish", "0.5^10"), ("explode", "1.5^10")):
        prs = [c for c in checks if c["id"].startswith(f"E.{key}")]
        lines.append(f"| {label} | {E[key]:.10g} | {E['products'][key]['exact']} | "
                     f"{'; '.join(c['printed'] for c in prs)} | "
                     f"{'; '.join(_status(c) for c in prs)} |")
    lines += ["", diagnostics.gradient_flow_markdown(E["_flow"], png_name="case_e_gradients.png",
                                                     heading_level=3)]

    # ---- Case F
    bi, s2s = F["bidirectional"], F["seq2seq"]
    lines += ["## Case F — bidirectional state size, and seq2seq shapes", "",
              f"`Bidirectional(SimpleRNN(3))` on {bi['input_length']} positions: output shape "
              f"{bi['output_shape']}, **{bi['per_position']}** numbers per position (forward 3, "
              f"then backward 3: {bi['concat_is_forward_then_backward']}).", "",
              f"Encoder–decoder (GRU 16): input `{s2s['source']}` has **{s2s['input_length']}** "
              f"characters, output `{' '.join(s2s['target_tokens'])}` has "
              f"**{s2s['output_length']}** tokens. Fitted to this one pair ({s2s['train_steps']} "
              f"Adam steps, final loss {s2s['final_loss']:.3g}), greedy decoding from `<start>` "
              f"with its own previous prediction fed back, cap {s2s['length_cap']}: "
              f"`{' '.join(s2s['decoded'])}` (stopped at `<eos>`: {s2s['stopped_at_eos']}).", ""]

    # ---- Case G
    gc, tb, gen = G["grad_check"], G["tbptt"], G["generation"]
    lines += ["## Case G — the RNN language model", "",
              f"Sample {' / '.join(G['tokens'])}: inputs {' '.join(G['inputs'])}, targets "
              f"{' '.join(G['targets'])} (Keras `Embedding` → `SimpleRNN(8)` → `Dense`, float64).",
              "", "| step | input | target | cross-entropy (nat), initial weights |",
              "|---:|---|---|---:|"]
    for i, (a, b, l) in enumerate(zip(G["inputs"], G["targets"], G["per_step_loss"])):
        lines.append(f"| {i + 1} | {a} | {b} | {l:.6f} |")
    lines += ["", f"Sum {G['loss_sum']:.6f}, mean {G['loss_mean']:.6f}. Shared weights: the "
              f"gradient of the summed loss equals the sum of the per-step gradients, largest "
              f"difference {gc['max_abs_diff']:.2e} (largest gradient {gc['max_abs_grad']:.3g}; "
              f"equal: {gc['equal']}).", "",
              f"Truncated BPTT with K = {tb['K']}: the state crosses the chunk boundary "
              f"(same loss: {tb['same_loss']}), the gradient does not (∂L_chunk2/∂x_chunk1 = "
              f"{tb['cross_boundary_grad']:g}; the weight gradient differs from full BPTT by "
              f"{tb['grad_difference_norm']:.3g}).", "",
              f"Greedy generation from `{' '.join(gen['prefix'])}` after "
              f"{G['training']['steps']} Adam steps: re-running the prefix "
              f"`{' '.join(gen['naive'])}`, carrying the state `{' '.join(gen['carried_state'])}` "
              f"(identical: {gen['identical']}; the default is the carried state, linear time).",
              ""]

    # ---- all printed values
    lines += ["## All printed values", "",
              "| case | series | quantity | printed | computed | status |",
              "|---|---|---|---|---|---|"]
    for c in checks:
        lines.append(f"| {c['case']} | {c['series']} | {c['quantity']} | {c['printed']} | "
                     f"{_computed_text(c['computed'])} | {_status(c)} |")
    meta = record["meta"]
    lines += ["", "## Reproducibility", "",
              f"- data: `{A['data']['file']}` sha256 `{A['data']['sha256']}`",
              f"- printed values: `{meta['printed_values']['file']}` sha256 "
              f"`{meta['printed_values']['sha256']}`",
              f"- python {meta['python']}, tensorflow {meta['tensorflow']}, keras {meta['keras']}, "
              f"numpy {meta['numpy']}; device {meta['device']}; dtype {DTYPE} (Cases A–E, G)",
              ""]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- entry points


def run_textbook(report_dir=Path("reports/textbook"), data_dir=Path("data/textbook")):
    """Recomputes Cases A–G, checks the printed values, writes the report and the run record.

    Writes `report.md`, `report.html`, `case_a_probs.png`, `case_e_gradients.png` and
    `run.json` (sorted keys) to `report_dir`.

    Args:
        report_dir: Path, the output folder. Default Path("reports/textbook").
        data_dir: Path, the folder with case_a.json, case_a_expected.json,
            derive_expected.py and printed_values.json. Default Path("data/textbook").

    Returns:
        dict, the run record: `A`–`G`, `flags`, `checks`, `meta`.

    Example:
        >>> record = run_textbook(Path("reports/textbook"))
        >>> record["A"]["rnn"]["blue key is"]["choice"]
        'blue'
    """
    import keras
    import numpy as np
    import tensorflow as tf

    report_dir, data_dir = Path(report_dir), Path(data_dir)
    printed_path = data_dir / "printed_values.json"
    printed = _read_json(printed_path)
    report_dir.mkdir(parents=True, exist_ok=True)

    e = case_e(report_dir)
    flow = e.pop("_flow")
    record = {"A": case_a(data_dir), "B": case_b(), "C": case_c(), "D": case_d(), "E": e,
              "F": case_f(), "G": case_g()}
    record["checks"], record["flags"] = check_printed(record, printed["values"])
    record["meta"] = {
        "python": platform.python_version(), "tensorflow": tf.__version__,
        "keras": keras.__version__, "numpy": np.__version__,
        "device": "GPU" if tf.config.list_logical_devices("GPU") else "CPU",
        "dtype": DTYPE,
        "printed_values": {"file": str(printed_path), "sha256": _sha256(printed_path)},
    }
    _plot_case_a(record["A"], report_dir / "case_a_probs.png")
    md = _report_markdown({**record, "E": {**e, "_flow": flow}}, record["checks"])
    write_text_atomic(report_dir / "report.md", md)
    write_text_atomic(report_dir / "report.html", render_html("elman — textbook cases", md,
                                                              report_dir))
    write_text_atomic(report_dir / "run.json", record_json(record))
    return record


def record_json(record):
    """The run record as JSON text with sorted keys.

    Args:
        record: dict, from `run_textbook`.

    Returns:
        str, the JSON (indent 1, sorted keys, UTF-8 characters kept), ending in a newline.
    """
    return json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv=None):
    """`elman textbook [--json] [--out DIR] [--data DIR]`.

    Args:
        argv: list of str or None, the arguments after `textbook`. Default None (sys.argv[1:]).

    Returns:
        int, the exit code: 0, or 2 for a user error (bad data file).

    Example:
        >>> main(["--out", "reports/textbook"])
        0
    """
    parser = argparse.ArgumentParser(
        prog="elman textbook",
        description="Recompute the course texts' worked examples (Cases A–G) with Keras and "
                    "check every printed value.")
    parser.add_argument("--json", action="store_true",
                        help="print the run record to stdout (sorted keys)")
    parser.add_argument("--out", type=Path, default=Path("reports/textbook"),
                        help="report folder (default reports/textbook)")
    parser.add_argument("--data", type=Path, default=Path("data/textbook"),
                        help="data folder (default data/textbook)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        record = run_textbook(args.out, args.data)
    except UserError as err:
        print(f"elman textbook: {err}", file=sys.stderr)
        return 2
    if args.json:
        sys.stdout.write(record_json(record))
    else:
        print(f"wrote {args.out / 'report.md'}, {args.out / 'report.html'}, "
              f"{args.out / 'run.json'}")
        print(f"{len(record['flags'])} printed value(s) differ from the computation:")
        for f in record["flags"]:
            print(f"  {f['case']} {f['quantity']}: printed {f['printed']}, computed "
                  f"{_computed_text(f['computed'])} (first at step {f['step']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
