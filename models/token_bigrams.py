"""Token-bigram features computed inside the model from the token ids alone.

Chinese review text is read one character at a time (`tokenizer.level = "cjk"`), but
its words are mostly two characters long: 不错 ("not bad") is good news and neither 不
nor 错 says so alone. This layer gives every token a second vector, the embedding of
the pair it forms with the next token (t[i], t[i+1]), so the encoder sees the words a
character sits in from its first layer on.

The pair is coded from the two token ids, `t[i] · V + t[i+1]` (V the token vocabulary
size; the last token pairs with the padding id 0), and looked up in a fixed list of
pair codes chosen on the training texts (the frequent ones: `frequent_pairs`).
Padding positions get index 0, pairs outside the list the shared OOV index 1, so the
OOV vector learns to stand for the pairs validation and test bring. Since the codes
come from ids the model already has, a saved model still takes raw strings and needs
no second vocabulary file; the list travels in the layer's config.

Example:

```python
ids = keras.ops.array([[3, 4, 5, 0]])
layer = TokenBigrams(vocabulary_size=10, pairs=[3 * 10 + 4], embedding_dim=8)
layer(ids).shape  # (1, 4, 8): (3, 4) known, (4, 5) and (5, <pad>) OOV, padding 0
```
"""

import collections

import keras
import numpy as np


def pair_codes(ids, vocabulary_size):
    """Each position's pair code t[i] · V + t[i+1] (0 at padding), for padded int ids
    [batch, tokens] (NumPy or tensor); the result is int64."""
    ids = keras.ops.cast(ids, "int64")
    following = keras.ops.pad(ids[:, 1:], [[0, 0], [0, 1]])
    codes = ids * vocabulary_size + following
    return keras.ops.where(ids > 0, codes, keras.ops.zeros_like(codes))


def frequent_pairs(sequences, vocabulary_size, min_count=2, max_pairs=100000):
    """The pair codes seen at least `min_count` times in `sequences` (lists of token ids
    without padding), most frequent first (ties by code), at most `max_pairs - 2` of them
    (the embedding's padding and OOV rows take the other two)."""
    counts = collections.Counter()
    for ids in sequences:
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size:
            following = np.append(ids[1:], 0)
            counts.update((ids * vocabulary_size + following).tolist())
    ranked = sorted((code for code, n in counts.items() if n >= min_count),
                    key=lambda code: (-counts[code], code))
    return [int(code) for code in ranked[: max(max_pairs - 2, 0)]]


@keras.saving.register_keras_serializable(package="elman")
class TokenBigrams(keras.layers.Layer):
    """The embedding of each token's pair with the next token (see the module docstring).

    Args:
        vocabulary_size: int, the token vocabulary size V the codes are built with.
        pairs: list of int, the known pair codes (index k + 2 in the embedding).
        embedding_dim: int, the pair embedding size. Default 50.
        embeddings_initializer: the embedding's initializer. Default "uniform".

    Input: int token ids [batch, tokens], 0 for padding. Output: [batch, tokens,
    embedding_dim] float vectors (row 0, untrained padding, at padded positions; the
    token embedding's mask says which positions are real).
    """

    def __init__(self, vocabulary_size, pairs, embedding_dim=50,
                 embeddings_initializer="uniform", **kwargs):
        super().__init__(**kwargs)
        if not isinstance(vocabulary_size, int) or vocabulary_size < 2:
            raise ValueError("Expected vocabulary_size to be an int >= 2. "
                             f"Received: vocabulary_size={vocabulary_size!r}")
        pairs = [int(code) for code in pairs]
        if any(code <= 0 for code in pairs) or len(set(pairs)) != len(pairs):
            raise ValueError("Expected pairs to be distinct positive pair codes.")
        self.vocabulary_size = vocabulary_size
        self.pairs = pairs
        self.embedding_dim = embedding_dim
        self.embeddings_initializer = keras.initializers.serialize(
            keras.initializers.get(embeddings_initializer))
        # mask_token 0 (padding) → 0, unknown pairs → 1, pairs[k] → k + 2
        self.lookup = None  # no known pairs: every real position is the OOV pair
        if pairs:
            self.lookup = keras.layers.IntegerLookup(
                mask_token=0, num_oov_indices=1, vocabulary_dtype="int64", name="pair_lookup")
            self.lookup.set_vocabulary(np.asarray(pairs, dtype=np.int64))
        self.embedding = keras.layers.Embedding(len(pairs) + 2, embedding_dim,
                                                embeddings_initializer=embeddings_initializer,
                                                name="pair_embedding")

    def build(self, input_shape):
        self.embedding.build((None, None))
        self.built = True

    def indices(self, ids):
        """Each position's row in the pair embedding (0 padding, 1 OOV, k + 2 pairs[k])."""
        codes = pair_codes(ids, self.vocabulary_size)
        if self.lookup is None:
            return keras.ops.cast(codes > 0, "int64")
        return self.lookup(codes)

    def call(self, ids):
        return self.embedding(self.indices(ids))

    def compute_output_shape(self, input_shape):
        return (*input_shape, self.embedding_dim)

    def get_config(self):
        config = super().get_config()
        config.update({"vocabulary_size": self.vocabulary_size, "pairs": list(self.pairs),
                       "embedding_dim": self.embedding_dim,
                       "embeddings_initializer": self.embeddings_initializer})
        return config
