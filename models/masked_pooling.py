"""Max, mean or both poolings over time that ignore padded positions."""

import keras

MODES = ("max", "mean", "max-mean")


@keras.saving.register_keras_serializable(package="elman")
class MaskedPooling(keras.layers.Layer):
    """Pools [batch, steps, features] to [batch, features] over unmasked steps only.

    Args:
        mode: str, "max", "mean", or "max-mean" (the two joined: [max, mean], twice the
            features). Default "mean".

    Example:
    >>> MaskedPooling("max")(keras.ops.ones((2, 3, 4))).shape
    (2, 4)
    """

    def __init__(self, mode="mean", **kwargs):
        super().__init__(**kwargs)
        if mode not in MODES:
            raise ValueError("Expected mode to be one of {'max', 'mean', 'max-mean'}. "
                             f"Received: mode={mode!r}")
        self.mode = mode
        self.supports_masking = True

    def call(self, inputs, mask=None):
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
        config.update(mode=self.mode)
        return config
