"""Readers of tagged corpus files: CoNLL columns, CoNLL-U, JSON lines.

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
`read_jsonl`), `space_characters` (spaces of a raw text tagged per character, which
are no tokens), and `scheme` (the scheme read).

Example:

```python
stats = {}
sentences = read_tagged_file("data/ner/train.conll", repair=True, stats=stats)
sentences[0]  # {'tokens': ['EU', 'rejects', ...], 'tags': ['B-ORG', 'O', ...],
              #  'source': 'data/ner/train.conll:3'}
```
"""

import json
import re
from pathlib import Path

from elman.errors import UserError
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
_SCHEMES = ("BIO", "IOB2", "IOB1", "BIOS", "BIOES", "IOBES", "BMES", "auto", None)
_COLUMNS = re.compile(r"[ \t]+")  # not str.split(): U+3000 and NBSP can be tokens
_CONLLU_FIELDS = {"upos": 3, "xpos": 4}


def _count(stats, key, n=1):
    if stats is not None:
        stats[key] = stats.get(key, 0) + n


def _read_lines(path):
    """(line number, text) for each line of a UTF-8 file, without line endings."""
    path = Path(path)
    if not path.exists():
        raise UserError("File not found.", path=path)
    if not path.is_file():
        raise UserError("Expected a file, found a directory or something else.", path=path)
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise UserError(
            f"Not valid UTF-8 (byte 0x{data[error.start]:02x} at byte {column} of the line); "
            "save the file as UTF-8.", path=path, line=line) from None
    text = text.removeprefix("\ufeff")
    return [(number, line.rstrip("\r")) for number, line in enumerate(text.split("\n"), 1)]


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


def read_conll(path, tag_column=-1, scheme="BIO", strict=True, repair=False, stats=None):
    """Reads a CoNLL column file: one token per line, blank lines between sentences.

    The first column is the token, `tag_column` the tag; columns are separated by
    spaces or tabs and every line must have as many as the file's first line.
    `-DOCSTART-` lines are skipped (and counted). A character-per-line Chinese file
    is the same format with one character per line, its columns split by a tab or
    spaces alike; only ASCII spaces and tabs separate, so a full-width space (U+3000)
    or a no-break space is a token. An ASCII space cannot be a token.

    Args:
        path: str or Path, the file.
        tag_column: int, index of the tag column (negative counts from the end).
            Default -1 (the last column).
        scheme: str or None, the tag scheme: "BIO" (or "IOB2"), "IOB1", "BIOS"
            (B/I/S without E), "BIOES" (or "IOBES"), "BMES", "auto" (guessed, see
            `schemes.detect_scheme`) or None (free labels such as POS tags, not
            checked). Default "BIO".
        strict: bool, raise on an ill-formed sequence such as `I-X` after `O`.
            Default True.
        repair: bool, instead turn ill-formed sequences into their `conlleval`
            reading (`I-X` after `O` becomes `B-X`) and count them. Default False.
        stats: dict or None, receives counts (see the module docstring). Default None.

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

    def flush():
        if rows:
            raw.append({"tokens": [r[1] for r in rows], "tags": [r[2] for r in rows],
                        "lines": [r[0] for r in rows], "source": f"{path}:{rows[0][0]}"})
            rows.clear()

    for number, line in _read_lines(path):
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
    return finish_sentences(raw, path, scheme, strict, repair, stats)


def read_conllu(path, field="upos", stats=None):
    """Reads a CoNLL-U file (Universal Dependencies) as words tagged with UPOS or XPOS.

    Comment lines (`#`) are skipped; multiword token lines (`3-4`) and empty nodes
    (`8.1`) are not words and are skipped; all three are counted.

    Args:
        path: str or Path, the file.
        field: str, "upos" or "xpos". Default "upos".
        stats: dict or None, receives counts (see the module docstring). Default None.

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

    for number, line in _read_lines(path):
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


