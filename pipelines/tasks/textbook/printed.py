"""The values the course texts print, compared with the computed ones.

Every entry of `data/textbook/printed_values.json` names a path into the run
record. A decimal printed with n digits agrees when the computed value is within
half a unit of its last digit; integers and fractions are exact; words must
match. A disagreement is flagged with the step where its series first goes
wrong, and whether it would follow from the text's own previous printed value.
"""

import math
import re
from fractions import Fraction

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


def _check_entry(record, entry, numeric):
    """One comparison: the computed value at the entry's path against its printed text."""
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
    return {"id": entry["id"], "case": entry["case"], "series": entry["series"],
            "quantity": entry["quantity"], "printed": entry["printed"],
            "computed": computed, "difference": diff, "tolerance": tol, "agrees": ok,
            "quantity_step": entry.get("step"), "follows_from_printed": follows}


def _flag(check, first):
    """A failed check as a flag, with the step where its series first went wrong."""
    step, quantity = first[check["series"]]
    return {"case": check["case"], "quantity": check["quantity"],
            "printed": check["printed"], "computed": check["computed"],
            "step": step, "first_quantity": quantity,
            "quantity_step": check["quantity_step"],
            "difference": check["difference"], "tolerance": check["tolerance"],
            "follows_from_printed": check["follows_from_printed"], "id": check["id"]}


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
        check = _check_entry(record, entry, numeric)
        if not check["agrees"] and entry["series"] not in first:
            first[entry["series"]] = (entry.get("step"), entry["quantity"])
        checks.append(check)
    flags = [_flag(check, first) for check in checks if not check["agrees"]]
    return checks, flags
