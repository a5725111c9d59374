"""Cross-entropy against smoothed targets, from integer labels.

Keras' `SparseCategoricalCrossentropy` has no `label_smoothing`; its
`CategoricalCrossentropy` has one but wants one-hot targets. This loss takes the integer
labels the classifiers train on and spreads a share ε of each target evenly over the
classes: the target of class k for gold label g is (1 - ε)·[k = g] + ε / C, for C
classes (Szegedy et al. 2016). A model trained on labels that are sometimes wrong is
so kept from driving its probabilities to 0 and 1.

It can also leave out, in each batch, the share q of examples with the largest loss (loss
truncation, as in the small-loss selection of co-teaching, Han et al. 2018): a training
example whose label is wrong tends to stay among the hardest, so its gradient is dropped.
The kept losses are summed and divided by the whole batch size, as Keras' default
reduction does, so q only removes terms and never scales the others up.
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="elman")
class SmoothedSparseCrossentropy(keras.losses.Loss):
    """Cross-entropy of predicted probabilities against ε-smoothed integer labels.

    Args:
        smoothing: float in [0, 1), ε; 0 gives the plain sparse cross-entropy.
        drop_hardest: float in [0, 1), q; the floor(q·n) examples of a batch of n with the
            largest loss count 0 (ties broken by position); 0 keeps every example.
    """

    def __init__(self, smoothing=0.0, drop_hardest=0.0, name="smoothed_sparse_crossentropy",
                 **kwargs):
        super().__init__(name=name, **kwargs)
        self.smoothing = float(smoothing)
        self.drop_hardest = float(drop_hardest)

    def call(self, y_true, y_pred):
        classes = ops.shape(y_pred)[-1]
        labels = ops.cast(ops.reshape(y_true, ops.shape(y_pred)[:-1]), "int32")
        losses = keras.losses.categorical_crossentropy(
            ops.one_hot(labels, classes, dtype=y_pred.dtype), y_pred,
            label_smoothing=self.smoothing)
        if not self.drop_hardest:
            return losses
        flat = ops.reshape(losses, (-1,))
        size = ops.shape(flat)[0]
        dropped = ops.cast(ops.floor(self.drop_hardest * ops.cast(size, "float32")), "int32")
        # rank of each loss, 0 for the largest: how many are larger, plus how many equal
        # ones come earlier in the batch (n² comparisons, cheap for a batch, and exact)
        held = ops.stop_gradient(flat)
        larger = ops.cast(held[None, :] > held[:, None], "int32")
        position = ops.arange(size)
        earlier = ops.logical_and(held[None, :] == held[:, None],
                                  position[None, :] < position[:, None])
        rank = ops.sum(larger + ops.cast(earlier, "int32"), axis=1)
        kept = ops.cast(rank >= dropped, flat.dtype)
        return ops.reshape(flat * kept, ops.shape(losses))

    def get_config(self):
        return {**super().get_config(), "smoothing": self.smoothing,
                "drop_hardest": self.drop_hardest}