def _json_records(path):
    """(line, object) for each record of a JSON-lines file or a JSON array file."""
    lines = _read_lines(path)
    text = "\n".join(line for _, line in lines)
    if not text.lstrip().startswith("["):
        for number, line in lines:
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as error:
                raise UserError(f"Invalid JSON: {error.msg} (column {error.colno}).",
                                path=path, line=number) from None
        return
    decoder = json.JSONDecoder()
    position = text.index("[") + 1
    while True:
        while position < len(text) and text[position] in " \t\r\n,":
            position += 1
        if position < len(text) and text[position] == "]":
            return
        line = text.count("\n", 0, position) + 1
        try:
            record, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise UserError(f"Invalid JSON: {error.msg}.", path=path, line=error.lineno) from None
        yield line, record


TOKEN_KEYS = ("tokens", "words", "text", "chars", "characters")  # tried in this order
TAG_KEYS = ("tags", "ner_tags", "labels", "label", "ner")  # when the keys are not given
SPAN_KEYS = ("label", "labels", "entities", "spans", "ner")  # entity spans over a string


def _span_keys(record, tokens_key, tags_key, guess):
    """(text key, spans key) when `record` holds a raw string and entity spans over it
    (CLUENER's `{"text": str, "label": {type: {surface: [[start, end]]}}}`, doccano's
    `{"text": str, "label": [[start, end, type]]}`), else None."""
    text_key = tokens_key if tokens_key in record or not guess else "text"
    if not isinstance(record.get(text_key), str):
        return None
    keys = [tags_key] if tags_key in record or not guess else SPAN_KEYS
    for key in keys:
        value = record.get(key)
        if isinstance(value, dict) or (isinstance(value, list) and all(
                isinstance(item, (list, dict)) for item in value)):
            return text_key, key
    return None


def _char_tag_keys(record, tokens_key, tags_key, guess):
    """(text key, tags key) when `record` holds a raw string and one tag per character
    (`{"text": "北京很大", "label": ["B-LOC", "I-LOC", "O", "O"]}`), else None."""
    text_key = tokens_key if tokens_key in record or not guess else "text"
    text = record.get(text_key)
    if not isinstance(text, str):
        return None
    keys = [tags_key] if tags_key in record or not guess else TAG_KEYS
    for key in keys:
        value = record.get(key)
        if (isinstance(value, list) and len(value) == len(text) and value
                and all(isinstance(t, str) for t in value)):
            return text_key, key
    return None


def _char_tokens(text, tags, path, number, stats):
    """Characters and their tags; a space (tagged O or I-) is no token and is counted."""
    tokens, kept = [], []
    for position, (char, tag) in enumerate(zip(text, tags)):
        if not char.isspace():
            tokens.append(char)
            kept.append(tag)
        elif tag == "O" or tag[:2] in ("I-", "M-", "E-"):
            _count(stats, "space_characters")
        else:
            raise UserError(f"Character {position + 1} is a space tagged {tag!r}; an entity "
                            "cannot begin at a space.", path=path, line=number)
    return tokens, kept


def _spans(value, text, path, number):
    """The entity spans of one record as (start, end, type), `end` excluded."""
    spans = []
    if isinstance(value, dict):  # CLUENER: {type: {surface: [[start, end], ...]}}, end included
        for kind, mentions in value.items():
            if not isinstance(mentions, dict):
                raise UserError(f"Expected the spans of type {kind!r} as {{surface: [[start, "
                                f"end], ...]}}, found {type(mentions).__name__}.",
                                path=path, line=number)
            for surface, places in mentions.items():
                for place in places if isinstance(places, list) else [places]:
                    if not (isinstance(place, list) and len(place) == 2
                            and all(type(i) is int for i in place)):
                        raise UserError(f"Expected [start, end] offsets for {kind} {surface!r}, "
                                        f"found {place!r}.", path=path, line=number)
                    start, end = place[0], place[1] + 1
                    _check_offsets(text, start, end, kind, path, number)
                    if text[start:end] != surface:
                        raise UserError(
                            f"{kind} {surface!r} at [{place[0]}, {place[1]}] reads "
                            f"{text[start:end]!r} in the text; expected character offsets "
                            "with the end included (CLUENER's convention).",
                            path=path, line=number)
                    spans.append((start, end, str(kind)))
        return spans
    for item in value:  # doccano: [start, end, type] or {"start_offset", "end_offset", "label"}
        if isinstance(item, dict):
            start = item.get("start_offset", item.get("start"))
            end = item.get("end_offset", item.get("end"))
            kind = item.get("label", item.get("type"))
        elif len(item) == 3:
            start, end, kind = item
        else:
            start = end = kind = None
        if type(start) is not int or type(end) is not int or not isinstance(kind, str):
            raise UserError(f"Expected a span [start, end, type] (end excluded), found "
                            f"{item!r}.", path=path, line=number)
        _check_offsets(text, start, end, kind, path, number)
        spans.append((start, end, kind))
    return spans


