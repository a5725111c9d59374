import json

import keras
import numpy as np
import pytest

from elman.models.encoders import RecurrentEncoder
from elman.models.masked_pooling import MaskedPooling
from elman.models.sentiment_classifier import SentimentClassifier


@pytest.mark.parametrize("cell", ["lstm", "gru", "rnn"])
def test_shapes_for_each_cell(cell):
    x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype("float32")
    assert RecurrentEncoder(cell, units=4, num_layers=2)(x).shape == (2, 5, 8)
    assert RecurrentEncoder(cell, units=4, bidirectional=False)(x).shape == (2, 5, 4)
    assert RecurrentEncoder(cell, units=4, return_sequences=False)(x).shape == (2, 8)
    assert RecurrentEncoder(cell, units=4, merge_mode="sum")(x).shape == (2, 5, 4)


def test_argument_validation_messages():
    with pytest.raises(ValueError, match=r"Expected cell to be one of .* Received: cell='lsmt'"):
        RecurrentEncoder(cell="lsmt")
    with pytest.raises(ValueError, match="Expected dropout"):
        RecurrentEncoder(dropout=1.5)


def test_padding_does_not_change_the_final_state():
    rng = np.random.default_rng(0)
    emb = keras.layers.Embedding(10, 3, mask_zero=True)
    enc = RecurrentEncoder("gru", units=4, return_sequences=False)
    short = np.array([[3, 4, 5]])
    padded = np.array([[3, 4, 5, 0, 0]])
    del rng
    np.testing.assert_allclose(enc(emb(short)), enc(emb(padded)), atol=1e-6)


def test_masked_pooling_matches_numpy():
    x = np.arange(24, dtype="float32").reshape(2, 4, 3) - 10
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1]], bool)
    mean = MaskedPooling("mean")(x, mask=mask)
    maxi = MaskedPooling("max")(x, mask=mask)
    np.testing.assert_allclose(mean[0], x[0, :2].mean(0))
    np.testing.assert_allclose(maxi[0], x[0, :2].max(0))
    np.testing.assert_allclose(mean[1], x[1].mean(0))
    both = MaskedPooling("max-mean")(x, mask=mask)  # padded steps hold the largest values
    np.testing.assert_allclose(both[0], np.concatenate([x[0, :2].max(0), x[0, :2].mean(0)]))
    np.testing.assert_allclose(both[1], np.concatenate([x[1].max(0), x[1].mean(0)]))
    assert MaskedPooling("max-mean").compute_output_shape((2, 4, 3)) == (2, 6)
    with pytest.raises(ValueError, match="Received: mode='min'"):
        MaskedPooling("min")


def test_attention_pooling_by_hand():
    """One tanh unit reading feature 0 only, context 1: the score of step t is
    tanh(x[t, 0]). With x[0, 0] = artanh(ln 2) and x[1, 0] = 0 the scores are ln 2 and 0,
    so the weights are 2/3 and 1/3; the padded third step (huge values) gets none."""
    import math

    pool = MaskedPooling("attention", attention_units=1)
    x = np.array([[[math.atanh(math.log(2)), 3.0], [0.0, -6.0], [1e4, 1e4]]], "float32")
    mask = np.array([[True, True, False]])
    pool(x, mask=mask)  # builds the weights
    pool.set_weights([np.array([[1.0], [0.0]], "float32"), np.zeros(1, "float32"),
                      np.ones(1, "float32")])
    np.testing.assert_allclose(pool.attention_weights(x, mask), [[2 / 3, 1 / 3, 0.0]],
                               rtol=1e-6)
    expected = [2 / 3 * math.atanh(math.log(2)) + 1 / 3 * 0.0, 2 / 3 * 3.0 + 1 / 3 * -6.0]
    np.testing.assert_allclose(pool(x, mask=mask), [expected], rtol=1e-5, atol=1e-6)
    # a row with no real step pools to zeros, not NaN
    np.testing.assert_array_equal(pool(x, mask=np.zeros((1, 3), bool)), [[0.0, 0.0]])
    # the layer keeps its size through saving, and refuses an empty scoring layer
    again = MaskedPooling.from_config(pool.get_config())
    assert again.mode == "attention" and again.attention_units == 1
    with pytest.raises(ValueError, match="attention_units"):
        MaskedPooling("attention", attention_units=0)


