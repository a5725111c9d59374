"""WordDropout, the tagger's word_dropout option, and its token-exact accuracy metric."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from elman.models.sequence_tagger import SequenceTagger
from elman.models.word_dropout import WordDropout


def test_word_dropout_replaces_words_only_while_training():
    ids = np.array([[5, 6, 7, 8, 9, 0, 0]] * 200, dtype="int32")
    layer = WordDropout(0.3, oov_id=1, seed=3)
    np.testing.assert_array_equal(layer(ids), ids)  # inference: unchanged
    out = np.asarray(layer(ids, training=True))
    assert (out[ids == 0] == 0).all()  # padding stays padding
    changed = out != ids
    assert (out[changed] == 1).all()
    assert 0.25 < changed[ids != 0].mean() < 0.35
    assert not np.array_equal(out, np.asarray(layer(ids, training=True)))  # a new draw
    again = WordDropout.from_config(layer.get_config())
    assert again.get_config() == layer.get_config()
    with pytest.raises(ValueError, match="Expected rate to be in"):
        WordDropout(1.0)


def test_tagger_with_word_dropout_round_trips(tmp_path):
    keras.utils.set_random_seed(0)
    model = SequenceTagger(vocabulary_size=10, num_tags=3, embedding_dim=4, units=4,
                           word_dropout=0.25)
    model.compile(optimizer="adam", metrics=["sparse_categorical_accuracy"])
    words = np.array([[2, 3, 4, 0], [5, 6, 0, 0]], dtype="int32")
    model.fit(words, np.array([[1, 2, 0, 0], [1, 0, 0, 0]]), epochs=1, verbose=0)
    path = tmp_path / "tagger.keras"
    model.save(path)
    loaded = keras.models.load_model(path, safe_mode=True)
    assert loaded.get_config()["word_dropout"] == 0.25
    np.testing.assert_array_equal(loaded.predict_on_batch(words), model.predict_on_batch(words))
    with pytest.raises(ValueError, match="word_dropout"):
        SequenceTagger(vocabulary_size=10, num_tags=3, word_dropout=-0.1)


def test_compiled_accuracy_is_the_token_accuracy_across_batch_lengths():
    keras.utils.set_random_seed(1)
    model = SequenceTagger(vocabulary_size=12, num_tags=4, embedding_dim=4, units=4)
    model.compile(optimizer="adam", metrics=[keras.metrics.SparseCategoricalAccuracy(
        name="accuracy")])
    rng = np.random.default_rng(0)
    batches = []
    for length, size in ((2, 5), (9, 3)):  # short sentences in one batch, long in the other
        words = rng.integers(1, 12, size=(size, length)).astype("int32")
        words[0, length // 2:] = 0  # some padding
        words[:, 0] = np.maximum(words[:, 0], 1)
        batches.append((words, rng.integers(0, 4, size=(size, length)).astype("int32")))
    right = total = 0
    for words, tags in batches:
        predicted = model.predict_on_batch(words)
        real = words != 0
        right += int((predicted[real] == tags[real]).sum())
        total += int(real.sum())

    def generate():
        yield from batches

    spec = tf.TensorSpec((None, None), tf.int32)
    dataset = tf.data.Dataset.from_generator(generate, output_signature=(spec, spec)).apply(
        tf.data.experimental.assert_cardinality(len(batches)))
    scores = model.evaluate(dataset, verbose=0, return_dict=True)
    assert scores["accuracy"] == pytest.approx(right / total, abs=1e-6)
