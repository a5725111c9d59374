"""Tests for pipelines/tasks/lm/generation.py (generation and language-model scores) against
the naive reference generator of pipelines/bench/reference_generation.py."""

import math

import keras
import numpy as np
import pytest

from elman.bench import reference_generation
from elman.models.language_model import LanguageModel
from elman.tasks.lm import generation
from elman.tasks.lm.data import make_tbptt_dataset

VOCAB = 13


@pytest.fixture(scope="module")
def trained_model():
    """A tiny LSTM trained for a few steps on a repeating stream."""
    keras.utils.set_random_seed(7)
    model = LanguageModel(VOCAB, embedding_dim=6, units=12, num_layers=2, stateful=True)
    model.compile(
        optimizer=keras.optimizers.Adam(0.03, global_clipnorm=1.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0),
    )
    stream = np.tile(np.array([2, 5, 3, 9, 4, 12, 6], dtype="int32"), 20)
    model.fit(make_tbptt_dataset(stream, batch_size=4, chunk_len=8), epochs=3, verbose=0)
    return model


def test_state_carrying_generation_equals_naive(trained_model):
    prefixes = np.array([[2, 5, 3], [9, 4, 12], [7, 7, 1]], dtype="int32")
    fast = generation.generate(trained_model, prefixes, length=15)
    naive = reference_generation.generate_naive(trained_model, prefixes, length=15)
    assert fast.shape == (3, 15) and fast.dtype == np.int32
    np.testing.assert_array_equal(fast, naive)
    assert (fast > 0).all()
    single = generation.generate(trained_model, prefixes[0], length=15)
    np.testing.assert_array_equal(single, fast[0])
    assert generation.generate(trained_model, prefixes, length=0).shape == (3, 0)
    with pytest.raises(ValueError, match="without padding"):
        generation.generate(trained_model, [[2, 0, 3]], length=3)


def test_sampling_is_reproducible_with_a_seed(trained_model):
    prefixes = np.array([[2, 5], [3, 9]], dtype="int32")
    a = generation.generate(trained_model, prefixes, 30, temperature=2.0, seed=123)
    b = generation.generate(trained_model, prefixes, 30, temperature=2.0, seed=123)
    c = generation.generate(trained_model, prefixes, 30, temperature=2.0, seed=124)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert (a > 0).all()


def test_benchmark_generation_reports_identical_tokens(trained_model):
    result = reference_generation.benchmark_generation(trained_model, np.array([[2, 5, 3]]),
                                                       length=8)
    assert result["identical"] is True
    assert result["ratio"] > 0 and result["tokens_per_s_state"] > 0


def _numpy_cross_entropy(logits, y):
    logits = logits.astype(np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, y[..., None], axis=-1)[..., 0]
    mask = y != 0
    return -(picked * mask).sum() / mask.sum()


def test_perplexity_and_bits_per_character_match_numpy(trained_model):
    rng = np.random.RandomState(0)
    x = rng.randint(1, VOCAB, size=(2, 4, 6)).astype("int32")
    y = rng.randint(1, VOCAB, size=(2, 4, 6)).astype("int32")
    x[0, 1, 4:] = 0  # a right-padded row: its targets are padding too
    y[0, 1, 3:] = 0
    batches = [(x[0], y[0]), (x[1], y[1])]
    logits = np.concatenate(
        [keras.ops.convert_to_numpy(trained_model(xb)) for xb, _ in batches]
    )
    expected = _numpy_cross_entropy(logits, np.concatenate([y[0], y[1]]))
    assert generation.perplexity(trained_model, batches) == pytest.approx(
        math.exp(expected), rel=1e-5
    )
    assert generation.bits_per_character(trained_model, batches) == pytest.approx(
        expected / math.log(2), rel=1e-5
    )


def test_perplexity_carries_state_across_tbptt_chunks(trained_model):
    stream = np.random.RandomState(1).randint(1, VOCAB, size=2 * 9 + 1).astype("int32")
    x_full = stream[:18].reshape(2, 9)
    y_full = stream[1:19].reshape(2, 9)
    expected = _numpy_cross_entropy(keras.ops.convert_to_numpy(trained_model(x_full)), y_full)
    chunked = make_tbptt_dataset(stream, batch_size=2, chunk_len=4)
    got = generation.mean_cross_entropy(trained_model, chunked, carry_states=True)
    assert got == pytest.approx(expected, rel=1e-5)
