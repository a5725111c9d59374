"""Entity tag schemes (BIO/IOB2, IOB1, BIOS, BIOES, BMES) and conversions between them.

A tag is either `"O"` or `"<prefix>-<TYPE>"`, e.g. `"B-PER"`. The type is
everything after the first hyphen, so `"B-DATE-TIME"` has type `"DATE-TIME"`.

- BIO (also called IOB2): every entity starts with `B-`, continues with `I-`.
- IOB1 (the original CoNLL-2003 files): entities are `I-`; `B-` is used only for
  an entity that directly follows another entity of the same type.
- BIOS (B/I/S without E, as in many Chinese corpora): `S-` a one-token entity,
  `B-` begins a longer one, `I-` continues it.
- BIOES (also called IOBES): `B-` begin, `I-` inside, `E-` end, `S-` single token.
- BMES: BIOES with `M-` (middle) for inside.

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

from collections import Counter

SCHEMES = ("BIO", "IOB1", "BIOS", "BIOES", "BMES")  # simplest first (see detect_scheme)

_ALIASES = {
    "BIO": "BIO",
    "IOB2": "BIO",
    "IOB1": "IOB1",
    "BIOES": "BIOES",
    "IOBES": "BIOES",
    "BIOS": "BIOS",
    "BMES": "BMES",
    "IO": "IO",
}
_PREFIXES = {"BIO": "BI", "IOB1": "BI", "BIOS": "BIS", "BIOES": "BIES", "BMES": "BMES"}
# IO: a bare type per entity token (Few-NERD's `person-actor`), no prefixes; a run of one
# type is one entity. It is IOB1 with every prefix dropped, and is read and written so
# (never guessed by `detect_scheme`: `io_like` tells it apart from free tags).


def io_like(tag_sequences):
    """Whether a corpus's tags are IO entity tags: `O` on half the tokens or more and
    every other tag a bare type (no `B-`-style prefix, no space). Part-of-speech and
    other free tag sets have no `O`, so they never read as IO."""
    tags = [t for seq in tag_sequences for t in seq]
    if not tags:
        return False
    outside = sum(t == "O" for t in tags)
    return outside * 2 >= len(tags) and outside < len(tags) and all(
        t == "O" or (isinstance(t, str) and t.strip() == t and t and " " not in t
                     and not (len(t) > 2 and t[1] == "-" and t[0] in "BIMES"))
        for t in tags)


def io_to_iob1(tags):
    """IO tags as IOB1 (`I-` before each type), which `bio_spans` reads alike."""
    return [t if t == "O" else f"I-{t}" for t in tags]


def normalize_scheme(scheme):
    """Returns the canonical name of a scheme: one of `SCHEMES`.

    Args:
        scheme: str, one of `"BIO"`, `"IOB2"`, `"IOB1"`, `"BIOS"`, `"BIOES"`,
            `"IOBES"`, `"BMES"` (any letter case).

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
            any of B, I, M, E, S. Default None.

    Example:

    ```python
    split_tag("I-DATE-TIME")  # ('I', 'DATE-TIME')
    ```
    """
    if scheme is not None and normalize_scheme(scheme) == "IO":
        if tag == "O":
            return "O", ""
        if isinstance(tag, str) and tag and tag.strip() == tag and " " not in tag:
            return "I", tag
        raise ValueError(f"Tag {tag!r} is not a valid IO tag (expected 'O' or a type).")
    prefixes = "BIMES" if scheme is None else _PREFIXES[normalize_scheme(scheme)]
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

    Uses the chunk rules of `conlleval`: `B-X` starts an entity, `I-X` (or `M-X`)
    continues one of type X and starts a new one after `O` or after another type.
    `E-`/`S-` tags (BIOES, BMES, BIOS) end an entity. Raises `ValueError` for a
    malformed tag.

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
        prefix = "I" if prefix == "M" else prefix
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
    inside = "M" if scheme == "BMES" else "I"
    for type_, start, end in spans:
        if scheme in ("BIOS", "BIOES", "BMES"):
            if end - start == 1:
                tags[start] = f"S-{type_}"
            else:
                tags[start] = f"B-{type_}"
                tags[start + 1 : end] = [f"{inside}-{type_}"] * (end - start - 1)
                if scheme != "BIOS":
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
        scheme: str, the scheme of `tags`: one of `SCHEMES` (or an alias).

    Returns:
        A new list of BIO tags. Raises `ValueError` for a tag outside `scheme`.

    Example:

    ```python
    to_bio(["S-PER", "B-LOC", "E-LOC"], "BIOES")  # ['B-PER', 'B-LOC', 'I-LOC']
    ```
    """
    scheme = normalize_scheme(scheme)
    _check_tags(tags, scheme)
    if scheme == "IO":
        tags = io_to_iob1(tags)
    return _render(bio_spans(tags), len(tags), "BIO")


