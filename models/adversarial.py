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


class AdversarialTraining:
    """A mixin for a `keras.Model` with an `EmbeddingPerturbation` layer named
    "adversarial" and an `adversarial` attribute (ε; 0 turns the step off).

    Used by the sentiment classifier and the sequence tagger: whatever the model's
    loss (cross-entropy, the CRF's negative log-likelihood), the step is the same.
    """

    def train_step(self, data):
        """Keras' step, plus the adversarial loss when `adversarial` > 0.

        The loss minimised is the clean loss plus the loss of the same batch with its
        vectors moved by `adversarial_direction`; the reported `loss` is the clean one,
        so learning curves compare with runs without it.

        Two backward passes: one over the clean loss gives both the gradient with
        respect to the vectors and the clean weight gradient; one over the perturbed
        loss gives its weight gradient (the perturbation is a constant).
        """
        if not self.adversarial:
            return super().train_step(data)
        import tensorflow as tf

        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        noise = self.get_layer("adversarial")
        weights = self.trainable_weights
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight, training=True)
            vectors, mask = noise.seen()
            scaled = self.optimizer.scale_loss(loss)
        gradient, *clean = tape.gradient(scaled, [vectors, *weights])
        delta = adversarial_direction(vectors, gradient, mask, self.adversarial)
        with tf.GradientTape() as tape:
            with noise.perturbed(delta):
                moved = self(x, training=True)
            scaled = self.optimizer.scale_loss(
                self.compute_loss(x, y, moved, sample_weight, training=True))
        gradients = [add_gradients(a, b) for a, b in zip(clean, tape.gradient(scaled, weights))]
        self.optimizer.apply_gradients(zip(gradients, weights))
        replicas = tf.distribute.get_strategy().num_replicas_in_sync  # undo the loss scaling
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss * replicas, sample_weight=tf.shape(y)[0])
        return self.compute_metrics(x, y, y_pred, sample_weight)
