"""Raw text and tokens: the splitter the tagger reads with, and entities as text.

`split_raw_text` turns raw text into the tokens a tagging run expects (Latin-script
words whole, CJK characters one by one); `join_tokens` and `entities_of` go the other
way, for reports and predictions.
"""

import re

from elman.tasks.tagging import schemes as tag_schemes

_CJK = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef" \
       "\U00020000-\U0002ffff"
_LATIN_WORD_CHAR = rf"(?:(?![{_CJK}])\w)"
_RAW_TOKEN = re.compile(
    rf"[{_CJK}]"  # a CJK character (or full-width punctuation) on its own
    r"|(?:[^\W\d_]\.){2,}"  # an abbreviation with dots: U.S., e.g.
    r"|\d+(?:[.,]\d+)+"  # a number with separators: 3.5, 1,000
    rf"|{_LATIN_WORD_CHAR}+(?:['’\-]{_LATIN_WORD_CHAR}+)*"  # a word: don't, York-based
    rf"|[^\s{_CJK}]"  # any other symbol, one by one
)


def split_raw_text(text):
    """Splits raw text into the tokens the tagger expects.

    Latin-script words and numbers stay whole, punctuation is split off, and CJK
    characters (Chinese, Japanese kana, full-width punctuation) become one token
    each, so mixed text works too.

    Args:
        text: str, the text.

    Returns:
        A list of str.

    Example:

    ```python
    split_raw_text("Alice visited the U.S. in 2019, then 北京。")
    # ['Alice', 'visited', 'the', 'U.S.', 'in', '2019', ',', 'then', '北', '京', '。']
    ```
    """
    return _RAW_TOKEN.findall(text)


def _is_cjk(text):
    return any("\u2e80" <= c <= "\u9fff" or "\uf900" <= c <= "\ufaff" or "\uff00" <= c <= "\uffef"
               or "\U00020000" <= c <= "\U0002ffff" for c in text)


def join_tokens(tokens):
    """Tokens as text: spaces between words, none between CJK characters.

    Args:
        tokens: list of str.
    """
    out = ""
    for i, token in enumerate(tokens):
        if i and not (_is_cjk(tokens[i - 1][-1:]) and _is_cjk(token[:1])):
            out += " "
        out += token
    return out


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
    """Entities as dicts {type, start, end (exclusive, tokens), text}.

    Args:
        tokens: list of str, the sentence's tokens.
        bio_tags: list of str, their tags in BIO.
        text: str or None, the raw text the tokens came from (an entity's text is then
            cut from it; otherwise its tokens are joined).
    """
    offsets = _offsets(text, tokens) if text is not None else None
    out = []
    for type_, start, end in tag_schemes.bio_spans(bio_tags):
        if offsets:
            surface = text[offsets[start][0]: offsets[end - 1][1]]
        else:
            surface = join_tokens(tokens[start:end])
        out.append({"type": type_, "start": start, "end": end, "text": surface})
    return out
