"""Derive Case A's expected results in exact fractions, independently of Keras.

Standard library only (`fractions.Fraction`, `json`, `hashlib`): this is the
oracle the tests and the textbook report check the Keras computation against.
Every number in `case_a.json` is read as an exact fraction (`0.125` is 1/8, not
the nearest float), every result is written as a string such as `"1/256"`.
Probabilities are not written: they are irrational, so the expected file holds
the exact logits and a reader computes the probabilities from them.

Run from the project root after changing `case_a.json`:

    python data/textbook/derive_expected.py

Example:
    >>> case = load_case(Path("data/textbook/case_a.json"))
    >>> derive(case)["rnn"]["red key is"]["steps"][-1]["h"]
    ['1/4', '0']
"""

import hashlib
import json
import sys
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASE_FILE = HERE / "case_a.json"
EXPECTED_FILE = HERE / "case_a_expected.json"


def _exact(value):
    """Turns a JSON number or a "a/b" string into a Fraction; lists recursively."""
    if isinstance(value, list):
        return [_exact(v) for v in value]
    if isinstance(value, (str, int, Fraction)):
        return Fraction(value)
    raise ValueError(f"Expected a number or a fraction string. Received: {value!r}")


def load_case(path=CASE_FILE):
    """Reads a Case A file; numbers become exact Fractions (0.125 is 1/8).

    Args:
        path: Path, the Case A JSON file. Default `case_a.json` beside this script.

    Returns:
        dict, the file's content with every weight as a Fraction.
    """
    text = Path(path).read_text(encoding="utf-8")
    # parse_float receives the literal text, so 0.1 becomes exactly 1/10.
    case = json.loads(text, parse_float=Fraction, parse_int=Fraction)
    for key in ("embeddings",):
        case[key] = _exact(case[key])
    for section in ("rnn", "head", "window"):
        for name, value in case[section].items():
            if isinstance(value, (list, int, Fraction)) and name != "size":
                case[section][name] = _exact(value)
    case["window"]["size"] = int(case["window"]["size"])
    ex = case["exercises"]
    ex["E1"]["max_fillers"] = int(ex["E1"]["max_fillers"])
    ex["E2"]["W_h_diagonal"] = _exact(ex["E2"]["W_h_diagonal"])
    return case


def _vecmat(v, m):
    """Row vector times matrix."""
    return [sum((v[i] * m[i][j] for i in range(len(v))), Fraction(0)) for j in range(len(m[0]))]


def _add(a, b):
    return [x + y for x, y in zip(a, b)]


def _relu(v):
    return [x if x > 0 else Fraction(0) for x in v]


def _act(name, v):
    if name == "relu":
        return _relu(v)
    if name == "linear":
        return list(v)
    raise ValueError(f"Expected activation to be one of {{'relu', 'linear'}}. Received: {name!r}")


def _choice(logits, candidates):
    """Softmax is monotone: the highest logit wins; a tie goes to the earlier candidate."""
    best = max(logits)
    return candidates[logits.index(best)]


def _strs(v):
    return [str(x) for x in v]


def _embed(case, token):
    vocab = case["vocabulary"]
    if token not in vocab:
        raise ValueError(f"Unknown token {token!r}; the vocabulary is {vocab}")
    return case["embeddings"][vocab.index(token)]


def run_rnn(case, text, W_h=None, reset_every_token=False):
    """Runs the ReLU RNN on one input in exact arithmetic.

    Args:
        case: dict, from `load_case`.
        text: str, the input; tokens are split on single spaces.
        W_h: list or None, a replacement recurrent matrix. Default None (the case's).
        reset_every_token: bool, start every token from h_0 instead of the previous state.
            Default False.

    Returns:
        dict with `steps` (token, x, h_prev, h, logits as Fractions) and `choice`.
    """
    rnn, head = case["rnn"], case["head"]
    W_h = rnn["W_h"] if W_h is None else W_h
    h = list(rnn["h_0"])
    steps = []
    for token in text.split(" "):
        x = _embed(case, token)
        h_prev = list(rnn["h_0"]) if reset_every_token else h
        pre = _add(_add(_vecmat(x, rnn["W_x"]), _vecmat(h_prev, W_h)), rnn["b_h"])
        h = _act(rnn["activation"], pre)
        logits = _add(_vecmat(h, head["W_y"]), head["b_y"])
        steps.append({"token": token, "x": x, "h_prev": h_prev, "h": h, "logits": logits})
    return {"steps": steps, "choice": _choice(steps[-1]["logits"], case["candidates"])}


