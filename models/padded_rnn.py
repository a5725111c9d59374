"""Recurrent layers that skip per-step masking for right-padded batches (CPU).

Keras' recurrent loop honours a mask at every time step: for each step and direction
it selects, row by row, between the new output and state and the carried ones
(`tf.where` on the output and on every state, and their gradients). On a CPU those
small ops cost about a third of a bidirectional LSTM's step at elman's batch sizes
(issue 20: 13.3 ms against 10.0 ms for 32 sentences × 20 tokens, forward and
backward).

elman's batches are always right-padded (id 0 after each sentence's last token), and
in a right-padded batch the recurrence never needs the mask while it runs: a forward
pass over the padding only computes positions after the sentence's end, which nothing
reads. So these layers run the recurrent loop without a mask and apply it once,
around the loop:

- forward: the loop runs over the whole padded batch; each row's last output and
  final states are gathered at its own last token (`length - 1`), and padded
  positions get what Keras gives them (zeros with `zero_output_for_mask`, else the
  last real output);
- backward (`go_backwards`, as `Bidirectional` builds it): each row's real tokens are
  reversed in place (`tf.reverse_sequence`, padding stays at the end), the loop runs
  forward, and the outputs are put back in Keras' go-backwards order (reversed time,
  zeros where the padding was).

The results equal the masked Keras loop's (tests/test_padded_rnn.py compares outputs,
states and gradients with `keras.layers.LSTM`/`GRU`/`SimpleRNN`). The weights, their
names and the config are Keras', so a checkpoint loads into either class. The layers
fall back to the Keras path unchanged when there is no mask, on a GPU (where the
masked cuDNN kernel is already fused), with `unroll` or `stateful`, and off the
TensorFlow backend. A mask that is not right-padded (a `True` after a `False` in a
row) stops the step with an error instead of a silently wrong result.
"""

import keras
from keras import ops

_MESSAGE = ("elman's recurrent layers need right-padded input: every row's mask must be "
            "True for its tokens and False after them")


def _gpu_present():
    import tensorflow as tf

    return bool(tf.config.list_logical_devices("GPU"))


def _lengths(mask):
    """(mask as bool, each row's token count); stops on a mask that is not right-padded."""
    import tensorflow as tf

    mask = tf.cast(mask, tf.bool)
    lengths = tf.reduce_sum(tf.cast(mask, tf.int32), axis=1)
    right_padded = tf.reduce_all(tf.equal(mask, tf.sequence_mask(lengths, tf.shape(mask)[1])))
    with tf.control_dependencies([tf.debugging.Assert(right_padded, [_MESSAGE])]):
        return mask, tf.identity(lengths)


def _with_states(step, keep_states, widths):
    """`step` whose output also carries its new states (concatenated) when keep_states."""
    import tensorflow as tf

    def wrapped(inputs, states):
        output, new_states = step(inputs, states)
        if not isinstance(new_states, (list, tuple)):
            new_states = [new_states]
        new_states = list(new_states)
        if keep_states:  # every step's states, to read each row's at its own end
            del widths[:]
            widths.extend(int(s.shape[-1]) for s in new_states)
            output = tf.concat([output] + new_states, axis=-1)
        return output, new_states

    return wrapped


def _finish(layer, outputs, mask, lengths, initial_state, widths):
    """(last_output, outputs, states) as Keras' masked loop gives them, from the outputs
    of an unmasked loop over right-padded rows (reversed rows for `go_backwards`)."""
    import tensorflow as tf

    rows = tf.range(tf.shape(outputs)[0])
    # each row's values at its last token; rows with no token keep the start
    at_end = tf.gather_nd(outputs, tf.stack([rows, tf.maximum(lengths - 1, 0)], axis=1))
    empty = tf.equal(lengths, 0)[:, None]
    if widths:
        outputs = tf.split(outputs, [outputs.shape[-1] - sum(widths)] + widths, axis=-1)[0]
        ends = tf.split(at_end, [at_end.shape[-1] - sum(widths)] + widths, axis=-1)
        last_output = tf.where(empty, tf.zeros_like(ends[0]), ends[0])
        states = [tf.where(empty, tf.cast(s0, e.dtype), e)
                  for s0, e in zip(initial_state, ends[1:])]
    else:
        last_output = tf.where(empty, tf.zeros_like(at_end), at_end)
        states = list(initial_state)  # not returned by the layer (return_state is off)
    if layer.zero_output_for_mask and not layer.go_backwards:
        # Keras' last output is the last time step's: zeros for a row with padding
        last_output = tf.where(tf.equal(lengths, tf.shape(mask)[1])[:, None], last_output,
                               tf.zeros_like(last_output))
    if not layer.return_sequences:
        return last_output, ops.expand_dims(last_output, 1), states
    real = mask[:, :, None]
    if layer.go_backwards:
        aligned = tf.where(real, outputs, tf.zeros_like(outputs))
        outputs = tf.reverse(tf.reverse_sequence(aligned, lengths, seq_axis=1, batch_axis=0),
                             axis=[1])
    elif layer.zero_output_for_mask:
        outputs = tf.where(real, outputs, tf.zeros_like(outputs))
    else:  # the last real output carried over the padding
        outputs = tf.where(real, outputs, last_output[:, None, :])
    return last_output, outputs, states


