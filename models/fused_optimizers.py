"""Adam and SGD with momentum whose update of a weight is one fused TensorFlow kernel.

Keras 3's Adam updates a weight with about a dozen separate ops, each a full pass
over the weight (the gradient made dense, `g - m`, its scaling, `m += ...`, `g²`,
`v += ...`, `√v`, the division, `w -= ...`). For a word embedding that is most of a
short step's fixed cost: the dense update of a 7,142 × 128 embedding took 5.8 ms a
step here against 1.8 ms for TensorFlow's fused `ResourceApplyAdam` kernel, which
reads the gradient and the three slots once and writes them once (issue 20,
`python -m elman.bench.step_cost`).

The math is Keras' own, term for term (TensorFlow's kernel and Keras' Adam implement
the same update: m ← m + (g − m)(1 − β₁), v ← v + (g² − v)(1 − β₂),
w ← w − lr·√(1 − β₂ᵗ)/(1 − β₁ᵗ) · m / (√v + ε)); SGD with momentum uses
`ResourceApplyKerasMomentum` (m ← μm − lr·g, w ← w + m). Clipping, weight decay and
the moving average stay Keras' (they run before and after `update_step`). The slots,
their names and the config are Keras', so checkpoints move between the classes.
The fused kernels are used on the TensorFlow backend outside a `tf.distribute`
strategy; under a strategy (mirrored or multi-worker variables), with AMSGrad or
Nesterov, the Keras update runs. An embedding's sparse gradient is made dense (repeated
rows summed) for either path: Keras' Adam given the slices squares each occurrence apart
for v and moves the moments of the rows in the batch only, which is neither Adam's update
nor the fused kernel's, so without it a distributed run would not equal a single-device
one (tests/test_oracles_distributed.py).
"""

import keras


def _fused_available():
    if keras.backend.backend() != "tensorflow":
        return False
    import tensorflow as tf

    return not tf.distribute.has_strategy()


def _handle(variable):
    if isinstance(variable, keras.Variable):
        variable = variable.value  # the tf.Variable under a Keras variable
    return variable.handle


def _dense(gradient):
    """A sparse (IndexedSlices) gradient as a dense tensor; any other unchanged."""
    if keras.backend.backend() != "tensorflow":
        return gradient
    import tensorflow as tf

    return tf.convert_to_tensor(gradient) if isinstance(gradient, tf.IndexedSlices) else gradient


@keras.saving.register_keras_serializable(package="elman")
class FusedAdam(keras.optimizers.Adam):
    """`keras.optimizers.Adam` updating each weight with TensorFlow's fused kernel."""

    def update_step(self, gradient, variable, learning_rate):
        if self.amsgrad or not _fused_available():
            return super().update_step(_dense(gradient), variable, learning_rate)
        import tensorflow as tf

        dtype = variable.dtype
        step = tf.cast(self.iterations + 1, dtype)
        beta_1 = tf.cast(self.beta_1, dtype)
        beta_2 = tf.cast(self.beta_2, dtype)
        index = self._get_variable_index(variable)
        tf.raw_ops.ResourceApplyAdam(
            var=_handle(variable), m=_handle(self._momentums[index]),
            v=_handle(self._velocities[index]),
            beta1_power=tf.pow(beta_1, step), beta2_power=tf.pow(beta_2, step),
            lr=tf.cast(learning_rate, dtype), beta1=beta_1, beta2=beta_2,
            epsilon=tf.cast(self.epsilon, dtype),
            grad=tf.convert_to_tensor(tf.cast(gradient, dtype)), use_locking=False)


@keras.saving.register_keras_serializable(package="elman")
class FusedSGD(keras.optimizers.SGD):
    """`keras.optimizers.SGD` updating each weight with TensorFlow's fused kernels."""

    def update_step(self, gradient, variable, learning_rate):
        if self.nesterov or not _fused_available():
            return super().update_step(gradient, variable, learning_rate)
        import tensorflow as tf

        dtype = variable.dtype
        lr = tf.cast(learning_rate, dtype)
        grad = tf.convert_to_tensor(tf.cast(gradient, dtype))
        if self.momentum == 0:
            tf.raw_ops.ResourceApplyGradientDescent(var=_handle(variable), alpha=lr,
                                                    delta=grad, use_locking=False)
            return
        tf.raw_ops.ResourceApplyKerasMomentum(
            var=_handle(variable), accum=_handle(self.momentums[
                self._get_variable_index(variable)]),
            lr=lr, grad=grad, momentum=tf.cast(self.momentum, dtype), use_locking=False,
            use_nesterov=False)
