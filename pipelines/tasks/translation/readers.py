"""Readers for translation pairs (rows → pair dicts), plus length filtering and de-duplication.

Every reader returns a list of `{"source": str, "target": str, "where": str}`, where
`where` says where the pair came from: `"file:line"` (1-based line) for files and
`"name[index]"` (0-based row index) for a Hugging Face dataset. Both sides are stripped
of surrounding whitespace.

A malformed row (wrong number of columns, invalid JSON, a missing key, a side that is
empty) raises `elman.errors.UserError` naming the file and line. With
`skip_bad_rows=True` it is skipped instead, and counted: pass a dict as `counts` and it
receives `counts["bad_rows"]` (the number skipped) and `counts["bad_row_examples"]` (up
to 10 `"where: reason"` strings). Problems with a whole file (missing, a directory, not
the encoding `data.encoding` names, two aligned files of different lengths) always
raise.
"""

import json
import logging

from elman.core.encodings import read_lines
from elman.errors import UserError

logger = logging.getLogger(__name__)

_MAX_EXAMPLES = 10
_SKIP_HINT = " (use --skip-bad-rows to skip and count such rows)"


class _BadRows:
    """Raises on a bad row, or counts it when skipping."""

    def __init__(self, skip, counts):
        self.skip = skip
        self.counts = counts
        self.skipped = 0

    def __call__(self, reason, path, line=None, where=None):
        if not self.skip:
            raise UserError(reason + _SKIP_HINT, path=path, line=line)
        self.skipped += 1
        if self.counts is not None:
            self.counts["bad_rows"] = self.counts.get("bad_rows", 0) + 1
            examples = self.counts.setdefault("bad_row_examples", [])
            if len(examples) < _MAX_EXAMPLES:
                examples.append(f"{where or f'{path}:{line}'}: {reason}")

    def report(self, path):
        if self.skipped:
            logger.warning("%s: skipped %d bad rows", path, self.skipped)


def _pair(source, target, where, bad, path, line=None):
    """Builds a pair, or reports the first empty side; returns None when skipped."""
    source, target = source.strip(), target.strip()
    for side, text in (("source", source), ("target", target)):
        if not text:
            bad(f"empty {side} text", path, line, where)
            return None
    return {"source": source, "target": target, "where": where}


def read_tsv_pairs(path, reverse=False, skip_bad_rows=False, counts=None, encoding="utf-8"):
    """Reads `source<TAB>target[<TAB>anything...]` lines, as in Tatoeba exports.

    Args:
        path: str or Path, a UTF-8 file.
        reverse: bool, swap the columns (translate from the second into the first).
            Default False.
        skip_bad_rows: bool, skip and count malformed rows instead of raising. Default
            False.
        counts: dict or None, receives `bad_rows` and `bad_row_examples`. Default None.
        encoding: str, the files' text encoding (`data.encoding`). Default "utf-8".

    Returns:
        list of `{"source", "target", "where"}` dicts, in file order.

    Example:

    >>> pairs = read_tsv_pairs("data/toy_translation/train.tsv", reverse=True)
    """
    bad = _BadRows(skip_bad_rows, counts)
    pairs = []
    for number, line in enumerate(read_lines(path, encoding), start=1):
        where = f"{path}:{number}"
        if not line.strip():
            bad("empty line; expected source<TAB>target", path, number)
            continue
        fields = line.split("\t")
        if len(fields) < 2:
            bad("expected source<TAB>target, found no tab", path, number)
            continue
        source, target = (fields[1], fields[0]) if reverse else (fields[0], fields[1])
        pair = _pair(source, target, where, bad, path, number)
        if pair is not None:
            pairs.append(pair)
    bad.report(path)
    return pairs


