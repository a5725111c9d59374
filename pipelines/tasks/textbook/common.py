"""Helpers shared by the textbook cases: the float64 dtype, number conversion, data files.

Imports no TensorFlow; numpy is imported by the helpers that need it, when called.
"""

import hashlib
import json
from fractions import Fraction
from pathlib import Path

from elman.errors import UserError

DTYPE = "float64"


def num(value):
    """A JSON number or an "a/b" string as a float."""
    return float(Fraction(str(value)))


def mat(value):
    """A nested list of numbers (or "a/b" strings) as a float64 matrix."""
    import numpy as np

    return np.array([[num(v) for v in row] for row in value], dtype=DTYPE)


def vec(value):
    """A list of numbers (or "a/b" strings) as a float64 vector."""
    import numpy as np

    return np.array([num(v) for v in value], dtype=DTYPE)


def to_py(value):
    """Numpy arrays and scalars to plain Python floats and lists."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return [to_py(v) for v in value.tolist()] if value.ndim else float(value)
    if isinstance(value, (list, tuple)):
        return [to_py(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return float(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    return value


def choose(probs, candidates):
    """The candidate with the highest probability; an exact tie goes to the earlier one."""
    return candidates[list(probs).index(max(probs))]


def sha256(path):
    """The SHA-256 hex digest of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def read_json(path):
    """A JSON data file; a missing or malformed file is a `UserError`."""
    path = Path(path)
    if not path.is_file():
        raise UserError("file not found", path=path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise UserError(f"not valid JSON: {err.msg}", path=path, line=err.lineno) from None