@pytest.mark.parametrize("pooling", ["last", "max", "mean", "max-mean", "attention"])
def test_classifier_config_and_save_round_trip(tmp_path, pooling):
    model = SentimentClassifier(30, 3, embedding_dim=4, units=3, num_layers=2,
                                pooling=pooling, hidden=5, word_dropout=0.1, unk_dropout=0.2)
    x = np.array([[3, 4, 5, 0], [6, 0, 0, 0]])
    model.save(tmp_path / "m.keras")
    again = keras.saving.load_model(tmp_path / "m.keras", safe_mode=True)
    np.testing.assert_allclose(model(x), again(x), atol=1e-7)
    assert again.get_config() == model.get_config()
    enc = RecurrentEncoder("gru", units=3, num_layers=2, dropout=0.1)
    assert RecurrentEncoder.from_config(enc.get_config()).get_config() == enc.get_config()


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_recurrent_dropout_masks_the_state_only_while_training(cell):
    keras.utils.set_random_seed(5)
    x = np.random.default_rng(0).normal(size=(3, 6, 4)).astype("float32")
    noisy = RecurrentEncoder(cell=cell, units=5, recurrent_dropout=0.5)
    plain = RecurrentEncoder(cell=cell, units=5)
    noisy(x), plain(x)
    plain.set_weights(noisy.get_weights())
    # at inference the dropped-out encoder is the same function as the plain one
    np.testing.assert_allclose(noisy(x, training=False), plain(x, training=False), atol=1e-6)
    # while training its recurrent state is masked, so its outputs differ, but its first
    # step (computed from a zero state, where a mask has nothing to remove) does not
    trained = np.asarray(noisy(x, training=True))
    reference = np.asarray(plain(x, training=True))
    assert not np.allclose(trained, reference, atol=1e-4)
    units = 5  # forward direction: position 0 reads only the input and the zero state
    np.testing.assert_allclose(trained[:, 0, :units], reference[:, 0, :units], atol=1e-6)
    restored = RecurrentEncoder.from_config(noisy.get_config())
    assert restored.recurrent_dropout == 0.5
    with pytest.raises(ValueError, match="recurrent_dropout"):
        RecurrentEncoder(recurrent_dropout=1.0)


@pytest.mark.slow
def test_many_bidirectional_encoders_load_back(tmp_path):
    """Keras matches serialized objects by `id()` while it loads a model; a dropped
    Bidirectional source layer whose id came back made it hand the forward copy back as
    the backward one, and a 10-member sentiment ensemble failed to load. Thirty
    two-layer encoders failed on most loads before `wrap_bidirectional`."""
    inputs = keras.Input((None, 3))
    outputs = [RecurrentEncoder(cell="lstm", units=2, num_layers=2, name=f"enc_{i}")(inputs)
               for i in range(30)]
    model = keras.Model(inputs, keras.layers.Concatenate()(outputs))
    path = tmp_path / "many.keras"
    model.save(path)
    for _ in range(3):
        loaded = keras.saving.load_model(path, safe_mode=True)
        for i in range(30):
            for bi in loaded.get_layer(f"enc_{i}").recurrent_layers:
                assert (bi.forward_layer.go_backwards, bi.backward_layer.go_backwards) == (
                    False, True)
    x = np.random.default_rng(0).normal(size=(2, 4, 3)).astype("float32")
    np.testing.assert_allclose(loaded(x), model(x), atol=1e-6)


def test_an_attention_pooled_run_exports_for_serving(tmp_path, tiny_sentiment, capsys):
    """A run with `head.pooling=attention` saves its scoring weights in both exports: the
    SavedModel (TF Serving's path) gives the Keras model's probabilities for raw text."""
    import tensorflow as tf

    from elman.core import runs
    from tests.conftest import train_tiny_sentiment

    run = train_tiny_sentiment(tmp_path, tiny_sentiment, "attention",
                               "--set", "head.pooling=attention",
                               "--set", "head.attention_units=6")
    texts = ["the food was great", "服务太慢", "the service was slow, but the food was great"]
    model = runs.load_model(run)
    (classifier,) = [layer for layer in model.layers if isinstance(layer, SentimentClassifier)]
    pooling = classifier.get_layer("pooling")
    assert pooling.mode == "attention" and pooling.attention_units == 6
    probs = np.asarray(model.predict(np.array(texts, dtype=object), verbose=0))
    served = tf.saved_model.load(str(run / "saved_model"))
    np.testing.assert_allclose(np.asarray(served.serve(tf.constant(texts))), probs, atol=1e-5)
    # `predict --trace` adds each token's attention weight, and they sum to 1
    from elman import cli

    capsys.readouterr()
    assert cli.main(["predict", str(run), "--trace", "--format", "json", texts[2]]) == 0
    trace = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    weights = [step["attention"] for step in trace["steps"]]
    assert len(weights) == len(trace["tokens"]) and sum(weights) == pytest.approx(1, abs=1e-5)
    assert cli.main(["predict", str(run), "--trace", texts[2]]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line.split() for line in lines if line.split()[:2] == ["t", "token"])
    assert header[2:5] == ["negative", "positive", "attention"]
