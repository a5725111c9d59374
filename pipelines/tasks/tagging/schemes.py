"""Entity tag schemes (BIO/IOB2, IOB1, BIOES) and conversions between them.

A tag is either `"O"` or `"<prefix>-<TYPE>"`, e.g. `"B-PER"`. The type is
everything after the first hyphen, so `"B-DATE-TIME"` has type `"DATE-TIME"`.

- BIO (also called IOB2): every entity starts with `B-`, continues with `I-`.
- IOB1 (the original CoNLL-2003 files): entities are `I-`; `B-` is used only for
  an entity that directly follows another entity of the same type.
- BIOES (also called IOBES): `B-` begin, `I-` inside, `E-` end, `S-` single token.

Entities are read with the chunk rules of the CoNLL `conlleval` script (the same
rules as `seqeval`'s default mode): an `I-X` after `O` or after an entity of
another type starts a new entity instead of being an error. So every tag
sequence, even an ill-formed one, has exactly one reading as entities, and the
conversions below go through that reading.

Example:

```python
to_bio(["I-PER", "I-PER", "B-PER", "O"], "IOB1")
# ['B-PER', 'I-PER', 'B-PER', 'O']
from_bio(["B-PER", "I-PER", "O", "B-LOC"], "BIOES")
# ['B-PER', 'E-PER', 'O', 'S-LOC']
bio_spans(["B-PER", "I-PER", "O", "I-LOC"])
# [('PER', 0, 2), ('LOC', 3, 4)]
```
"""

SCHEMES = ("BIO", "IOB1", "BIOES")

_ALIASES = {
    "BIO": "BIO",
    "IOB2": "BIO",
    "IOB1": "IOB1",
    "BIOES": "BIOES",
    "IOBES": "BIOES",
}
_PREFIXES = {"BIO": "BI", "IOB1": "BI", "BIOES": "BIES"}


def normalize_scheme(scheme):
    """Returns the canonical name of a scheme: `"BIO"`, `"IOB1"` or `"BIOES"`.

    Args:
        scheme: str, one of `"BIO"`, `"IOB2"`, `"IOB1"`, `"BIOES"`, `"IOBES"`
            (any letter case).

    Example:

    ```python
    normalize_scheme("iob2")  # 'BIO'
    ```
    """
    key = str(scheme).upper()
    if key not in _ALIASES:
        raise ValueError(
            f"Expected scheme to be one of {sorted(_ALIASES)}. Received: scheme={scheme!r}"
        )
    return _ALIASES[key]


def split_tag(tag, scheme=None):
    """Splits a tag into its prefix and its type: `"B-PER"` -> `("B", "PER")`.

    `"O"` gives `("O", "")`. Raises `ValueError` for a tag that is not `"O"` and not
    a prefix of the scheme, a hyphen and a non-empty type (e.g. `"X-PER"`, `"PER"`,
    `"B-"`).

    Args:
        tag: str, the tag.
        scheme: str or None, the scheme whose prefixes are allowed; None allows
            any of B, I, E, S. Default None.

    Example:

    ```python
    split_tag("I-DATE-TIME")  # ('I', 'DATE-TIME')
    ```
    """
    prefixes = "BIES" if scheme is None else _PREFIXES[normalize_scheme(scheme)]
    if tag == "O":
        return "O", ""
    if (
        isinstance(tag, str)
        and len(tag) > 2
        and tag[1] == "-"
        and tag[0] in prefixes
        and tag[2:].strip() == tag[2:]
    ):
        return tag[0], tag[2:]
    allowed = ", ".join(f"{p}-TYPE" for p in prefixes)
    name = "" if scheme is None else f" {normalize_scheme(scheme)}"
    raise ValueError(f"Tag {tag!r} is not a valid{name} tag (expected 'O', {allowed}).")


def _starts(prev_prefix, prev_type, prefix, type_):
    # conlleval's startOfChunk, with seqeval's S/E handling for BIOES.
    if prefix in ("B", "S"):
        return True
    if prefix in ("I", "E") and prev_prefix in ("O", "E", "S"):
        return True
    return prefix != "O" and prev_type != type_


def _ends(prev_prefix, prev_type, prefix, type_):
    # conlleval's endOfChunk, with seqeval's S/E handling for BIOES.
    if prev_prefix in ("E", "S"):
        return True
    if prev_prefix in ("B", "I") and prefix in ("B", "S", "O"):
        return True
    return prev_prefix != "O" and prev_type != type_


def bio_spans(tags):
    """Returns the entities of a tag sequence as `(type, start, end)`, end exclusive.

    Uses the chunk rules of `conlleval`: `B-X` starts an entity, `I-X` continues
    one of type X and starts a new one after `O` or after another type. `E-`/`S-`
    tags (BIOES) end an entity. Raises `ValueError` for a malformed tag.

    Args:
        tags: list of str, the tags of one sentence.

    Example:

    ```python
    bio_spans(["B-PER", "I-PER", "I-LOC", "O"])  # [('PER', 0, 2), ('LOC', 2, 3)]
    ```
    """
    spans = []
    prev_prefix, prev_type = "O", ""
    start = None
    for i, tag in enumerate(list(tags) + ["O"]):
        prefix, type_ = split_tag(tag)
        if start is not None and _ends(prev_prefix, prev_type, prefix, type_):
            spans.append((prev_type, start, i))
            start = None
        if _starts(prev_prefix, prev_type, prefix, type_):
            start = i
        prev_prefix, prev_type = prefix, type_
    return spans


