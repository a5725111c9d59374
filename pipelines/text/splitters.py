"""Raw-text splitters in plain Python (no TensorFlow).

`tokenize_lines` is the language model's tokenizer (lines of text → one token stream):
it runs before TensorFlow loads (to fail fast on a bad file) and its tokens are looked
up in a vocabulary list, so it is plain Python rather than the Keras layer of
`elman.text.tokenize`. `split_raw_text` splits raw text into the tokens a tagging run
expects, and `join_tokens` goes back from tokens to text.
"""

import re

EOL_TOKEN = "<eol>"  # ends each line or paragraph of the token stream
LEVELS = ("word", "character", "subword")
UNITS = ("line", "paragraph")
_RESERVED = ("", "[UNK]")  # padding and out-of-vocabulary: never an end-of-line token

# A word (letters/digits/underscore, with inner apostrophes or hyphens kept:
# "don't", "state-of-the-art") or one punctuation/symbol character.
_WORD_PATTERN = re.compile(r"\w+(?:['’-]\w+)*|[^\w\s]")


def text_units(lines, unit="line", lowercase=False):
    """The texts `tokenize_lines` tokenizes, each followed by one end-of-line token: the
    non-blank lines, or the paragraphs (blank-line blocks joined by a space),
    lower-cased when asked (what a subword model of the stream is learned from)."""
    if unit not in UNITS:
        raise ValueError(f"Expected unit to be one of {set(UNITS)}. Received: unit={unit!r}")
    return [text.lower() if lowercase else text for text in _units(lines, unit)]


def _units(lines, unit):
    """The non-blank lines, or the paragraphs (blank-line blocks joined by a space)."""
    if unit == "line":
        return [line for line in lines if line.strip()]
    units, current = [], []
    for line in list(lines) + [""]:
        if line.strip():
            current.append(line.strip())
        elif current:
            units.append(" ".join(current))
            current = []
    return units


def tokenize_lines(lines, level="word", lowercase=False, unit="line", eol_token=EOL_TOKEN,
                   pieces=None):
    """Turn lines of text into one token stream with an end-of-line token after each unit.

    Word level splits punctuation off words (`"Hello, world!"` → `Hello , world !`)
    and keeps inner apostrophes and hyphens (`don't`, `well-known`); text
    without spaces (Chinese, Japanese) stays one token per run, so segment it
    first or use character level. Character level keeps every character,
    spaces included. Subword level splits each line with `pieces` (a learned
    SentencePiece model, `elman.text.pieces.PieceSplitter`). Blank lines hold no
    tokens: with `unit="line"` they add
    nothing, with `unit="paragraph"` they separate paragraphs.

    Args:
        lines: list of str, the text, one entry per line.
        level: str, `"word"`, `"character"` or `"subword"`. Default `"word"`.
        lowercase: bool, lower-case the text first. Default False.
        unit: str, `"line"` (one `eol_token` after each non-blank line) or
            `"paragraph"` (the lines of a paragraph joined by a space, one
            `eol_token` after each paragraph). Default `"line"`.
        eol_token: str, the end-of-line token. Default `"<eol>"`.
        pieces: callable str → list of str, the subword splitter (subword level
            only). Default None.

    Returns:
        list of str, the token stream.

    Example:

    ```python
    tokenize_lines(["Hi, you.", "", "Bye!"])
    # ['Hi', ',', 'you', '.', '<eol>', 'Bye', '!', '<eol>']
    ```
    """
    if level not in LEVELS:
        raise ValueError(f"Expected level to be one of {set(LEVELS)}. Received: level={level!r}")
    if unit not in UNITS:
        raise ValueError(f"Expected unit to be one of {set(UNITS)}. Received: unit={unit!r}")
    if not isinstance(eol_token, str) or not eol_token or eol_token in _RESERVED:
        raise ValueError(
            f"Expected eol_token to be a non-empty string other than {_RESERVED[1]!r}. "
            f"Received: eol_token={eol_token!r}"
        )
    if (level == "subword") != (pieces is not None):
        raise ValueError("Expected a `pieces` splitter with level 'subword' and only then. "
                         f"Received: level={level!r}, pieces={pieces!r}")
    tokens = []
    for text in _units(lines, unit):
        if lowercase:
            text = text.lower()
        if level == "word":
            tokens.extend(_WORD_PATTERN.findall(text))
        elif level == "subword":
            tokens.extend(pieces(text))
        else:
            tokens.extend(text)
        tokens.append(eol_token)
    return tokens


# ---------------------------------------------------------------- tagging

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


def raw_token_offsets(text):
    """The (start, end) character offsets of `split_raw_text`'s tokens, end excluded.

    Example:

    ```python
    raw_token_offsets("Hi, 北京")  # [(0, 2), (2, 3), (4, 5), (5, 6)]
    ```
    """
    return [match.span() for match in _RAW_TOKEN.finditer(text)]


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
