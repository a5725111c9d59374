"""Word dropout: while training, replace random word ids by the out-of-vocabulary id."""

import keras


@keras.saving.register_keras_serializable(package="elman")
class WordDropout(keras.layers.Layer):
    """Feeds a random share of the words as the OOV id while training (new draw each call).

    The OOV vector is otherwise never trained when every training word is in the
    vocabulary; with word dropout the model learns to tag an unknown word from its
    context (and its characters). Padding (id 0) is never replaced, so masks stay the
    same. At inference the ids pass through unchanged.

    Args:
        rate: float in [0, 1), the share of words replaced. Default 0.1.
        oov_id: int, the id that replaces them. Default 1.
        seed: int or None, seeds the draws. Default None.

    Example:

    ```python
    layer = WordDropout(0.5, seed=0)
    layer(keras.ops.array([[5, 6, 7, 0]]), training=True)  # e.g. [[1, 6, 1, 0]]
    ```
    """

    def __init__(self, rate=0.1, oov_id=1, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, (int, float)) or not 0.0 <= float(rate) < 1.0:
            raise ValueError(f"Expected rate to be in [0, 1). Received: rate={rate!r}")
        if not isinstance(oov_id, int) or oov_id < 1:
            raise ValueError(f"Expected oov_id to be a positive int. Received: oov_id={oov_id!r}")
        self.rate = float(rate)
        self.oov_id = oov_id
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)

    def call(self, ids, training=False):
        ids = keras.ops.cast(ids, "int32")
        if not training or self.rate == 0.0:
            return ids
        draw = keras.random.uniform(keras.ops.shape(ids), seed=self.seed_generator)
        drop = keras.ops.logical_and(draw < self.rate, keras.ops.not_equal(ids, 0))
        return keras.ops.where(drop, self.oov_id, ids)

    def compute_output_shape(self, input_shape):
        return input_shape

    def compute_output_spec(self, ids, training=False):
        return keras.KerasTensor(ids.shape, dtype="int32")

    def get_config(self):
        config = super().get_config()
        config.update(rate=self.rate, oov_id=self.oov_id, seed=self.seed)
        return config
