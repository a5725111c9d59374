"""The tagger's raw-text SavedModel: string sentences in, tokens and tags out.

`elman predict` splits text into words with `elman.text.splitters.split_raw_text` (a
Python regular expression) and looks the words up in the run's vocabularies. The
SavedModel does the same in TensorFlow ops, so TensorFlow Serving (or any TF program)
can tag raw text with nothing but `saved_model/`:

- **Splitting.** The tokenizer's pattern is rewritten for RE2 (TensorFlow's regex
  engine), which has no lookahead and whose `\\w`, `\\d`, `\\s` are ASCII-only: each
  Unicode class is spelled out as the explicit code-point ranges Python's `re` gives
  it (`unicode_class`), so both engines see the same alternatives in the same order
  (RE2 also takes the first alternative that matches, as Python does). Every token
  is wrapped in a separator by `regex_replace`; splitting on it puts the tokens at
  the odd positions.
- **Lookup.** Words and chars go through `StringLookup` layers built from `words.txt`
  and `chars.txt` (id 0 padding, 1 unknown, as in `Vocabularies`), after the same
  lowercasing and `max_word_length` cut. With `features.bigrams`, each token's two
  bigrams are joined from its neighbours (`features.bigram_strings_tf`) and looked up
  in `bigrams.txt` the same way; with `features.shape`, the raw token's shape comes
  from RE2 classes spelled out from the same `str` predicates (`features.shape_ids_tf`).
- **Tags.** The model's tag ids are mapped to the tag names and rendered in the run's
  input scheme (BIO, IOB1, BIOS, BIOES, BMES) with the span rules of
  `schemes.from_bio`, a stray `I-X` starting an entity.

The `serve` signature takes a 1-D string tensor `texts` and returns `tokens` and
`tags` ([batch, longest], padded with "") and `lengths` (int32 [batch]).
"""

import functools
import re

from elman.tasks.tagging.features import bigram_strings_tf, shape_ids_tf

SEPARATOR = "\x1f"  # a whitespace char for Python's re, so never inside a token


@functools.lru_cache(maxsize=None)
def unicode_class(pattern):
    """The code points Python's `re` matches with a one-char `pattern`, as an RE2 class body.

    Args:
        pattern: str, a regular expression matching one character (e.g. `r"\\w"`).

    Returns:
        str, ranges such as `\\x{30}-\\x{39}\\x{41}-\\x{5a}` to put inside `[...]`.
    """
    from elman.tasks.tagging.features import code_point_class

    return code_point_class(re.compile(pattern).fullmatch)


def re2_token_pattern():
    """`split_raw_text`'s token pattern for RE2, one capture group around the token."""
    from elman.text.splitters import _CJK

    cjk = unicode_class(f"[{_CJK}]")
    word = unicode_class(rf"(?![{_CJK}])\w")
    letter = unicode_class(r"[^\W\d_]")
    digit = unicode_class(r"\d")
    other = unicode_class(rf"[^\s{_CJK}]")
    alternatives = [
        f"[{cjk}]",
        rf"(?:[{letter}]\.){{2,}}",
        rf"[{digit}]+(?:[.,][{digit}]+)+",
        f"[{word}]+(?:['\\x{{2019}}\\-][{word}]+)*",
        f"[{other}]",
    ]
    return "(" + "|".join(alternatives) + ")"


def split_texts(texts, pattern):
    """Ragged tokens [batch, None] of a 1-D string tensor, as `split_raw_text` splits.

    Args:
        texts: tf.Tensor of strings, shape [batch].
        pattern: str, from `re2_token_pattern`.
    """
    import tensorflow as tf

    clean = tf.strings.regex_replace(texts, SEPARATOR, " ")
    marked = tf.strings.regex_replace(clean, pattern, SEPARATOR + r"\1" + SEPARATOR)
    pieces = tf.strings.split(marked, sep=SEPARATOR)
    positions = tf.ragged.range(pieces.row_lengths())
    return tf.ragged.boolean_mask(pieces, tf.math.floormod(positions, 2) == 1)


def render_scheme(tags, scheme):
    """BIO tag names [batch, length] (padding "O") in `scheme`, as `schemes.from_bio`.

    Args:
        tags: tf.Tensor of strings.
        scheme: str, one of `schemes.SCHEMES` or "none" (free tags, returned as they are).
    """
    import tensorflow as tf

    if scheme == "none":
        return tags
    entity = tf.strings.regex_full_match(tags, "[BI]-.+")
    kinds = tf.where(entity, tf.strings.regex_replace(tags, "^[BI]-", ""), "")
    is_inside = tf.strings.regex_full_match(tags, "I-.+")
    prev_kind = tf.pad(kinds[:, :-1], [[0, 0], [1, 0]])
    continues = is_inside & (prev_kind == kinds)
    start = entity & ~continues
    end = entity & ~tf.pad(continues[:, 1:], [[0, 0], [0, 1]])
    if scheme in ("BIOES", "BMES"):
        inside = "M-" if scheme == "BMES" else "I-"
        prefix = tf.where(start & end, "S-", tf.where(start, "B-", tf.where(end, "E-", inside)))
    elif scheme == "BIOS":
        prefix = tf.where(start & end, "S-", tf.where(start, "B-", "I-"))
    elif scheme == "IOB1":
        prefix = tf.where(start & (prev_kind == kinds), "B-", "I-")
    else:
        prefix = tf.where(start, "B-", "I-")
    return tf.where(entity, prefix + kinds, "O")


