"""Max or mean pooling over time that ignores padded positions."""

import keras


@keras.saving.register_keras_serializable(package="elman")
class MaskedPooling(keras.layers.Layer):
    """Pools [batch, steps, features] to [batch, features] over unmasked steps only.

    Args:
        mode: str, "max" or "mean". Default "mean".

    Example:
    >>> MaskedPooling("max")(keras.ops.ones((2, 3, 4))).shape
    (2, 4)
    """

    def __init__(self, mode="mean", **kwargs):
        super().__init__(**kwargs)
        if mode not in ("max", "mean"):
            raise ValueError(f"Expected mode to be one of {{'max', 'mean'}}. Received: mode={mode!r}")
        self.mode = mode
        self.supports_masking = True

    def call(self, inputs, mask=None):
        if mask is None:
            mask = keras.ops.ones(keras.ops.shape(inputs)[:2], dtype="bool")
        weights = keras.ops.expand_dims(keras.ops.cast(mask, inputs.dtype), -1)
        if self.mode == "mean":
            total = keras.ops.sum(inputs * weights, axis=1)
            return total / keras.ops.maximum(keras.ops.sum(weights, axis=1), 1.0)
        very_negative = keras.ops.cast(-1e9, inputs.dtype)
        return keras.ops.max(keras.ops.where(weights > 0, inputs, very_negative), axis=1)

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[2])

    def get_config(self):
        config = super().get_config()
        config.update(mode=self.mode)
        return config
