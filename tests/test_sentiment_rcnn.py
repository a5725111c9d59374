"""The recurrent-convolutional head (`head.rcnn`, Lai et al. 2015) of the sentiment
classifier: what it computes, checked against NumPy from the model's own weights, its
masking, its settings' errors (also through the CLI), and the reading trace."""

import subprocess
import sys

import keras
import numpy as np
import pytest

from elman.models.sentiment_classifier import SentimentClassifier


def _model(pooling="max", rcnn=3, seed=7):
    keras.utils.set_random_seed(seed)
    return SentimentClassifier(vocabulary_size=12, num_classes=2, embedding_dim=4, units=3,
                               pooling=pooling, hidden=0, head_dropout=0.0, dropout=0.0,
                               rcnn=rcnn)


def _numpy_rcnn(model, ids):
    """tanh(W [states; token vector] + b) at every position, [batch, steps, units], from
    the encoder's outputs and the model's embedding and rcnn weights."""
    states = keras.Model(model.input, model.get_layer("encoder").output)(ids, training=False)
    states = np.asarray(states, np.float64)
    table = np.asarray(model.get_layer("embedding").get_weights()[0], np.float64)
    w, b = (np.asarray(a, np.float64) for a in model.get_layer("rcnn").get_weights())
    return np.tanh(np.concatenate([states, table[np.asarray(ids)]], axis=-1) @ w + b)


def _numpy_forward(model, ids):
    """The head by hand: the rcnn layer, the maximum over real positions, the softmax."""
    w_out, b_out = (np.asarray(a, np.float64)
                    for a in model.get_layer("probabilities").get_weights())
    rows = []
    for row_ids, row_r in zip(ids, _numpy_rcnn(model, ids)):
        pooled = row_r[np.asarray(row_ids) != 0].max(axis=0)
        logits = pooled @ w_out + b_out
        e = np.exp(logits - logits.max())
        rows.append(e / e.sum())
    return np.array(rows)


def test_rcnn_head_matches_a_numpy_forward_pass():
    model = _model()
    ids = np.array([[3, 5, 7, 2, 0, 0], [4, 4, 9, 11, 6, 1]], np.int32)
    got = np.asarray(model(ids, training=False), np.float64)
    assert model.get_layer("rcnn").get_weights()[0].shape == (2 * 3 + 4, 3)
    np.testing.assert_allclose(got, _numpy_forward(model, ids), rtol=1e-5, atol=1e-6)


def test_rcnn_head_ignores_padding():
    model = _model(pooling="mean")
    short = np.array([[3, 5, 7]], np.int32)
    padded = np.array([[3, 5, 7, 0, 0, 0, 0]], np.int32)
    np.testing.assert_allclose(np.asarray(model(short, training=False)),
                               np.asarray(model(padded, training=False)), rtol=1e-5,
                               atol=1e-6)


def test_rcnn_zero_leaves_the_head_as_it_was():
    names = {layer.name for layer in _model(rcnn=0).layers}
    assert "rcnn" not in names and "states_and_tokens" not in names
    config = _model(rcnn=5).get_config()
    assert config["rcnn"] == 5
    assert SentimentClassifier.from_config(config).get_layer("rcnn").units == 5


@pytest.mark.parametrize("kwargs", [dict(rcnn=-1), dict(rcnn=4, pooling="last")])
def test_rcnn_bad_values_are_refused(kwargs):
    with pytest.raises(ValueError, match="rcnn"):
        _model(**kwargs)


def _cli(tmp_path, *settings):
    return subprocess.run(
        [sys.executable, "-m", "elman.cli", "train", "sentiment", "--out",
         str(tmp_path / "run"), "--reports", str(tmp_path / "reports"),
         "--set", "train.epochs=1", "--set", "encoder.units=8", "--set", "embedding.dim=8",
         *[a for s in settings for a in ("--set", s)]],
        capture_output=True, text=True, timeout=600)


def test_cli_refuses_rcnn_with_last_pooling(tmp_path):
    result = _cli(tmp_path, "head.pooling=last", "head.rcnn=8")
    assert result.returncode == 2, result.stderr
    assert "head.rcnn" in result.stderr and "Traceback" not in result.stderr
    result = _cli(tmp_path, "head.pooling=max", "head.rcnn=-3")
    assert result.returncode == 2 and "head.rcnn" in result.stderr


def test_trace_attention_weights_read_the_rcnn_layer():
    """With attention pooling after the rcnn layer, the reading trace's weights are a
    softmax of u · tanh(W r_t + b) over the text, r_t recomputed with NumPy from the
    encoder's states and the token vectors."""
    import tensorflow as tf

    from elman.tasks.sentiment.trace import PrefixTracer
    from elman.text.tokenize import TextTokenizer

    vocabulary = ["good", "bad", "food", "slow", "service", "not"]
    tokenizer = TextTokenizer(vocabulary=vocabulary)
    keras.utils.set_random_seed(3)
    model = SentimentClassifier(len(vocabulary) + 2, 2, embedding_dim=4, units=3,
                                pooling="attention", hidden=0, head_dropout=0.0,
                                dropout=0.0, rcnn=5)
    tracer = PrefixTracer(tokenizer, [model], ["neg", "pos"], None)
    text = "not good food , slow service"
    trace = tracer.trace([text])[0]
    ids = tokenizer(tf.constant([text])).numpy()[:, :len(trace["tokens"])]
    r = _numpy_rcnn(model, ids)[0]
    w_a, b_a, u = (np.asarray(a, np.float64) for a in model.get_layer("pooling").get_weights())
    scores = np.tanh(r @ w_a + b_a) @ u
    expected = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    got = np.array([step["attention"] for step in trace["steps"]])
    np.testing.assert_allclose(got, expected, atol=2e-6)