def _render(spans, length, scheme):
    tags = ["O"] * length
    previous_end, previous_type = None, None
    for type_, start, end in spans:
        if scheme == "BIOES":
            if end - start == 1:
                tags[start] = f"S-{type_}"
            else:
                tags[start] = f"B-{type_}"
                tags[start + 1 : end - 1] = [f"I-{type_}"] * (end - start - 2)
                tags[end - 1] = f"E-{type_}"
        else:
            tags[start:end] = [f"I-{type_}"] * (end - start)
            if scheme == "BIO" or (previous_end == start and previous_type == type_):
                tags[start] = f"B-{type_}"
        previous_end, previous_type = end, type_
    return tags


def _check_tags(tags, scheme):
    for i, tag in enumerate(tags):
        try:
            split_tag(tag, scheme)
        except ValueError as error:
            raise ValueError(f"Position {i}: {error}") from None


def to_bio(tags, scheme):
    """Converts a tag sequence from `scheme` to BIO (IOB2).

    Args:
        tags: list of str, the tags of one sentence in `scheme`.
        scheme: str, the scheme of `tags`: `"BIO"`, `"IOB1"` or `"BIOES"`.

    Returns:
        A new list of BIO tags. Raises `ValueError` for a tag outside `scheme`.

    Example:

    ```python
    to_bio(["S-PER", "B-LOC", "E-LOC"], "BIOES")  # ['B-PER', 'B-LOC', 'I-LOC']
    ```
    """
    scheme = normalize_scheme(scheme)
    _check_tags(tags, scheme)
    return _render(bio_spans(tags), len(tags), "BIO")


def from_bio(tags, scheme):
    """Converts a BIO (IOB2) tag sequence to `scheme`.

    A stray `I-X` (after `O` or after another type) is read as the start of an
    entity, as `conlleval` reads it.

    Args:
        tags: list of str, the BIO tags of one sentence.
        scheme: str, the target scheme: `"BIO"`, `"IOB1"` or `"BIOES"`.

    Returns:
        A new list of tags in `scheme`. Raises `ValueError` for a tag outside BIO.

    Example:

    ```python
    from_bio(["B-PER", "B-PER", "I-PER"], "IOB1")  # ['I-PER', 'B-PER', 'I-PER']
    ```
    """
    scheme = normalize_scheme(scheme)
    _check_tags(tags, "BIO")
    return _render(bio_spans(tags), len(tags), scheme)


def validate_bio(tags, strict=True):
    """Finds the problems of a BIO tag sequence.

    Args:
        tags: list of str, the tags of one sentence.
        strict: bool, whether an `I-X` that does not continue an entity of type X
            (at the start, after `O`, after `B-Y`/`I-Y`) is a problem. A malformed
            tag is always one. Default True.

    Returns:
        A list of `(position, message)` pairs; empty when the sequence is valid.

    Example:

    ```python
    validate_bio(["O", "I-PER"])
    # [(1, "'I-PER' after 'O' does not continue an entity of type PER")]
    ```
    """
    problems = []
    previous = "O"
    previous_type = None
    for i, tag in enumerate(tags):
        try:
            prefix, type_ = split_tag(tag, "BIO")
        except ValueError as error:
            problems.append((i, str(error)))
            previous, previous_type = tag, None
            continue
        if strict and prefix == "I" and previous_type != type_:
            where = "at the start" if i == 0 else f"after {previous!r}"
            problems.append((i, f"{tag!r} {where} does not continue an entity of type {type_}"))
        previous, previous_type = tag, (type_ if prefix != "O" else None)
    return problems


def repair_bio(tags):
    """Turns every `I-X` that does not continue an entity of type X into `B-X`.

    This keeps the `conlleval` reading of the sequence: the entities are the same
    before and after the repair. Raises `ValueError` for a malformed tag.

    Args:
        tags: list of str, the BIO tags of one sentence.

    Returns:
        `(repaired_tags, n_repaired)`: a new list and the number of tags changed.

    Example:

    ```python
    repair_bio(["O", "I-PER", "I-LOC"])  # (['O', 'B-PER', 'B-LOC'], 2)
    ```
    """
    _check_tags(tags, "BIO")
    repaired = _render(bio_spans(tags), len(tags), "BIO")
    return repaired, sum(a != b for a, b in zip(tags, repaired))


def detect_scheme(tag_sequences):
    """Guesses the scheme of a corpus: `"BIOES"`, `"IOB1"` or `"BIO"`.

    `"BIOES"` when any tag has an `E-` or `S-` prefix; `"IOB1"` when some entity
    starts with `I-` and every `B-X` directly follows an entity of type X;
    `"BIO"` otherwise (also for a corpus without entities).

    Args:
        tag_sequences: iterable of lists of str, the tags of each sentence.

    Example:

    ```python
    detect_scheme([["I-PER", "O"], ["I-LOC", "B-LOC"]])  # 'IOB1'
    ```
    """
    i_starts = 0
    free_b_starts = 0
    for tags in tag_sequences:
        previous_prefix, previous_type = "O", ""
        for tag in tags:
            prefix, type_ = split_tag(tag)
            if prefix in ("E", "S"):
                return "BIOES"
            continues = previous_prefix in ("B", "I") and previous_type == type_
            if prefix == "I" and not continues:
                i_starts += 1
            if prefix == "B" and not continues:
                free_b_starts += 1
            previous_prefix, previous_type = prefix, type_
    return "IOB1" if i_starts and not free_b_starts else "BIO"
