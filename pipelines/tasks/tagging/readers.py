"""Readers of tagged corpus files: CoNLL columns, CoNLL-U, and (through
`elman.tasks.tagging.json_records`) JSON lines.

Every reader returns a list of sentences, each a dict
`{"tokens": [str, ...], "tags": [str, ...], "source": "file:line"}` (the line of
the sentence's first token; `elman.tasks.tagging.data.read_hf_dataset` reads a
Hugging Face dataset the same way, with `"name[split]:row"`, rows counted from 0).
Entity tags are checked against the file's scheme and returned in BIO (IOB2), the
scheme the tagger trains on (`tag_schemes.from_bio` converts back). Mistakes in
the data raise `UserError` with the file and line.

`stats`, where a reader takes it, is a dict the reader adds its counts to, so
that nothing skipped goes unreported: `sentences`, `tokens`, `docstart_lines`,
`comment_lines`, `multiword_tokens`, `empty_nodes`, `repaired_tags`,
`ill_formed_tags`, `continued_entities` (sentences that begin inside an entity, see
`schemes.starts_inside`: their first entity is read as starting at their first
token), `span_records`, `tokens_split_at_entity_edges`, `duplicate_spans` and
`overlapping_spans` (JSON records of raw text with entity spans, see
`json_records.read_jsonl`), `other_annotations` (a Label Studio task's annotations
after the first), `rejected_records` (Prodigy records answered reject or ignore),
`space_characters` (spaces of a raw text tagged per character, which are no tokens),
`word_positions_removed` (tokens of Weibo NER's `口0 腔1` layout whose word position was
removed, see `read_conll`), `tags_in_first_column` (1 when a two-column file was read tag
first) and `scheme` (the scheme read).

Example:

```python
stats = {}
sentences = read_tagged_file("data/ner/train.conll", repair=True, stats=stats)
sentences[0]  # {'tokens': ['EU', 'rejects', ...], 'tags': ['B-ORG', 'O', ...],
              #  'source': 'data/ner/train.conll:3'}
```
"""

import re
from pathlib import Path

from elman.core.encodings import python_encoding, read_lines
from elman.errors import UserError
from elman.tasks.tagging import layouts
from elman.tasks.tagging.layouts import _count  # the one counter of the readers' stats
from elman.tasks.tagging import schemes as tag_schemes

FORMATS = ("conll", "conllu", "jsonl")
EXTENSIONS = {
    ".conll": "conll",
    ".txt": "conll",
    ".bio": "conll",
    ".iob": "conll",
    ".iob2": "conll",
    ".bioes": "conll",
    ".bmes": "conll",  # the Chinese NER releases' train.char.bmes
    ".conllu": "conllu",
    ".jsonl": "jsonl",
    ".json": "jsonl",
}
_SCHEMES = ("BIO", "IOB2", "IOB1", "BIOS", "BIOES", "IOBES", "BMES", "IO", "auto", None)
_COLUMNS = re.compile(r"[ \t]+")  # not str.split(): U+3000 and NBSP can be tokens
_CONLLU_FIELDS = {"upos": 3, "xpos": 4}


def _read_lines(path, encoding="utf-8"):
    """(line number, text) for each line of a text file in `encoding` (UTF-8 by default,
    a byte-order mark dropped), without line endings; a missing file, or bytes that are
    not `encoding`, are one error naming the file (and the line and the likely encoding)."""
    return list(enumerate(read_lines(path, encoding, "a tagged text file"), 1))


def _space_token_hint(line, found, expected):
    """A hint for a line short of columns whose token may be an ASCII space or tab."""
    if found < expected and line[:1] in (" ", "\t"):
        return (" If its token is a space: ASCII spaces and tabs separate the columns, so "
                "drop the line or write the character as U+3000.")
    return ""


def check_scheme(scheme):
    """Refuses a `scheme` argument that is not a known scheme name, "auto" or None."""
    if scheme not in _SCHEMES:
        raise ValueError(
            "Expected scheme to be one of {'BIO', 'IOB2', 'IOB1', 'BIOS', 'BIOES', 'IOBES', "
            f"'BMES', 'auto', None}}. Received: scheme={scheme!r}"
        )