def read_parallel_files(source_path, target_path, skip_bad_rows=False, counts=None,
                        encoding="utf-8"):
    """Reads two aligned plain-text files: line i of one translates line i of the other.

    Args:
        source_path: str or Path, UTF-8 file of source sentences, one per line.
        target_path: str or Path, UTF-8 file of target sentences, one per line.
        skip_bad_rows: bool, skip and count pairs with an empty side instead of raising.
            Default False.
        counts: dict or None, receives `bad_rows` and `bad_row_examples`. Default None.
        encoding: str, the files' text encoding (`data.encoding`). Default "utf-8".

    Returns:
        list of `{"source", "target", "where"}` dicts; `where` names the source file.

    Example:

    >>> pairs = read_parallel_files("train.en", "train.zh")
    """
    sources = read_lines(source_path, encoding)
    targets = read_lines(target_path, encoding)
    if len(sources) != len(targets):
        raise UserError(
            f"{source_path} has {len(sources)} lines but {target_path} has "
            f"{len(targets)} lines; the two files must be aligned line by line",
            path=source_path,
        )
    bad = _BadRows(skip_bad_rows, counts)
    pairs = []
    for number, (source, target) in enumerate(zip(sources, targets), start=1):
        where = f"{source_path}:{number}"
        if not target.strip() and source.strip():
            bad("empty target text", target_path, number, where)
            continue
        pair = _pair(source, target, where, bad, source_path, number)
        if pair is not None:
            pairs.append(pair)
    bad.report(source_path)
    return pairs


def _row_pair(row, source_lang, target_lang):
    """(source, target) from a JSON object, or (None, reason)."""
    if not isinstance(row, dict):
        return None, f"expected a JSON object, found {type(row).__name__}"
    if "translation" in row and (source_lang is not None or "source" not in row):
        translation = row["translation"]
        if not isinstance(translation, dict):
            return None, "expected 'translation' to be an object of language -> text"
        if source_lang is None or target_lang is None:
            return None, (
                "found a 'translation' object; pass source_lang and target_lang "
                f"(languages here: {', '.join(sorted(map(str, translation)))})"
            )
        keys = (source_lang, target_lang)
        found = translation
    elif "source" in row and "target" in row:
        keys = ("source", "target")
        found = row
    else:
        return None, "expected keys 'source' and 'target', or 'translation'"
    for key in keys:
        if key not in found:
            return None, f"missing key {key!r} (found: {', '.join(sorted(map(str, found)))})"
        if not isinstance(found[key], str):
            return None, f"expected {key!r} to be a string, found {type(found[key]).__name__}"
    return (found[keys[0]], found[keys[1]]), None


def read_jsonl_pairs(path, source_lang=None, target_lang=None, skip_bad_rows=False, counts=None,
                     encoding="utf-8"):
    """Reads JSON Lines: `{"source": .., "target": ..}` or `{"translation": {lang: text}}`.

    Args:
        path: str or Path, a UTF-8 file with one JSON object per line.
        source_lang: str or None, the source key inside `"translation"` objects (e.g.
            `"en"`); needed for that format. Default None.
        target_lang: str or None, the target key inside `"translation"` objects. Default
            None.
        skip_bad_rows: bool, skip and count malformed rows instead of raising. Default
            False.
        counts: dict or None, receives `bad_rows` and `bad_row_examples`. Default None.
        encoding: str, the files' text encoding (`data.encoding`). Default "utf-8".

    Returns:
        list of `{"source", "target", "where"}` dicts, in file order.

    Example:

    >>> pairs = read_jsonl_pairs("train.jsonl", source_lang="en", target_lang="zh")
    """
    bad = _BadRows(skip_bad_rows, counts)
    pairs = []
    for number, line in enumerate(read_lines(path, encoding), start=1):
        where = f"{path}:{number}"
        if not line.strip():
            bad("empty line; expected a JSON object", path, number)
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            bad(f"invalid JSON ({error.msg} at column {error.colno})", path, number)
            continue
        texts, reason = _row_pair(row, source_lang, target_lang)
        if texts is None:
            bad(reason, path, number)
            continue
        pair = _pair(texts[0], texts[1], where, bad, path, number)
        if pair is not None:
            pairs.append(pair)
    bad.report(path)
    return pairs


