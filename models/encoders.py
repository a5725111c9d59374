"""The shared recurrent encoder: a stack of (bidirectional) SimpleRNN/LSTM/GRU layers."""

import keras

from elman.models.padded_rnn import CELLS as _CELLS
from elman.models.serialization import wrap_bidirectional

_MERGE_MODES = ("concat", "sum", "mul", "ave")


@keras.saving.register_keras_serializable(package="elman")
class RecurrentEncoder(keras.layers.Layer):
    """A stack of recurrent layers that keeps cuDNN-eligible settings by default.

    Dropout is applied between layers (on the outputs). Recurrent (variational)
    dropout is off by default because it makes LSTM/GRU ineligible for the fused cuDNN
    kernels on a GPU; on a CPU it costs little and regularises small data sets.

    Args:
        cell: str, one of "lstm", "gru", "rnn" (SimpleRNN). Default "lstm".
        units: int, units per direction in every layer. Default 64.
        num_layers: int, number of stacked recurrent layers. Default 1.
        bidirectional: bool, wrap each layer in `keras.layers.Bidirectional`. Default True.
        dropout: float in [0, 1), dropout on each layer's outputs. Default 0.0.
        recurrent_dropout: float in [0, 1), dropout on the recurrent state, one mask
            per sequence (Gal and Ghahramani 2016). Disables cuDNN. Default 0.0.
        merge_mode: str, how the two directions are merged: "concat", "sum", "mul" or
            "ave". Default "concat".
        return_sequences: bool, return every position ([batch, steps, features]) or only
            the final state of the last layer ([batch, features]). Default True.

    Example:
    >>> encoder = RecurrentEncoder(cell="gru", units=32, num_layers=2)
    >>> encoder(keras.ops.ones((4, 7, 16))).shape
    (4, 7, 64)
    """

    def __init__(
        self,
        cell="lstm",
        units=64,
        num_layers=1,
        bidirectional=True,
        dropout=0.0,
        merge_mode="concat",
        return_sequences=True,
        recurrent_dropout=0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if cell not in _CELLS:
            raise ValueError(
                f"Expected cell to be one of {set(_CELLS)}. Received: cell={cell!r}"
            )
        if not isinstance(units, int) or units < 1:
            raise ValueError(f"Expected units to be a positive int. Received: units={units!r}")
        if not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(
                f"Expected num_layers to be a positive int. Received: num_layers={num_layers!r}"
            )
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(f"Expected dropout to be in [0, 1). Received: dropout={dropout!r}")
        if not 0.0 <= float(recurrent_dropout) < 1.0:
            raise ValueError("Expected recurrent_dropout to be in [0, 1). "
                             f"Received: recurrent_dropout={recurrent_dropout!r}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(
                f"Expected merge_mode to be one of {set(_MERGE_MODES)}. "
                f"Received: merge_mode={merge_mode!r}"
            )
        self.cell = cell
        self.units = units
        self.num_layers = num_layers
        self.bidirectional = bool(bidirectional)
        self.dropout = float(dropout)
        self.recurrent_dropout = float(recurrent_dropout)
        self.merge_mode = merge_mode
        self.return_sequences = bool(return_sequences)
        self.supports_masking = True
        self.recurrent_layers = []
        self.dropout_layers = []
        for i in range(num_layers):
            last = i == num_layers - 1
            layer = _CELLS[cell](
                units,
                return_sequences=self.return_sequences or not last,
                recurrent_dropout=self.recurrent_dropout,
                name=f"{cell}_{i}",
            )
            if self.bidirectional:
                layer = wrap_bidirectional(layer, merge_mode=merge_mode,
                                           name=f"bidirectional_{cell}_{i}")
            self.recurrent_layers.append(layer)
            self.dropout_layers.append(
                keras.layers.Dropout(self.dropout, name=f"dropout_{i}") if self.dropout else None
            )

    @property
    def output_size(self):
        """int, the feature size of the output."""
        if self.bidirectional and self.merge_mode == "concat":
            return 2 * self.units
        return self.units

    def build(self, input_shape):
        shape = tuple(input_shape)
        for layer in self.recurrent_layers:
            layer.build(shape)
            shape = tuple(layer.compute_output_shape(shape))
            if len(shape) == 2:
                break
        self.built = True

    def call(self, inputs, mask=None, training=None):
        x = inputs
        for layer, drop in zip(self.recurrent_layers, self.dropout_layers):
            x = layer(x, mask=mask, training=training)
            if drop is not None:
                x = drop(x, training=training)
        return x

    def compute_mask(self, inputs, mask=None):
        return mask if self.return_sequences else None

    def compute_output_shape(self, input_shape):
        if self.return_sequences:
            return (input_shape[0], input_shape[1], self.output_size)
        return (input_shape[0], self.output_size)

    def get_config(self):
        config = super().get_config()
        config.update(
            cell=self.cell,
            units=self.units,
            num_layers=self.num_layers,
            bidirectional=self.bidirectional,
            dropout=self.dropout,
            merge_mode=self.merge_mode,
            return_sequences=self.return_sequences,
            recurrent_dropout=self.recurrent_dropout,
        )
        return config
