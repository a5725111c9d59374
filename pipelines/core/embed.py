"""Pretrained word vectors (word2vec/GloVe text files) read into an embedding matrix."""

import dataclasses

import numpy as np

from elman.errors import UserError
from elman.core.data import read_text_file


@dataclasses.dataclass
class Coverage:
    """How much of the vocabulary a pretrained file covered."""

    path: str
    found: int
    vocabulary: int  # tokens in the vocabulary (padding and OOV excluded)
    found_lowercased: int  # found only after lower-casing

    @property
    def share(self):
        return self.found / self.vocabulary if self.vocabulary else 0.0


def read_pretrained(path, vocabulary, dim, seed=0):
    """Reads word2vec/GloVe text vectors for a vocabulary.

    Accepts GloVe lines (`token v1 ... vD`) and word2vec text files (the same, after a
    `count dim` header line). Tokens missing from the file get small random vectors;
    row 0 (padding) is zero.

    Args:
        path: str, the vectors file.
        vocabulary: list of str, id → token (index 0 padding, 1 OOV).
        dim: int, the expected vector size.
        seed: int, seeds the random vectors of missing tokens.

    Returns:
        (matrix [len(vocabulary), dim] float32, Coverage)
    """
    text = read_text_file(path)
    wanted = {t: i for i, t in enumerate(vocabulary) if i >= 2}
    lowered = {}
    for t, i in wanted.items():
        lowered.setdefault(t.lower(), []).append(i)
    rng = np.random.default_rng(seed)
    matrix = rng.normal(0.0, 0.1, size=(len(vocabulary), dim)).astype("float32")
    matrix[0] = 0.0
    exact, by_lower = set(), set()
    for number, line in enumerate(text.splitlines(), start=1):
        parts = line.rstrip().split(" ")
        if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
            if int(parts[1]) != dim:
                raise UserError(f"vectors have {parts[1]} dimensions but embedding.dim is {dim}",
                                path=path, line=1)
            continue
        if len(parts) < 2:
            continue
        token, values = parts[0], parts[1:]
        if len(values) != dim:
            raise UserError(f"expected {dim} numbers after the token, found {len(values)} "
                            "(set embedding.dim to the file's dimension)", path=path, line=number)
        if token not in wanted and token.lower() not in lowered:
            continue
        try:
            vector = np.asarray(values, dtype="float32")
        except ValueError:
            raise UserError("expected numbers after the token", path=path, line=number) from None
        if token in wanted:
            matrix[wanted[token]] = vector
            exact.add(wanted[token])
        for i in lowered.get(token.lower(), []):
            if i not in exact and i not in by_lower:
                matrix[i] = vector
                by_lower.add(i)
    by_lower -= exact
    return matrix, Coverage(str(path), len(exact | by_lower), len(wanted), len(by_lower))