def from_bio(tags, scheme):
    """Converts a BIO (IOB2) tag sequence to `scheme`.

    A stray `I-X` (after `O` or after another type) is read as the start of an
    entity, as `conlleval` reads it.

    Args:
        tags: list of str, the BIO tags of one sentence.
        scheme: str, the target scheme: one of `SCHEMES` (or an alias).

    Returns:
        A new list of tags in `scheme`. Raises `ValueError` for a tag outside BIO.

    Example:

    ```python
    from_bio(["B-PER", "B-PER", "I-PER"], "IOB1")  # ['I-PER', 'B-PER', 'I-PER']
    ```
    """
    scheme = normalize_scheme(scheme)
    _check_tags(tags, "BIO")
    if scheme == "IO":  # adjacent entities of one type merge: IO cannot write their edge
        return [t if t == "O" else t[2:] for t in _render(bio_spans(tags), len(tags), "BIO")]
    return _render(bio_spans(tags), len(tags), scheme)


def starts_inside(tags, scheme):
    """Whether a sentence begins inside an entity, written as `scheme` writes one.

    Corpora that cut a long sentence in the middle of an entity leave the next piece
    starting with `I-X` (or `M-X`, `E-X`). Such a sentence is well formed when
    `["B-X"] + tags` is exactly what `scheme` writes; it is read as an entity
    starting at its first token. Never true for IOB1, where `I-X` starts entities.

    Args:
        tags: list of str, the tags of one sentence.
        scheme: str, one of `SCHEMES` (or an alias).

    Example:

    ```python
    starts_inside(["I-ORG", "I-ORG", "O", "S-LOC"], "BIOS")  # True
    ```
    """
    scheme = normalize_scheme(scheme)
    if scheme in ("IOB1", "IO") or not tags or tags[0][:2] not in ("I-", "M-", "E-"):
        return False
    head = [f"B-{tags[0][2:]}", *tags]
    return _render(bio_spans(head), len(head), scheme) == head


def misfits(tags, scheme):
    """Positions of the tags that `scheme` would write otherwise (an empty list: fits).

    A sentence fits a scheme when `from_bio(to_bio(tags))` gives it back, or when it
    begins inside an entity (`starts_inside`). Raises `ValueError` for a malformed tag.

    Args:
        tags: list of str, the tags of one sentence.
        scheme: str, one of `SCHEMES` (or an alias).

    Example:

    ```python
    misfits(["B-PER", "I-PER", "O"], "BIOES")  # [1]
    ```
    """
    tags = list(tags)
    if normalize_scheme(scheme) == "IO":
        return []  # any sequence of types and O is well formed
    if starts_inside(tags, scheme):
        return []
    written = _render(bio_spans(tags), len(tags), normalize_scheme(scheme))
    return [i for i, (a, b) in enumerate(zip(tags, written)) if a != b]


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
    """Guesses the scheme of a corpus: the simplest one that fits every sentence.

    A sentence fits a scheme when each tag uses one of the scheme's prefixes and the
    sentence is written the way the scheme writes its entities (`misfits`: an empty
    list; a sentence may begin inside an entity). Of the schemes every sentence fits, the first of
    `SCHEMES` wins (BIO, IOB1, BIOS, BIOES, BMES): a corpus with only `O` is BIO, one
    with `S-` singles and `B-`/`I-` but no `E-` is BIOS, one whose longer entities
    all have an `E-` is BIOES. When no scheme fits (an ill-formed corpus), the one
    with the fewest tags outside its prefixes, then the fewest misfit tags, wins,
    so that reading the corpus in it names the first wrong tag.

    Args:
        tag_sequences: iterable of lists of str, the tags of each sentence.

    Returns:
        str, one of `SCHEMES`. Raises `ValueError` for a malformed tag.

    Example:

    ```python
    detect_scheme([["I-PER", "O"], ["I-LOC", "B-LOC"]])  # 'IOB1'
    detect_scheme([["S-PER", "O", "B-LOC", "I-LOC"]])  # 'BIOS'
    ```
    """
    outside = dict.fromkeys(SCHEMES, 0)
    wrong = dict.fromkeys(SCHEMES, 0)
    for tags in tag_sequences:
        tags = list(tags)
        spans = bio_spans(tags)  # read once; misfits(tags, scheme) for each scheme
        prefixes = Counter(tag[0] for tag in tags if tag != "O")
        for scheme in SCHEMES:
            outside[scheme] += sum(n for p, n in prefixes.items() if p not in _PREFIXES[scheme])
            written = _render(spans, len(tags), scheme)
            if written != tags and not starts_inside(tags, scheme):
                wrong[scheme] += sum(a != b for a, b in zip(tags, written))
    return min(SCHEMES, key=lambda s: (outside[s], wrong[s], SCHEMES.index(s)))
