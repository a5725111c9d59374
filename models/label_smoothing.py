"""Cross-entropy against smoothed targets, from integer labels.

Keras' `SparseCategoricalCrossentropy` has no `label_smoothing`; its
`CategoricalCrossentropy` has one but wants one-hot targets. This loss takes the integer
labels the classifiers train on and spreads a share ε of each target evenly over the
classes: the target of class k for gold label g is (1 - ε)·[k = g] + ε / C, for C
classes (Szegedy et al. 2016). A model trained on labels that are sometimes wrong is
so kept from driving its probabilities to 0 and 1.
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="elman")
class SmoothedSparseCrossentropy(keras.losses.Loss):
    """Cross-entropy of predicted probabilities against ε-smoothed integer labels.

    Args:
        smoothing: float in [0, 1), ε; 0 gives the plain sparse cross-entropy.
    """

    def __init__(self, smoothing=0.0, name="smoothed_sparse_crossentropy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.smoothing = float(smoothing)

    def call(self, y_true, y_pred):
        classes = ops.shape(y_pred)[-1]
        labels = ops.cast(ops.reshape(y_true, ops.shape(y_pred)[:-1]), "int32")
        return keras.losses.categorical_crossentropy(
            ops.one_hot(labels, classes, dtype=y_pred.dtype), y_pred,
            label_smoothing=self.smoothing)

    def get_config(self):
        return {**super().get_config(), "smoothing": self.smoothing}
