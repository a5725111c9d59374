"""Entities as text: a tagged sentence's BIO spans with their surface strings."""

from elman.tasks.tagging import schemes as tag_schemes
from elman.text.splitters import join_tokens


def _offsets(text, tokens):
    offsets, cursor = [], 0
    for token in tokens:
        start = text.find(token, cursor)
        if start < 0:
            return None
        offsets.append((start, start + len(token)))
        cursor = start + len(token)
    return offsets


def entities_of(tokens, bio_tags, text=None):
    """Entities as dicts {type, start, end (exclusive, tokens), text}, plus
    {char_start, char_end} (exclusive) when the text is given: `text[char_start:char_end]`
    is the entity's text.

    Args:
        tokens: list of str, the sentence's tokens.
        bio_tags: list of str, their tags in BIO.
        text: str or None, the raw text the tokens came from (an entity's text is then
            cut from it, with its character offsets; otherwise its tokens are joined).
    """
    offsets = _offsets(text, tokens) if text is not None else None
    out = []
    for type_, start, end in tag_schemes.bio_spans(bio_tags):
        entity = {"type": type_, "start": start, "end": end}
        if offsets:
            entity["char_start"], entity["char_end"] = offsets[start][0], offsets[end - 1][1]
            entity["text"] = text[entity["char_start"]: entity["char_end"]]
        else:
            entity["text"] = join_tokens(tokens[start:end])
        out.append(entity)
    return out