def _ill_formed(tags, scheme, position):
    """The strict reader's message for the first tag `scheme` would write otherwise."""
    if scheme == "BIO":
        message = tag_schemes.validate_bio(tags)[0][1]
    else:
        written = tag_schemes.from_bio(tag_schemes.to_bio(tags, scheme), scheme)
        before = "at the start" if position == 0 else f"after {tags[position - 1]!r}"
        message = (f"{tags[position]!r} {before} is not valid {scheme} (it writes "
                   f"{written[position]!r} here)")
    hint = ("; pass repair=True to read it as conlleval does, or check the scheme "
            "(scheme='auto' guesses it)")
    return f"Ill-formed tags: {message}{hint}."


def finish_sentences(raw, path, scheme, strict, repair, stats):
    """Checks the tags of raw sentences against `scheme` and returns them in BIO.

    `raw` holds dicts with tokens, tags, source and `lines` (the line of each
    token, or None when only the sentence's place is known).
    """

    def fail(message, sentence, position):
        if sentence["lines"] is None:
            raise UserError(f"{message} (token {position + 1})", path=sentence["source"])
        raise UserError(message, path=path, line=sentence["lines"][position])

    for sentence in raw:
        for position, (token, tag) in enumerate(zip(sentence["tokens"], sentence["tags"])):
            if not isinstance(token, str) or not token:
                fail(f"Expected a non-empty token string, found {token!r}.", sentence, position)
            if not isinstance(tag, str) or not tag:
                fail(f"Expected a non-empty tag string, found {tag!r}.", sentence, position)
    if scheme is not None and scheme != "auto":
        scheme = tag_schemes.normalize_scheme(scheme)

    def check_prefixes(allowed):  # None: any entity tag
        for sentence in raw:
            for position, tag in enumerate(sentence["tags"]):
                try:
                    tag_schemes.split_tag(tag, allowed)
                except ValueError as error:
                    fail(str(error), sentence, position)

    if scheme == "auto":
        check_prefixes(None)  # detection reads every tag
        scheme = tag_schemes.detect_scheme(s["tags"] for s in raw)
    if scheme is not None:
        check_prefixes(scheme)
    if stats is not None:
        stats["scheme"] = scheme
    sentences = []
    for sentence in raw:
        tags = list(sentence["tags"])
        if scheme is not None:
            wrong = tag_schemes.misfits(tags, scheme)
            continued = tag_schemes.starts_inside(tags, scheme)
            if continued and repair:  # --repair-bio counts its first I-X among its repairs
                wrong, continued = [0], False
            if wrong and strict and not repair:
                fail(_ill_formed(tags, scheme, wrong[0]), sentence, wrong[0])
            if wrong:
                _count(stats, "repaired_tags" if repair else "ill_formed_tags", len(wrong))
            if continued:
                _count(stats, "continued_entities")
            if scheme != "BIO" or repair or continued:
                tags = tag_schemes.to_bio(tags, scheme)
        _count(stats, "sentences")
        _count(stats, "tokens", len(tags))
        sentences.append({"tokens": list(sentence["tokens"]), "tags": tags,
                          "source": sentence["source"]})
    return sentences


