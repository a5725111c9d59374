"""Tests for models/language_model.py: explicit state, stepping, TBPTT, save/load."""

import keras
import numpy as np
import pytest

from elman.models.language_model import LanguageModel
from elman.tasks.lm.data import make_tbptt_dataset

VOCAB = 11


def _ids(shape, seed=0):
    return np.random.RandomState(seed).randint(1, VOCAB, size=shape).astype("int32")


def _model(**kwargs):
    keras.utils.set_random_seed(1)
    config = dict(vocabulary_size=VOCAB, embedding_dim=4, units=8)
    config.update(kwargs)
    return LanguageModel(**config)


def _loss():
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)


def test_validates_arguments():
    with pytest.raises(ValueError, match="Expected cell to be one of .*Received: cell='lsmt'"):
        LanguageModel(VOCAB, cell="lsmt")
    with pytest.raises(ValueError, match="Expected dropout"):
        LanguageModel(VOCAB, dropout=1.0)
    with pytest.raises(ValueError, match="Expected num_layers"):
        LanguageModel(VOCAB, num_layers=0)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_carried_state_equals_unchunked_run_and_step(cell):
    model = _model(cell=cell, num_layers=2)
    ids = _ids((3, 12))
    full = keras.ops.convert_to_numpy(model(ids))
    assert full.shape == (3, 12, VOCAB)

    states, chunks = None, []
    for start in range(0, 12, 4):
        logits, states = model(ids[:, start : start + 4], initial_states=states,
                               return_states=True)
        chunks.append(keras.ops.convert_to_numpy(logits))
    assert len(states) == (4 if cell == "lstm" else 2)
    np.testing.assert_allclose(np.concatenate(chunks, axis=1), full, atol=1e-5)

    states, steps = model.get_initial_states(3), []
    for t in range(12):
        logits, states = model.step(ids[:, t], states)
        steps.append(keras.ops.convert_to_numpy(logits))
    np.testing.assert_allclose(np.stack(steps, axis=1), full, atol=1e-5)


def test_padding_is_masked():
    model = _model()
    ids = _ids((2, 6))
    padded = np.concatenate([ids, np.zeros((2, 3), "int32")], axis=1)
    _, states = model(ids, return_states=True)
    _, padded_states = model(padded, return_states=True)
    for a, b in zip(states, padded_states):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a),
                                   keras.ops.convert_to_numpy(b), atol=1e-6)


def test_stateful_fit_and_evaluate_carry_state_and_reset_each_epoch():
    # With learning rate 0 the weights stay fixed, so the loss of an epoch of
    # chunks with the carried state must equal the loss of the unchunked
    # streams, in every epoch (the state is reset at each epoch start).
    stream = _ids((2 * 12 + 1,), seed=3)
    dataset = make_tbptt_dataset(stream, batch_size=2, chunk_len=4)
    x_full = stream[:24].reshape(2, 12)
    y_full = stream[1:25].reshape(2, 12)

    model = _model(stateful=True)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.0), loss=_loss())
    unchunked = _loss()(y_full, model(x_full))
    history = model.fit(dataset, epochs=2, verbose=0)
    np.testing.assert_allclose(history.history["loss"], [float(unchunked)] * 2, rtol=1e-5)
    np.testing.assert_allclose(model.evaluate(dataset, verbose=0), float(unchunked), rtol=1e-5)
    np.testing.assert_allclose(model.evaluate(dataset, verbose=0), float(unchunked), rtol=1e-5)

    stateless = _model(stateful=False)
    stateless.build((None, None))
    stateless.set_weights(model.get_weights())
    stateless.compile(loss=_loss())
    assert abs(stateless.evaluate(dataset, verbose=0) - float(unchunked)) > 1e-4


def test_stateful_training_reduces_loss_with_clipping():
    stream = np.tile(np.arange(2, 8, dtype="int32"), 12)
    dataset = make_tbptt_dataset(stream, batch_size=2, chunk_len=5)
    model = _model(stateful=True, cell="gru", dropout=0.1)
    model.compile(optimizer=keras.optimizers.Adam(0.05, global_clipnorm=1.0), loss=_loss())
    history = model.fit(dataset, epochs=4, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_save_load_round_trip(tmp_path):
    model = _model(cell="gru", num_layers=2, dropout=0.2, stateful=True)
    ids = _ids((2, 5))
    expected = keras.ops.convert_to_numpy(model(ids))
    path = tmp_path / "lm.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert isinstance(loaded, LanguageModel)
    assert loaded.get_config() == model.get_config()
    np.testing.assert_allclose(keras.ops.convert_to_numpy(loaded(ids)), expected, atol=1e-6)
    assert loaded.get_layer("recurrent_1").units == 8