class RawTextTagger:
    """Builds the `serve` function of a tagging run (tagger model + vocabularies)."""

    def __init__(self, model, vocab):
        import keras

        self.model, self.vocab = model, vocab
        self.pattern = re2_token_pattern()
        self.words = keras.layers.StringLookup(vocabulary=vocab.words[2:], mask_token="",
                                               num_oov_indices=1, name="word_lookup")
        self.chars = None
        if model.char_features != "none":
            self.chars = keras.layers.StringLookup(vocabulary=vocab.chars[2:],
                                                   mask_token="", num_oov_indices=1,
                                                   name="char_lookup")
        self.bigrams = None
        if model.bigram_vocabulary_size is not None:
            self.bigrams = keras.layers.StringLookup(vocabulary=vocab.bigrams[2:],
                                                     mask_token="", num_oov_indices=1,
                                                     name="bigram_lookup")

    @property
    def lookups(self):
        """The StringLookup layers in use (their tables are tracked by the export)."""
        return [lookup for lookup in (self.words, self.chars, self.bigrams)
                if lookup is not None]

    def _features(self, tokens):
        import tensorflow as tf

        vocab = self.vocab
        flat = tokens.flat_values
        looked = tf.strings.lower(flat, encoding="utf-8") if vocab.lowercase else flat
        words = tokens.with_flat_values(tf.cast(self.words(looked), tf.int32))
        words = words.to_tensor(0)
        width = tf.maximum(tf.shape(words)[1], 1)  # at least one position, as in batching
        words = tf.pad(words, [[0, 0], [0, width - tf.shape(words)[1]]])

        def padded(flat_ids):  # one id (or row of ids) per token → [batch, width, ...]
            ids = tokens.with_flat_values(flat_ids).to_tensor(0)
            rest = [[0, 0]] * (len(ids.shape) - 2)
            return tf.pad(ids, [[0, 0], [0, width - tf.shape(ids)[1]]] + rest)

        features = {"words": words}
        if self.chars is not None:
            text = tf.strings.lower(flat, encoding="utf-8") if vocab.char_lowercase else flat
            chars = tf.strings.unicode_split(text, "UTF-8")[:, : vocab.max_word_length]
            ids = chars.with_flat_values(tf.cast(self.chars(chars.flat_values), tf.int32))
            features["chars"] = padded(ids)
        if self.bigrams is not None:
            left, right = bigram_strings_tf(tokens.with_flat_values(looked))
            features["bigrams"] = padded(tf.cast(self.bigrams(tf.stack([left, right], 1)),
                                                 tf.int32))
        if self.model.shape_vocabulary_size is not None:
            features["shapes"] = padded(shape_ids_tf(flat))
        return features if len(features) > 1 else words

    def serve(self, texts):
        """Tokens, tags (in the run's scheme) and lengths of a 1-D string tensor."""
        import tensorflow as tf

        tokens = split_texts(texts, self.pattern)
        ids = tf.cast(self.model.predict_step((self._features(tokens),)), tf.int32)
        lengths = tf.cast(tokens.row_lengths(), tf.int32)
        width = tf.reduce_max(tf.concat([lengths, [0]], 0))
        names = tf.gather(tf.constant(self.vocab.tags), ids[:, :width])
        if self.vocab.entity and self.vocab.encoding == "BIOES":  # read back to BIO by
            # prefix, as Vocabularies.tag_names does
            names = tf.strings.regex_replace(tf.strings.regex_replace(names, "^E-", "I-"),
                                             "^S-", "B-")
        inside = tf.sequence_mask(lengths, width)
        tags = render_scheme(tf.where(inside, names, "O"), self.vocab.scheme)
        return {"tokens": tokens.to_tensor(""), "tags": tf.where(inside, tags, ""),
                "lengths": lengths}


def export_tagger(model, vocab, path):
    """Writes a SavedModel at `path` whose `serve` signature tags raw strings.

    Args:
        model: the trained SequenceTagger.
        vocab: `elman.tasks.tagging.vocab.Vocabularies`.
        path: str or Path, the folder to write (must not exist).
    """
    import keras
    import tensorflow as tf

    tagger = RawTextTagger(model, vocab)
    archive = keras.export.ExportArchive()
    archive.track(model)
    for lookup in tagger.lookups:
        lookup(tf.constant([""]))  # builds it, so that its table can be tracked
        archive.track(lookup)
    archive.add_endpoint("serve", tagger.serve,
                         input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    archive.write_out(str(path), verbose=False)
