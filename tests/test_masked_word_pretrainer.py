"""Masked-word pretraining: the hiding layer, the loss, learning from context, weight transfer."""

import keras
import numpy as np
import pytest

from elman.models.masked_word_pretrainer import HideWords, MaskedWordPretrainer, transfer_weights
from elman.models.sentiment_classifier import SentimentClassifier


def test_hide_words_hides_the_asked_share_and_never_padding():
    rng = np.random.default_rng(0)
    ids = rng.integers(2, 50, size=(400, 500)).astype("int32")
    ids[:, 400:] = 0  # 160,000 real words, 40,000 padding positions
    layer = HideWords(rate=0.3, vocabulary_size=50, seed=7)
    seen, hidden = (np.asarray(t) for t in layer(ids))
    real = ids != 0
    assert not hidden[~real].any() and (seen[~real] == 0).all()
    kept = hidden == 0
    np.testing.assert_array_equal(seen[kept], ids[kept])  # shown words are untouched
    # binomial standard errors: 0.0011 for the hidden share, 0.0018 / 0.0014 below
    assert abs(hidden[real].mean() - 0.3) < 0.006
    hid = hidden == 1
    assert abs(np.mean(seen[hid] == 1) - 0.8) < 0.01
    # a hidden word stays itself 10% of the time, plus a random draw that hits it (1/48)
    assert abs(np.mean(seen[hid] == ids[hid]) - (0.1 + 0.1 / 48)) < 0.008
    assert seen[hid].min() >= 1 and seen[hid].max() < 50
    again = np.asarray(layer(ids)[1])
    assert (again != hidden).any()  # each call draws new positions


def test_loss_is_the_mean_cross_entropy_of_the_hidden_words_only():
    keras.utils.set_random_seed(1)
    model = MaskedWordPretrainer(vocabulary_size=12, embedding_dim=4, units=4, rate=0.5,
                                 seed=3)
    ids = np.array([[2, 3, 4, 5, 6, 0], [7, 8, 9, 10, 11, 3]], "int32")
    logits, hidden = (np.asarray(t, "float64") for t in model(ids))
    assert hidden.sum() > 0
    # oracle: log-softmax by hand, averaged over hidden positions
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, ids[..., None], axis=-1)[..., 0]
    expected = -(picked * hidden).sum() / hidden.sum()
    loss = float(model.compute_loss(x=ids, y_pred=(logits.astype("float32"),
                                                   hidden.astype("float32"))))
    assert loss == pytest.approx(expected, rel=1e-5)
    # uniform logits: every hidden word costs log(V), whatever is hidden
    flat = float(model.compute_loss(x=ids, y_pred=(np.zeros((2, 6, 12), "float32"),
                                                   hidden.astype("float32"))))
    assert flat == pytest.approx(np.log(12), rel=1e-6)


@pytest.mark.slow
def test_pretraining_learns_to_restore_words_from_their_context():
    # sentences count up (mod 20): a hidden word is fixed by either neighbour
    keras.utils.set_random_seed(2)
    rng = np.random.default_rng(2)
    starts = rng.integers(0, 20, size=(1024, 1))
    ids = ((starts + np.arange(8)) % 20 + 2).astype("int32")
    model = MaskedWordPretrainer(vocabulary_size=22, embedding_dim=16, units=32, dropout=0.0,
                                 rate=0.2, seed=5)
    model.compile(optimizer=keras.optimizers.Adam(0.01))
    model.fit(ids, epochs=6, batch_size=32, verbose=0)
    test = ((rng.integers(0, 20, size=(256, 1)) + np.arange(8)) % 20 + 2).astype("int32")
    logits, hidden = (np.asarray(t) for t in model(test))
    hid = hidden == 1
    accuracy = np.mean(logits.argmax(axis=-1)[hid] == test[hid])
    assert accuracy > 0.9, accuracy  # chance is 1 in 20


def test_transfer_weights_copies_embedding_and_encoder():
    keras.utils.set_random_seed(3)
    settings = dict(embedding_dim=6, units=5, num_layers=2, cell="gru")
    pretrainer = MaskedWordPretrainer(vocabulary_size=30, **settings)
    classifier = SentimentClassifier(vocabulary_size=30, num_classes=3, pooling="max",
                                     **settings)
    before = [w.copy() for w in classifier.get_layer("probabilities").get_weights()]
    transfer_weights(pretrainer, classifier)
    for name in ("embedding", "encoder"):
        source, target = (m.get_layer(name).get_weights() for m in (pretrainer, classifier))
        assert len(source) == len(target) > 0
        for a, b in zip(source, target):
            np.testing.assert_array_equal(a, b)
    for a, b in zip(before, classifier.get_layer("probabilities").get_weights()):
        np.testing.assert_array_equal(a, b)  # the head is left alone
    fresh = SentimentClassifier(vocabulary_size=30, num_classes=3, pooling="max", **settings)
    encoder_before = [w.copy() for w in fresh.get_layer("encoder").get_weights()]
    transfer_weights(pretrainer, fresh, ["embedding"])  # the embedding alone
    np.testing.assert_array_equal(fresh.get_layer("embedding").get_weights()[0],
                                  pretrainer.get_layer("embedding").get_weights()[0])
    for a, b in zip(encoder_before, fresh.get_layer("encoder").get_weights()):
        np.testing.assert_array_equal(a, b)
    other = SentimentClassifier(vocabulary_size=30, num_classes=2, embedding_dim=6, units=7,
                                num_layers=2, cell="gru")
    with pytest.raises(ValueError, match="encoder"):
        transfer_weights(pretrainer, other)


def test_pretrainer_round_trips_in_safe_mode(tmp_path):
    keras.utils.set_random_seed(4)
    model = MaskedWordPretrainer(vocabulary_size=15, embedding_dim=4, units=3, seed=9,
                                 embedding_trainable=False)
    path = tmp_path / "p.keras"
    model.save(path)
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert isinstance(loaded, MaskedWordPretrainer)
    assert not loaded.get_layer("embedding").trainable
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_array_equal(a, b)
