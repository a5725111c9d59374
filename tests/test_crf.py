"""CRF layer: brute force over every tag path, constraints, gradients, saving."""

import itertools

import keras
import numpy as np
import pytest
import tensorflow as tf

from elman.models.crf import CRF

BIO_TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


def _random_crf(num_tags, seed, **kwargs):
    rng = np.random.default_rng(seed)
    crf = CRF(num_tags, **kwargs)
    crf.transitions.assign(rng.normal(size=(num_tags, num_tags)).astype("float32"))
    crf.start_scores.assign(rng.normal(size=num_tags).astype("float32"))
    crf.end_scores.assign(rng.normal(size=num_tags).astype("float32"))
    return crf


def _path_score(potentials, path, transitions, start, end):
    score = start[path[0]] + end[path[-1]]
    score += sum(potentials[i, tag] for i, tag in enumerate(path))
    score += sum(transitions[a, b] for a, b in zip(path, path[1:]))
    return score


def _valid_bio(names):
    previous = "O"
    for name in names:
        if name.startswith("I-") and previous[2:] != name[2:]:
            return False
        previous = name
    return True


def _brute_force(potentials, length, crf, only_valid_bio=False):
    """(log partition, best path, best score) by enumerating every path, in float64."""
    transitions = crf.transitions.numpy().astype("float64")
    start = crf.start_scores.numpy().astype("float64")
    end = crf.end_scores.numpy().astype("float64")
    scores = {}
    for path in itertools.product(range(crf.num_tags), repeat=length):
        if only_valid_bio and not _valid_bio([crf.tag_names[t] for t in path]):
            continue
        scores[path] = _path_score(potentials[:length].astype("float64"), path,
                                   transitions, start, end)
    values = np.array(list(scores.values()))
    log_z = values.max() + np.log(np.exp(values - values.max()).sum())
    best = max(scores, key=scores.get)
    return log_z, best, scores[best]


@pytest.mark.parametrize("num_tags,lengths", [(3, [4, 2, 1]), (4, [3, 3, 1, 2]), (3, [1])])
def test_matches_brute_force(num_tags, lengths):
    crf = _random_crf(num_tags, seed=num_tags)
    rng = np.random.default_rng(10 + num_tags)
    max_length = max(lengths)
    potentials = rng.normal(scale=2.0, size=(len(lengths), max_length, num_tags)).astype("float32")
    mask = np.arange(max_length)[None, :] < np.array(lengths)[:, None]
    tags, best_scores = crf.viterbi_decode(potentials, mask)
    log_z = crf.log_partition(potentials, mask).numpy()
    tags = tags.numpy()
    for b, length in enumerate(lengths):
        expected_log_z, expected_path, expected_best = _brute_force(potentials[b], length, crf)
        np.testing.assert_allclose(log_z[b], expected_log_z, rtol=1e-5, atol=1e-5)
        assert tuple(tags[b, :length]) == expected_path
        assert (tags[b, length:] == 0).all()
        np.testing.assert_allclose(best_scores.numpy()[b], expected_best, rtol=1e-5, atol=1e-5)
    # The likelihood of the best path, and the call() output, agree too.
    gold = np.array(tags)
    expected = [_brute_force(potentials[b], n, crf) for b, n in enumerate(lengths)]
    np.testing.assert_allclose(
        crf.log_likelihood(potentials, gold, mask).numpy(),
        [best - log_z for log_z, _, best in expected], rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(crf(potentials, mask=mask).numpy(), gold)


def test_padding_values_are_ignored():
    crf = _random_crf(3, seed=1)
    rng = np.random.default_rng(2)
    potentials = rng.normal(size=(2, 4, 3)).astype("float32")
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 0]], dtype=bool)
    tags = np.array([[1, 2, 0, 0], [0, 1, 2, 0]])
    changed_potentials = np.where(mask[..., None], potentials, 99.0).astype("float32")
    changed_tags = np.where(mask, tags, 2)
    for fn in (crf.log_partition, crf.viterbi_decode):
        a = keras.ops.convert_to_numpy(fn(potentials, mask)[0] if fn == crf.viterbi_decode
                                       else fn(potentials, mask))
        b = keras.ops.convert_to_numpy(fn(changed_potentials, mask)[0]
                                       if fn == crf.viterbi_decode
                                       else fn(changed_potentials, mask))
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(crf.sequence_score(potentials, tags, mask).numpy(),
                               crf.sequence_score(changed_potentials, changed_tags, mask).numpy(),
                               rtol=1e-6)


