"""Character-level features of each word: a char BiLSTM or a char CNN with max pooling."""

import keras

from elman.models.padded_rnn import PaddedLSTM
from elman.models.serialization import wrap_bidirectional

_METHODS = ("lstm", "cnn")


@keras.saving.register_keras_serializable(package="elman")
class CharWordFeatures(keras.layers.Layer):
    """Turns char ids [batch, words, chars] into one feature vector per word.

    The words are folded into the batch ([batch * words, chars]) and unfolded
    after, instead of `keras.layers.TimeDistributed`, which locked onto the first
    batch's sentence length in Keras 3.15. Char id 0 is padding. `"lstm"` runs a
    bidirectional LSTM over each word's chars and concatenates the two final states
    (output size `2 * units`); `"cnn"` runs a 1-D convolution and max-pools over the
    real chars (output size `units`). A word without chars (a padded word) gives
    zeros for "cnn" and the pad-char state for "lstm"; mask it downstream.

    Args:
        vocabulary_size: int, number of char ids (padding and OOV included).
        method: str, `"lstm"` or `"cnn"`. Default "lstm".
        embedding_dim: int, char embedding size. Default 25.
        units: int, LSTM units per direction, or CNN filters. Default 25.
        kernel_size: int, CNN window in chars (unused by "lstm"). Default 3.

    Example:

    ```python
    layer = CharWordFeatures(vocabulary_size=50, method="cnn", units=16)
    layer(keras.ops.ones((2, 7, 5), dtype="int32")).shape  # (2, 7, 16)
    ```
    """

    def __init__(self, vocabulary_size, method="lstm", embedding_dim=25, units=25,
                 kernel_size=3, **kwargs):
        super().__init__(**kwargs)
        if method not in _METHODS:
            raise ValueError(
                f"Expected method to be one of {set(_METHODS)}. Received: method={method!r}"
            )
        for name, value in (("vocabulary_size", vocabulary_size),
                            ("embedding_dim", embedding_dim), ("units", units),
                            ("kernel_size", kernel_size)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"Expected {name} to be a positive int. Received: {name}={value!r}")
        self.vocabulary_size = vocabulary_size
        self.method = method
        self.embedding_dim = embedding_dim
        self.units = units
        self.kernel_size = kernel_size
        self.embedding = keras.layers.Embedding(vocabulary_size, embedding_dim,
                                                name="char_embedding")
        if method == "lstm":
            self.encoder = wrap_bidirectional(PaddedLSTM(units, name="char_lstm"),
                                              name="char_bilstm")
        else:
            self.encoder = keras.layers.Conv1D(units, kernel_size, padding="same",
                                               activation="tanh", name="char_cnn")

    @property
    def output_size(self):
        """int, the feature size of each word."""
        return 2 * self.units if self.method == "lstm" else self.units

    def build(self, input_shape):
        self.embedding.build((None, None))
        self.encoder.build((None, None, self.embedding_dim))
        self.built = True

    def call(self, chars):
        chars = keras.ops.cast(chars, "int32")
        shape = keras.ops.shape(chars)
        flat = keras.ops.reshape(chars, (-1, shape[2]))  # [batch * words, chars]
        real = keras.ops.not_equal(flat, 0)
        x = self.embedding(flat)
        if self.method == "lstm":
            # Keep position 0 so that no row is empty: a fully masked row is not
            # allowed by the cuDNN kernel.
            first = keras.ops.expand_dims(keras.ops.equal(keras.ops.arange(shape[2]), 0), 0)
            features = self.encoder(x, mask=keras.ops.logical_or(real, first))
        else:
            h = self.encoder(x)
            h = keras.ops.where(keras.ops.expand_dims(real, -1), h, -2.0)  # tanh >= -1
            features = keras.ops.maximum(keras.ops.max(h, axis=1), -1.0)
            any_real = keras.ops.any(real, axis=1, keepdims=True)
            features = keras.ops.where(any_real, features, 0.0)
        return keras.ops.reshape(features, (shape[0], shape[1], self.output_size))

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[1], self.output_size)

    def get_config(self):
        config = super().get_config()
        config.update(
            vocabulary_size=self.vocabulary_size,
            method=self.method,
            embedding_dim=self.embedding_dim,
            units=self.units,
            kernel_size=self.kernel_size,
        )
        return config


@keras.saving.register_keras_serializable(package="elman")
class JoinWordFeatures(keras.layers.Layer):
    """Concatenates word vectors with extra per-word features and keeps the word mask.

    `keras.layers.Concatenate` combines the masks of its inputs with a logical or,
    counting an input without a mask as all true, so joining masked word embeddings
    with char features would mark every padded word as real. This layer passes the
    first input's mask on unchanged.

    Example:

    ```python
    words = keras.layers.Embedding(10, 4, mask_zero=True)(ids)  # masked
    x = JoinWordFeatures()([words, CharWordFeatures(30)(chars)])  # same mask
    ```
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        return keras.ops.concatenate(list(inputs), axis=-1)

    def compute_mask(self, inputs, mask=None):
        return None if mask is None else mask[0]

    def compute_output_shape(self, input_shape):
        return (*input_shape[0][:-1], sum(shape[-1] for shape in input_shape))
