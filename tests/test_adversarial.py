"""Adversarial training on the embeddings (elman.models.adversarial, SentimentClassifier).

The oracle for a training step is built from a plain classifier (no perturbation
layer): batches use every word id at most once, so moving a sentence's word vectors
by delta is the same as moving those rows of the embedding matrix, and the expected
update is -lr * (clean gradient + gradient of the row-shifted copy).
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from elman.models.adversarial import adversarial_direction
from elman.models.sentiment_classifier import SentimentClassifier

SMALL = dict(embedding_dim=6, units=5, pooling="max", hidden=4, dropout=0.0, head_dropout=0.0)


def _batch():
    rng = np.random.default_rng(3)
    ids = rng.permutation(np.arange(1, 30))[:20].reshape(4, 5)  # each id at most once
    ids[1, 3:] = 0  # padding
    ids[3, 4:] = 0
    return ids.astype("int32"), np.array([0, 1, 1, 0], dtype="int32")


def _numpy_direction(vectors, gradient, mask, epsilon):
    out = np.zeros_like(vectors)
    for i in range(len(vectors)):
        v, g = vectors[i][mask[i]], gradient[i][mask[i]]
        out[i][mask[i]] = epsilon * np.sqrt((v ** 2).sum()) * g / np.sqrt((g ** 2).sum())
    return out


def test_direction_matches_a_hand_formula():
    rng = np.random.default_rng(0)
    vectors, gradient = rng.normal(size=(2, 2, 3, 4)).astype("float32")
    mask = np.array([[True, True, False], [True, False, False]])
    got = adversarial_direction(vectors, gradient, mask, 0.5)
    np.testing.assert_allclose(got, _numpy_direction(vectors, gradient, mask, 0.5), rtol=1e-5)
    assert np.all(np.asarray(got)[~mask] == 0)
    # its size is half the sentence's own norm, whatever the gradient's scale
    first = np.asarray(got)[0][mask[0]]
    assert np.sqrt((first ** 2).sum()) == pytest.approx(
        0.5 * np.sqrt((vectors[0][mask[0]] ** 2).sum()), rel=1e-5)


def _loss_and_grads(model, ids, y):
    with tf.GradientTape() as tape:
        loss = keras.losses.sparse_categorical_crossentropy(y, model(ids, training=True))
        loss = tf.reduce_mean(loss)
    return float(loss), [tf.convert_to_tensor(g) for g in
                         tape.gradient(loss, model.trainable_weights)]


def shift_rows(model, weights, embedding, ids, delta):
    """`model` with `weights`, then the rows of its embedding (layer `embedding`) that
    `ids` use moved by `delta` [batch, steps, dim] (padding positions ignored)."""
    model.set_weights(weights)
    layer = model.get_layer(embedding)
    moved = layer.embeddings.numpy().copy()
    mask = ids != 0
    moved[ids[mask]] += delta[mask]
    layer.embeddings.assign(moved)
    return model


def check_one_step(build, ids, y, loss_and_grads, embedding, compile_kwargs):
    """Trains `build(adversarial=0.3)` on one batch with SGD and checks every weight
    against the oracle: a plain model's clean gradient plus the gradient of a plain
    model whose embedding rows (layer `embedding`) were moved by the NumPy direction.

    `loss_and_grads(model, ids, y)` gives (loss, gradients) of a plain model.
    """
    epsilon, lr = 0.3, 0.5
    model = build(adversarial=epsilon)
    plain = build()
    plain.set_weights(model.get_weights())
    start = model.get_weights()
    before = {w.path: w.numpy().copy() for w in model.trainable_weights}

    # clean loss and gradients; the per-position vector gradient is the embedding
    # matrix's gradient row for that position's (unique) id
    clean_loss, clean = loss_and_grads(plain, ids, y)
    names = [w.path for w in plain.trainable_weights]
    embeddings = plain.get_layer(embedding).embeddings
    rows = clean[names.index(embeddings.path)].numpy()
    matrix = embeddings.numpy()
    mask = ids != 0
    delta = _numpy_direction(matrix[ids], rows[ids], mask, epsilon)

    shifted = shift_rows(build(), start, embedding, ids, delta)
    adversarial_loss, adversarial = loss_and_grads(shifted, ids, y)
    assert adversarial_loss > clean_loss  # the step goes up the loss

    model.compile(optimizer=keras.optimizers.SGD(learning_rate=lr), **compile_kwargs)
    reported = model.train_on_batch(ids, y)
    assert reported == pytest.approx(clean_loss, rel=1e-5)  # the clean loss is reported
    assert [w.path for w in model.trainable_weights] == names
    for w, g1, g2 in zip(model.trainable_weights, clean, adversarial):
        np.testing.assert_allclose(w.numpy(), before[w.path] - lr * (g1.numpy() + g2.numpy()),
                                   atol=2e-6, err_msg=w.path)
    return names


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_a_training_step_minimises_clean_plus_adversarial_loss(cell):
    ids, y = _batch()
    keras.utils.set_random_seed(1)
    check_one_step(lambda **kw: SentimentClassifier(30, 2, cell=cell, **SMALL, **kw), ids, y,
                   _loss_and_grads, "embedding", {"loss": "sparse_categorical_crossentropy"})


@pytest.mark.parametrize("kind", ["adversarial", "virtual_adversarial"])
def test_it_is_the_identity_at_inference_and_survives_safe_mode(tmp_path, kind):
    ids, _ = _batch()
    keras.utils.set_random_seed(2)
    model = SentimentClassifier(30, 2, **{kind: 0.1}, **SMALL)
    plain = SentimentClassifier(30, 2, **SMALL)
    plain.set_weights(model.get_weights())
    np.testing.assert_allclose(model.predict(ids, verbose=0), plain.predict(ids, verbose=0),
                               atol=1e-6)
    path = tmp_path / "adv.keras"
    model.save(path)
    from elman import models

    models.import_all()
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert (loaded.adversarial, loaded.virtual_adversarial) == (
        (0.1, 0.0) if kind == "adversarial" else (0.0, 0.1))
    np.testing.assert_allclose(loaded.predict(ids, verbose=0), model.predict(ids, verbose=0),
                               atol=1e-6)


@pytest.mark.parametrize("kind", ["adversarial", "virtual_adversarial"])
def test_negative_epsilon_is_refused(kind):
    with pytest.raises(ValueError, match=f"Expected {kind} >= 0"):
        SentimentClassifier(30, 2, **{kind: -0.1}, **SMALL)


TWO_CPUS = r"""
import json, sys
import numpy as np, tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import keras
from elman.models.sentiment_classifier import SentimentClassifier
settings, ids, y = json.loads(sys.argv[1])
ids, y = np.array(ids, dtype="int32"), np.array(y, dtype="int32")
keras.utils.set_random_seed(1)
"""


def run_on_two_cpus(body):
    """Runs TWO_CPUS + body in a fresh interpreter (logical devices must be set before
    TensorFlow starts) on the test batch and SMALL settings; returns its last line's JSON."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    ids, y = _batch()
    done = subprocess.run(
        [sys.executable, "-c", TWO_CPUS + body, json.dumps([SMALL, ids.tolist(), y.tolist()])],
        cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, timeout=300,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


MIRRORED = r"""
single = SentimentClassifier(30, 2, adversarial=0.3, **settings)
start = single.get_weights()
single.compile(optimizer=keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy")
one = single.fit(ids, y, batch_size=len(y), shuffle=False, verbose=0).history["loss"][0]
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    mirrored = SentimentClassifier(30, 2, adversarial=0.3, **settings)
    mirrored.set_weights(start)
    mirrored.compile(optimizer=keras.optimizers.SGD(0.5), loss="sparse_categorical_crossentropy")
two = mirrored.fit(ids, y, batch_size=len(y), shuffle=False, verbose=0).history["loss"][0]
moved = max(float(np.abs(a - b).max()) for a, b in zip(single.get_weights(), start))
diff = max(float(np.abs(a - b).max()) for a, b in zip(single.get_weights(), mirrored.get_weights()))
print(json.dumps({"replicas": strategy.num_replicas_in_sync, "loss": [one, two],
                  "moved": moved, "diff": diff}))
"""


@pytest.mark.slow
def test_two_replicas_take_the_same_step_as_one_device():
    """Each replica perturbs its own half of the batch (the perturbation is per sentence,
    so the split does not change it); the summed update must equal one device's."""
    out = run_on_two_cpus(MIRRORED)
    assert out["replicas"] == 2
    assert out["loss"][1] == pytest.approx(out["loss"][0], rel=1e-5)
    assert out["moved"] > 1e-3  # the step did something
    assert out["diff"] < 1e-5


@pytest.mark.parametrize("task, missing, key", [
    ("sentiment", "missing.csv", "adversarial"), ("tagging", "missing.conll", "adversarial"),
    ("sentiment", "missing.csv", "virtual_adversarial")])
def test_multi_worker_refuses_it_before_reading_data(tmp_path, task, missing, key):
    from elman import config as config_lib
    from elman.errors import UserError
    from elman import tasks
    from elman.core.run import run

    cfg = config_lib.load_config(task, overrides=[
        f"embedding.{key}=0.1", "train.strategy=multi-worker",
        f"data.train={tmp_path / missing}"])
    with pytest.raises(UserError, match=f"embedding.{key} is not available with "
                       "train.strategy 'multi-worker'"):
        run(tasks.get(task), cfg, tmp_path / "run", tmp_path / "reports")
    assert not (tmp_path / "run").exists()


TAGGER = dict(embedding_dim=6, units=5, dropout=0.0)


def _tagger_loss_and_grads(model, ids, tags):
    with tf.GradientTape() as tape:
        loss = model.compute_loss(ids, tags, model(ids, training=True), training=True)
    return float(loss), [tf.convert_to_tensor(g) for g in
                         tape.gradient(loss, model.trainable_weights)]


@pytest.mark.parametrize("head", ["softmax", "crf"])
def test_the_tagger_step_minimises_clean_plus_adversarial_loss(head):
    """The same oracle for SequenceTagger (the shared AdversarialTraining step): its
    loss, token cross-entropy or the CRF's negative log-likelihood, is its own."""
    from elman.models.sequence_tagger import SequenceTagger

    ids, _ = _batch()
    tags = (np.arange(ids.size).reshape(ids.shape) % 3).astype("int32")
    keras.utils.set_random_seed(4)
    names = check_one_step(lambda **kw: SequenceTagger(30, 3, head=head, **TAGGER, **kw),
                           ids, tags, _tagger_loss_and_grads, "word_embedding", {})
    assert len(names) > 4 and (head == "softmax" or any("crf" in n for n in names))


def test_the_tagger_perturbs_every_joined_feature_and_is_the_identity_at_inference(tmp_path):
    from elman import models
    from elman.models.sequence_tagger import SequenceTagger

    ids, _ = _batch()
    chars = (np.arange(ids.size * 3).reshape(*ids.shape, 3) % 11 + 1).astype("int32")
    chars[ids == 0] = 0
    x = {"words": ids, "chars": chars}
    settings = dict(TAGGER, head="crf", char_features="cnn", char_vocabulary_size=12,
                    char_embedding_dim=4, char_units=3)
    keras.utils.set_random_seed(5)
    model = SequenceTagger(30, 3, adversarial=0.2, **settings)
    plain = SequenceTagger(30, 3, **settings)
    plain.set_weights(model.get_weights())
    # the perturbed vectors are the joined word + char vectors (6 + 3 wide)
    model(x, training=False)
    vectors, mask = model.get_layer("adversarial").seen()
    assert tuple(vectors.shape) == (4, 5, 9)
    np.testing.assert_array_equal(np.asarray(mask), ids != 0)
    np.testing.assert_array_equal(model.predict(x, verbose=0), plain.predict(x, verbose=0))
    path = tmp_path / "tagger.keras"
    model.save(path)
    models.import_all()
    loaded = keras.saving.load_model(path, safe_mode=True)
    assert loaded.adversarial == 0.2
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))
    with pytest.raises(ValueError, match="adversarial >= 0"):
        SequenceTagger(30, 3, adversarial=-1.0, **TAGGER)

