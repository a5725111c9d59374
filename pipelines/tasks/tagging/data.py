"""The tagging task's data: tagged sentences from files, dataset folders or the hub.

Each split is an `elman.core.split.Split` whose items are sentences
`{"tokens": [...], "tags": [...] (entity tags in BIO), "source": "file:line"}` and whose
counts are what the reader counted (`elman.tasks.tagging.readers`). Entity tags are
read in the corpus's scheme (BIO, IOB1, BIOS, BIOES, BMES: given, or guessed on the
given files) and kept in BIO; free tags (POS) are taken as they are.
"""

import dataclasses
from pathlib import Path

from elman.core.split import Split, carve, sha256
from elman.errors import UserError
from elman.tasks.tagging import json_records, layouts, readers
from elman.tasks.tagging import schemes as tag_schemes

LOCAL_HINT = ("--data train.conll --validation dev.conll (CoNLL, CoNLL-U, JSONL, or a "
              "save_to_disk folder)")


def entity_like(tags):
    """Whether every tag is `O` or a `B-`, `I-`, `M-`, `E-`, `S-` + type entity tag."""
    return all(t == "O" or (isinstance(t, str) and len(t) > 2 and t[1] == "-" and t[0] in "BIMES")
               for t in tags)


def where(source):
    """(path, line) of a sentence's source "file:line" (line None when not a number)."""
    path, _, line = str(source).rpartition(":")
    return (path, int(line)) if line.isdigit() and path else (str(source), None)


def _cli_hint(error):
    """Rewrites the reader's API hint (repair=True) into the command-line words."""
    message = error.message.replace("pass repair=True", "use --repair-bio (data.repair_bio)")
    message = message.replace("scheme='auto' guesses it", "data.scheme = \"auto\" guesses it")
    return UserError(message, path=error.path, line=error.line)


def _class_names(feature):
    inner = getattr(feature, "feature", None)
    if inner is None and isinstance(feature, (list, tuple)) and feature:
        inner = feature[0]
    return getattr(inner, "names", None)


def read_hf_dataset(dataset, split=None, tokens_column="tokens", tags_column="ner_tags",
                    scheme="BIO", strict=True, repair=False, stats=None, label=None,
                    tag_names=()):
    """Reads a Hugging Face `datasets.Dataset` (or one split of a `DatasetDict`).

    Integer tags with `ClassLabel` names (e.g. `Sequence(ClassLabel(names=[...]))`)
    are mapped to the names; string tags are taken as they are.

    Args:
        dataset: a `datasets.Dataset` or `datasets.DatasetDict`.
        split: str or None, the split to read; required for a `DatasetDict`.
            Default None.
        tokens_column: str, the column of token lists. Default "tokens".
        tags_column: str, the column of tag lists. Default "ner_tags".
        scheme: str or None, the tag scheme (see `read_conll`). Default "BIO".
        strict: bool, raise on an ill-formed tag sequence. Default True.
        repair: bool, repair ill-formed sequences and count them. Default False.
        stats: dict or None, receives counts (see the module docstring). Default None.
        label: str or None, names the rows' source in place of `"<name>[<split>]"`.
            Default None.
        tag_names: sequence of str, the names of integer tags when the dataset has no
            `ClassLabel` names (`data.tag_names`). Default ().

    Returns:
        A list of `{"tokens", "tags", "source"}` dicts; `source` is
        `"<name>[<split>]:<row>"` (rows counted from 0).

    Example:

    ```python
    read_hf_dataset(datasets.load_dataset("conll2003"), split="train")
    ```
    """
    readers.check_scheme(scheme)
    if isinstance(dataset, dict):
        if split not in dataset:
            raise UserError(f"Expected split to be one of {sorted(dataset)}. "
                            f"Received: split={split!r}")
        dataset = dataset[split]
    info = getattr(dataset, "info", None)
    name = getattr(info, "dataset_name", None) or "dataset"
    label = label or f"{name}[{split or getattr(dataset, 'split', None) or 'all'}]"
    columns = list(getattr(dataset, "column_names", []))
    for column in (tokens_column, tags_column):
        if column not in columns:
            raise UserError(f"Column {column!r} not found; the columns are {columns}.",
                            path=label)
    names = _class_names(dataset.features[tags_column])
    raw = []
    for row, (tokens, tags) in enumerate(zip(dataset[tokens_column], dataset[tags_column])):
        source = f"{label}:{row}"
        if not tokens:
            raise UserError(f"Empty sentence: {tokens_column!r} is an empty list.", path=source)
        if len(tokens) != len(tags):
            raise UserError(f"{len(tokens)} tokens but {len(tags)} tags.", path=source)
        raw.append({"tokens": tokens, "tags": tags, "lines": None, "source": source})
    layouts.name_tag_ids(raw, names or tag_names, label,
                         "ClassLabel names" if names else "names in data.tag_names")
    return readers.finish_sentences(raw, label, scheme, strict, repair, stats)