def _check_offsets(text, start, end, kind, path, number):
    if not 0 <= start < end <= len(text):
        raise UserError(f"The {kind} span [{start}, {end}) is outside the text's "
                        f"{len(text)} characters or empty.", path=path, line=number)
    if not kind or any(c.isspace() for c in kind):
        raise UserError(f"Expected an entity type name without spaces, found {kind!r}.",
                        path=path, line=number)
    if not text[start:end].strip():
        raise UserError(f"The {kind} span [{start}, {end}) holds only spaces.", path=path,
                        line=number)


def _tag_spans(text, spans, path, number, repair, stats):
    """Tokens (`split_raw_text`'s, cut further at span edges) and their BIO tags."""
    from elman.text.splitters import raw_token_offsets

    if len(set(spans)) < len(spans):  # the same span listed twice: one entity
        _count(stats, "duplicate_spans", len(spans) - len(set(spans)))
    spans = sorted(set(spans), key=lambda s: (s[0], -(s[1] - s[0]), s[2]))
    kept = []
    for span in spans:
        clash = next((k for k in kept if span[0] < k[1] and k[0] < span[1]), None)
        if clash is None:
            kept.append(span)
            continue
        if not repair:
            raise UserError(
                f"The {span[2]} span {text[span[0]:span[1]]!r} [{span[0]}, {span[1]}) overlaps "
                f"the {clash[2]} span {text[clash[0]:clash[1]]!r} [{clash[0]}, {clash[1]}); "
                "one tag per token cannot hold both. Pass --repair-bio (data.repair_bio) to "
                "keep the longer (the first on a tie) and count the other.",
                path=path, line=number)
        _count(stats, "overlapping_spans")
    edges = {e for span in kept for e in span[:2]}
    tokens, bounds = [], []
    for start, end in raw_token_offsets(text):
        cuts = sorted(e for e in edges if start < e < end)
        if cuts:
            _count(stats, "tokens_split_at_entity_edges")
        for a, b in zip([start] + cuts, cuts + [end]):
            piece = text[a:b].strip()
            if piece:
                tokens.append(piece)
                bounds.append((a, b))
    tags = ["O"] * len(tokens)
    for start, end, kind in kept:
        inside = [i for i, (a, b) in enumerate(bounds) if start <= a and b <= end]
        for n, i in enumerate(inside):
            tags[i] = ("B-" if n == 0 else "I-") + kind
    return tokens, tags


def _guess_key(record, given, known):
    """`given` when the record has it, else the first of `known` the record holds as a
    list (the real corpora's other names: `text`/`label` in Chinese NER releases)."""
    if given in record:
        return given
    return next((key for key in known if isinstance(record.get(key), list)), given)


