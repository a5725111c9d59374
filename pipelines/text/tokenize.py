"""The tokenizer stage: a Keras layer that turns raw strings into token ids.

The same layer tokenizes the training data (inside the tf.data pipeline) and sits at
the front of the exported inference model, so a saved run answers raw text.
Id 0 is padding and id 1 the out-of-vocabulary token; the vocabulary follows.
"""

import collections
import dataclasses

import keras
import tensorflow as tf

PAD, OOV = "", "[UNK]"
# Everything that is not a letter, digit, combining mark, space or apostrophe.
_PUNCT = r"[^\p{L}\p{N}\p{M}\s']"
_SPACE = r"[\p{Z}\x{85}\x{200b}\x{feff}]"  # Unicode spaces, NEL, zero-width spaces
_HAN = r"([\p{Han}\x{3040}-\x{30ff}\x{ac00}-\x{d7af}])"  # Han, kana, Hangul syllables
_LEVELS = ("cjk", "word", "char")


# an HTML/XML tag (<br />, </i>, <!-- x -->), not "<3"; or a line break written as the two
# characters \n (how the Yelp and Amazon polarity CSVs keep a review's paragraphs)
MARKUP = r"<[A-Za-z/!][^<>]{0,200}>|\\[nr]"
TRUNCATIONS = ("post", "pre", "both")  # keep the first, the last, or head and tail tokens


def head_length(max_length):
    """Tokens kept from a text's start under "both" truncation (the rest from its end)."""
    return max_length // 4


class TokenIds(keras.layers.Layer):
    """What every tokenizer layer shares: a vocabulary after padding (id 0) and OOV (id 1),
    a truncation policy, and padded ids from `call`. Subclasses define `split` (ragged
    string tokens before truncation) and `ragged_ids` (truncated ragged ids)."""

    def _set_limits(self, lowercase, max_length, truncation, strip_markup=False):
        """Checks and keeps the settings every tokenizer has."""
        self.strip_markup = bool(strip_markup)
        if truncation not in TRUNCATIONS:
            raise ValueError("Expected truncation to be one of {'post', 'pre', 'both'}. "
                             f"Received: truncation={truncation!r}")
        if not isinstance(max_length, int) or max_length < 1:
            raise ValueError(f"Expected max_length to be a positive int. "
                             f"Received: max_length={max_length!r}")
        self.lowercase = bool(lowercase)
        self.max_length = max_length
        self.truncation = truncation

    def _without_markup(self, texts):
        """The texts with each markup tag replaced by a space, when `strip_markup` is on."""
        if not self.strip_markup:
            return texts
        return tf.strings.regex_replace(texts, MARKUP, " ")

    @property
    def vocabulary_size(self):
        """int, number of ids including padding (0) and OOV (1)."""
        return len(self.vocabulary) + 2

    def get_vocabulary(self):
        """Returns the id → token list (index 0 padding, 1 OOV)."""
        return [PAD, OOV] + self.vocabulary

    def build(self, input_shape=None):
        self.built = True  # lookup tables are created in __init__; no weights

    def truncate(self, tokens):
        """Applies the truncation policy to a ragged [batch, tokens] tensor: "post" keeps
        the first `max_length` tokens, "pre" the last, "both" the first quarter of
        `max_length` and the last three quarters (a review's opening and its verdict)."""
        if self.truncation == "post":
            return tokens[:, : self.max_length]
        lengths = tokens.row_lengths()
        over = tf.maximum(lengths - self.max_length, 0)  # tokens dropped from each row
        if self.truncation == "pre":
            keep = tf.ragged.range(over, lengths)
        else:  # both: positions past the head jump over the dropped middle
            keep = tf.ragged.range(tf.minimum(lengths, self.max_length))
            flat = keep.flat_values
            jump = tf.repeat(over, keep.row_lengths())
            keep = keep.with_flat_values(
                tf.where(flat >= head_length(self.max_length), flat + jump, flat))
        return tf.gather(tokens, keep, batch_dims=1)

    def truncation_info(self, texts):
        """What truncation does to each text: None when it is read whole, else {"tokens":
        tokens in the text, "read": tokens kept (`max_length`), "kept": "first", "last", or
        for "both" truncation "first H and last T of the"}.

        Args:
            texts: list of str.
        """
        if not texts:
            return []
        lengths = self.split(tf.constant(list(texts), tf.string)).row_lengths().numpy()
        kept = {"post": "first", "pre": "last"}.get(self.truncation)
        if kept is None:
            head = head_length(self.max_length)
            kept = f"first {head} and last {self.max_length - head} of the"
        return [None if n <= self.max_length else
                {"tokens": int(n), "read": self.max_length, "kept": kept} for n in lengths]

    def call(self, texts):
        texts = tf.reshape(tf.convert_to_tensor(texts, dtype=tf.string), [-1])
        dense = self.ragged_ids(texts).to_tensor(default_value=0)
        # never return zero steps: a recurrent layer needs at least one position
        pad = tf.maximum(1 - tf.shape(dense)[1], 0)
        return tf.pad(dense, [[0, 0], [0, pad]])

    def compute_output_shape(self, input_shape):
        return (input_shape[0], None)

    def compute_output_spec(self, inputs):
        return keras.KerasTensor((inputs.shape[0], None), dtype="int64")