def format_of(data, path):
    """The format of one data source: conll, conllu, jsonl, hf (a folder) or hub.

    Args:
        data: TaggingDataConfig.
        path: str, the file, dataset folder or hub:NAME.
    """
    if path.startswith("hub:"):
        return "hub"
    if data.format == "hf" or (data.format == "auto" and Path(path).is_dir()):
        return "hf"
    if data.format != "auto":
        return data.format
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        return "parquet"
    if suffix not in readers.EXTENSIONS:
        if not Path(path).exists():
            raise UserError("file not found", path=path)
        sniffed = readers.sniff_format(path, encoding=data.encoding)
        if sniffed is None:
            raise UserError(f"cannot tell the format from the extension {suffix!r} or from "
                            "the first lines; expected one of "
                            f"{', '.join(sorted(readers.EXTENSIONS))} or a dataset folder, "
                            "or set data.format (conll, conllu, jsonl, hf)", path=path)
        return sniffed
    return readers.EXTENSIONS[suffix]


def _tag_key(data, fmt):
    if fmt == "conll":
        if not data.tag_column:
            return None  # the last column, or the first when it holds the tags
        value = data.tag_column
        try:
            return int(value)
        except ValueError:
            raise UserError(f"data.tag_column must be a column number for CoNLL files "
                            f"(0 is the token, -1 the last); got {value!r}") from None
    if data.tag_column:
        return data.tag_column
    return "tags" if fmt == "jsonl" else "ner_tags"


def _load_dataset_object(data, path):
    """A datasets.Dataset or DatasetDict from a save_to_disk folder or hub:NAME."""
    if path.startswith("hub:"):
        from elman.core.hub import load_hub

        return load_hub(path[4:], data.hub_config, local_hint=LOCAL_HINT)
    import datasets

    if not Path(path).is_dir():
        raise UserError("dataset folder not found (expected a folder written by "
                        "datasets' save_to_disk)", path=path)
    try:
        return datasets.load_from_disk(path)
    except Exception as err:  # FileNotFoundError, ValueError from datasets
        raise UserError(f"not a saved Hugging Face dataset folder: {err}", path=path) from None


def _read_parquet(path):
    """A Parquet file as a `datasets.Dataset`: the `ClassLabel` names that `datasets`
    writes into the file's schema come back, so integer tags read as their names."""
    import datasets

    if not Path(path).is_file():
        raise UserError("file not found", path=path)
    import pyarrow.parquet

    try:  # no dataset builder: nothing is cached outside the run
        return datasets.Dataset(pyarrow.parquet.read_table(str(path)))
    except Exception as err:  # pyarrow and datasets raise several types for a bad file
        raise UserError(f"cannot read Parquet: {err}", path=path) from None


