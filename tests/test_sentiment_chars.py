"""Char features in the sentiment classifier: what they change, and the exported model."""

import json
import subprocess
import sys

import keras
import numpy as np
import pytest

from elman.models.sentiment_classifier import SentimentClassifier
from elman import cli
from tests.conftest import ROOT, TINY_SETTINGS


def _model(**kwargs):
    keras.utils.set_random_seed(3)
    return SentimentClassifier(vocabulary_size=10, num_classes=2, embedding_dim=4, units=4,
                               hidden=0, head_dropout=0.0, dropout=0.0, **kwargs)


@pytest.mark.parametrize("method", ["cnn", "lstm"])
def test_unseen_words_are_told_apart_by_their_chars(method, tmp_path):
    ids = np.array([[2, 1, 3], [2, 1, 3]], np.int32)  # the same ids: position 1 is OOV
    chars = np.zeros((2, 3, 5), np.int32)
    chars[:, 0, :2], chars[:, 2, :1] = [3, 4], [5]
    chars[0, 1, :4] = [6, 7, 6, 8]  # the two OOV words are spelled differently
    chars[1, 1, :3] = [9, 9, 10]
    model = _model(char_features=method, char_vocabulary_size=11)
    probs = np.asarray(model({"token_ids": ids, "char_ids": chars}))
    assert not np.allclose(probs[0], probs[1])
    plain = np.asarray(_model()(ids))  # without chars the two sentences are one input
    np.testing.assert_array_equal(plain[0], plain[1])
    # the padded word position changes nothing: the word mask covers the char features
    longer_ids = np.pad(ids, [[0, 0], [0, 2]])
    longer_chars = np.pad(chars, [[0, 0], [0, 2], [0, 0]])
    longer_chars[:, 3:, 0] = 7  # chars under padded words are ignored too
    np.testing.assert_allclose(
        model({"token_ids": longer_ids, "char_ids": longer_chars}), probs, atol=1e-6)
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras", safe_mode=True)
    np.testing.assert_allclose(loaded({"token_ids": ids, "char_ids": chars}), probs,
                               atol=1e-6)


def test_char_features_need_a_char_vocabulary():
    with pytest.raises(ValueError, match="char_vocabulary_size"):
        _model(char_features="cnn")
    with pytest.raises(ValueError, match="char_features"):
        _model(char_features="rnn", char_vocabulary_size=5)


FRESH_LOAD = r"""
import json, sys, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np, tensorflow as tf
from elman.core import runs
texts = json.loads(sys.argv[2])
a = np.asarray(runs.load_model(sys.argv[1]).predict(tf.constant(texts), verbose=0))
served = tf.saved_model.load(sys.argv[1] + "/saved_model")  # keep it: it owns the variables
b = np.asarray(served.serve(tf.constant(texts)))
print(json.dumps({"keras": a.tolist(), "saved_model": b.tolist()}))
"""


def test_trained_with_char_features_exported_and_resumed(tmp_path, tiny_sentiment, capsys):
    run = tmp_path / "run"
    args = ["train", "sentiment", "--data", str(tiny_sentiment["train"]),
            "--validation", str(tiny_sentiment["validation"]), "--out", str(run),
            "--reports", str(tmp_path / "reports"), *TINY_SETTINGS,
            "--set", "chars.features=cnn", "--set", "chars.units=6"]
    assert cli.main([*args, "--set", "train.epochs=1"]) == 0
    chars = json.loads((run / "chars.json").read_text(encoding="utf-8"))
    assert "服" in chars and "a" in chars
    assert cli.main([*args, "--resume"]) == 0  # the second epoch, same char ids
    assert json.loads((run / "chars.json").read_text(encoding="utf-8")) == chars
    history = (run / "logs" / "training.csv").read_text().splitlines()
    assert len(history) == 3  # header and two epochs
    report = (tmp_path / "reports" / "sentiment" / "run" / "report.md").read_text()
    assert "char CNN(6) features" in report
    capsys.readouterr()

    texts = ["the food was great", "服务太慢", "the zzyzx was unfoodly"]
    assert cli.main(["predict", str(run), "--format", "json", *texts]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    probs = np.array([[line["probabilities"][k] for k in ("negative", "positive")]
                      for line in lines])
    fresh = subprocess.run([sys.executable, "-c", FRESH_LOAD, str(run), json.dumps(texts)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    loaded = json.loads(fresh.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(loaded["keras"], probs, atol=1e-5)
    np.testing.assert_allclose(loaded["saved_model"], probs, atol=1e-5)