@keras.saving.register_keras_serializable(package="elman")
class TextTokenizer(TokenIds):
    """Splits raw strings into tokens and maps them to ids, padded per batch.

    Args:
        vocabulary: list of str, the tokens after padding and OOV (ids 2, 3, ...).
            Default None (an empty vocabulary: only splitting is useful).
        level: str, "cjk" (Han/kana/Hangul characters one by one, other words whole),
            "word" (whitespace-separated words) or "char" (every character). Default "cjk".
        lowercase: bool, lower-case the text first. Default True.
        punctuation: str, "split" (each mark is a token), "strip" (marks removed) or
            "keep" (left attached to words). Default "split".
        max_length: int, the longest id sequence returned. Default 200.
        truncation: str, "post" keeps the first `max_length` tokens, "pre" the last,
            "both" the first quarter and the last three quarters. Default "post".
        strip_markup: bool, replace HTML/XML tags (`<br />`) by spaces first. Default False.

    Example:
    >>> tok = TextTokenizer(vocabulary=["服", "务", "慢", "good"])
    >>> tok(tf.constant(["服务慢，good"])).numpy().tolist()
    [[2, 3, 4, 1, 5]]
    """

    def __init__(self, vocabulary=None, level="cjk", lowercase=True, punctuation="split",
                 max_length=200, truncation="post", strip_markup=False, **kwargs):
        kwargs.setdefault("trainable", False)
        kwargs.setdefault("dtype", "string")
        super().__init__(**kwargs)
        if level not in _LEVELS:
            raise ValueError(f"Expected level to be one of {set(_LEVELS)}. "
                             f"Received: level={level!r}")
        if punctuation not in ("split", "strip", "keep"):
            raise ValueError("Expected punctuation to be one of {'split', 'strip', 'keep'}. "
                             f"Received: punctuation={punctuation!r}")
        self.vocabulary = list(vocabulary or [])
        self.level = level
        self.punctuation = punctuation
        self._set_limits(lowercase, max_length, truncation, strip_markup)
        self.lookup = keras.layers.StringLookup(
            vocabulary=self.vocabulary or None, mask_token=PAD, oov_token=OOV,
            num_oov_indices=1, output_mode="int", name="lookup",
        ) if self.vocabulary else None

    def split(self, texts):
        """Splits a 1-D string tensor into a ragged [batch, tokens] string tensor."""
        texts = self._without_markup(tf.convert_to_tensor(texts, dtype=tf.string))
        # Every Unicode space separates tokens (RE2's \s is ASCII only): French text puts a
        # no-break or narrow no-break space before ! ? : ; which must not become a token.
        texts = tf.strings.regex_replace(texts, _SPACE, " ")
        if self.lowercase:
            texts = tf.strings.lower(texts, encoding="utf-8")
        if self.punctuation == "split":
            texts = tf.strings.regex_replace(texts, "(" + _PUNCT + ")", r" \1 ")
        elif self.punctuation == "strip":
            texts = tf.strings.regex_replace(texts, _PUNCT, " ")
        if self.level == "char":
            texts = tf.strings.strip(tf.strings.regex_replace(texts, r"\s+", " "))
            return tf.strings.unicode_split(texts, "UTF-8")
        if self.level == "cjk":
            texts = tf.strings.regex_replace(texts, _HAN, r" \1 ")
        return tf.strings.split(texts)

    def ragged_ids(self, texts):
        """Returns the truncated ids as a ragged int64 [batch, tokens] tensor."""
        tokens = self.truncate(self.split(texts))
        if self.lookup is None:
            raise ValueError("TextTokenizer has no vocabulary; build one with fit_vocabulary")
        ids = self.lookup(tokens.flat_values)
        return tokens.with_flat_values(tf.cast(ids, tf.int64))

    def get_config(self):
        config = super().get_config()
        config.update(vocabulary=self.vocabulary, level=self.level, lowercase=self.lowercase,
                      punctuation=self.punctuation, max_length=self.max_length,
                      truncation=self.truncation, strip_markup=self.strip_markup)
        return config