def read_conll(path, tag_column=None, scheme="BIO", strict=True, repair=False, stats=None,
               encoding="utf-8"):
    """Reads a CoNLL column file: one token per line, blank lines between sentences.

    The first column is the token, `tag_column` the tag; columns are separated by
    spaces or tabs and every line must have as many as the file's first line.
    `-DOCSTART-` lines are skipped (and counted). A character-per-line Chinese file
    is the same format with one character per line, its columns split by a tab or
    spaces alike; only ASCII spaces and tabs separate, so a full-width space (U+3000)
    or a no-break space is a token. An ASCII space cannot be a token. A file whose every
    token is one character and its place in a segmented word (Weibo NER's `口0 腔1`) is
    read as the characters alone (see `layouts.strip_word_positions`).

    Args:
        path: str or Path, the file.
        tag_column: int, index of the tag column (negative counts from the end),
            or None: the last column, except in a two-column file whose first column
            holds the tags and the second the words (MIT Movie's `B-Actor<TAB>steve`),
            read the other way round and counted as `tags_in_first_column`. Default
            None.
        scheme: str or None, the tag scheme: "BIO" (or "IOB2"), "IOB1", "BIOS"
            (B/I/S without E), "BIOES" (or "IOBES"), "BMES", "auto" (guessed, see
            `schemes.detect_scheme`) or None (free labels such as POS tags, not
            checked). Default "BIO".
        strict: bool, raise on an ill-formed sequence such as `I-X` after `O`.
            Default True.
        repair: bool, instead turn ill-formed sequences into their `conlleval`
            reading (`I-X` after `O` becomes `B-X`) and count them. Default False.
        stats: dict or None, receives counts (see the module docstring). Default None.
        encoding: str, the file's text encoding (`data.encoding`). Default "utf-8".

    Returns:
        A list of `{"tokens", "tags", "source"}` dicts.

    Example:

    ```python
    read_conll("train.conll", tag_column=3, scheme="IOB1")
    ```
    """
    check_scheme(scheme)
    raw, rows = [], []
    expected = None
    auto_column = tag_column is None
    tag_column = -1 if auto_column else tag_column

    def flush():
        if rows:
            raw.append({"tokens": [r[1] for r in rows], "tags": [r[2] for r in rows],
                        "lines": [r[0] for r in rows], "source": f"{path}:{rows[0][0]}"})
            rows.clear()

    for number, line in _read_lines(path, encoding):
        stripped = line.strip(" \t")
        if not stripped:
            flush()
            continue
        fields = _COLUMNS.split(stripped)
        if fields[0] == "-DOCSTART-":
            flush()
            _count(stats, "docstart_lines")
            continue
        if expected is None:
            expected = (len(fields), number)
            if len(fields) < 2:
                raise UserError(
                    "Expected at least 2 columns (token and tag) separated by spaces or tabs, "
                    f"found {len(fields)}.{_space_token_hint(line, len(fields), 2)}",
                    path=path, line=number)
            if not -len(fields) <= tag_column < len(fields) or tag_column % len(fields) == 0:
                raise UserError(
                    f"tag_column={tag_column} is not a tag column of this {len(fields)}-column "
                    "file (column 0 is the token).", path=path, line=number)
        elif len(fields) != expected[0]:
            raise UserError(
                f"Expected {expected[0]} columns like line {expected[1]}, found {len(fields)}."
                f"{_space_token_hint(line, len(fields), expected[0])}", path=path, line=number)
        rows.append((number, fields[0], fields[tag_column]))
    flush()
    if auto_column and expected and expected[0] == 2 and layouts.tags_first(raw):
        for sentence in raw:
            sentence["tokens"], sentence["tags"] = sentence["tags"], sentence["tokens"]
        _count(stats, "tags_in_first_column")
    layouts.strip_word_positions(raw, stats)
    return finish_sentences(raw, path, scheme, strict, repair, stats)


