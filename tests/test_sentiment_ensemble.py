"""`ensemble = N`: members trained with seeds seed..seed+N-1, probabilities averaged."""

import csv
import json
import shutil

import pytest
import keras
import numpy as np
import tensorflow as tf

from elman import cli
from elman.core import runs
from tests.conftest import train_tiny_sentiment

TEXTS = ["the food was great", "服务太慢", "the service was slow, but the food was great"]


def _train(tmp_path, tiny_sentiment, name, *settings, resume=False):
    return train_tiny_sentiment(tmp_path, tiny_sentiment, name, "--set", "train.epochs=1",
                                *settings, resume=resume)


def _member(run, k):
    """Member k rebuilt from its own checkpoint folder (not from the exported model)."""
    ckpt = run / "members" / str(k) / "checkpoints"
    state = json.loads((ckpt / "state.json").read_text())
    model = keras.saving.load_model(ckpt / state["files"]["model"], safe_mode=True)
    model.load_weights(ckpt / state["files"]["best"])
    return model


@pytest.mark.slow
def test_ensemble_averages_its_members_and_resumes_a_missing_member(tmp_path, tiny_sentiment):
    single = _train(tmp_path, tiny_sentiment, "single")
    run = _train(tmp_path, tiny_sentiment, "ensemble", "--set", "ensemble=2")
    exported = runs.load_model(run)
    ids = exported.get_layer("tokenizer")(tf.constant(TEXTS))
    members = [np.asarray(_member(run, k).predict(ids, verbose=0)) for k in (1, 2)]
    probs = np.asarray(exported.predict(tf.constant(TEXTS), verbose=0))
    np.testing.assert_allclose(probs, (members[0] + members[1]) / 2, atol=1e-6)
    assert not np.allclose(members[0], members[1])  # seeds 1234 and 1235 differ
    # member 1 is the run a single model with the same seed would have been
    np.testing.assert_allclose(
        members[0], runs.load_model(single).predict(tf.constant(TEXTS), verbose=0),
        atol=1e-6)
    metrics = json.loads((tmp_path / "reports" / "sentiment" / "ensemble" /
                          "metrics.json").read_text())
    assert [m["seed"] for m in metrics["ensemble_members"]] == [1234, 1235]
    # each member's reported accuracy is its own, recomputed here from its checkpoint
    with open(tiny_sentiment["validation"], newline="", encoding="utf-8") as handle:
        validation = list(csv.DictReader(handle))
    texts = [row["text"] for row in validation]
    gold = np.array([row["label"] == "positive" for row in validation])
    labels_ids = exported.get_layer("tokenizer")(tf.constant(texts))
    for k, row in enumerate(metrics["ensemble_members"], start=1):
        predicted = _member(run, k).predict(labels_ids, verbose=0).argmax(axis=1) == 1
        assert row["validation_accuracy"] == np.mean(predicted == gold)

    # interrupted before member 2 began: --resume keeps member 1 and trains member 2
    # exactly as the uninterrupted run did
    shutil.rmtree(run / "members" / "2")
    _train(tmp_path, tiny_sentiment, "ensemble", "--set", "ensemble=2", resume=True)
    np.testing.assert_allclose(runs.load_model(run).predict(tf.constant(TEXTS), verbose=0),
                               probs, atol=1e-6)


def test_ensemble_must_have_a_member(tmp_path, tiny_sentiment, capsys):
    code = cli.main(["train", "sentiment", "--data", str(tiny_sentiment["train"]),
                     "--out", str(tmp_path / "r"), "--set", "ensemble=0"])
    assert code == 2 and "'ensemble' must be at least 1" in capsys.readouterr().err
