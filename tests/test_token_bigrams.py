"""Token-pair features (`features.bigrams` for sentiment): the codes, the pair list, the
lookup, what the classifier gains from them, and a trained, exported run."""

import json
import subprocess
import sys

import keras
import numpy as np
import pytest

from elman import cli
from elman.models.sentiment_classifier import SentimentClassifier
from elman.models.token_bigrams import TokenBigrams, frequent_pairs, pair_codes
from tests.conftest import TINY_SETTINGS, train_tiny_sentiment
from tests.test_sentiment_chars import FRESH_LOAD


def test_pair_codes_by_hand():
    ids = np.array([[3, 4, 5, 0], [7, 0, 0, 0], [0, 0, 0, 0]])
    # V = 10: (3,4) → 34, (4,5) → 45, (5,<end>) → 50; (7,<end>) → 70; padding → 0
    expected = [[34, 45, 50, 0], [70, 0, 0, 0], [0, 0, 0, 0]]
    assert np.asarray(pair_codes(ids, 10)).tolist() == expected
    # codes are int64: V² beyond int32 does not wrap
    big = np.asarray(pair_codes(np.array([[70000, 69999]]), 70001))
    assert big.tolist() == [[70000 * 70001 + 69999, 69999 * 70001]]


def test_frequent_pairs_count_and_rank():
    sequences = [[3, 4, 5], [3, 4], [4, 5, 6], [9]]
    # counts: 34 ×2, 45 ×2, 50 ×1, 40 ×1, 56 ×1, 60 ×1, 90 ×1
    assert frequent_pairs(sequences, 10, min_count=2) == [34, 45]
    every = frequent_pairs(sequences, 10, min_count=1)
    assert every[:2] == [34, 45] and sorted(every[2:]) == every[2:] == [40, 50, 56, 60, 90]
    assert frequent_pairs(sequences, 10, min_count=1, max_pairs=4) == [34, 45]
    assert frequent_pairs([[]], 10) == []


def test_lookup_rows_padding_oov_and_known():
    layer = TokenBigrams(10, [45, 34], embedding_dim=3)
    ids = np.array([[3, 4, 5, 0], [4, 5, 6, 0]])
    # 34 is pairs[1] → row 3, 45 is pairs[0] → row 2, unknown → 1, padding → 0
    assert np.asarray(layer.indices(ids)).tolist() == [[3, 2, 1, 0], [2, 1, 1, 0]]
    vectors = np.asarray(layer(ids))
    table = layer.embedding.embeddings.numpy()
    np.testing.assert_array_equal(vectors[0, 0], table[3])
    np.testing.assert_array_equal(vectors[1, 1], vectors[1, 2])  # both OOV: one vector
    empty = TokenBigrams(10, [], embedding_dim=3)  # nothing frequent: all real are OOV
    assert np.asarray(empty.indices(ids)).tolist() == [[1, 1, 1, 0], [1, 1, 1, 0]]


def test_bad_pairs_are_refused():
    with pytest.raises(ValueError, match="pair codes"):
        TokenBigrams(10, [34, 34])
    with pytest.raises(ValueError, match="pair codes"):
        TokenBigrams(10, [0])
    with pytest.raises(ValueError, match="vocabulary_size"):
        TokenBigrams(1, [3])


def _model(**kwargs):
    keras.utils.set_random_seed(3)
    return SentimentClassifier(vocabulary_size=10, num_classes=2, embedding_dim=4, units=4,
                               hidden=0, head_dropout=0.0, dropout=0.0, pooling="max",
                               **kwargs)


def test_classifier_sees_which_pair_a_token_is_in(tmp_path):
    # the same tokens, ordered so that their pairs differ: (3,4),(4,5),(5,·) against
    # (3,5),(5,4),(4,·); with pairs 34, 45, 35 known (rows 2, 3, 4)
    ids = np.array([[3, 4, 5, 0], [3, 5, 4, 0]], np.int32)
    model = _model(bigram_pairs=[34, 45, 35], bigram_dim=3)
    layer = model.get_layer("bigrams")
    rows = np.asarray(layer.indices(ids))
    assert rows.tolist() == [[2, 3, 1, 0], [4, 1, 1, 0]]
    probs = np.asarray(model(ids))
    # padding changes nothing: a longer pad gives the same probabilities
    np.testing.assert_allclose(model(np.pad(ids, [[0, 0], [0, 3]])), probs, atol=1e-6)
    # the pair vectors reach the output: changing pair row 2 changes sentence 0 only
    table = layer.embedding.embeddings.numpy()
    table[2] += 5.0
    layer.embedding.embeddings.assign(table)
    moved = np.asarray(model(ids))
    assert not np.allclose(moved[0], probs[0])
    np.testing.assert_allclose(moved[1], probs[1], atol=1e-6)
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras", safe_mode=True)
    np.testing.assert_allclose(loaded(ids), moved, atol=1e-6)
    assert loaded.get_layer("bigrams").pairs == [34, 45, 35]


def test_trained_with_bigrams_exported_and_resumed(tmp_path, tiny_sentiment):
    settings = ["--set", "features.bigrams=true", "--set", "features.bigram_dim=6"]
    train_tiny_sentiment(tmp_path, tiny_sentiment, "run", *settings, "--set", "train.epochs=1")
    # the second epoch, the same pairs (recounted from the same training texts)
    run = train_tiny_sentiment(tmp_path, tiny_sentiment, "run", *settings, resume=True)
    history = (run / "logs" / "training.csv").read_text().splitlines()
    assert len(history) == 3  # header and two epochs
    report = (tmp_path / "reports" / "sentiment" / "run" / "report.md").read_text()
    assert "token-pair embedding 6 over" in report
    texts = ["服务很好", "great food", "太慢了"]
    out = subprocess.run([sys.executable, "-c", FRESH_LOAD, str(run), json.dumps(texts)],
                         capture_output=True, text=True, check=True)
    probs = json.loads(out.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(probs["keras"], probs["saved_model"], atol=1e-5)
    assert np.asarray(probs["keras"]).shape == (3, 2)


def test_bigrams_with_a_pretrained_encoder_is_refused(tmp_path, tiny_sentiment):
    code = cli.main(["train", "sentiment", "--data", str(tiny_sentiment["train"]),
                     "--out", str(tmp_path / "run"), *TINY_SETTINGS,
                     "--set", "features.bigrams=true", "--set", "pretrain.epochs=1"])
    assert code == 2


def test_adversarial_step_moves_the_pair_vectors_too():
    # the perturbation sits after the join: it sees token (4) and pair (3) dimensions,
    # and its recorded vectors' gradient reaches the pair rows the batch used
    import tensorflow as tf

    model = _model(bigram_pairs=[34, 45], bigram_dim=3, adversarial=0.1)
    noise = model.get_layer("adversarial")
    ids = np.array([[3, 4, 5, 0]], np.int32)
    with tf.GradientTape() as tape:
        probs = model(ids, training=True)
        vectors, _ = noise.seen()
        loss = -tf.math.log(probs[0, 1])
    gradient = tape.gradient(loss, vectors)
    assert vectors.shape[-1] == 4 + 3
    assert float(tf.reduce_max(tf.abs(gradient[0, 0, 4:]))) > 0.0