def read_conllu(path, field="upos", stats=None, encoding="utf-8"):
    """Reads a CoNLL-U file (Universal Dependencies) as words tagged with UPOS or XPOS.

    Comment lines (`#`) are skipped; multiword token lines (`3-4`) and empty nodes
    (`8.1`) are not words and are skipped; all three are counted.

    Args:
        path: str or Path, the file.
        field: str, "upos" or "xpos". Default "upos".
        stats: dict or None, receives counts (see the module docstring). Default None.
        encoding: str, the file's text encoding (`data.encoding`). Default "utf-8".

    Returns:
        A list of `{"tokens", "tags", "source"}` dicts.

    Example:

    ```python
    read_conllu("en_ewt-ud-train.conllu", field="xpos")
    ```
    """
    if field not in _CONLLU_FIELDS:
        raise ValueError(
            f"Expected field to be one of {set(_CONLLU_FIELDS)}. Received: field={field!r}"
        )
    column = _CONLLU_FIELDS[field]
    raw, rows = [], []

    def flush():
        if rows:
            raw.append({"tokens": [r[1] for r in rows], "tags": [r[2] for r in rows],
                        "lines": [r[0] for r in rows], "source": f"{path}:{rows[0][0]}"})
            rows.clear()

    for number, line in _read_lines(path, encoding):
        if not line.strip():
            flush()
            continue
        if line.startswith("#"):
            _count(stats, "comment_lines")
            continue
        fields = line.split("\t")
        if len(fields) != 10:
            raise UserError(
                f"Expected 10 tab-separated columns (CoNLL-U), found {len(fields)}.",
                path=path, line=number)
        word_id = fields[0]
        if re.fullmatch(r"\d+-\d+", word_id):
            _count(stats, "multiword_tokens")
            continue
        if re.fullmatch(r"\d+\.\d+", word_id):
            _count(stats, "empty_nodes")
            continue
        if not word_id.isdigit():
            raise UserError(f"Expected a word ID (1, 2, ... or 3-4 or 8.1), found {word_id!r}.",
                            path=path, line=number)
        if fields[column] == "_":
            raise UserError(f"This word has no {field.upper()} ('_').", path=path, line=number)
        rows.append((number, fields[1], fields[column]))
    flush()
    return finish_sentences(raw, path, None, True, False, stats)


_CONLLU_WORD = re.compile(r"^\d+(?:[-.]\d+)?\t")  # ID, then nine more tab-separated fields


def sniff_format(path, lines=50, encoding="utf-8"):
    """The format of a file whose extension says nothing (`eng.train`, `eng.testa`):
    "jsonl" when its first non-blank line opens a JSON object or array, "conllu" when
    its first word lines have CoNLL-U's ten tab-separated fields, "conll" when they
    hold a token and a tag (at least two columns); None otherwise.
    """
    seen = []
    with open(path, encoding=python_encoding(encoding), errors="replace") as handle:
        for line in handle:
            if line.strip():
                seen.append(line.rstrip("\r\n"))
            if len(seen) >= lines:
                break
    if not seen:
        return None
    if seen[0].lstrip()[:1] in ("{", "["):
        return "jsonl"
    words = [line for line in seen if not line.startswith("#")]
    if words and all(_CONLLU_WORD.match(w) and w.count("\t") == 9 for w in words):
        return "conllu"
    if words and all(len(_COLUMNS.split(w.strip())) >= 2 for w in words):
        return "conll"
    return None


def read_tagged_file(path, format=None, **options):
    """Reads a tagged corpus, its format guessed from the extension.

    `.conll`, `.txt`, `.bio`, `.iob`, `.iob2`, `.bioes`, `.bmes` are CoNLL columns
    (`read_conll`), `.conllu` is CoNLL-U (`read_conllu`), `.jsonl` and `.json` are JSON
    lines (`read_jsonl`); another extension, or none (CoNLL-2003's `eng.train`), is
    told from the first lines (`sniff_format`).

    Args:
        path: str or Path, the file.
        format: str or None, "conll", "conllu" or "jsonl" to override the
            extension. Default None.
        **options: passed to the reader (e.g. `tag_column`, `scheme`, `repair`,
            `field`, `tokens_key`, `stats`).

    Returns:
        A list of `{"tokens", "tags", "source"}` dicts.

    Example:

    ```python
    read_tagged_file("train.conllu", field="upos")
    ```
    """
    if format is None and Path(path).suffix.lower() not in EXTENSIONS and Path(path).is_file():
        format = sniff_format(path)
    if format is None:
        suffix = Path(path).suffix.lower()
        if suffix not in EXTENSIONS:
            raise UserError(
                f"Cannot tell the format from the extension {suffix!r}; expected one of "
                f"{sorted(EXTENSIONS)}, or set the format ({', '.join(FORMATS)}).", path=path)
        format = EXTENSIONS[suffix]
    from elman.tasks.tagging.json_records import read_jsonl

    readers = {"conll": read_conll, "conllu": read_conllu, "jsonl": read_jsonl}
    if format not in readers:
        raise ValueError(
            f"Expected format to be one of {set(FORMATS)}. Received: format={format!r}")
    return readers[format](path, **options)