def _read_any(data, source, scheme, stats, split=None, loaded=None, name="train"):
    """Reads one split with the reader its format needs; returns the sentences."""
    fmt = format_of(data, source)
    repair = data.repair_bio
    try:
        if fmt in ("hf", "hub"):
            dataset = loaded if loaded is not None else _load_dataset_object(data, source)
            if isinstance(dataset, dict) and split is None:
                split = getattr(data, f"hub_{name}_split") or data.hub_train_split
            return read_hf_dataset(
                dataset, split=split, tokens_column=data.tokens_column,
                tags_column=_tag_key(data, fmt), scheme=scheme, strict=data.strict,
                repair=repair, stats=stats, tag_names=data.tag_names)
        if fmt == "parquet":
            return read_hf_dataset(_read_parquet(source), tokens_column=data.tokens_column,
                                   tags_column=_tag_key(data, "hf"), scheme=scheme,
                                   strict=data.strict, repair=repair, stats=stats,
                                   label=f"{source}[row]", tag_names=data.tag_names)
        if fmt == "conllu":
            return readers.read_conllu(source, field=data.conllu_field, stats=stats,
                                       encoding=data.encoding)
        if fmt == "jsonl":
            # with neither key set, `{"text": [...], "label": [...]}` and the like read too
            guess = data.tokens_column == "tokens" and not data.tag_column
            return json_records.read_jsonl(source, tokens_key=data.tokens_column,
                                      tags_key=_tag_key(data, fmt), scheme=scheme,
                                      strict=data.strict, repair=repair, stats=stats,
                                      guess_keys=guess, tag_names=data.tag_names,
                                      encoding=data.encoding)
        return readers.read_conll(source, tag_column=_tag_key(data, fmt), scheme=scheme,
                                  strict=data.strict, repair=repair, stats=stats,
                                  encoding=data.encoding)
    except UserError as err:
        raise _cli_hint(err) from None


def _decide_scheme(data, source, loaded=None, split=None):
    """The input scheme: the configured one, or guessed on the given files.

    Returns None for free tags (POS): CoNLL-U files, `scheme = "none"`, or `auto`
    on a training split whose tags are not all `O` / `B-`, `I-`, `M-`, `E-`, `S-` +
    type, unless they are IO tags (`schemes.io_like`: bare types, `O` on half the
    tokens or more), which give "IO". Otherwise `auto` is the simplest scheme that fits
    the training split and the validation and test files together
    (`schemes.detect_scheme`), so that a test file with the `S-` singles train happens to
    lack is read too.
    """
    if format_of(data, source) == "conllu":
        return None
    if data.scheme != "auto":
        return None if data.scheme == "none" else tag_schemes.normalize_scheme(data.scheme)
    raw = _read_any(data, source, None, {}, split=split, loaded=loaded)
    tags = [s["tags"] for s in raw]
    if not all(entity_like(t) for t in tags):
        if tag_schemes.io_like(tags):  # bare types and O (Few-NERD): entities all the same
            return "IO"
        _check_mostly_entities(raw)
        return None
    for name in ("validation", "test"):
        other = getattr(data, name)
        if other and format_of(data, other) not in ("hf", "hub", "conllu"):
            # malformed tags there are left to the strict read, which names file:line
            tags += [s["tags"] for s in _read_any(data, other, None, {}, name=name)
                     if entity_like(s["tags"])]
    return tag_schemes.detect_scheme(tags)


def _check_mostly_entities(sentences, share=0.9):
    """Refuses a corpus whose tags are nearly all entity tags: its few malformed tags
    (`B-` with no type, `X-PER`) would silently turn the run into free-tag tagging."""
    non_o = [(s, i, tag) for s in sentences for i, tag in enumerate(s["tags"]) if tag != "O"]
    bad = [(s, i, tag) for s, i, tag in non_o if not entity_like([tag])]
    if not non_o or not bad or len(bad) > (1.0 - share) * len(non_o):
        return
    sentence, index, tag = bad[0]
    path, line = where(sentence.get("source", ""))
    raise UserError(f"tag {tag!r} (token {index + 1} of this sentence) is not an entity tag "
                    "(O, or B-/I-/M-/E-/S- and a type), though "
                    f"{len(non_o) - len(bad)} of the {len(non_o)} tags other than O are; fix "
                    f"the {len(bad)} malformed tag(s), or set data.scheme = \"none\" for "
                    "free tags",
                    path=path, line=line)


def _file_sha256(source):
    return sha256(source) if Path(source).is_file() else ""


def _read_split(data, name, path, source, scheme, sha, split=None, loaded=None):
    """One Split of the sentences read from `path` (the reader's counts on it)."""
    stats = {}
    sentences = _read_any(data, path, scheme, stats, split=split, loaded=loaded, name=name)
    return Split(name, sentences, source, sha, counts=stats)


