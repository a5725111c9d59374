"""One data core for every task: the `Split` type, `carve` and `sha256`.

A task's readers turn rows into items (a labelled text, a tagged sentence, a sentence
pair, a line of text); everything a report needs to say about where the items came
from and what reading them skipped, repaired or truncated lives on the `Split`.
"""

import dataclasses
import hashlib
import random

from elman.errors import UserError


@dataclasses.dataclass
class Split:
    """The items of one split and what reading them counted.

    Attributes:
        name: str, "train", "validation", "test" (or "evaluation").
        items: list, the task's items (each knows its "file:line").
        source: str, the file(s), "hub:NAME[split]" or "carved from ...".
        sha256: str, the SHA-256 of the source file ("" when not one file).
        skipped: list of (where, reason) pairs for rows left out on request.
        counts: dict of str → int, what reading counted (read, repaired, truncated, ...).
    """

    name: str
    items: list
    source: str
    sha256: str = ""
    skipped: list = dataclasses.field(default_factory=list)
    counts: dict = dataclasses.field(default_factory=dict)

    def __len__(self):
        return len(self.items)


def sha256(path):
    """Returns the hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _held_out(n, fraction, rng):
    order = list(range(n))
    rng.shuffle(order)
    count = min(max(int(round(n * fraction)), 1), n - 1)
    return set(order[:count])


def _held_out_by_group(groups, fraction, rng):
    by_group = {}
    for i, group in enumerate(groups):
        by_group.setdefault(group, []).append(i)
    held = set()
    for group in sorted(by_group):
        indices = by_group[group]
        rng.shuffle(indices)
        count = 0
        if len(indices) > 1:
            count = min(max(int(round(len(indices) * fraction)), 1), len(indices) - 1)
        held.update(indices[:count])
    return held


def carve(train, fraction, seed, stratify=None, what="examples", counts=None):
    """Holds out a seeded share of `train` as the validation split.

    Args:
        train: Split, the training split.
        fraction: float in (0, 1), the share held out.
        seed: int, seeds the shuffle.
        stratify: callable item → group key, or None. With it, each group (e.g. each
            label) gives up the same share, at least one item and never its last.
        what: str, what the items are called in the error message.
        counts: callable list of items → dict, the held-out split's counts, or None.

    Returns:
        (train, validation): two new Splits; `train` keeps the items not held out.
    """
    if not 0.0 < fraction < 1.0:
        raise UserError(f"data.validation_fraction must be in (0, 1); got {fraction}")
    rng = random.Random(seed)
    n = len(train.items)
    if stratify is None:
        held = _held_out(n, fraction, rng) if n >= 2 else set()
    else:
        held = _held_out_by_group([stratify(item) for item in train.items], fraction, rng)
    if not held:
        raise UserError(f"too few training {what} to carve a validation split; give one "
                        "with --validation", path=train.source)
    keep = [item for i, item in enumerate(train.items) if i not in held]
    val = [item for i, item in enumerate(train.items) if i in held]
    validation = Split("validation", val, f"carved from {train.source}", "",
                       counts=counts(val) if counts else {})
    return dataclasses.replace(train, items=keep), validation
