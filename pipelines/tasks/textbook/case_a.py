"""Case A, the red/blue key task: a ReLU `SimpleRNN` against a two-token window model.

Both models share one `Embedding` and one `Dense` head whose weights are set from
`data/textbook/case_a.json`. Every input runs through both; exercise E1 searches
for the filler count that flips the answer, E2 removes the decay, E3 resets the
state before every token. The results are compared with the exact oracle
(`oracle`), and the lesson is stated in exact fractions.
"""

from fractions import Fraction
from pathlib import Path

from elman.errors import UserError
from elman.tasks.textbook.common import DTYPE, choose, mat, num, read_json, sha256, to_py, vec
from elman.tasks.textbook.oracle import derive_exact, oracle_check


def _case_a_models(case, W_h=None):
    """The RNN and the window model of Case A, sharing one embedding and one output head."""
    import keras

    vocab, emb = case["vocabulary"], mat(case["embeddings"])
    rnn_spec, head_spec, win = case["rnn"], case["head"], case["window"]
    W_x, W_h = mat(rnn_spec["W_x"]), mat(rnn_spec["W_h"] if W_h is None else W_h)
    W_y, b_y = mat(head_spec["W_y"]), vec(head_spec["b_y"])
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

    W = mat(win["W"])
    win_ids = keras.Input(shape=(int(win["size"]),), dtype="int32", name="window_ids")
    concat = keras.layers.Flatten(dtype=DTYPE, name="concat")(embedding(win_ids))
    hidden = keras.layers.Dense(W.shape[1], activation=win["activation"], dtype=DTYPE,
                                name="window_hidden")
    wh = hidden(concat)
    wlogits = head(wh)
    window_model = keras.Model(win_ids, {"hidden": wh, "logits": wlogits,
                                         "probs": softmax(wlogits)}, name="case_a_window")

    embedding.set_weights([emb])
    rnn.set_weights([W_x, W_h, vec(rnn_spec["b_h"])])
    head.set_weights([W_y, b_y])
    hidden.set_weights([W, vec(win["b"])])
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
    h0 = vec(case["rnn"]["h_0"])
    if reset_every_token:  # every token is its own sequence, each starting from h_0
        out = model([np.array(ids, dtype="int32")[:, None], np.tile(h0, (len(ids), 1))])
        seq = {k: v.numpy()[:, 0] for k, v in out.items()}
        prev = [h0] * len(ids)
    else:
        out = model([np.array([ids], dtype="int32"), h0[None]])
        seq = {k: v.numpy()[0] for k, v in out.items()}
        prev = [h0] + list(seq["h"][:-1])
    steps = [{"token": t, "id": i, "x": to_py(seq["x"][k]), "h_prev": to_py(prev[k]),
              "h": to_py(seq["h"][k]), "logits": to_py(seq["logits"][k]),
              "probs": to_py(seq["probs"][k])}
             for k, (t, i) in enumerate(zip(tokens, ids))]
    return {"tokens": tokens, "steps": steps,
            "choice": choose(steps[-1]["probs"], case["candidates"])}


def _run_window(model, case, text, case_path):
    import numpy as np

    tokens, ids = _ids(case, text, case_path)
    size = int(case["window"]["size"])
    if len(ids) < size:
        raise UserError(f"input {text!r} is shorter than the window ({size})", path=case_path)
    out = model(np.array([ids[-size:]], dtype="int32"))
    res = {k: to_py(v.numpy()[0]) for k, v in out.items()}
    return {"tokens": tokens[-size:], "hidden": res["hidden"], "logits": res["logits"],
            "probs": res["probs"], "choice": choose(res["probs"], case["candidates"])}


def _exercise_e1(rnn_model, case, case_path):
    """E1: the smallest number of fillers after a blue cue that makes the RNN choose red."""
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
    return {**(found or {"fillers": None, "input": None, "h": None, "logits": None,
                         "probs": None, "choice": None}),
            "target": e1["target"], "searched": searched}


def _exercise_e2(case, case_path):
    """E2: the RNN with the diagonal of W_h set to the exercise's value (no decay)."""
    e2 = case["exercises"]["E2"]
    W_h = [[e2["W_h_diagonal"] if i == j else v for j, v in enumerate(row)]
           for i, row in enumerate(case["rnn"]["W_h"])]
    r = _run_rnn(_case_a_models(case, W_h=W_h)[0], case, e2["input"], case_path)
    return {"input": e2["input"], "W_h": [[num(v) for v in row] for row in W_h],
            "h": r["steps"][-1]["h"], "logits": r["steps"][-1]["logits"],
            "probs": r["steps"][-1]["probs"], "choice": r["choice"]}


def _exercise_e3(rnn_model, case, case_path):
    """E3: resetting the state before every token against resetting it once per input."""
    e3 = case["exercises"]["E3"]
    reset = _run_rnn(rnn_model, case, e3["input"], case_path, reset_every_token=True)
    once = _run_rnn(rnn_model, case, e3["input"], case_path)
    cue = next((t for t in e3["input"].split(" ") if t in case["candidates"]), None)
    return {"input": e3["input"], "correct": cue,
            "reset_every_token": {"steps": reset["steps"], "choice": reset["choice"]},
            "reset_once": {"h": once["steps"][-1]["h"], "logits": once["steps"][-1]["logits"],
                           "probs": once["steps"][-1]["probs"], "choice": once["choice"]},
            "destroyed": once["choice"] == cue and reset["choice"] != cue}


def case_a(data_dir):
    """Case A with Keras: both models on every input, E1 (search), E2, E3, and the exact oracle.

    Args:
        data_dir: Path, the folder holding case_a.json, case_a_expected.json, derive_expected.py.

    Returns:
        dict, the `A` part of the run record.
    """
    case_path = Path(data_dir) / "case_a.json"
    case = read_json(case_path)
    exact, expected_path, same = derive_exact(data_dir, case_path)

    rnn_model, window_model = _case_a_models(case)
    rec = {"candidates": case["candidates"], "inputs": list(case["inputs"]), "rnn": {},
           "window": {}}
    for text in case["inputs"]:
        rec["rnn"][text] = _run_rnn(rnn_model, case, text, case_path)
        rec["window"][text] = _run_window(window_model, case, text, case_path)
    rec["E1"] = _exercise_e1(rnn_model, case, case_path)
    rec["E2"] = _exercise_e2(case, case_path)
    rec["E3"] = _exercise_e3(rnn_model, case, case_path)

    # The oracle: Keras floats against exact fractions, and the lesson in exact terms.
    rec["exact"] = exact
    rec["oracle_check"] = oracle_check(rec, exact, case["inputs"], expected_path, same)
    rec["lesson"] = _case_a_lesson(case, rec, exact)
    rec["data"] = {"file": str(case_path), "sha256": sha256(case_path)}
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