@keras.saving.register_keras_serializable(package="elman")
class CharIds(keras.layers.Layer):
    """The char ids of every token a TextTokenizer keeps: raw strings → [batch, tokens, chars].

    It splits and truncates with the same rules as the word tokenizer it is built
    from, so position t of its output is the token at position t of the word ids.
    Char id 0 is padding, 1 the unknown char. Each token keeps its first
    `max_word_length` chars.

    Args:
        chars: list of str, the known chars (ids 2, 3, ...).
        max_word_length: int, chars kept per token. Default 20.
        level, lowercase, punctuation, max_length, truncation: the word tokenizer's
            settings (see TextTokenizer).

    Example:
    >>> layer = CharIds(chars=["a", "b"], level="word")
    >>> layer(tf.constant(["ab ba c"])).numpy().tolist()
    [[[2, 3], [3, 2], [1, 0]]]
    """

    def __init__(self, chars=None, max_word_length=20, level="cjk", lowercase=True,
                 punctuation="split", max_length=200, truncation="post", strip_markup=False,
                 **kwargs):
        kwargs.setdefault("trainable", False)
        kwargs.setdefault("dtype", "string")
        super().__init__(**kwargs)
        if not isinstance(max_word_length, int) or max_word_length < 1:
            raise ValueError("Expected max_word_length to be a positive int. "
                             f"Received: max_word_length={max_word_length!r}")
        self.chars = list(chars or [])
        if not self.chars:
            raise ValueError("Expected a non-empty list of chars. Received: chars=[]")
        self.max_word_length = max_word_length
        self.splitter = TextTokenizer(level=level, lowercase=lowercase,
                                      punctuation=punctuation, max_length=max_length,
                                      truncation=truncation, strip_markup=strip_markup,
                                      name="splitter")
        self.lookup = keras.layers.StringLookup(
            vocabulary=self.chars, mask_token=PAD, oov_token=OOV, num_oov_indices=1,
            output_mode="int", name="char_lookup")

    @property
    def vocabulary_size(self):
        """int, number of char ids including padding (0) and unknown (1)."""
        return len(self.chars) + 2

    def build(self, input_shape=None):
        self.built = True

    def ragged_ids(self, texts):
        """Returns the char ids as a ragged int64 [batch, tokens, chars] tensor."""
        tokens = self.splitter.truncate(self.splitter.split(texts))
        chars = tf.strings.unicode_split(tokens.flat_values, "UTF-8")[:, : self.max_word_length]
        ids = tf.cast(self.lookup(chars.flat_values), tf.int64)
        return tokens.with_flat_values(chars.with_flat_values(ids))

    def call(self, texts):
        texts = tf.reshape(tf.convert_to_tensor(texts, dtype=tf.string), [-1])
        dense = self.ragged_ids(texts).to_tensor(default_value=0)
        # at least one token position and one char position, like TextTokenizer
        pad_t = tf.maximum(1 - tf.shape(dense)[1], 0)
        pad_c = tf.maximum(1 - tf.shape(dense)[2], 0)
        return tf.pad(dense, [[0, 0], [0, pad_t], [0, pad_c]])

    def compute_output_shape(self, input_shape):
        return (input_shape[0], None, None)

    def compute_output_spec(self, inputs):
        return keras.KerasTensor((inputs.shape[0], None, None), dtype="int64")

    def get_config(self):
        config = super().get_config()
        s = self.splitter
        config.update(chars=self.chars, max_word_length=self.max_word_length, level=s.level,
                      lowercase=s.lowercase, punctuation=s.punctuation,
                      max_length=s.max_length, truncation=s.truncation,
                      strip_markup=s.strip_markup)
        return config


def fit_char_ids(cfg, texts, max_word_length=20):
    """Builds a CharIds layer whose chars are those of the training tokens.

    Chars are ordered by descending count, ties broken by code point, so the same data
    always gives the same ids. Only the first `max_word_length` chars of each token count.

    Args:
        cfg: TokenizerConfig of the word tokenizer the char ids align with.
        texts: list of str, the training texts.
        max_word_length: int, chars kept per token.
    """
    counts = collections.Counter(
        c for row in split_rows(tokenizer_from_config(cfg), texts)
        for token in row for c in token[:max_word_length])
    chars = sorted(counts, key=lambda c: (-counts[c], c))
    return char_ids_from_config(cfg, chars, max_word_length)


