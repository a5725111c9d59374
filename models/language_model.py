"""A recurrent next-token language model with explicit, carryable recurrent state."""

import keras
import tensorflow as tf

from elman.models.padded_rnn import CELLS as _CELLS


class _CarriedStates:
    """The recurrent state carried between consecutive batches of a stateful model.

    A plain object on purpose: Keras does not track what it holds, so the carried
    state is never part of `model.weights` or of a saved `.keras` file. Each state
    is a variable with an unknown batch dimension; an empty (batch 0) value means
    "start from zeros", which is what `reset()` stores.
    """

    def __init__(self, state_sizes, dtype):
        self.state_sizes = list(state_sizes)
        self.dtype = dtype
        self.variables = {
            mode: [
                tf.Variable(
                    tf.zeros([0, size], dtype=dtype),
                    shape=tf.TensorShape([None, size]),
                    trainable=False,
                    name=f"carried_{mode}_state_{i}",
                )
                for i, size in enumerate(self.state_sizes)
            ]
            for mode in ("train", "test")
        }

    def reset(self, mode=None):
        modes = list(self.variables) if mode is None else [mode]
        for name in modes:
            for variable, size in zip(self.variables[name], self.state_sizes):
                variable.assign(tf.zeros([0, size], dtype=self.dtype))

    def read(self, mode, batch_size):
        states = []
        for variable, size in zip(self.variables[mode], self.state_sizes):
            value = variable.read_value()
            states.append(
                tf.stop_gradient(
                    tf.cond(
                        tf.equal(tf.shape(value)[0], batch_size),
                        lambda value=value: value,
                        lambda size=size: tf.zeros([batch_size, size], dtype=self.dtype),
                    )
                )
            )
        return states

    def write(self, mode, states):
        for variable, state in zip(self.variables[mode], states):
            variable.assign(tf.stop_gradient(tf.cast(state, self.dtype)))


class _ResetCarriedStates(keras.callbacks.Callback):
    """Zeroes a stateful model's carried state at each epoch and evaluation start."""

    def on_epoch_begin(self, epoch, logs=None):
        self.model.reset_states()

    def on_test_begin(self, logs=None):
        self.model._carried.reset("test")