def run_window(case, text):
    """Runs the fixed two-token window baseline on one input in exact arithmetic.

    Args:
        case: dict, from `load_case`.
        text: str, the input; only its last `window.size` tokens are read.

    Returns:
        dict with `tokens`, `hidden`, `logits` (Fractions) and `choice`.
    """
    win, head = case["window"], case["head"]
    tokens = text.split(" ")[-win["size"]:]
    concat = [v for token in tokens for v in _embed(case, token)]
    hidden = _act(win["activation"], _add(_vecmat(concat, win["W"]), win["b"]))
    # "then add b_y to get the logits": the same head as the RNN (W_y = I in the case).
    logits = _add(_vecmat(hidden, head["W_y"]), head["b_y"])
    return {"tokens": tokens, "hidden": hidden, "logits": logits,
            "choice": _choice(logits, case["candidates"])}


def _rnn_record(result):
    return {
        "steps": [{"token": s["token"], "x": _strs(s["x"]), "h_prev": _strs(s["h_prev"]),
                   "h": _strs(s["h"]), "logits": _strs(s["logits"])} for s in result["steps"]],
        "choice": result["choice"],
    }


def derive(case):
    """Derives every Case A result the textbook run reports, as exact fraction strings.

    Args:
        case: dict, from `load_case`.

    Returns:
        dict with `rnn`, `window` (keyed by input text), `E1`, `E2`, `E3`.
    """
    out = {"rnn": {}, "window": {}}
    for text in case["inputs"]:
        out["rnn"][text] = _rnn_record(run_rnn(case, text))
        w = run_window(case, text)
        out["window"][text] = {"tokens": w["tokens"], "hidden": _strs(w["hidden"]),
                               "logits": _strs(w["logits"]), "choice": w["choice"]}

    e1 = case["exercises"]["E1"]
    searched, answer = [], None
    for n in range(e1["max_fillers"] + 1):
        text = " ".join([e1["cue"]] + [e1["filler"]] * n + [e1["suffix"]])
        r = run_rnn(case, text)
        searched.append({"fillers": n, "logits": _strs(r["steps"][-1]["logits"]),
                         "choice": r["choice"]})
        if r["choice"] == e1["target"]:
            answer = {"fillers": n, "input": text, "h": _strs(r["steps"][-1]["h"]),
                      "logits": _strs(r["steps"][-1]["logits"]), "choice": r["choice"]}
            break
    out["E1"] = {"answer": answer, "searched": searched}

    e2 = case["exercises"]["E2"]
    size = len(case["rnn"]["W_h"])
    W_h = [[e2["W_h_diagonal"] if i == j else case["rnn"]["W_h"][i][j] for j in range(size)]
           for i in range(size)]
    r = run_rnn(case, e2["input"], W_h=W_h)
    out["E2"] = {"input": e2["input"], "W_h": [_strs(row) for row in W_h],
                 "h": _strs(r["steps"][-1]["h"]), "logits": _strs(r["steps"][-1]["logits"]),
                 "choice": r["choice"]}

    e3 = case["exercises"]["E3"]
    reset = run_rnn(case, e3["input"], reset_every_token=True)
    once = run_rnn(case, e3["input"])
    out["E3"] = {"input": e3["input"], "reset_every_token": _rnn_record(reset),
                 "reset_once": {"h": _strs(once["steps"][-1]["h"]),
                                "logits": _strs(once["steps"][-1]["logits"]),
                                "choice": once["choice"]}}
    return out


def sha256_of(path):
    """SHA-256 of a file's bytes, hex."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def main(argv=None):
    """Writes `case_a_expected.json` next to `case_a.json`.

    Args:
        argv: list of str or None, optional `[CASE_FILE [EXPECTED_FILE]]`. Default None.

    Returns:
        int, the exit code.
    """
    argv = sys.argv[1:] if argv is None else argv
    case_file = Path(argv[0]) if argv else CASE_FILE
    expected_file = Path(argv[1]) if len(argv) > 1 else case_file.with_name("case_a_expected.json")
    expected = {
        "derived_from": {"file": case_file.name, "sha256": sha256_of(case_file)},
        "method": "exact rational arithmetic (fractions.Fraction) by derive_expected.py; "
                  "probabilities are softmax(logits), computed by the reader",
        **derive(load_case(case_file)),
    }
    expected_file.write_text(json.dumps(expected, indent=1, sort_keys=True, ensure_ascii=False)
                             + "\n", encoding="utf-8")
    print(f"wrote {expected_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
