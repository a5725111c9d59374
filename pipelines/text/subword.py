"""Subword tokenization: a SentencePiece model learned on the training text, run in the graph.

`fit_subword` trains a SentencePiece model (unigram or BPE, the `sentencepiece`
package) on the training split only; `SubwordTokenizer` is a Keras layer around
keras-hub's `SentencePieceTokenizer` with the interface of `TextTokenizer` (split,
truncate, ragged_ids, padded ids from `call`), so every task that takes a tokenizer
takes this one, and a saved model still maps raw strings to ids. The model's bytes are
kept in the layer's config (base64), so loading a saved run reads data, never code.

Ids follow the project's convention: 0 padding, 1 unknown, 2 and 3 the start and end
tokens `<s>`/`</s>` (reserved whether a task uses them or not), then the pieces.
Text is normalised by the model's rule (NFKC by default, SentencePiece's `nmt_nfkc`;
`identity` keeps the characters as written; runs of spaces are folded either way) and
split into pieces that keep their leading space as `▁`, so
`detokenize_pieces` gives back the normalised text: case, spacing and punctuation
as written, with no language rule needed.
"""

import base64

import keras
import tensorflow as tf

from elman.text.pieces import SPACE_MARK, SPECIAL, learn_pieces
from elman.text.tokenize import OOV, PAD, TokenIds

_RESERVED = SPECIAL[2:]  # "<s>", "</s>": ids 2 and 3


@keras.saving.register_keras_serializable(package="elman")
class SubwordTokenizer(TokenIds):
    """Splits raw strings into SentencePiece pieces and maps them to ids, padded per batch.

    Args:
        model: str (base64) or bytes, the serialized SentencePiece model (`fit_subword`).
        lowercase: bool, lower-case the text first (UTF-8 aware). Default False.
        max_length: int, the longest id sequence returned. Default 200.
        truncation: str, "post" keeps the first `max_length` pieces, "pre" the last.
            Default "post".
        algorithm: str, what the model was trained as ("unigram" or "bpe"; recorded for
            the report, the model itself knows). Default "unigram".
    """

    level = "subword"

    def __init__(self, model=None, lowercase=False, max_length=200, truncation="post",
                 algorithm="unigram", strip_markup=False, **kwargs):
        kwargs.setdefault("trainable", False)
        kwargs.setdefault("dtype", "string")
        super().__init__(**kwargs)
        if not model:
            raise ValueError("Expected a SentencePiece model (bytes or base64). Received: "
                             "model=None")
        self._set_limits(lowercase, max_length, truncation, strip_markup)
        self.model = model if isinstance(model, bytes) else base64.b64decode(model)
        self.algorithm = algorithm
        import keras_hub

        self.pieces = keras_hub.tokenizers.SentencePieceTokenizer(
            proto=self.model, name="pieces")
        vocabulary = self.pieces.get_vocabulary()
        if tuple(vocabulary[2:4]) != _RESERVED:
            raise ValueError("Expected a SentencePiece model with <pad> <unk> <s> </s> at ids "
                             f"0-3 (fit_subword). Received: {vocabulary[:4]}")
        self.vocabulary = vocabulary[2:]  # as TextTokenizer: the tokens after pad and OOV
        # keras-hub turns eager outputs into Python lists; inside a tf.function they stay
        # ragged tensors, in eager code, tf.data and exported graphs alike
        self._tokenize = tf.function(
            self.pieces.tokenize, input_signature=[tf.TensorSpec([None], tf.string)],
            autograph=False)
        self._pieces_table = tf.constant([PAD, OOV] + self.vocabulary)

    def _all_ids(self, texts):
        """Ragged int64 ids of every piece, before truncation."""
        texts = self._without_markup(tf.convert_to_tensor(texts, dtype=tf.string))
        if self.lowercase:
            texts = tf.strings.lower(texts, encoding="utf-8")
        ids = self._tokenize(tf.reshape(texts, [-1]))
        return tf.cast(ids, tf.int64)

    def split(self, texts):
        """Splits a 1-D string tensor into a ragged [batch, pieces] string tensor (before
        truncation)."""
        ids = self._all_ids(texts)
        return ids.with_flat_values(tf.gather(self._pieces_table, ids.flat_values))

    def ragged_ids(self, texts):
        """Returns the truncated ids as a ragged int64 [batch, pieces] tensor."""
        return self.truncate(self._all_ids(texts))

    def get_config(self):
        config = super().get_config()
        config.update(model=base64.b64encode(self.model).decode("ascii"),
                      lowercase=self.lowercase, max_length=self.max_length,
                      truncation=self.truncation, algorithm=self.algorithm,
                      strip_markup=self.strip_markup)
        return config


def detokenize_pieces(pieces):
    """Ragged string pieces `[batch, None]` → one string per row (graph or eager).

    Pieces are concatenated, each `▁` becomes a space and the leading one is dropped:
    SentencePiece's own rule, so any language's spacing comes back as it was written.
    """
    text = tf.strings.reduce_join(pieces, axis=1, separator="")
    text = tf.strings.regex_replace(text, SPACE_MARK, " ")
    return tf.strings.regex_replace(text, "^ ", "")


def _lowered(texts, batch_size=4096):
    """Texts lower-cased by TensorFlow's UTF-8 rule (the layer's own), as Python strings."""
    out = []
    for start in range(0, len(texts), batch_size):
        part = tf.strings.lower(tf.constant(texts[start:start + batch_size]), encoding="utf-8")
        out.extend(t.decode("utf-8") for t in part.numpy())
    return out


def fit_subword(cfg, texts, reserved=()):
    """Learns a SentencePiece model on training texts (never validation or test).

    One thread, no sampling of sentences and no shuffling, so the same texts always give
    the same model. A corpus too small for `vocabulary_size` gets the largest vocabulary
    it supports instead of an error.

    Args:
        cfg: TokenizerConfig with level "subword" (vocabulary_size, algorithm,
            character_coverage, normalization, lowercase, max_length, truncation).
        texts: list of str, the training texts.
        reserved: tokens a task needs at fixed ids: only ("<s>", "</s>"), ids 2 and 3,
            which every subword vocabulary reserves.

    Returns:
        A SubwordTokenizer.
    """
    if tuple(reserved) not in ((), _RESERVED[:len(reserved)]):
        raise ValueError(f"Expected reserved tokens among {_RESERVED}. Received: {reserved}")
    if cfg.strip_markup:  # the pieces are learned on the text the layer will see
        import re

        from elman.text.tokenize import MARKUP

        texts = [re.sub(MARKUP, " ", text) for text in texts]
    model = learn_pieces(_lowered(texts) if cfg.lowercase else texts, cfg.vocabulary_size,
                         cfg.algorithm, cfg.character_coverage, cfg.normalization)
    return SubwordTokenizer(model=model, lowercase=cfg.lowercase,
                            max_length=cfg.max_length, truncation=cfg.truncation,
                            algorithm=cfg.algorithm, strip_markup=cfg.strip_markup,
                            name="tokenizer")
