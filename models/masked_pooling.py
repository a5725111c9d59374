"""Poolings over time that ignore padded positions: max, mean, both joined, or attention.

Attention pooling (`mode="attention"`, the word attention of Yang et al. 2016) scores each
real position t with u · tanh(W h_t + b), turns the scores into weights with a softmax over
the real positions only, and returns the weighted sum of the h_t. W, b and the context
vector u are learned; `attention_units` is the size of the tanh layer.
"""

import keras

MODES = ("max", "mean", "max-mean", "attention")


@keras.saving.register_keras_serializable(package="elman")
class MaskedPooling(keras.layers.Layer):
    """Pools [batch, steps, features] to [batch, features] over unmasked steps only.

    Args:
        mode: str, "max", "mean", "max-mean" (the two joined: [max, mean], twice the
            features) or "attention" (a learned weighted mean). Default "mean".
        attention_units: int, the size of the attention's tanh layer (mode "attention"
            only). Default 64.

    Example:
    >>> MaskedPooling("max")(keras.ops.ones((2, 3, 4))).shape
    (2, 4)
    """

    def __init__(self, mode="mean", attention_units=64, **kwargs):
        super().__init__(**kwargs)
        if mode not in MODES:
            raise ValueError("Expected mode to be one of {'max', 'mean', 'max-mean', "
                             f"'attention'}}. Received: mode={mode!r}")
        if attention_units < 1:
            raise ValueError("Expected attention_units >= 1. "
                             f"Received: attention_units={attention_units!r}")
        self.mode = mode
        self.attention_units = int(attention_units)
        self.supports_masking = True

    def build(self, input_shape):
        if self.mode == "attention":
            features = input_shape[-1]
            self.projection = self.add_weight(shape=(features, self.attention_units),
                                              initializer="glorot_uniform", name="projection")
            self.projection_bias = self.add_weight(shape=(self.attention_units,),
                                                   initializer="zeros", name="projection_bias")
            self.context = self.add_weight(shape=(self.attention_units,),
                                           initializer="glorot_uniform", name="context")
        super().build(input_shape)

    def attention_weights(self, inputs, mask=None):
        """The softmax weight of each position, [batch, steps]; 0 at padded steps."""
        ops = keras.ops
        keys = ops.tanh(ops.matmul(inputs, ops.cast(self.projection, inputs.dtype))
                        + ops.cast(self.projection_bias, inputs.dtype))
        # the softmax in float32 (a float16 -1e9 would be -inf, and an empty row NaN)
        scores = ops.cast(ops.sum(keys * ops.cast(self.context, inputs.dtype), axis=-1),
                          "float32")
        if mask is None:
            mask = ops.ones(ops.shape(scores), dtype="bool")
        scores = ops.where(mask, scores, -1e9)
        weights = ops.softmax(scores, axis=-1) * ops.cast(mask, "float32")
        # a row with no real step is all 0, so its output is 0, as with "mean"
        return ops.cast(weights, inputs.dtype)

    def call(self, inputs, mask=None):
        if self.mode == "attention":
            weights = self.attention_weights(inputs, mask)
            return keras.ops.sum(inputs * keras.ops.expand_dims(weights, -1), axis=1)
        if mask is None:
            mask = keras.ops.ones(keras.ops.shape(inputs)[:2], dtype="bool")
        weights = keras.ops.expand_dims(keras.ops.cast(mask, inputs.dtype), -1)
        total = keras.ops.sum(inputs * weights, axis=1)
        mean = total / keras.ops.maximum(keras.ops.sum(weights, axis=1), 1.0)
        if self.mode == "mean":
            return mean
        very_negative = keras.ops.cast(-1e9, inputs.dtype)
        maximum = keras.ops.max(keras.ops.where(weights > 0, inputs, very_negative), axis=1)
        if self.mode == "max":
            return maximum
        return keras.ops.concatenate([maximum, mean], axis=-1)

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        features = input_shape[2]
        if self.mode == "max-mean" and features is not None:
            features *= 2
        return (input_shape[0], features)

    def get_config(self):
        config = super().get_config()
        config.update(mode=self.mode, attention_units=self.attention_units)
        return config
