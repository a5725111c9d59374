"""The translation task's splits: sentence pairs read into `elman.core.split.Split`s.

Items are `{"source", "target", "where"}` dicts (see `readers`). A split's `counts`
say what reading and filtering did: `read`, `bad_rows`, `bad_row_examples` and, for
train, `too_long`, `empty_after_tokenizing`, `duplicates`, `over_max_train_pairs`.
"""

import json
import random

from elman.core.encodings import read_lines
from elman.core.split import Split, carve, sha256
from elman.errors import UserError
from elman.tasks.translation import readers
from elman.tasks.translation.config import FORMATS


def sources(split):
    """The source sentences of a split's pairs."""
    return [p["source"] for p in split.items]


def targets(split):
    """The target sentences of a split's pairs."""
    return [p["target"] for p in split.items]


def detect_format(path, fmt="auto"):
    """The pair format of `path`: tsv, parallel, jsonl or hub."""
    if fmt not in FORMATS:
        raise UserError(f"data.format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    if fmt != "auto":
        return fmt
    text = str(path)
    if text.startswith("hub:"):
        return "hub"
    if "," in text:
        return "parallel"
    if text.lower().endswith((".jsonl", ".json")):
        return "jsonl"
    return "tsv"


def _parallel_paths(path, data):
    """`SRC,TGT` or a prefix `P` (files `P.<source_lang>` and `P.<target_lang>`)."""
    text = str(path)
    if "," not in text:  # named by language: reverse is already in the codes
        return f"{text}.{data.source_lang}", f"{text}.{data.target_lang}"
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts):
        raise UserError("expected two aligned files as SOURCE_FILE,TARGET_FILE", path=text)
    first, second = parts
    return (second, first) if data.reverse else (first, second)


def _jsonl_is_positional(path, encoding="utf-8"):
    """True when the first row uses source/target keys (reverse swaps them)."""
    for line in read_lines(path, encoding):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                return True
            return not (isinstance(row, dict) and "translation" in row)
    return True


def _check_aligned(source_path, target_path, encoding="utf-8"):
    """Two aligned files must have as many lines; names the first line without a partner."""
    counts = {p: len(read_lines(p, encoding)) for p in (source_path, target_path)}
    if counts[source_path] != counts[target_path]:
        longer, shorter = sorted((source_path, target_path), key=lambda p: -counts[p])
        raise UserError(
            f"line {counts[shorter] + 1} has no partner: {longer} has {counts[longer]} lines "
            f"but {shorter} has {counts[shorter]}; the two files must be aligned line by line",
            path=longer, line=counts[shorter] + 1)


def _read_counts(pairs, counts):
    """A split's reading counts from the pairs kept and the readers' `counts`."""
    return {"read": len(pairs) + counts.get("bad_rows", 0),
            "bad_rows": counts.get("bad_rows", 0),
            "bad_row_examples": counts.get("bad_row_examples", [])}


def read_pair_file(path, data, name):
    """Reads one split of pairs from a file (or two aligned files) as a Split.

    Args:
        path: str, a TSV or JSONL file, `SRC_FILE,TGT_FILE` or a parallel prefix.
        data: TranslationDataConfig (format, reverse, languages, skip_bad_rows).
        name: str, the split's name.
    """
    fmt = detect_format(path, data.format)
    counts = {}
    kwargs = {"skip_bad_rows": data.skip_bad_rows, "counts": counts, "encoding": data.encoding}
    if fmt == "hub":
        raise UserError("hub datasets are read with data.train = \"hub:NAME\"", path=path)
    if fmt == "tsv":
        pairs = readers.read_tsv_pairs(path, reverse=data.reverse, **kwargs)
        files = [path]
    elif fmt == "parallel":
        files = list(_parallel_paths(path, data))
        _check_aligned(*files, data.encoding)
        pairs = readers.read_parallel_files(files[0], files[1], **kwargs)
    else:
        files = [path]
        pairs = readers.read_jsonl_pairs(path, data.source_lang, data.target_lang, **kwargs)
        if data.reverse and _jsonl_is_positional(path, data.encoding):
            pairs = [dict(p, source=p["target"], target=p["source"]) for p in pairs]
    return Split(name, pairs, ",".join(map(str, files)), " ".join(sha256(p) for p in files),
                 counts=_read_counts(pairs, counts))


