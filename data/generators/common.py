"""Helpers shared by the toy-data generators: the data folder, file writing, split drawing.

Standard library only. Every generator writes through `write_text`, so all files
are UTF-8 with LF line endings.
"""

import random
import re
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent.parent
LICENSE = "written for elman, CC0"
SPLITS = ("train", "validation", "test")


def write_text(relpath, text):
    """Writes `text` as UTF-8 with LF line endings under data/."""
    path = DATA_DIR / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
    return path


def dedupe_key(text):
    """Identity of a sentence for the cross-split check: case, spaces, punctuation ignored."""
    return re.sub(r"[\W_]+", "", text.lower())


def weighted(rng, pairs):
    """Picks from [(item, weight), ...]."""
    total = sum(w for _, w in pairs)
    x = rng.random() * total
    for item, w in pairs:
        x -= w
        if x < 0:
            return item
    return pairs[-1][0]


def generate_splits(make, sizes, seed, anchors=(), max_tries=200000):
    """Draws unique examples for each split; anchors go first into train.

    `make(rng, split, index)` returns (key_text, example). Keys are compared with
    `dedupe_key`, so no two splits (and no two rows) share a sentence.
    """
    rng = random.Random(seed)
    seen = set()
    out = {}
    for split in SPLITS:
        rows = []
        if split == "train":
            for key_text, example in anchors:
                key = dedupe_key(key_text)
                if key in seen:
                    raise AssertionError(f"duplicate anchor: {key_text}")
                seen.add(key)
                rows.append(example)
        tries = 0
        while len(rows) < sizes[split]:
            tries += 1
            if tries > max_tries:
                raise RuntimeError(f"grammar too small for {split}: {len(rows)} rows")
            made = make(rng, split, len(rows))
            if made is None:
                continue
            key_text, example = made
            key = dedupe_key(key_text)
            if key in seen:
                continue
            seen.add(key)
            rows.append(example)
        rng.shuffle(rows)
        out[split] = rows
    return out