class _RightPadded:
    """Mixin for keras.layers.{LSTM, GRU, SimpleRNN}: see the module docstring.

    A subclass that can rewrite its cell's step on inputs projected beforehand gives
    `_projects(training)`, `_project(sequences, training)` (inputs @ kernel + input
    bias, every step at once), `_recurrent_bias()` and `_step(xw_t, states, kernel,
    bias)` (the cell's arithmetic on one step's projected inputs).
    """

    def _padded_path(self, mask):
        return (mask is not None and keras.backend.backend() == "tensorflow"
                and not self.unroll and not self.stateful and not _gpu_present())

    def _projects(self, training):
        return False

    def _recurrent_bias(self):
        return None

    def _dropped_inputs(self, sequences, training):
        """The inputs with the cell's input dropout mask (one per sequence) applied."""
        cell = self.cell
        if training and 0.0 < cell.dropout < 1.0:
            return sequences * ops.expand_dims(cell.get_dropout_mask(sequences[:, 0, :]), 1)
        return sequences

    def inner_loop(self, sequences, initial_state, mask, training=False):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if not self._padded_path(mask):
            return super().inner_loop(sequences, initial_state, mask=mask, training=training)
        import tensorflow as tf

        from keras.src import backend

        if not isinstance(initial_state, (list, tuple)):
            initial_state = [initial_state]
        initial_state = list(initial_state)
        mask, lengths = _lengths(mask)
        x = sequences
        if self.go_backwards:
            x = tf.reverse_sequence(x, lengths, seq_axis=1, batch_axis=0)
        if self._projects(training):  # the input projection done once, outside the loop
            x = self._project(x, training)
            kernel, bias = self.cell.recurrent_kernel, self._recurrent_bias()

            def cell_step(xw_t, states):
                return self._step(xw_t, states, kernel, bias)
        else:
            kwargs = {"training": training} if self.cell._call_has_training_arg else {}

            def cell_step(inputs, states):
                return self.cell(inputs, states, **kwargs)

        widths = []
        _, outputs, _ = backend.rnn(_with_states(cell_step, self.return_state, widths), x,
                                    initial_state, go_backwards=False, mask=None, unroll=False,
                                    input_length=sequences.shape[1], return_all_outputs=True)
        return _finish(self, outputs, mask, lengths, initial_state, widths)


@keras.saving.register_keras_serializable(package="elman")
class PaddedLSTM(_RightPadded, keras.layers.LSTM):
    """`keras.layers.LSTM` that masks right-padded batches around the loop on a CPU."""

    def _projects(self, training):
        return self.cell.implementation == 2  # Keras' per-gate variant runs its own step

    def _project(self, sequences, training):
        xw = ops.matmul(self._dropped_inputs(sequences, training), self.cell.kernel)
        return xw + self.cell.bias if self.cell.use_bias else xw

    def _step(self, xw_t, states, kernel, bias):
        """LSTMCell.call (implementation 2) on projected inputs."""
        cell = self.cell
        h, c = states
        z0, z1, z2, z3 = ops.split(xw_t + ops.matmul(h, kernel), 4, axis=-1)
        c = cell.recurrent_activation(z1) * c + cell.recurrent_activation(z0) * \
            cell.activation(z2)
        h = cell.recurrent_activation(z3) * cell.activation(c)
        return h, [h, c]


@keras.saving.register_keras_serializable(package="elman")
class PaddedGRU(_RightPadded, keras.layers.GRU):
    """`keras.layers.GRU` that masks right-padded batches around the loop on a CPU."""

    def _projects(self, training):
        return self.cell.implementation == 2 and self.cell.reset_after

    def _project(self, sequences, training):
        xw = ops.matmul(self._dropped_inputs(sequences, training), self.cell.kernel)
        return xw + self.cell.bias[0] if self.cell.use_bias else xw

    def _recurrent_bias(self):
        return self.cell.bias[1] if self.cell.use_bias else None

    def _step(self, xw_t, states, kernel, bias):
        """GRUCell.call (implementation 2, reset after) on projected inputs."""
        cell = self.cell
        h = states[0]
        inner = ops.matmul(h, kernel)
        if bias is not None:
            inner = inner + bias
        x_z, x_r, x_h = ops.split(xw_t, 3, axis=-1)
        r_z, r_r, r_h = ops.split(inner, 3, axis=-1)
        z = cell.recurrent_activation(x_z + r_z)
        r = cell.recurrent_activation(x_r + r_r)
        h = z * h + (1 - z) * cell.activation(x_h + r * r_h)
        return h, [h]


@keras.saving.register_keras_serializable(package="elman")
class PaddedSimpleRNN(_RightPadded, keras.layers.SimpleRNN):
    """`keras.layers.SimpleRNN` that masks right-padded batches around the loop on a CPU."""

    def _projects(self, training):
        return not (training and 0.0 < self.cell.recurrent_dropout < 1.0)

    def _project(self, sequences, training):
        xw = ops.matmul(self._dropped_inputs(sequences, training), self.cell.kernel)
        return xw + self.cell.bias if self.cell.bias is not None else xw

    def _step(self, xw_t, states, kernel, bias):
        """SimpleRNNCell.call on projected inputs."""
        h = xw_t + ops.matmul(states[0], kernel)
        if self.cell.activation is not None:
            h = self.cell.activation(h)
        return h, [h]


CELLS = {"lstm": PaddedLSTM, "gru": PaddedGRU, "rnn": PaddedSimpleRNN}