def read_jsonl(path, tokens_key="tokens", tags_key="tags", scheme="BIO", strict=True,
               repair=False, stats=None, guess_keys=False):
    """Reads JSON lines `{"tokens": [...], "tags": [...]}`, one sentence per line.

    A `.json` file holding one JSON array of such objects is read too. So are records
    of raw text with entity spans over its characters: CLUENER's `{"text": str,
    "label": {type: {surface: [[start, end], ...]}}}` (end included; the surface must
    read so in the text) and doccano's `{"text": str, "label": [[start, end, type],
    ...]}` or `[{"start_offset", "end_offset", "label"}, ...]` (end excluded). Their
    text is split as raw text is at prediction (`split_raw_text`: a CJK character per
    token, Latin words whole), a token is cut where a span begins or ends inside it
    (counted as `tokens_split_at_entity_edges`), and the spans become BIO tags. Two
    spans that overlap are an error; with `repair` the longer is kept (the first on a
    tie) and the other counted as `overlapping_spans`. A raw string with one tag per
    character (`{"text": "北京很大", "label": ["B-LOC", "I-LOC", "O", "O"]}`) is read one
    character per token; its spaces are no tokens (counted as `space_characters`; a space
    that begins an entity is an error).

    Args:
        path: str or Path, the file.
        tokens_key: str, the key of the token list. Default "tokens".
        tags_key: str, the key of the tag list. Default "tags".
        guess_keys: bool, when the first record lacks `tokens_key` or `tags_key`, use the
            first of `TOKEN_KEYS` / `TAG_KEYS` it holds as a list (so `{"text": [...],
            "label": [...]}` reads without settings); every record then needs those
            keys. Default False.
        scheme: str or None, the tag scheme (see `read_conll`). Default "BIO".
        strict: bool, raise on an ill-formed tag sequence. Default True.
        repair: bool, repair ill-formed sequences and count them. Default False.
        stats: dict or None, receives counts (see the module docstring). Default None.

    Returns:
        A list of `{"tokens", "tags", "source"}` dicts.

    Example:

    ```python
    read_jsonl("train.jsonl", tags_key="ner_tags")
    ```
    """
    check_scheme(scheme)
    raw = []
    for number, record in _json_records(path):
        if not isinstance(record, dict):
            raise UserError(f"Expected a JSON object with {tokens_key!r} and {tags_key!r}, "
                            f"found {type(record).__name__}.", path=path, line=number)
        span_keys = _span_keys(record, tokens_key, tags_key, guess_keys)
        if span_keys is not None:
            text = record[span_keys[0]]
            tokens, tags = _tag_spans(text, _spans(record[span_keys[1]], text, path, number),
                                      path, number, repair, stats)
            if not tokens:
                raise UserError(f"Empty sentence: {span_keys[0]!r} holds no token.",
                                path=path, line=number)
            _count(stats, "span_records")
            raw.append({"tokens": tokens, "tags": tags, "lines": [number] * len(tokens),
                        "source": f"{path}:{number}"})
            continue
        char_keys = _char_tag_keys(record, tokens_key, tags_key, guess_keys)
        if char_keys is not None:
            tokens, tags = _char_tokens(record[char_keys[0]], record[char_keys[1]], path,
                                        number, stats)
            if not tokens:
                raise UserError(f"Empty sentence: {char_keys[0]!r} holds only spaces.",
                                path=path, line=number)
            raw.append({"tokens": tokens, "tags": tags, "lines": [number] * len(tokens),
                        "source": f"{path}:{number}"})
            continue
        if guess_keys:
            tokens_key = _guess_key(record, tokens_key, TOKEN_KEYS)
            tags_key = _guess_key(record, tags_key, TAG_KEYS)
            guess_keys = False
        for key in (tokens_key, tags_key):
            if key not in record:
                raise UserError(f"Missing key {key!r} (keys: {sorted(record)}).",
                                path=path, line=number)
            if not isinstance(record[key], list):
                raise UserError(f"Expected {key!r} to be a list, found "
                                f"{type(record[key]).__name__}.", path=path, line=number)
        tokens, tags = record[tokens_key], record[tags_key]
        if not tokens:
            raise UserError(f"Empty sentence: {tokens_key!r} is an empty list.",
                            path=path, line=number)
        if len(tokens) != len(tags):
            raise UserError(f"{len(tokens)} tokens but {len(tags)} tags.", path=path, line=number)
        raw.append({"tokens": tokens, "tags": tags, "lines": [number] * len(tokens),
                    "source": f"{path}:{number}"})
    return finish_sentences(raw, path, scheme, strict, repair, stats)


_CONLLU_WORD = re.compile(r"^\d+(?:[-.]\d+)?\t")  # ID, then nine more tab-separated fields


def sniff_format(path, lines=50):
    """The format of a file whose extension says nothing (`eng.train`, `eng.testa`):
    "jsonl" when its first non-blank line opens a JSON object or array, "conllu" when
    its first word lines have CoNLL-U's ten tab-separated fields, "conll" when they
    hold a token and a tag (at least two columns); None otherwise.
    """
    seen = []
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
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
    readers = {"conll": read_conll, "conllu": read_conllu, "jsonl": read_jsonl}
    if format not in readers:
        raise ValueError(
            f"Expected format to be one of {set(FORMATS)}. Received: format={format!r}")
    return readers[format](path, **options)
