"""Extra per-token features of the tagger: character bigrams and word shape.

Each feature is computed twice, from the same definitions: in Python for training and
`elman predict` (`bigram_strings`, `word_shape`), and in TensorFlow ops for the raw-text
SavedModel (`bigram_strings_tf`, `shape_ids_tf`).

- **Bigrams** (`features.bigrams`). For one-character-per-token corpora (Chinese NER),
  each token gets the bigram that ends at it, (t[i-1], t[i]), and the one that starts at
  it, (t[i], t[i+1]); a sentence's first token pairs with `BEGIN`, its last with `END`.
  A bigram is written as its two tokens joined by a space ("北 京", "京 </s>").
- **Shape** (`features.shape`). The case and digit class of the raw token (before any
  lowercasing), one of `SHAPES`, decided per character by Python's `str.isdecimal`,
  `str.isupper` (or `str.istitle`), `str.islower` and `str.isalpha`.
"""

import functools
import sys

BEGIN, END = "<s>", "</s>"  # what a sentence's first and last tokens pair with
JOIN = " "  # between the two tokens of a bigram

# Shape ids: 0 is padding; the others in the order `word_shape` tries them.
SHAPES = (
    "",  # padding
    "numeric",  # a digit and no letter: 2019, 3.5, 1,000, 10%
    "has_digit",  # a digit and a letter: B52, 3rd, COVID-19
    "punct",  # no letter and no digit: . , -- ( 😀
    "lower",  # lower-case letters, no upper-case one: paris, don't, e.g.
    "upper",  # upper-case letters, no lower-case one: ACME, U.S., I
    "title",  # an upper-case first char, lower-case letters, no other upper-case one: Paris
    "mixed",  # upper- and lower-case letters otherwise: iPhone, McDonald, O'Neil
    "nocase",  # letters without case only: 北京, كتاب, ア
)

_CLASSES = {  # the per-char classes the shape reads
    "digit": str.isdecimal,
    "upper": lambda c: c.isupper() or c.istitle(),  # title case: the one char of "ǅ"
    "lower": str.islower,
    "letter": lambda c: c.isalpha() or c.isupper() or c.islower(),
}


def word_shape(token):
    """The shape of a token, one of `SHAPES[1:]` (see the module docstring).

    Args:
        token: str, the token as written (not lower-cased).

    Example:
        >>> [word_shape(t) for t in ["Paris", "NATO", "3.5", "iPhone", "北京", "."]]
        ['title', 'upper', 'numeric', 'mixed', 'nocase', 'punct']
    """
    digit = any(_CLASSES["digit"](c) for c in token)
    letter = any(_CLASSES["letter"](c) for c in token)
    if digit:
        return "has_digit" if letter else "numeric"
    if not letter:
        return "punct"
    uppers = sum(1 for c in token if _CLASSES["upper"](c))
    lower = any(_CLASSES["lower"](c) for c in token)
    if not uppers:
        return "lower" if lower else "nocase"
    if not lower:
        return "upper"
    if uppers == 1 and _CLASSES["upper"](token[0]):
        return "title"
    return "mixed"


def shape_id(token):
    """The shape id of a token (1 to `len(SHAPES) - 1`)."""
    return SHAPES.index(word_shape(token))


def bigram_strings(tokens):
    """The (left, right) bigram strings of each token of a sentence.

    Args:
        tokens: list of str, the tokens as the word vocabulary looks them up.

    Example:
        >>> bigram_strings(["北", "京"])
        [('<s> 北', '北 京'), ('北 京', '京 </s>')]
    """
    pairs = sentence_bigrams(tokens)
    return list(zip(pairs[:-1], pairs[1:]))


def sentence_bigrams(tokens):
    """Every bigram of a sentence once per occurrence (what the vocabulary counts)."""
    padded = [BEGIN, *tokens, END]
    return [padded[i] + JOIN + padded[i + 1] for i in range(len(padded) - 1)]


# === TensorFlow ops (the raw-text SavedModel) ===


def code_point_class(test):
    """The code points for which `test(char)` holds, as an RE2 class body.

    Args:
        test: callable str → bool on one char.

    Returns:
        str, ranges such as `\\x{30}-\\x{39}\\x{41}-\\x{5a}` to put inside `[...]`.
    """
    ranges, start, previous = [], None, None
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:  # surrogates: not in valid UTF-8
            continue
        if test(chr(code)):
            if start is None:
                start = code
            elif code != previous + 1:
                ranges.append((start, previous))
                start = code
            previous = code
    if start is not None:
        ranges.append((start, previous))
    return "".join(f"\\x{{{a:x}}}" if a == b else f"\\x{{{a:x}}}-\\x{{{b:x}}}"
                   for a, b in ranges)


@functools.lru_cache(maxsize=None)
def char_class(name):
    """One of the shape's char classes ("digit", "upper", "lower", "letter") as an RE2
    class body (see `code_point_class`)."""
    return code_point_class(_CLASSES[name])


def shape_ids_tf(tokens):
    """Shape ids (int32) of a string tensor of tokens, as `shape_id` gives them.

    Args:
        tokens: tf.Tensor of strings (any shape), the tokens as written.
    """
    import tensorflow as tf

    def has(name, count=1):
        body = f"[{char_class(name)}]"
        return tf.strings.regex_full_match(tokens, "(?s).*" + ".*".join([body] * count) + ".*")

    digit, letter, lower = has("digit"), has("letter"), has("lower")
    upper, two_upper = has("upper"), has("upper", 2)
    first_upper = tf.strings.regex_full_match(tokens, f"(?s)[{char_class('upper')}].*")
    ids = {name: tf.constant(SHAPES.index(name), tf.int32) for name in SHAPES[1:]}
    cased = tf.where(~upper, tf.where(lower, ids["lower"], ids["nocase"]),
                     tf.where(~lower, ids["upper"],
                              tf.where(first_upper & ~two_upper, ids["title"], ids["mixed"])))
    return tf.where(digit, tf.where(letter, ids["has_digit"], ids["numeric"]),
                    tf.where(letter, cased, ids["punct"]))


def bigram_strings_tf(tokens):
    """The (left, right) bigram strings of ragged tokens, as `bigram_strings` gives them.

    Args:
        tokens: tf.RaggedTensor of strings [batch, None], the tokens as the word
            vocabulary looks them up.

    Returns:
        (left, right): string tensors shaped like `tokens.flat_values`.
    """
    import tensorflow as tf

    flat = tokens.flat_values
    size = tf.shape(flat)[0]
    lengths = tokens.row_lengths()
    position = tf.ragged.range(lengths).flat_values
    length = tf.repeat(lengths, lengths)
    previous = tf.concat([[BEGIN], flat[:-1]], 0)[:size]
    following = tf.concat([flat[1:], [END]], 0)[:size]
    previous = tf.where(position == 0, BEGIN, previous)
    following = tf.where(position == length - 1, END, following)
    return previous + JOIN + flat, flat + JOIN + following
