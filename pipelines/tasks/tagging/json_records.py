"""Tagged sentences from JSON lines (or one JSON array): token and tag lists, or raw
text with entity spans (CLUENER, doccano) or one tag per character.

`read_jsonl` returns sentences as every reader in `elman.tasks.tagging.readers` does,
checked by `readers.finish_sentences`; its counts go to the same `stats`.
"""

import json

from elman.errors import UserError
from elman.tasks.tagging.layouts import name_tag_ids
from elman.tasks.tagging.readers import _count, _read_lines, check_scheme, finish_sentences


def json_objects(path, encoding="utf-8"):
    """(line, object) for each record of a JSON-lines file or a JSON array file."""
    lines = _read_lines(path, encoding)
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


def _raw_text_keys(record, tokens_key, tags_key, guess):
    """(text key, tags key, kind) when `record` holds a raw string with entity spans over
    it (kind "spans": CLUENER's `{"text": str, "label": {type: {surface: [[start, end]]}}}`,
    doccano's `{"text": str, "label": [[start, end, type]]}`) or one tag per character
    (kind "chars": `{"text": "北京很大", "label": ["B-LOC", "I-LOC", "O", "O"]}`); else
    None."""
    text_key = tokens_key if tokens_key in record or not guess else "text"
    text = record.get(text_key)
    if not isinstance(text, str):
        return None
    for key in ([tags_key] if tags_key in record or not guess else SPAN_KEYS + TAG_KEYS):
        value = record.get(key)
        if isinstance(value, dict) or (isinstance(value, list) and all(
                isinstance(item, (list, dict)) for item in value)):
            return text_key, key, "spans"
        if (isinstance(value, list) and value and len(value) == len(text)
                and all(isinstance(t, str) for t in value)):
            return text_key, key, "chars"
    return None


def _raw_text_sentence(record, keys, path, number, repair, stats):
    """The tokens and tags of a raw-text record (`_raw_text_keys` gave `keys`)."""
    text_key, tags_key, kind = keys
    text = record[text_key]
    if kind == "spans":
        tokens, tags = _tag_spans(text, _spans(record[tags_key], text, path, number), path,
                                  number, repair, stats)
        _count(stats, "span_records")
    else:
        tokens, tags = _char_tokens(text, record[tags_key], path, number, stats)
    if not tokens:
        raise UserError(f"Empty sentence: {text_key!r} holds no token.", path=path,
                        line=number)
    return tokens, tags


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
    for item in value:  # doccano: [start, end, type] or {"start_offset", "end_offset", "label"};
        # Label Studio: {"start", "end", "text", "labels": [type]}
        if isinstance(item, dict):
            start = item.get("start_offset", item.get("start"))
            end = item.get("end_offset", item.get("end"))
            kind = item.get("label", item.get("type"))
            if kind is None and isinstance(item.get("labels"), list) and len(item["labels"]) == 1:
                kind = item["labels"][0]
            surface = item.get("text")
            if (isinstance(surface, str) and type(start) is int and type(end) is int
                    and text[start:end] != surface):
                raise UserError(f"{kind} {surface!r} at [{start}, {end}) reads "
                                f"{text[start:end]!r} in the text; expected character "
                                "offsets with the end excluded.", path=path, line=number)
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


def _is_prodigy(record):
    """Whether `record` is a Prodigy NER annotation: `{"text": str, "spans": [{"start",
    "end", "label"}], "tokens": [{"text", "start", "end", "id"}], "answer": "accept"}`
    (the spans over the raw text are read; Prodigy's own tokens are not needed)."""
    tokens = record.get("tokens")
    return (isinstance(record.get("text"), str) and isinstance(record.get("spans", []), list)
            and ("spans" in record or "answer" in record)
            and (tokens is None or (isinstance(tokens, list)
                                    and all(isinstance(t, dict) for t in tokens))))


def _label_studio_task(record, path, number, stats):
    """A Label Studio task of its JSON export (`{"data": {"text": ...}, "annotations":
    [{"result": [{"type": "labels", "value": {"start", "end", "text", "labels"}}]}]}`)
    as the `{"text", "label"}` record of its JSON-MIN export. The first annotation not
    cancelled is read; any others (a second annotator's) are counted as
    `other_annotations`; a task without one is an error."""
    data = record["data"]
    strings = [k for k, v in data.items() if isinstance(v, str)]
    key = "text" if isinstance(data.get("text"), str) else (
        strings[0] if len(strings) == 1 else None)
    if key is None:
        raise UserError(f"Expected the task's text under data.text, found keys {sorted(data)}.",
                        path=path, line=number)
    annotations = [a for a in record.get("annotations") or []
                   if isinstance(a, dict) and not a.get("was_cancelled")]
    if not annotations:
        raise UserError(f"Task {record.get('id', '')!r} has no annotation (or only cancelled "
                        "ones); annotate it or leave it out of the export.", path=path,
                        line=number)
    if len(annotations) > 1:
        _count(stats, "other_annotations", len(annotations) - 1)
    spans = [r.get("value") for r in annotations[0].get("result") or []
             if isinstance(r, dict) and r.get("type") == "labels"]
    return {"text": data[key], "label": spans}


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
               repair=False, stats=None, guess_keys=False, tag_names=(), encoding="utf-8"):
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
        stats: dict or None, receives counts (listed in `readers`). Default None.
        tag_names: sequence of str, the names of tags written as integer ids (a
            `datasets` `to_json` export), in id order (`data.tag_names`). Default ().
        encoding: str, the file's text encoding (`data.encoding`). Default "utf-8".

    Returns:
        A list of `{"tokens", "tags", "source"}` dicts.

    Example:

    ```python
    read_jsonl("train.jsonl", tags_key="ner_tags")
    ```
    """
    check_scheme(scheme)
    raw = []
    for number, record in json_objects(path, encoding):
        if not isinstance(record, dict):
            raise UserError(f"Expected a JSON object with {tokens_key!r} and {tags_key!r}, "
                            f"found {type(record).__name__}.", path=path, line=number)
        if guess_keys and isinstance(record.get("data"), dict) and "annotations" in record:
            record = _label_studio_task(record, path, number, stats)
        elif guess_keys and _is_prodigy(record):
            if record.get("answer", "accept") != "accept":  # rejected or ignored in review
                _count(stats, "rejected_records")
                continue
            record = {"text": record["text"], "spans": record.get("spans") or []}
        keys = _raw_text_keys(record, tokens_key, tags_key, guess_keys)
        if keys is not None:
            tokens, tags = _raw_text_sentence(record, keys, path, number, repair, stats)
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
    name_tag_ids(raw, tag_names, path, "names in data.tag_names")
    return finish_sentences(raw, path, scheme, strict, repair, stats)
