"""SequenceTagger: fit, predict, batches of different lengths, save/load."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from elman.models.sequence_tagger import SequenceTagger

TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
# Word id -> tag id: a tiny language where every word has one tag, kept valid BIO
# by writing the sentences below by hand.
WORD_TAG = {1: 0, 2: 0, 3: 1, 4: 2, 5: 3, 6: 4, 7: 0}


def _batch(sentences, max_chars=3):
    length = max(len(s) for s in sentences)
    words = np.zeros((len(sentences), length), dtype="int32")
    chars = np.zeros((len(sentences), length, max_chars), dtype="int32")
    for i, sentence in enumerate(sentences):
        words[i, : len(sentence)] = sentence
        for j, word in enumerate(sentence):
            chars[i, j, : 1 + word % max_chars] = (np.arange(1 + word % max_chars) + word) % 9 + 1
    tags = np.vectorize(lambda w: WORD_TAG.get(int(w), 0))(words).astype("int32")
    return words, chars, tags


SHORT = [[3, 4, 1], [5, 2], [1, 5, 6], [7, 3]]
LONG = [[1, 3, 4, 2, 5, 6], [5, 6, 6, 1], [3, 1, 7, 5, 6, 2], [2, 2]]


def _dataset(batches, with_chars):
    def generate():
        for sentences in batches:
            words, chars, tags = _batch(sentences)
            yield ({"words": words, "chars": chars} if with_chars else words), tags

    words_spec = tf.TensorSpec((None, None), tf.int32)
    x_spec = ({"words": words_spec, "chars": tf.TensorSpec((None, None, None), tf.int32)}
              if with_chars else words_spec)
    dataset = tf.data.Dataset.from_generator(
        generate, output_signature=(x_spec, tf.TensorSpec((None, None), tf.int32)))
    return dataset.apply(tf.data.experimental.assert_cardinality(len(batches)))


def _valid_bio(tag_ids):
    previous = "O"
    for name in (TAGS[t] for t in tag_ids):
        if name.startswith("I-") and previous[2:] != name[2:]:
            return False
        previous = name
    return True


@pytest.mark.slow
def test_crf_tagger_with_char_lstm(tmp_path):
    keras.utils.set_random_seed(0)
    model = SequenceTagger(vocabulary_size=8, num_tags=5, embedding_dim=8, units=8, dropout=0.1,
                           head="crf", char_features="lstm", char_vocabulary_size=10,
                           char_embedding_dim=4, char_units=4, tag_names=TAGS, constraint="BIO")
    model.compile(optimizer=keras.optimizers.Adam(0.05),
                  metrics=["sparse_categorical_accuracy"])
    # The second batch is longer (in words and in chars) than the first.
    history = model.fit(_dataset([SHORT, LONG], with_chars=True), epochs=8, shuffle=False,
                        verbose=0)
    losses = history.history["loss"]
    assert np.isfinite(losses).all() and losses[-1] < 0.5 * losses[0]
    assert history.history["sparse_categorical_accuracy"][-1] > 0.8

    words, chars, tags = _batch(LONG + [[3, 4, 4, 4, 7, 5, 6, 1]], max_chars=5)
    predicted = model.predict_on_batch({"words": words, "chars": chars})
    assert predicted.shape == words.shape and predicted.dtype == np.int32
    assert (predicted[words == 0] == 0).all()
    for row, sentence in zip(predicted, words):
        assert _valid_bio(row[sentence > 0])

    path = tmp_path / "tagger.keras"
    model.save(path)
    loaded = keras.models.load_model(path, safe_mode=True)
    assert loaded.get_config() == model.get_config()
    assert loaded.get_layer("potentials").units == 5 and loaded.crf.constraint == "BIO"
    np.testing.assert_array_equal(loaded.predict_on_batch({"words": words, "chars": chars}),
                                  predicted)
    # Reloaded compiled, with the optimizer state.
    assert loaded.compiled and int(loaded.optimizer.iterations) == 16
    for a, b in zip(loaded.optimizer.variables, model.optimizer.variables):
        np.testing.assert_array_equal(a, b)


def test_softmax_tagger_with_char_cnn(tmp_path):
    keras.utils.set_random_seed(1)
    model = SequenceTagger(vocabulary_size=8, num_tags=5, embedding_dim=8, cell="gru", units=8,
                           char_features="cnn", char_vocabulary_size=10, char_embedding_dim=4,
                           char_units=6)
    # Eagerly: tracing a train function costs more than three tiny steps.
    model.compile(optimizer=keras.optimizers.Adam(0.05), run_eagerly=True)
    words, chars, tags = _batch(SHORT + LONG)
    tags[words == 0] = -1  # padding labels are never read
    history = model.fit({"words": words, "chars": chars}, tags, epochs=3, batch_size=8,
                        verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    predicted = model.predict({"words": words, "chars": chars}, verbose=0)
    potentials = model({"words": words, "chars": chars})
    expected = np.where(words > 0, np.argmax(potentials, axis=-1), 0)
    np.testing.assert_array_equal(predicted, expected)

    path = tmp_path / "tagger.keras"
    model.save(path)
    loaded = keras.models.load_model(path, safe_mode=True)
    np.testing.assert_array_equal(
        loaded.predict({"words": words, "chars": chars}, verbose=0), predicted)


def test_words_only_tagger_config_round_trip():
    model = SequenceTagger(vocabulary_size=8, num_tags=3, embedding_dim=4, units=4,
                           bidirectional=False, head="crf")
    clone = SequenceTagger.from_config(model.get_config())
    assert clone.get_config() == model.get_config()
    words = np.array([[1, 2, 3, 0], [4, 0, 0, 0]], dtype="int32")
    assert model(words).shape == (2, 4, 3)
    assert model.predict_on_batch(words).shape == (2, 4)


def test_arguments_are_validated():
    with pytest.raises(ValueError, match="Expected head to be one of"):
        SequenceTagger(10, 3, head="crf2")
    with pytest.raises(ValueError, match="Expected char_features to be one of"):
        SequenceTagger(10, 3, char_features="bilstm")
    with pytest.raises(ValueError, match="Expected char_vocabulary_size to be a positive int"):
        SequenceTagger(10, 3, char_features="cnn")
    with pytest.raises(ValueError, match="Expected head='crf' with constraint='BIO'"):
        SequenceTagger(10, 3, tag_names=["O", "B-X", "I-X"], constraint="BIO")
    with pytest.raises(ValueError, match="Expected cell to be one of"):
        SequenceTagger(10, 3, cell="lsmt")
    model = SequenceTagger(10, 3, embedding_dim=2, units=2)
    with pytest.raises(ValueError, match="Expected no loss"):
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")


@pytest.mark.parametrize("char_features", ["none", "lstm", "cnn"])
def test_padding_never_changes_the_potentials_of_real_words(char_features):
    # Regression: keras.layers.Concatenate ORs masks, so joining the char features
    # marked padded words as real and the backward LSTM read the padding first.
    keras.utils.set_random_seed(2)
    model = SequenceTagger(vocabulary_size=8, num_tags=5, embedding_dim=4, units=4,
                           head="softmax", char_features=char_features,
                           char_vocabulary_size=10, char_embedding_dim=4, char_units=4)
    words, chars, _ = _batch(SHORT)
    padded_words = np.pad(words, [[0, 0], [0, 4]])
    padded_chars = np.pad(chars, [[0, 0], [0, 4], [0, 0]])

    def potentials(w, c):
        return np.asarray(model({"words": w, "chars": c} if char_features != "none" else w))

    short, padded = potentials(words, chars), potentials(padded_words, padded_chars)
    real = words > 0
    np.testing.assert_allclose(padded[:, : words.shape[1]][real], short[real], atol=1e-6)