def _dataset_dict_splits(data, loaded, scheme):
    """The splits of a DatasetDict, by name (a split given as a file is read later)."""
    splits = {}
    for name in ("train", "validation", "test"):
        wanted = getattr(data, f"hub_{name}_split")
        if name != "train" and (getattr(data, name) or not wanted or wanted not in loaded):
            continue
        if wanted not in loaded:
            raise UserError(f"the dataset has no split '{wanted}'; it has "
                            f"{', '.join(loaded)} (set data.hub_{name}_split)", path=data.train)
        splits[name] = _read_split(data, name, data.train, f"{data.train}[{wanted}]", scheme,
                                   "", split=wanted, loaded=loaded)
    return splits


def _carve_counts(sentences):
    return {"sentences": len(sentences), "tokens": sum(len(s["tokens"]) for s in sentences)}


def load_splits(data, seed=0, scheme=None, for_training=True):
    """Reads train/validation/test from a data config.

    Args:
        data: TaggingDataConfig.
        seed: int, seeds the carving of a validation split.
        scheme: str or None, an explicit scheme to read with ("BIO", "IOB1",
            "BIOS", "BIOES", "BMES" or "none"); None decides from the config (guessing on
            the given files).
        for_training: bool, also require and carve a validation split.

    Returns:
        (dict split name → `elman.core.split.Split` of sentences, scheme or None for
        free tags)
    """
    if not data.train:
        raise UserError("no training data: give --data FILE (or a dataset folder, or hub:NAME) "
                        "or set data.train")
    loaded = None
    if format_of(data, data.train) in ("hf", "hub"):
        loaded = _load_dataset_object(data, data.train)
    if scheme is None:
        scheme = _decide_scheme(data, data.train, loaded)
    elif scheme == "none":
        scheme = None
    if isinstance(loaded, dict):  # a DatasetDict: splits by name unless files are given
        splits = _dataset_dict_splits(data, loaded, scheme)
    else:
        splits = {"train": _read_split(data, "train", data.train, data.train, scheme,
                                       _file_sha256(data.train), loaded=loaded)}
    for name in ("validation", "test"):
        source = getattr(data, name)
        if source:
            splits[name] = _read_split(data, name, source, source, scheme, _file_sha256(source))
    for split in splits.values():
        if scheme is not None:  # entity tags as their conlleval reading in well-formed BIO
            for sentence in split.items:
                sentence["tags"] = tag_schemes.to_bio(sentence["tags"], "BIO")
        if not split.items:
            raise UserError(f"the {split.name} data holds no sentences", path=split.source)
    if for_training and "validation" not in splits:
        splits["train"], splits["validation"] = carve(
            splits["train"], data.validation_fraction, seed, what="sentences",
            counts=_carve_counts)
    return splits, scheme


def check_known_tags(splits, tags, entity):
    """Validation/test tags the training split never had are an error (file:line).

    Args:
        splits: dict of split name → Split.
        tags: list of str, the run's tags (BIO for entity tags).
        entity: bool, whether the tags are entity tags.
    """
    known = set(tags)
    shown_known = sorted({t[2:] for t in known if t != "O"} if entity else known)
    for name in ("validation", "test"):
        split = splits.get(name)
        if split is None:
            continue
        for sentence in split.items:
            for position, tag in enumerate(sentence["tags"]):
                if tag not in known:
                    path, line = where(sentence["source"])
                    shown = tag[2:] if entity else tag
                    what = "entity type" if entity else "tag"
                    raise UserError(f"{what} '{shown}' (token {position + 1} of the sentence "
                                    f"starting here) never appears in the training "
                                    f"data ({name} split; train {what}s: "
                                    f"{', '.join(shown_known)}), so the model cannot "
                                    "learn it", path=path, line=line)


def evaluation_data(data, path, overrides, column_settings):
    """The data settings that read one file (or a dataset's test split) to evaluate on.

    Args:
        data: the run's TaggingDataConfig.
        path: str, the file, dataset folder or hub:NAME.
        overrides: dict, "text_column" and "label_column" as `elman evaluate` got them.
        column_settings: (tokens setting, tags setting) the two column flags set.
    """
    # a dataset dict (folder or hub) is scored on its test split, else its validation split
    data = dataclasses.replace(data, train=path, validation="", test="",
                               hub_train_split=data.hub_test_split or data.hub_validation_split,
                               hub_validation_split="", hub_test_split="")
    for flag, setting in zip(("text_column", "label_column"), column_settings):
        if overrides.get(flag):
            data = dataclasses.replace(data, **{setting: str(overrides[flag])})
    return data