def test_bio_constraint_matches_brute_force_over_valid_paths():
    crf = _random_crf(5, seed=3, tag_names=BIO_TAGS, constraint="BIO")
    rng = np.random.default_rng(4)
    lengths = [4, 3, 1]
    potentials = rng.normal(scale=2.0, size=(3, 4, 5)).astype("float32")
    potentials[..., [2, 4]] += 3.0  # make stray I- tags tempting
    mask = np.arange(4)[None, :] < np.array(lengths)[:, None]
    tags = crf(potentials, mask=mask).numpy()
    log_z = crf.log_partition(potentials, mask).numpy()
    for b, length in enumerate(lengths):
        expected_log_z, expected_path, _ = _brute_force(potentials[b], length, crf, True)
        np.testing.assert_allclose(log_z[b], expected_log_z, rtol=1e-5, atol=1e-5)
        assert tuple(tags[b, :length]) == expected_path


def test_bio_constraint_never_decodes_an_invalid_path():
    crf = _random_crf(5, seed=5, tag_names=BIO_TAGS, constraint="BIO")
    rng = np.random.default_rng(6)
    potentials = rng.normal(scale=5.0, size=(64, 7, 5)).astype("float32")
    potentials[..., [2, 4]] += 4.0
    lengths = rng.integers(1, 8, size=64)
    mask = np.arange(7)[None, :] < lengths[:, None]
    tags = crf(potentials, mask=mask).numpy()
    for row, length in zip(tags, lengths):
        assert _valid_bio([BIO_TAGS[t] for t in row[:length]])
    # Without the constraint the same potentials do produce invalid paths.
    free = CRF(5)
    free.set_weights(crf.get_weights())
    free_tags = free(potentials, mask=mask).numpy()
    assert not all(_valid_bio([BIO_TAGS[t] for t in row[:n]])
                   for row, n in zip(free_tags, lengths))


def test_allowed_transitions_bioes():
    names = ["O", "B-X", "I-X", "E-X", "S-X"]
    allowed = CRF(5, tag_names=names, constraint="BIOES").allowed_transitions()
    ok = {(a, b) for a in names for b in names
          if allowed["transitions"][names.index(a), names.index(b)]}
    assert ok == {("O", "O"), ("O", "B-X"), ("O", "S-X"), ("B-X", "I-X"), ("B-X", "E-X"),
                  ("I-X", "I-X"), ("I-X", "E-X"), ("E-X", "O"), ("E-X", "B-X"),
                  ("E-X", "S-X"), ("S-X", "O"), ("S-X", "B-X"), ("S-X", "S-X")}
    assert [n for n, a in zip(names, allowed["start"]) if a] == ["O", "B-X", "S-X"]
    assert [n for n, a in zip(names, allowed["end"]) if a] == ["O", "E-X", "S-X"]
    assert CRF(5).allowed_transitions() is None


def test_gradient_is_finite():
    crf = _random_crf(5, seed=7, tag_names=BIO_TAGS, constraint="BIO")
    rng = np.random.default_rng(8)
    potentials = tf.Variable(rng.normal(size=(3, 4, 5)).astype("float32"))
    mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=bool)
    tags = np.array([[1, 2, 0, 3], [3, 4, 0, 0], [0, 0, 0, 0]])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(crf.negative_log_likelihood(potentials, tags, mask))
    gradients = tape.gradient(loss, [potentials] + crf.trainable_weights)
    assert np.isfinite(loss.numpy()) and loss.numpy() > 0
    for gradient in gradients:
        assert np.isfinite(gradient.numpy()).all()
    # Padded positions get no gradient.
    assert np.abs(gradients[0].numpy()[~mask]).max() == 0.0


def test_arguments_are_validated():
    with pytest.raises(ValueError, match="Expected constraint to be one of"):
        CRF(3, tag_names=["O", "B-X", "I-X"], constraint="bio")
    with pytest.raises(ValueError, match="Expected tag_names with constraint"):
        CRF(3, constraint="BIO")
    with pytest.raises(ValueError, match="Expected 3 tag_names"):
        CRF(3, tag_names=["O", "B-X"])
    with pytest.raises(ValueError, match="Received: 'X-PER'"):
        CRF(2, tag_names=["O", "X-PER"], constraint="BIO")


def test_save_load_round_trip(tmp_path):
    crf = _random_crf(5, seed=9, tag_names=BIO_TAGS, constraint="BIO", name="crf")
    restored = CRF.from_config(crf.get_config())
    assert restored.get_config() == crf.get_config()

    inputs = keras.Input(shape=(None, 5), name="potentials")
    model = keras.Model(inputs, crf(inputs))
    path = tmp_path / "crf.keras"
    model.save(path)
    loaded = keras.models.load_model(path, safe_mode=True)
    loaded_crf = loaded.get_layer("crf")
    assert loaded_crf.tag_names == BIO_TAGS and loaded_crf.constraint == "BIO"
    for a, b in zip(crf.get_weights(), loaded_crf.get_weights()):
        np.testing.assert_array_equal(a, b)
    potentials = np.random.default_rng(10).normal(size=(2, 6, 5)).astype("float32")
    np.testing.assert_array_equal(model.predict_on_batch(potentials),
                                  loaded.predict_on_batch(potentials))