@keras.saving.register_keras_serializable(package="elman")
class LanguageModel(keras.Model):
    """Next-token language model: embedding → stacked LSTM/GRU → logits over the vocabulary.

    Takes token ids `[batch, length]` (0 is padding and is masked, 1 is the
    out-of-vocabulary id) and returns next-token logits `[batch, length,
    vocabulary_size]`. The recurrent state is explicit: `call` accepts
    `initial_states` and, with `return_states=True`, also returns the final
    states, a flat list `[h_0, c_0, h_1, c_1, ...]` for LSTM (`[h_0, h_1, ...]`
    for GRU and simple RNN). `step` advances the same weights by one token, for
    generation. Dropout is applied to the embeddings, between recurrent layers
    and before the logits (never on the recurrent connections, so LSTM/GRU stay
    cuDNN-eligible on a GPU).

    With `stateful=True`, `fit` and `evaluate` do truncated back-propagation
    through time: the final state of each batch becomes the initial state of the
    next batch (batch row `i` continues batch row `i`, as laid out by
    `elman.tasks.lm.data.make_tbptt_dataset`), with no gradient flowing
    across the batch boundary. The carried state is zeroed at the start of each
    epoch and of each evaluation, and by `reset_states()`; `fit` does not
    shuffle unless asked to. Carried state is not
    saved with the model. Stateful training runs on one device (no
    `tf.distribute` strategy). Train with a masked per-step cross-entropy, and
    clip gradients by global norm with the optimizer's `global_clipnorm`.

    Args:
        vocabulary_size: int, number of token ids, including padding (0) and
            out-of-vocabulary (1).
        embedding_dim: int, size of the token embeddings. Default 64.
        cell: str, one of `"lstm"`, `"gru"`, `"rnn"`. Default `"lstm"`.
        units: int, size of each recurrent layer's state. Default 256.
        num_layers: int, number of stacked recurrent layers. Default 1.
        dropout: float in [0, 1), dropout rate on the non-recurrent connections.
            Default 0.0.
        stateful: bool, carry the recurrent state across consecutive batches in
            `fit` and `evaluate` (truncated BPTT). Default False.
        **kwargs: base `keras.Model` arguments (`name`, `dtype`, `trainable`).

    Example:

    ```python
    model = LanguageModel(vocabulary_size=2000, embedding_dim=64, units=256,
                          stateful=True)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3, global_clipnorm=1.0),
        loss=keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, ignore_class=0),
    )
    model.fit(make_tbptt_dataset(train_ids, batch_size=32, chunk_len=35), epochs=5)
    logits, states = model(ids, return_states=True)
    next_logits, states = model.step(ids[:, -1], states)
    ```
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_dim=64,
        cell="lstm",
        units=256,
        num_layers=1,
        dropout=0.0,
        stateful=False,
        **kwargs,
    ):
        for arg_name, value, minimum in (
            ("vocabulary_size", vocabulary_size, 3),
            ("embedding_dim", embedding_dim, 1),
            ("units", units, 1),
            ("num_layers", num_layers, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(
                    f"Expected {arg_name} to be an integer >= {minimum}. "
                    f"Received: {arg_name}={value!r}"
                )
        if cell not in _CELLS:
            raise ValueError(
                f"Expected cell to be one of {set(_CELLS)}. Received: cell={cell!r}"
            )
        if (
            isinstance(dropout, bool)
            or not isinstance(dropout, (int, float))
            or not 0.0 <= dropout < 1.0
        ):
            raise ValueError(
                f"Expected dropout to be a float in [0, 1). Received: dropout={dropout!r}"
            )
        if not isinstance(stateful, bool):
            raise ValueError(
                f"Expected stateful to be True or False. Received: stateful={stateful!r}"
            )
        super().__init__(**kwargs)
        self.vocabulary_size = vocabulary_size
        self.embedding_dim = embedding_dim
        self.cell = cell
        self.units = units
        self.num_layers = num_layers
        self.dropout = float(dropout)
        self.stateful = stateful

        self.embedding = keras.layers.Embedding(
            vocabulary_size, embedding_dim, mask_zero=True, name="embedding"
        )
        self.dropout_layers = [
            keras.layers.Dropout(self.dropout, name=f"dropout_{i}")
            for i in range(num_layers + 1)
        ]
        self.recurrent_layers = [
            _CELLS[cell](
                units,
                return_sequences=True,
                return_state=True,
                name=f"recurrent_{i}",
            )
            for i in range(num_layers)
        ]
        self.logits_layer = keras.layers.Dense(vocabulary_size, dtype="float32", name="logits")
        self._carried = (
            _CarriedStates(self.state_sizes, self.compute_dtype) if stateful else None
        )

    @property
    def states_per_layer(self):
        """int: recurrent state tensors per layer (2 for LSTM: h and c; else 1)."""
        return 2 if self.cell == "lstm" else 1

    @property
    def state_sizes(self):
        """list of int: the size of each tensor in the flat state list."""
        return [self.units] * (self.num_layers * self.states_per_layer)

    def build(self, input_shape=None):
        self.embedding.build((None, None))
        shape = (None, None, self.embedding_dim)
        for layer in self.recurrent_layers:
            layer.build(shape)
            shape = (None, None, self.units)
        self.logits_layer.build(shape)
        self.built = True

    def get_initial_states(self, batch_size):
        """Zero recurrent states for `batch_size` sequences, as a flat list."""
        return [
            keras.ops.zeros((batch_size, size), dtype=self.compute_dtype)
            for size in self.state_sizes
        ]

    def _split_states(self, states):
        if states is None:
            return [None] * self.num_layers
        states = list(states)
        if len(states) != len(self.state_sizes):
            raise ValueError(
                f"Expected {len(self.state_sizes)} state tensors "
                f"({self.states_per_layer} per layer × {self.num_layers} layers). "
                f"Received: {len(states)}"
            )
        n = self.states_per_layer
        return [states[i * n : (i + 1) * n] for i in range(self.num_layers)]

    def call(self, inputs, initial_states=None, return_states=False, training=None):
        x = self.embedding(inputs)
        x = self.dropout_layers[0](x, training=training)
        final_states = []
        for i, (layer, layer_states) in enumerate(
            zip(self.recurrent_layers, self._split_states(initial_states))
        ):
            x, *states = layer(x, initial_state=layer_states, training=training)
            final_states.extend(states)
            x = self.dropout_layers[i + 1](x, training=training)
        logits = self.logits_layer(x)
        if return_states:
            return logits, final_states
        return logits

    def step(self, token_ids, states):
        """Advance every sequence by one token, carrying the recurrent state.

        Args:
            token_ids: int tensor `[batch]`, the current token of each sequence.
            states: flat list of state tensors, from `call(..., return_states=True)`,
                `get_initial_states` or a previous `step`.

        Returns:
            `(logits, new_states)`: next-token logits `[batch, vocabulary_size]`
            and the flat list of new states.
        """
        x = self.embedding.call(token_ids)
        new_states = []
        for layer, layer_states in zip(self.recurrent_layers, self._split_states(states)):
            x, states_out = layer.cell(x, list(layer_states), training=False)
            if not isinstance(states_out, (list, tuple)):
                states_out = [states_out]
            new_states.extend(states_out)
        return self.logits_layer(x), new_states

    # Truncated back-propagation through time -------------------------------

    def reset_states(self):
        """Zero the carried training and evaluation states (stateful models only)."""
        if self._carried is not None:
            self._carried.reset()

    def _with_reset_callback(self, callbacks):
        if not self.stateful or isinstance(callbacks, keras.callbacks.CallbackList):
            return callbacks
        return list(callbacks or []) + [_ResetCarriedStates()]

    def fit(self, *args, callbacks=None, **kwargs):
        if self.stateful:
            # Consecutive batches must stay in order for the carried state.
            kwargs.setdefault("shuffle", False)
        return super().fit(*args, callbacks=self._with_reset_callback(callbacks), **kwargs)

    def evaluate(self, *args, callbacks=None, **kwargs):
        return super().evaluate(
            *args, callbacks=self._with_reset_callback(callbacks), **kwargs
        )

    def _update_loss_and_metrics(self, x, y, y_pred, sample_weight, loss):
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss, sample_weight=tf.shape(x)[0])
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def train_step(self, data):
        if not self.stateful:
            return super().train_step(data)
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        initial_states = self._carried.read("train", tf.shape(x)[0])
        with tf.GradientTape() as tape:
            y_pred, states = self(
                x, initial_states=initial_states, return_states=True, training=True
            )
            loss = self.compute_loss(
                x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=True
            )
            scaled_loss = self.optimizer.scale_loss(loss)
        gradients = tape.gradient(scaled_loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_weights))
        self._carried.write("train", states)
        return self._update_loss_and_metrics(x, y, y_pred, sample_weight, loss)

    def test_step(self, data):
        if not self.stateful:
            return super().test_step(data)
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(data)
        initial_states = self._carried.read("test", tf.shape(x)[0])
        y_pred, states = self(
            x, initial_states=initial_states, return_states=True, training=False
        )
        loss = self.compute_loss(
            x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=False
        )
        self._carried.write("test", states)
        return self._update_loss_and_metrics(x, y, y_pred, sample_weight, loss)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocabulary_size": self.vocabulary_size,
                "embedding_dim": self.embedding_dim,
                "cell": self.cell,
                "units": self.units,
                "num_layers": self.num_layers,
                "dropout": self.dropout,
                "stateful": self.stateful,
            }
        )
        return config
