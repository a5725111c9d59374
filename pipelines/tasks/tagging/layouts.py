"""Corpus layouts normalised while tagged files are read: two-column files with the tag
first (the MIT Movie and Restaurant corpora), Weibo NER's characters with their word
positions (`口0 腔1`), and integer tag ids of a `datasets` export. Each is counted in the
reader's `stats` (see `elman.tasks.tagging.readers`), so the report can say what was done.
"""

import re

from elman.errors import UserError


def _count(stats, key, n=1):
    if stats is not None:
        stats[key] = stats.get(key, 0) + n


def name_tag_ids(raw, names, path, what="ClassLabel names"):
    """Replaces integer tags by their names (`names[id]`), in place.

    A file written from a Hugging Face dataset (`to_json`, `to_parquet`) keeps the tags
    as ids. With no names to map them to, or an id outside them, the error says how to
    give the names (`data.tag_names`, in id order).
    """
    for sentence in raw:
        tags = sentence["tags"]
        if all(isinstance(t, str) for t in tags):
            continue
        odd = next(i for i, t in enumerate(tags) if not isinstance(t, str))
        where = {"path": sentence["source"]} if sentence["lines"] is None else {
            "path": path, "line": sentence["lines"][odd]}
        if not names:
            raise UserError(f"Tag {tags[odd]!r} is an id, and the file holds no tag names to "
                            "map ids to: give them in id order with data.tag_names, e.g. "
                            "--set 'data.tag_names=[\"O\", \"B-PER\", \"I-PER\"]'", **where)
        bad = [t for t in tags if not (isinstance(t, int) and not isinstance(t, bool)
                                       and 0 <= t < len(names))]
        if bad:
            raise UserError(f"Tag id {bad[0]!r} is not one of the {len(names)} {what} "
                            f"(ids 0-{len(names) - 1}).", **where)
        sentence["tags"] = [names[t] for t in tags]


_TAG_LIKE = re.compile(r"^(O|[BIESMU]-\S+)$")


def tags_first(raw):
    """Whether a two-column file holds the tag first and the word second (the MIT Movie
    and Restaurant corpora's `B-Actor<TAB>steve`): every first-column value reads as a
    tag and fewer than half the second-column values do."""
    first = [t for s in raw for t in s["tokens"]]
    second = [t for s in raw for t in s["tags"]]
    return (all(_TAG_LIKE.match(t) for t in first)
            and 2 * sum(bool(_TAG_LIKE.match(t)) for t in second) < len(second))


def _word_position(token):
    """The number after a token's one character (`口0` → 0), or None."""
    tail = token[1:]
    return int(tail) if tail.isascii() and tail.isdigit() else None


def strip_word_positions(raw, stats):
    """Removes the word positions of Weibo NER's segmented layout, in place.

    `weiboNER_2nd_conll` writes each character with its place in its segmented word
    (`口0 腔1 溃2 疡3 加0 上1`). Raw text has no such numbers, so a model trained on
    them could not read it: when every token of the file is one character and a number,
    and in every sentence the numbers start at 0 and each is 0 or one more than the last,
    the numbers are removed and counted (`word_positions_removed`). Any other file is
    left as it is.
    """
    total = 0
    for sentence in raw:
        positions = [_word_position(t) for t in sentence["tokens"]]
        if None in positions or positions[0] != 0 or any(
                p not in (0, q + 1) for q, p in zip(positions, positions[1:])):
            return
        total += len(positions)
    if not total:
        return
    for sentence in raw:
        sentence["tokens"] = [t[0] for t in sentence["tokens"]]
    _count(stats, "word_positions_removed", total)
