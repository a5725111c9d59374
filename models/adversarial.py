"""Adversarial training on the embeddings (Goodfellow et al. 2015; Miyato et al. 2017).

Each training step takes the loss's gradient with respect to every sentence's word
vectors, moves the vectors a small step up that gradient, and trains on the moved
sentence as well as the clean one. The step is `epsilon` times the norm of the
sentence's own vectors (Frobenius norm over its real words), so a model cannot escape
it by growing its embedding.
"""

import contextlib
import threading

import keras


@keras.saving.register_keras_serializable(package="elman")
class EmbeddingPerturbation(keras.layers.Layer):
    """Identity on the word vectors, except inside `perturbed(delta)`, where it adds delta.

    An adversarial training step reads the vectors the layer last saw (`seen()`) to take
    the gradient with respect to them. Both are per thread, so replicas of a
    `tf.distribute` strategy, traced in their own threads, do not share them. The layer
    has no weights; in a saved model it is the identity.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        object.__setattr__(self, "_local", threading.local())  # not tracked by Keras

    def call(self, inputs, mask=None):
        self._local.seen = (inputs, mask)
        delta = getattr(self._local, "delta", None)
        return inputs if delta is None else inputs + keras.ops.cast(delta, inputs.dtype)

    def seen(self):
        """(vectors, mask) of the layer's last call in this thread."""
        return self._local.seen

    @contextlib.contextmanager
    def perturbed(self, delta):
        """Calls inside this block add `delta` to the vectors."""
        self._local.delta = delta
        try:
            yield
        finally:
            self._local.delta = None

    def compute_output_shape(self, input_shape):
        return input_shape


def adversarial_direction(vectors, gradient, mask, epsilon):
    """epsilon · ‖vectors‖ · gradient / ‖gradient‖ per sentence, zero at padding.

    Norms are Frobenius norms over each sentence's real positions. The result is cut
    from the gradient tape: the perturbation is a constant of the adversarial loss.
    """
    ops = keras.ops
    if mask is not None:
        keep = ops.expand_dims(ops.cast(mask, vectors.dtype), -1)
        vectors, gradient = vectors * keep, gradient * keep

    def norm(t):
        return ops.sqrt(ops.sum(ops.square(t), axis=(1, 2), keepdims=True))

    delta = epsilon * norm(vectors) * gradient / (norm(gradient) + 1e-12)
    return ops.stop_gradient(delta)


def add_gradients(first, second):
    """The sum of two gradients of one variable: None (no gradient), dense, or sparse.

    Two `tf.IndexedSlices` (an embedding's gradients) are concatenated, as TensorFlow
    sums the gradients of one variable used twice in a tape, so no dense matrix of the
    embedding's size is made.
    """
    import tensorflow as tf

    if first is None or second is None:
        return second if first is None else first
    if isinstance(first, tf.IndexedSlices) and isinstance(second, tf.IndexedSlices):
        return tf.IndexedSlices(
            tf.concat([first.values, second.values], 0),
            tf.concat([first.indices, tf.cast(second.indices, first.indices.dtype)], 0),
            first.dense_shape)
    return tf.convert_to_tensor(first) + tf.convert_to_tensor(second)
