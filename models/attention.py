"""Additive (Bahdanau) or multiplicative (Luong "general") attention over encoder outputs."""

import keras

SCORES = ("bahdanau", "luong")


@keras.saving.register_keras_serializable(package="elman")
class Attention(keras.layers.Layer):
    """Attention of decoder states (queries) over encoder outputs (values), with a padding mask.

    Unlike `keras.layers.Attention` (dot product, query and key of the same size), this
    layer learns the projections, so a bidirectional encoder (outputs of size
    `2 * units`) can be attended by a decoder of size `units`.

    Scores, for a query `q` (a decoder output) and an encoder output `v_s`:

    - `"bahdanau"` (additive): `w^T tanh(W_q q + W_k v_s)`, `W_q`, `W_k` of size `units`.
    - `"luong"` (multiplicative, "general"): `q^T W_k v_s / sqrt(units)`; the query size
      must be `units`. The scaling (as in scaled dot-product attention) keeps the softmax
      out of saturation when the decoder states grow.

    Padded source positions (`values_mask` False) get a score of -1e9 before the softmax,
    so their weight is 0. The context is the weighted sum of the values (not of the keys).

    Call arguments:
        query: float tensor `[batch, query_dim]` (one decoding step) or
            `[batch, target_len, query_dim]` (teacher forcing).
        values: float tensor `[batch, source_len, value_dim]`, the encoder outputs.
        values_mask: bool tensor `[batch, source_len]`, True on real tokens, or None.

    Returns:
        `(context, weights)`: context `[batch, (target_len,) value_dim]` and attention
        weights `[batch, (target_len,) source_len]` that sum to 1 over the source.

    Args:
        units: int, size of the attention projections (and, for `"luong"`, of the query).
        score: str, `"bahdanau"` (additive) or `"luong"` (multiplicative). Default
            `"bahdanau"`.
        **kwargs: base layer arguments (`name`, `dtype`, ...).

    Example:

    >>> import numpy as np
    >>> layer = Attention(8, score="luong")
    >>> context, weights = layer(np.ones((2, 8), "float32"), np.ones((2, 5, 6), "float32"))
    >>> tuple(context.shape), tuple(weights.shape)
    ((2, 6), (2, 5))
    """

    def __init__(self, units, score="bahdanau", **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, int) or isinstance(units, bool) or units < 1:
            raise ValueError(f"Expected units to be a positive int. Received: units={units!r}")
        if score not in SCORES:
            raise ValueError(
                f"Expected score to be one of {set(SCORES)}. Received: score={score!r}"
            )
        self.units = units
        self.score = score
        self.supports_masking = True  # the context keeps the query's (target) mask
        self.key_projection = keras.layers.Dense(units, use_bias=False, name="key_projection")
        if score == "bahdanau":
            self.query_projection = keras.layers.Dense(
                units, use_bias=False, name="query_projection"
            )
            self.score_vector = keras.layers.Dense(1, use_bias=False, name="score_vector")

    def build(self, query_shape, values_shape, values_mask_shape=None):
        if self.score == "luong" and query_shape[-1] is not None and query_shape[-1] != self.units:
            raise ValueError(
                "Expected the query size to equal units for score='luong'. "
                f"Received: query_shape={tuple(query_shape)}, units={self.units}"
            )
        self.key_projection.build(tuple(values_shape))
        if self.score == "bahdanau":
            self.query_projection.build(tuple(query_shape))
            self.score_vector.build(tuple(query_shape[:-1]) + (self.units,))
        self.built = True

    def call(self, query, values, values_mask=None):
        one_step = len(query.shape) == 2
        if one_step:
            query = keras.ops.expand_dims(query, 1)  # [B, 1, Dq]
        keys = self.key_projection(values)  # [B, S, U]
        if self.score == "bahdanau":
            q = keras.ops.expand_dims(self.query_projection(query), 2)  # [B, T, 1, U]
            k = keras.ops.expand_dims(keys, 1)  # [B, 1, S, U]
            scores = keras.ops.squeeze(self.score_vector(keras.ops.tanh(q + k)), -1)
        else:
            scores = keras.ops.einsum("btu,bsu->bts", query, keys) / (self.units ** 0.5)
        if values_mask is not None:
            mask = keras.ops.expand_dims(keras.ops.cast(values_mask, "bool"), 1)  # [B, 1, S]
            scores = keras.ops.where(mask, scores, keras.ops.cast(-1e9, scores.dtype))
        # A softmax written out (keras.ops.softmax warns on one-token sources).
        scores = scores - keras.ops.max(scores, axis=-1, keepdims=True)
        exp = keras.ops.exp(scores)
        weights = exp / keras.ops.sum(exp, axis=-1, keepdims=True)  # [B, T, S]
        context = keras.ops.einsum("bts,bsd->btd", weights, values)
        if one_step:
            context = keras.ops.squeeze(context, 1)
            weights = keras.ops.squeeze(weights, 1)
        return context, weights

    def compute_output_shape(self, query_shape, values_shape, values_mask_shape=None):
        lead = tuple(query_shape[:-1])
        return lead + (values_shape[-1],), lead + (values_shape[1],)

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units, "score": self.score})
        return config