def pairs_from_hf_dataset(
    dataset, source_lang, target_lang, name=None, skip_bad_rows=False, counts=None
):
    """Reads a Hugging Face `datasets.Dataset` with a `translation` column.

    The column holds one dict per row, language -> text (the `datasets.Translation`
    feature, as in WMT or opus_books).

    Args:
        dataset: `datasets.Dataset`, already loaded (this function does no download).
        source_lang: str, the source language key, e.g. `"en"`.
        target_lang: str, the target language key, e.g. `"zh"`.
        name: str or None, used in `where` and in errors; None for the dataset's own
            name and split. Default None.
        skip_bad_rows: bool, skip and count malformed rows instead of raising. Default
            False.
        counts: dict or None, receives `bad_rows` and `bad_row_examples`. Default None.

    Returns:
        list of `{"source", "target", "where"}` dicts; `where` is `"name[row_index]"`.

    Example:

    >>> pairs = pairs_from_hf_dataset(dataset["train"], source_lang="en", target_lang="fr")
    """
    if name is None:
        info = getattr(dataset, "info", None)
        name = getattr(info, "dataset_name", None) or "dataset"
        split = getattr(dataset, "split", None)
        if split is not None:
            name = f"{name}/{split}"
    columns = list(getattr(dataset, "column_names", []) or [])
    if "translation" not in columns:
        raise UserError(
            f"expected a 'translation' column, found columns: {', '.join(columns) or 'none'}",
            path=name,
        )
    feature = getattr(dataset, "features", {}).get("translation")
    languages = getattr(feature, "languages", None)
    if languages is None and isinstance(feature, dict):
        languages = list(feature)
    if languages is not None:
        for lang in (source_lang, target_lang):
            if lang not in languages:
                raise UserError(
                    f"language {lang!r} is not in the 'translation' column "
                    f"(languages: {', '.join(map(str, languages))})",
                    path=name,
                )
    bad = _BadRows(skip_bad_rows, counts)
    pairs = []
    for index, translation in enumerate(dataset["translation"]):
        where = f"{name}[{index}]"
        texts, reason = _row_pair({"translation": translation}, source_lang, target_lang)
        if texts is None:
            bad(f"row {index}: {reason}", name, None, where)
            continue
        pair = _pair(texts[0], texts[1], where, _RowBad(bad, index), name)
        if pair is not None:
            pairs.append(pair)
    bad.report(name)
    return pairs


class _RowBad:
    """Puts the row index into the reason (datasets have rows, not lines)."""

    def __init__(self, bad, index):
        self.bad, self.index = bad, index

    def __call__(self, reason, path, line=None, where=None):
        self.bad(f"row {self.index}: {reason}", path, None, where)


def filter_pairs(pairs, max_source_len=None, max_target_len=None, dedupe=True, tokenize=None):
    """Drops pairs that are too long, then exact duplicates, and says how many of each.

    Args:
        pairs: list of `{"source", "target", ...}` dicts.
        max_source_len: int or None, most source tokens kept; None for no limit.
            Default None.
        max_target_len: int or None, most target tokens kept; None for no limit.
            Default None.
        dedupe: bool, keep only the first of pairs with identical source and target
            text. Default True.
        tokenize: callable or None, str -> list of tokens used to count length; None
            splits on whitespace (use `list` for characters, e.g. for Chinese).
            Default None.

    Returns:
        `(kept_pairs, {"too_long": n, "duplicates": m})`, kept pairs in input order;
        duplicates are counted among the pairs that passed the length filter.

    Example:

    >>> kept, dropped = filter_pairs(pairs, max_source_len=20, max_target_len=20)
    """
    limits = (("max_source_len", max_source_len), ("max_target_len", max_target_len))
    for arg_name, value in limits:
        bad_int = not isinstance(value, int) or isinstance(value, bool) or value < 1
        if value is not None and bad_int:
            raise ValueError(
                f"Expected {arg_name} to be a positive int or None. Received: {arg_name}={value!r}"
            )
    count = (lambda text: len(text.split())) if tokenize is None else (
        lambda text: len(tokenize(text))
    )
    kept, seen = [], set()
    too_long = duplicates = 0
    for pair in pairs:
        if (max_source_len is not None and count(pair["source"]) > max_source_len) or (
            max_target_len is not None and count(pair["target"]) > max_target_len
        ):
            too_long += 1
            continue
        if dedupe:
            key = (pair["source"], pair["target"])
            if key in seen:
                duplicates += 1
                continue
            seen.add(key)
        kept.append(pair)
    return kept, {"too_long": too_long, "duplicates": duplicates}
