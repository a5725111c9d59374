"""The exact-arithmetic oracle for Case A, and the comparison of the Keras run with it.

`data/textbook/derive_expected.py` (standard library only) derives every state,
logit and exercise answer of Case A as exact fractions, independently of Keras;
`data/textbook/case_a_expected.json` is its stored output. This module loads the
oracle, checks that the stored file is current, and measures how far the Keras
floats are from the fractions.
"""

import importlib.util
from fractions import Fraction
from pathlib import Path

from elman.errors import UserError
from elman.tasks.textbook.common import read_json, sha256

EXACT_KEYS = ("rnn", "window", "E1", "E2", "E3")


def load_oracle(data_dir):
    """Imports data_dir/derive_expected.py (standard library only) as a module."""
    path = Path(data_dir) / "derive_expected.py"
    if not path.is_file():
        raise UserError("the exact-arithmetic oracle is missing", path=path)
    spec = importlib.util.spec_from_file_location("elman_textbook_oracle", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def derive_exact(data_dir, case_path):
    """The oracle's exact results for the case file, and whether the stored copy matches them.

    Args:
        data_dir: Path, the folder holding derive_expected.py and case_a_expected.json.
        case_path: Path, the case file (case_a.json).

    Returns:
        tuple (exact, expected_path, current): the oracle's dict, the path of the stored
        expected file, and True when that file was derived from this case file (same
        SHA-256) and holds the same results.
    """
    oracle = load_oracle(data_dir)
    exact = oracle.derive(oracle.load_case(case_path))
    expected_path = Path(data_dir) / "case_a_expected.json"
    stored = read_json(expected_path) if expected_path.is_file() else None
    current = bool(stored) and stored.get("derived_from", {}).get("sha256") == sha256(case_path)
    same = current and all(stored.get(k) == exact[k] for k in EXACT_KEYS)
    return exact, expected_path, same


def max_diff(floats, exact):
    """Largest |float - Fraction(string)| over nested lists."""
    if isinstance(floats, list):
        return max((max_diff(f, e) for f, e in zip(floats, exact)), default=0.0)
    return abs(floats - float(Fraction(exact)))


def oracle_check(rec, exact, inputs, expected_path, expected_current):
    """Keras floats against exact fractions: the largest difference and whether choices agree.

    Args:
        rec: dict, Case A's record so far (`rnn`, `window`, `E1`, `E2`, `E3`).
        exact: dict, the oracle's results.
        inputs: list of str, the case's inputs.
        expected_path: Path, the stored expected file.
        expected_current: bool, whether the stored file matches the oracle.

    Returns:
        dict with `max_abs_diff`, `choices_agree`, `expected_file`, `expected_file_current`.
    """
    diffs = []
    for text in inputs:
        for s, es in zip(rec["rnn"][text]["steps"], exact["rnn"][text]["steps"]):
            diffs += [max_diff(s["h"], es["h"]), max_diff(s["logits"], es["logits"])]
        diffs.append(max_diff(rec["window"][text]["logits"], exact["window"][text]["logits"]))
    choices_agree = (all(rec["rnn"][t]["choice"] == exact["rnn"][t]["choice"]
                         and rec["window"][t]["choice"] == exact["window"][t]["choice"]
                         for t in inputs)
                     and rec["E1"]["fillers"] == (exact["E1"]["answer"] or {}).get("fillers")
                     and rec["E2"]["choice"] == exact["E2"]["choice"]
                     and rec["E3"]["reset_every_token"]["choice"]
                     == exact["E3"]["reset_every_token"]["choice"])
    return {"max_abs_diff": max(diffs), "choices_agree": choices_agree,
            "expected_file": str(expected_path), "expected_file_current": expected_current}