def char_ids_from_config(cfg, chars, max_word_length=20):
    """Builds the CharIds layer of a TokenizerConfig and a known char list."""
    return CharIds(chars=chars, max_word_length=max_word_length, level=cfg.level,
                   lowercase=cfg.lowercase, punctuation=cfg.punctuation,
                   max_length=cfg.max_length, truncation=cfg.truncation,
                   strip_markup=cfg.strip_markup, name="char_ids")


def tokenizer_from_config(cfg, vocabulary=None):
    """Builds a TextTokenizer from a TokenizerConfig.

    A subword config gives the cjk splitter (words, Han characters one by one): what
    counts tokens before the subword model is learned (length filters, char features).
    """
    level = "cjk" if cfg.level == "subword" else cfg.level
    return TextTokenizer(vocabulary=vocabulary, level=level, lowercase=cfg.lowercase,
                         punctuation=cfg.punctuation, max_length=cfg.max_length,
                         truncation=cfg.truncation, strip_markup=cfg.strip_markup,
                         name="tokenizer")


def split_rows(tokenizer, texts, batch_size=4096):
    """Each text's tokens (list of str) by the tokenizer's rules, one text at a time:
    only `batch_size` texts are held split at once, so counting the tokens of a large
    corpus costs no more memory than its vocabulary."""
    for start in range(0, len(texts), batch_size):
        part = tokenizer.split(tf.constant(texts[start:start + batch_size]))
        for row in part.to_list():
            yield [t.decode("utf-8") for t in row]


def split_all(tokenizer, texts, batch_size=4096):
    """Splits Python strings with the tokenizer's rules; returns lists of str tokens."""
    return list(split_rows(tokenizer, texts, batch_size))


def fit_vocabulary(cfg, texts, reserved=()):
    """Fits a vocabulary on training texts (never on validation or test).

    Tokens are ordered by descending count, ties broken alphabetically, so the same
    data always gives the same ids.

    Args:
        cfg: TokenizerConfig.
        texts: list of str, the training texts.
        reserved: tokens placed first whatever their count (e.g. start/end markers).

    Returns:
        A TextTokenizer with the fitted vocabulary, or for level "subword" a
        `elman.text.subword.SubwordTokenizer` with a SentencePiece model learned on them.
    """
    if cfg.level == "subword":
        from elman.text.subword import fit_subword

        return fit_subword(cfg, texts, reserved)
    counts = collections.Counter(t for row in split_rows(tokenizer_from_config(cfg), texts)
                                 for t in row)
    ranked = sorted((t for t, c in counts.items() if c >= cfg.min_count and t not in reserved),
                    key=lambda t: (-counts[t], t))
    room = max(cfg.max_tokens - 2 - len(reserved), 0)
    return tokenizer_from_config(cfg, list(reserved) + ranked[:room])


@dataclasses.dataclass
class TokenStats:
    """What tokenizing one split did: sizes, truncation and OOV rate."""

    examples: int
    tokens: int  # before truncation
    kept_tokens: int  # after truncation
    truncated_examples: int
    truncated_tokens: int
    oov_tokens: int  # among kept tokens
    mean_length: float
    max_length: int

    @property
    def oov_rate(self):
        return self.oov_tokens / self.kept_tokens if self.kept_tokens else 0.0


def token_stats(tokenizer, texts, batch_size=4096):
    """Counts tokens, truncation and OOV for a list of texts."""
    total = kept = cut_examples = oov = longest = 0
    for start in range(0, len(texts), batch_size):
        chunk = tf.constant(texts[start:start + batch_size])
        full = tokenizer.split(chunk).row_lengths().numpy()
        ids = tokenizer.ragged_ids(chunk)
        total += int(full.sum())
        kept += int(ids.row_lengths().numpy().sum())
        cut_examples += int((full > tokenizer.max_length).sum())
        oov += int(tf.reduce_sum(tf.cast(ids.flat_values == 1, tf.int64)).numpy())
        longest = max(longest, int(full.max()) if len(full) else 0)
    n = len(texts)
    return TokenStats(n, total, kept, cut_examples, total - kept, oov,
                      total / n if n else 0.0, longest)
