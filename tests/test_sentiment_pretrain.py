"""`[pretrain]` for sentiment: masked-word pretraining before the classifier trains."""

import json

import pytest
import keras
import numpy as np
import tensorflow as tf

from elman import cli
from elman.core import runs
from tests.conftest import TINY_SETTINGS, train_tiny_sentiment

TEXTS = ["the food was great", "服务太慢", "the service was slow, but the food was great"]


def _train(tmp_path, tiny_sentiment, name, *settings, resume=False):
    return train_tiny_sentiment(tmp_path, tiny_sentiment, name, "--set", "pretrain.epochs=2",
                                *settings, resume=resume)


def _best_pretrained(run):
    ckpt = run / "pretrain" / "checkpoints"
    state = json.loads((ckpt / "state.json").read_text())
    model = keras.saving.load_model(ckpt / state["files"]["model"], safe_mode=True)
    model.load_weights(ckpt / state["files"]["best"])
    return state, model


@pytest.mark.slow
def test_the_classifier_starts_from_the_pretrained_embedding_and_encoder(tmp_path,
                                                                         tiny_sentiment):
    # a learning rate of 1e-9 moves no weight by more than ~1e-8 in one epoch (Adam's
    # step is about the rate), so the trained classifier still holds its starting point
    run = _train(tmp_path, tiny_sentiment, "run", "--set", "train.epochs=1",
                 "--set", "train.learning_rate=1e-9")
    state, pretrained = _best_pretrained(run)
    assert state["epoch"] == 2 and len(state["history"]["val_loss"]) == 2
    classifier = runs.load_model(run).get_layer("sentiment_classifier")
    for name in ("embedding", "encoder"):
        source = pretrained.get_layer(name).get_weights()
        target = classifier.get_layer(name).get_weights()
        assert len(source) == len(target) > 0
        for a, b in zip(source, target):
            np.testing.assert_allclose(a, b, atol=1e-6)
    # without pretraining the same seed starts elsewhere: the check above can fail
    plain = runs.load_model(_train(tmp_path, tiny_sentiment, "plain", "--set", "train.epochs=1",
                                   "--set", "train.learning_rate=1e-9",
                                   "--set", "pretrain.epochs=0")).get_layer(
        "sentiment_classifier")
    assert not np.allclose(plain.get_layer("embedding").get_weights()[0],
                           pretrained.get_layer("embedding").get_weights()[0], atol=1e-3)
    metrics = json.loads((tmp_path / "reports" / "sentiment" / "run" / "metrics.json")
                         .read_text())
    row, = metrics["pretraining"]
    best = state["best_epoch"]
    assert (row["seed"], row["epochs_run"], row["best_epoch"]) == (1234, 2, best)
    assert row["validation_loss"] == state["history"]["val_loss"][best - 1]
    assert row["validation_perplexity"] == np.exp(row["validation_loss"])
    report = (tmp_path / "reports" / "sentiment" / "run" / "report.md").read_text()
    assert "## Pretraining" in report and "hidden words" in report


@pytest.mark.slow
def test_a_time_budget_inside_pretraining_resumes_to_the_uninterrupted_result(
        tmp_path, tiny_sentiment, capsys):
    whole = _train(tmp_path, tiny_sentiment, "whole")
    expected = runs.load_model(whole).predict(tf.constant(TEXTS), verbose=0)
    # a budget of ~0 lets each process run exactly one epoch
    budget = ("--set", "train.max_minutes=0.000001")
    run = _train(tmp_path, tiny_sentiment, "cut", *budget)
    assert "pretraining stopped by train.max_minutes" in capsys.readouterr().out
    assert not (run / "model.keras").exists() and not (run / "run.json").exists()
    assert json.loads((run / "pretrain" / "checkpoints" / "state.json").read_text())[
        "epoch"] == 1
    _train(tmp_path, tiny_sentiment, "cut", *budget, resume=True)  # pretraining ends
    _train(tmp_path, tiny_sentiment, "cut", *budget, resume=True)  # the classifier ends
    assert json.loads((run / "checkpoints" / "state.json").read_text())["epoch"] == 2
    np.testing.assert_allclose(runs.load_model(run).predict(tf.constant(TEXTS), verbose=0),
                               expected, atol=1e-6)


def test_pretraining_with_char_features_is_refused(tmp_path, tiny_sentiment, capsys):
    code = cli.main(["train", "sentiment", "--data", str(tiny_sentiment["train"]),
                     "--out", str(tmp_path / "r"), *TINY_SETTINGS,
                     "--set", "pretrain.epochs=1", "--set", "chars.features=cnn"])
    err = capsys.readouterr().err
    assert code == 2 and "pretrain.epochs needs chars.features" in err
    assert "Traceback" not in err


@pytest.mark.slow
def test_extra_unlabelled_texts_are_pretrained_on_and_recorded(tmp_path, tiny_sentiment):
    import hashlib

    extra = tmp_path / "unlabelled.txt"
    extra.write_text("the soup was warm\n\nthe room was quiet and clean\n  \n很安静\n",
                     encoding="utf-8")
    run = _train(tmp_path, tiny_sentiment, "extra", "--set", "pretrain.epochs=1",
                 "--set", "train.epochs=1", "--set", f"pretrain.texts={extra}")
    base = _train(tmp_path, tiny_sentiment, "base", "--set", "pretrain.epochs=1",
                  "--set", "train.epochs=1")
    metrics = json.loads((tmp_path / "reports" / "sentiment" / "extra" / "metrics.json")
                         .read_text())
    assert metrics["pretraining_texts"]["texts"] == 3
    assert metrics["pretraining_texts"]["blank_lines_skipped"] == 2
    digest = hashlib.sha256(extra.read_bytes()).hexdigest()
    assert {"split": "pretraining texts", "source": str(extra), "sha256": digest} in \
        metrics["reproducibility"]["data_files"]
    report = (tmp_path / "reports" / "sentiment" / "extra" / "report.md").read_text()
    assert "3 texts of" in report and "2 blank lines skipped" in report
    # the same seed without the extra texts pretrains to other weights
    with_extra = _best_pretrained(run)[1].get_layer("encoder").get_weights()[0]
    without = _best_pretrained(base)[1].get_layer("encoder").get_weights()[0]
    assert not np.allclose(with_extra, without)


def test_a_non_utf8_pretraining_file_is_one_clear_error(tmp_path, tiny_sentiment, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine line\nbroken \xff line\n")
    code = cli.main(["train", "sentiment", "--data", str(tiny_sentiment["train"]),
                     "--out", str(tmp_path / "r"), *TINY_SETTINGS,
                     "--set", "pretrain.epochs=1", "--set", f"pretrain.texts={bad}"])
    err = capsys.readouterr().err
    assert code == 2 and f"{bad}:2" in err and "UTF-8" in err and "Traceback" not in err
