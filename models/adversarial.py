"""Adversarial training on the embeddings (Goodfellow et al. 2015; Miyato et al. 2017).

Each training step takes the loss's gradient with respect to every sentence's word
vectors, moves the vectors a small step up that gradient, and trains on the moved
sentence as well as the clean one. The step is `epsilon` times the norm of the
sentence's own vectors (Frobenius norm over its real words), so a model cannot escape
it by growing its embedding.

Virtual adversarial training (Miyato et al. 2016, 2017) needs no label: it moves the
vectors the way that changes the model's prediction most (one power iteration on the
divergence, from a random start) and trains the moved prediction towards the clean
one.
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


def sharpness_steps(gradients, rho):
    """SAM's move of each weight: rho · g / ‖g‖, ‖g‖ the global norm of all the gradients
    (None stays None: a weight without a gradient does not move). Sparse gradients (an
    embedding's) become dense, duplicate rows summed, as the weight they move is dense.
    A gradient that is not finite (a float16 loss scale overflowing) moves nothing: the
    optimizer then skips the step, and the weights must come back unchanged."""
    import tensorflow as tf

    dense = [None if g is None else tf.convert_to_tensor(g) for g in gradients]
    norm = tf.linalg.global_norm([g for g in dense if g is not None])
    scale = tf.where(tf.math.is_finite(norm), rho / (norm + 1e-12), 0.0)
    return [None if g is None else tf.math.multiply_no_nan(g, tf.cast(scale, g.dtype))
            for g in dense]


def _summed_over_replicas(gradients):
    """The whole batch's gradients: under a `tf.distribute` strategy each replica holds its
    share's (the loss already divided by the replica count, as the optimizer's own sum
    expects), so they are summed across replicas, and every replica then makes the same
    move of its own copy of the weights; on one device they are returned as they are.
    Sparse gradients become dense first, as `sharpness_steps` makes them."""
    import tensorflow as tf

    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return gradients
    dense = [None if g is None else tf.convert_to_tensor(g) for g in gradients]
    summed = iter(context.all_reduce(tf.distribute.ReduceOp.SUM,
                                     [g for g in dense if g is not None]))
    return [None if g is None else next(summed) for g in dense]


VIRTUAL_XI = 0.01  # the power iteration's probe: this fraction of each sentence's norm


def divergence(target, probabilities):
    """KL(target ‖ probabilities) over the last axis (Keras' own), averaged over the batch."""
    return keras.ops.mean(keras.losses.kl_divergence(
        keras.ops.cast(target, "float32"), keras.ops.cast(probabilities, "float32")))


class AdversarialTraining:
    """A mixin for a `keras.Model` with an `EmbeddingPerturbation` layer named
    "adversarial" and an `adversarial` attribute (ε; 0 turns the step off).

    Used by the sentiment classifier and the sequence tagger: whatever the model's
    loss (cross-entropy, the CRF's negative log-likelihood), the step is the same.
    A model whose output is a probability distribution over its last axis (the
    sentiment classifier) may also set `virtual_adversarial` (ε of the virtual
    adversarial loss) and `rdrop` (the weight of R-Drop's consistency loss); 0 or absent
    turns each off. With only `rdrop`, the model needs no perturbation layer.

    `sam` (ρ of sharpness-aware minimisation, set by the training loop from `train.sam`,
    not saved with the model; 0 or absent: off) applies to any of these objectives.
    """

    def virtual_noise(self, shape):
        """The power iteration's random start: standard normal, drawn from the step
        count, so a run with one seed draws the same starts."""
        import tensorflow as tf

        step = tf.cast(self.optimizer.iterations, "int32")
        return tf.random.stateless_normal(shape, seed=tf.stack([tf.constant(7919), step]))

    def virtual_direction(self, x, vectors, mask, epsilon):
        """The virtual adversarial perturbation of `vectors`: epsilon · ‖sentence‖ along
        the gradient of KL(p(x) ‖ p(x moved by the probe)), the probe being a random
        direction of length VIRTUAL_XI · ‖sentence‖. Both predictions are made in
        inference mode, so dropout does not drown the divergence the probe causes."""
        import tensorflow as tf

        noise = self.get_layer("adversarial")
        reference = keras.ops.stop_gradient(self(x, training=False))
        start = self.virtual_noise(keras.ops.shape(vectors))
        probe = adversarial_direction(vectors, start, mask, VIRTUAL_XI)
        with tf.GradientTape() as tape:
            tape.watch(probe)
            with noise.perturbed(probe):
                moved = self(x, training=False)
            spread = divergence(reference, moved)
        return adversarial_direction(vectors, tape.gradient(spread, probe), mask, epsilon)

    def train_step(self, data):
        """Keras' step, plus the adversarial and virtual adversarial losses when their
        ε (`adversarial`, `virtual_adversarial`) is above 0, and R-Drop when `rdrop` is.

        R-Drop (Liang et al. 2021): the batch goes through the model twice in training
        mode, so with two dropout draws, and the clean loss becomes the mean of the two
        passes' losses plus `rdrop` times the mean of KL(p1 ‖ p2) and KL(p2 ‖ p1), both
        predictions trained. The adversarial direction is then taken on that loss.

        The loss minimised is the clean loss, plus the loss of the same batch with its
        vectors moved by `adversarial_direction`, plus KL(clean prediction ‖ prediction
        with the vectors moved by `virtual_direction`), the clean prediction held
        constant. The reported `loss` is the clean one, so learning curves compare with
        runs without them.

        One backward pass over the clean loss gives both the gradient with respect to
        the vectors and the clean weight gradient; each extra loss adds one backward
        pass for its weight gradient (its perturbation is a constant).

        Mixup (`mixup`, α of elman.models.mixup; needs a `SentenceMixup` layer named
        "mixup"): every pass of the step mixes the batch's sentence vectors with one λ and
        one shuffle, and every loss above becomes λ·loss(y) + (1 - λ)·loss(y shuffled);
        the reported `loss` is that mixed one.

        Sharpness-aware minimisation (`sam` = ρ > 0; Foret et al. 2021): the weights step
        by the gradient of the whole objective above taken at w + ρ·g/‖g‖, g being its
        gradient at w (‖g‖ the global norm over all trainable weights), so the step
        lowers the worst loss in a ρ-ball rather than the loss at w. Each step makes the
        objective's passes twice. It moves the weights themselves, so it runs on one
        device only (the training loop refuses it under a strategy with replicas); the
        metrics are those of w.
        """
        virtual = getattr(self, "virtual_adversarial", 0.0)
        rdrop = getattr(self, "rdrop", 0.0)
        mixup = getattr(self, "mixup", 0.0)
        sam = getattr(self, "sam", 0.0)
        if not self.adversarial and not virtual and not rdrop and not mixup and not sam:
            return super().train_step(data)
        import tensorflow as tf

        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        if not mixup:
            return self._robust_step(x, y, sample_weight, self.compute_loss)
        from elman.models.mixup import mixup_draw

        lam, order = mixup_draw(mixup, self.optimizer.iterations, tf.shape(y)[0])

        def mixed_loss(x, y, y_pred, sample_weight, training):
            other = None if sample_weight is None else tf.gather(sample_weight, order)
            return (lam * self.compute_loss(x, y, y_pred, sample_weight, training=training)
                    + (1.0 - lam) * self.compute_loss(x, tf.gather(y, order), y_pred, other,
                                                      training=training))

        with self.get_layer("mixup").mixing(lam, order):
            return self._robust_step(x, y, sample_weight, mixed_loss)

    def _robust_step(self, x, y, sample_weight, compute_loss):
        """The step of `train_step` with `compute_loss(x, y, y_pred, sample_weight,
        training)` as the loss of every pass."""
        import tensorflow as tf

        loss, y_pred, gradients = self._objective_gradients(x, y, sample_weight, compute_loss)
        sam = getattr(self, "sam", 0.0)
        if sam:
            steps = sharpness_steps(_summed_over_replicas(gradients), sam)
            moved = [(w, step) for w, step in zip(self.trainable_weights, steps)
                     if step is not None]
            for weight, step in moved:  # each replica moves its own copy, by the same step
                weight.assign_add(step)
            _, _, gradients = self._objective_gradients(x, y, sample_weight, compute_loss)
            for weight, step in moved:
                weight.assign_sub(step)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_weights))
        replicas = tf.distribute.get_strategy().num_replicas_in_sync
        for metric in self.metrics:  # undo the loss scaling
            if metric.name == "loss":
                metric.update_state(loss * replicas, sample_weight=tf.shape(y)[0])
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def _objective_gradients(self, x, y, sample_weight, compute_loss):
        """(clean loss, clean prediction, the weights' gradients of the scaled objective)."""
        import tensorflow as tf

        virtual = getattr(self, "virtual_adversarial", 0.0)
        rdrop = getattr(self, "rdrop", 0.0)
        noise = self.get_layer("adversarial") if self.adversarial or virtual else None
        weights = self.trainable_weights
        replicas = tf.distribute.get_strategy().num_replicas_in_sync
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = compute_loss(x, y, y_pred, sample_weight, training=True)
            vectors, mask = noise.seen() if noise is not None else (None, None)
            objective = loss
            if rdrop:  # a second pass, other dropout masks; both pulled towards each other
                second = self(x, training=True)
                objective = (loss + compute_loss(x, y, second, sample_weight,
                                                 training=True)) / 2 + rdrop * (
                    divergence(y_pred, second) + divergence(second, y_pred)) / (2 * replicas)
            scaled = self.optimizer.scale_loss(objective)
        if noise is None:
            gradient, gradients = None, tape.gradient(scaled, weights)
        else:
            gradient, *gradients = tape.gradient(scaled, [vectors, *weights])
        if self.adversarial:
            delta = adversarial_direction(vectors, gradient, mask, self.adversarial)
            with tf.GradientTape() as tape:
                with noise.perturbed(delta):
                    moved = self(x, training=True)
                scaled = self.optimizer.scale_loss(
                    compute_loss(x, y, moved, sample_weight, training=True))
            gradients = [add_gradients(a, b)
                         for a, b in zip(gradients, tape.gradient(scaled, weights))]
        if virtual:
            delta = self.virtual_direction(x, vectors, mask, virtual)
            target = keras.ops.stop_gradient(y_pred)
            with tf.GradientTape() as tape:
                with noise.perturbed(delta):
                    moved = self(x, training=True)
                # per replica, as compute_loss divides the batch mean by the replicas
                scaled = self.optimizer.scale_loss(divergence(target, moved) / replicas)
            gradients = [add_gradients(a, b)
                         for a, b in zip(gradients, tape.gradient(scaled, weights))]
        return loss, y_pred, gradients