def _load_hub(data):
    """The hub splits the data config names, as Splits."""
    from elman.core.hub import hub_parts, load_hub

    name = data.train[4:]
    loaded = load_hub(name, data.hub_config, "--data train.tsv --validation dev.tsv")
    out = {}
    for ours, _, dataset, source in hub_parts(loaded, name, {
            "train": data.hub_train_split, "validation": data.hub_validation_split,
            "test": data.hub_test_split}):
        counts = {}
        pairs = readers.pairs_from_hf_dataset(dataset, data.source_lang, data.target_lang,
                                              name=source, skip_bad_rows=data.skip_bad_rows,
                                              counts=counts)
        out[ours] = Split(ours, pairs, source, "", counts=_read_counts(pairs, counts))
    return out


def load_splits(data, seed):
    """Reads train/validation/test pairs from a data config (fails fast, before TensorFlow).

    Args:
        data: TranslationDataConfig.
        seed: int, the run's seed (unused here: carving and capping happen in `prepare`).

    Returns:
        dict of split name → Split ("train" and, when given, "validation" and "test").
    """
    if not data.train:
        raise UserError("no training data: give --data FILE (or hub:NAME) or set data.train")
    if data.max_train_pairs < 0 or not 0.0 < data.validation_fraction < 1.0:
        raise UserError("data.max_train_pairs must be >= 0 and data.validation_fraction in (0, 1)")
    for name in ("max_source_len", "max_target_len"):
        if getattr(data, name) < 1:
            raise UserError(f"data.{name} must be a positive number of tokens")
    if detect_format(data.train, data.format) == "hub":
        splits = _load_hub(data)
    else:
        splits = {"train": read_pair_file(data.train, data, "train")}
        for name in ("validation", "test"):
            path = getattr(data, name)
            if path:
                splits[name] = read_pair_file(path, data, name)
    for split in splits.values():
        if not split.items:
            raise UserError(f"the {split.name} split holds no sentence pairs", path=split.source)
    return splits


def filter_train(train, source_lengths, target_lengths, data, seed):
    """Drops too-long (and, optionally, repeated) training pairs; counts both in place.

    Args:
        train: the training Split (its items and counts are replaced).
        source_lengths, target_lengths: lists of int, the token count of each side.
        data: TranslationDataConfig (length limits, dedupe, max_train_pairs).
        seed: int, seeds the choice of pairs kept under `max_train_pairs`.
    """
    kept, too_long, empty = [], 0, 0
    for pair, n_source, n_target in zip(train.items, source_lengths, target_lengths):
        if n_source == 0 or n_target == 0:
            empty += 1
        elif n_source > data.max_source_len or n_target > data.max_target_len:
            too_long += 1
        else:
            kept.append(pair)
    kept, dropped = readers.filter_pairs(kept, dedupe=data.dedupe)
    capped = 0
    if data.max_train_pairs and len(kept) > data.max_train_pairs:
        order = sorted(random.Random(seed).sample(range(len(kept)), data.max_train_pairs))
        capped = len(kept) - len(order)
        kept = [kept[i] for i in order]
    train.items = kept
    train.counts.update(too_long=too_long, empty_after_tokenizing=empty,
                        duplicates=dropped["duplicates"], over_max_train_pairs=capped)


def carve_validation(splits, fraction, seed):
    """Holds out a seeded share of train as validation when there is no validation split.

    Returns:
        the splits in the order train, validation(, test).
    """
    if "validation" in splits:
        return splits
    train, validation = carve(splits["train"], fraction, seed, what="pairs",
                              counts=lambda items: {"read": len(items), "bad_rows": 0})
    out = {"train": train, "validation": validation}
    if "test" in splits:
        out["test"] = splits["test"]
    return out
