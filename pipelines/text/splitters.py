"""Raw-text splitters in plain Python (no TensorFlow): lines of text → one token stream.

`tokenize_lines` is the language model's tokenizer: it runs before TensorFlow loads
(to fail fast on a bad file) and its tokens are looked up in a vocabulary list, so it
is plain Python rather than the Keras layer of `elman.text.tokenize`.
"""

import re

EOL_TOKEN = "<eol>"  # ends each line or paragraph of the token stream
LEVELS = ("word", "character")
UNITS = ("line", "paragraph")
_RESERVED = ("", "[UNK]")  # padding and out-of-vocabulary: never an end-of-line token

# A word (letters/digits/underscore, with inner apostrophes or hyphens kept:
# "don't", "state-of-the-art") or one punctuation/symbol character.
_WORD_PATTERN = re.compile(r"\w+(?:['’-]\w+)*|[^\w\s]")


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


def tokenize_lines(lines, level="word", lowercase=False, unit="line", eol_token=EOL_TOKEN):
    """Turn lines of text into one token stream with an end-of-line token after each unit.

    Word level splits punctuation off words (`"Hello, world!"` → `Hello , world !`)
    and keeps inner apostrophes and hyphens (`don't`, `well-known`); text
    without spaces (Chinese, Japanese) stays one token per run, so segment it
    first or use character level. Character level keeps every character,
    spaces included. Blank lines hold no tokens: with `unit="line"` they add
    nothing, with `unit="paragraph"` they separate paragraphs.

    Args:
        lines: list of str, the text, one entry per line.
        level: str, `"word"` or `"character"`. Default `"word"`.
        lowercase: bool, lower-case the text first. Default False.
        unit: str, `"line"` (one `eol_token` after each non-blank line) or
            `"paragraph"` (the lines of a paragraph joined by a space, one
            `eol_token` after each paragraph). Default `"line"`.
        eol_token: str, the end-of-line token. Default `"<eol>"`.

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
    tokens = []
    for text in _units(lines, unit):
        if lowercase:
            text = text.lower()
        if level == "word":
            tokens.extend(_WORD_PATTERN.findall(text))
        else:
            tokens.extend(text)
        tokens.append(eol_token)
    return tokens
