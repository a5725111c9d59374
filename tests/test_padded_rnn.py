"""elman's right-padded recurrent layers against Keras' masked loop (the oracle).

The padded layers mask around the loop instead of inside it; every output, state and
gradient must equal Keras' own masked implementation, with the same weights, for
every combination of direction, returned values, output masking and dropout.
"""

import itertools

import keras
import numpy as np
import pytest
import tensorflow as tf

from elman.models.padded_rnn import CELLS, PaddedLSTM

KERAS = {"lstm": keras.layers.LSTM, "gru": keras.layers.GRU, "rnn": keras.layers.SimpleRNN}
LENGTHS = [7, 3, 0, 1, 5]  # a full row, a short one, an empty one, one token


def _batch(seed=0, lengths=LENGTHS, steps=7, features=5):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(len(lengths), steps, features)).astype("float32")
    mask = np.arange(steps)[None, :] < np.asarray(lengths)[:, None]
    return tf.constant(x), tf.constant(mask)


def _pair(cell, **kwargs):
    ours, theirs = CELLS[cell](4, **kwargs), KERAS[cell](4, **kwargs)
    x, mask = _batch()
    ours(x, mask=mask)
    theirs(x, mask=mask)
    rng = np.random.default_rng(1)
    weights = [rng.normal(scale=0.5, size=w.shape).astype("float32")
               for w in theirs.get_weights()]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    return ours, theirs


def _run(layer, x, mask, initial_state, training=False):
    with tf.GradientTape() as tape:
        tape.watch(x)
        out = layer(x, mask=mask, initial_state=initial_state, training=training)
        flat = out if isinstance(out, (list, tuple)) else [out]
        weights = np.random.default_rng(2)
        loss = sum(tf.reduce_sum(t * weights.normal(size=t.shape).astype("float32"))
                   for t in flat)
    grads = tape.gradient(loss, [x] + [v.value for v in layer.trainable_variables])
    return [t.numpy() for t in flat], [g.numpy() for g in grads]


def _same_in_inference_and_training(ours, theirs, x, mask):
    """Outputs and gradients of both layers agree, dropout off and on."""
    for training in (False, True):
        out_ours, grad_ours = _run(ours, x, mask, None, training)
        out_keras, grad_keras = _run(theirs, x, mask, None, training)
        np.testing.assert_allclose(out_ours[0], out_keras[0], rtol=1e-5, atol=1e-5)
        for a, b in zip(grad_ours, grad_keras):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("cell,go_backwards,return_sequences,return_state,zero_output",
                         [(c, *flags) for c in CELLS
                          for flags in itertools.product((False, True), repeat=4)])
def test_same_outputs_states_and_gradients_as_keras(cell, go_backwards, return_sequences,
                                                    return_state, zero_output):
    ours, theirs = _pair(cell, go_backwards=go_backwards, return_sequences=return_sequences,
                         return_state=return_state)
    ours.zero_output_for_mask = theirs.zero_output_for_mask = zero_output
    x, mask = _batch(seed=3)
    rng = np.random.default_rng(4)
    states = [tf.constant(rng.normal(size=(len(LENGTHS), 4)).astype("float32"))
              for _ in range(2 if cell == "lstm" else 1)]
    out_ours, grad_ours = _run(ours, x, mask, states)
    out_keras, grad_keras = _run(theirs, x, mask, states)
    assert len(out_ours) == len(out_keras) == (1 + len(states) if return_state else 1)
    for a, b in zip(out_ours, out_keras):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    for a, b in zip(grad_ours, grad_keras):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    # the padding gets no gradient (it was never read)
    assert np.all(grad_ours[0][~mask.numpy()] == 0.0)


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_bidirectional_with_dropout_matches_keras(cell):
    x, mask = _batch(seed=5)
    ours = keras.layers.Bidirectional(CELLS[cell](4, return_sequences=True, dropout=0.3,
                                                  recurrent_dropout=0.2, seed=7))
    theirs = keras.layers.Bidirectional(KERAS[cell](4, return_sequences=True, dropout=0.3,
                                                    recurrent_dropout=0.2, seed=7))
    ours(x, mask=mask)
    theirs(x, mask=mask)
    theirs.set_weights(ours.get_weights())
    for a, b in ((ours.forward_layer, theirs.forward_layer),
                 (ours.backward_layer, theirs.backward_layer)):
        # the same dropout masks (SimpleRNN's cell does not take the layer's seed)
        b.cell.seed_generator.state.assign(a.cell.seed_generator.state)
    _same_in_inference_and_training(ours, theirs, x, mask)


def _loop_ops(layer, prefix):
    x, mask = _batch()
    fn = tf.function(lambda a, m: layer(a, mask=m))
    graph = fn.get_concrete_function(x, mask).graph.as_graph_def()
    bodies = [f for f in graph.library.function if "body" in f.signature.name]
    return sum(1 for f in bodies for n in f.node_def if n.op.startswith(prefix))


@pytest.mark.parametrize("cell", sorted(CELLS))
def test_the_loop_runs_without_a_mask_or_the_input_projection(cell):
    """What the layer saves: no per-step select (Keras' masked loop has them), and one
    matmul a step (the recurrent one) where Keras' cell does two."""
    ours, theirs = _pair(cell, return_sequences=True)
    assert _loop_ops(theirs, "Select") > 0
    assert _loop_ops(ours, "Select") == 0
    assert _loop_ops(theirs, "MatMul") == 2
    assert _loop_ops(ours, "MatMul") == 1


@pytest.mark.parametrize("cell,options", [
    ("lstm", {"implementation": 1}), ("gru", {"implementation": 1}),
    ("gru", {"reset_after": False}), ("rnn", {"recurrent_dropout": 0.3, "seed": 3})])
def test_cell_settings_without_a_projected_step_still_match(cell, options):
    """Settings whose step the layer does not rewrite run the cell's own step."""
    ours, theirs = _pair(cell, return_sequences=True, go_backwards=True, **options)
    if "seed" in options:
        theirs.cell.seed_generator.state.assign(ours.cell.seed_generator.state)
    x, mask = _batch(seed=8)
    _same_in_inference_and_training(ours, theirs, x, mask)


def test_a_mask_that_is_not_right_padded_is_refused():
    layer, _ = _pair("lstm")
    x, _ = _batch()
    holes = tf.constant(np.array([[True, False, True, False, False, False, False]] * 5))
    with pytest.raises(tf.errors.InvalidArgumentError, match="right-padded"):
        layer(x, mask=holes)


def test_without_a_mask_it_is_keras_lstm():
    ours, theirs = _pair("lstm", return_sequences=True)
    x, _ = _batch()
    np.testing.assert_allclose(ours(x).numpy(), theirs(x).numpy(), rtol=1e-6, atol=1e-6)


def test_saves_and_loads_in_safe_mode(tmp_path):
    inputs = keras.Input((None,), dtype="int32")
    embedded = keras.layers.Embedding(20, 6, mask_zero=True)(inputs)
    model = keras.Model(inputs, keras.layers.Bidirectional(PaddedLSTM(4))(embedded))
    ids = np.array([[3, 4, 5, 0], [7, 0, 0, 0]], "int32")
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert isinstance(loaded.layers[-1].forward_layer, PaddedLSTM)
    np.testing.assert_allclose(loaded(ids).numpy(), model(ids).numpy(), rtol=1e-6)

