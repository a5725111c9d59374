"""Subword tokens (`level = "subword"`) in the sentiment task and the language model: a
tiny run each, end to end (train, report, predict or generate, the saved exports, resume),
the pieces learned from the training split alone, and char features refused with
subwords."""

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

from elman import cli
from elman.config import TokenizerConfig
from tests.conftest import ROOT, TINY_SETTINGS
from tests.test_cli_errors import assert_one_clear_error

SUBWORD = ["--set", "tokenizer.level=subword", "--set", "tokenizer.vocabulary_size=60"]
TEXTS = ["the food was great", "服务太慢", "the service was slow, but the food was great"]

# a fresh process: the SavedModel (SentencepieceOp is registered by tensorflow_text) and
# `elman.load` (model.keras in safe mode) give the probabilities `elman predict` printed
FRESH_LOAD = r"""
import json, os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np, tensorflow as tf
import tensorflow_text  # registers SentencepieceOp, which the subword SavedModel uses
import elman
texts = json.loads(sys.argv[2])
served = tf.saved_model.load(sys.argv[1] + "/saved_model")
loaded = elman.load(sys.argv[1]).predict(texts)
print(json.dumps({"saved_model": np.asarray(served.serve(tf.constant(texts))).tolist(),
                  "load": [[p["probabilities"][k] for k in ("negative", "positive")]
                           for p in loaded]}))
"""


def _train(tiny, run, reports, *settings, resume=False):
    return cli.main(["train", "sentiment", "--data", str(tiny["train"]), "--validation",
                     str(tiny["validation"]), "--out", str(run), "--reports", str(reports),
                     *TINY_SETTINGS, *SUBWORD, *settings] + (["--resume"] if resume else []))


def _csv_texts(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return [row["text"] for row in csv.DictReader(handle)]


@pytest.mark.slow  # the subword smoke run of the default suite is translation's
def test_sentiment_with_subwords_end_to_end(tmp_path, tiny_sentiment, capsys):
    from elman.core import runs
    from elman.text.subword import SubwordTokenizer, fit_subword

    run, reports = tmp_path / "run", tmp_path / "reports"
    assert _train(tiny_sentiment, run, reports, "--set", "train.epochs=1") == 0
    md = (reports / "sentiment" / "run" / "report.md").read_text(encoding="utf-8")
    assert "SentencePiece unigram pieces learned from the training texts" in md

    # the tokenizer is the one learned from the training texts alone
    saved = json.loads((run / "tokenizer.json").read_text(encoding="utf-8"))
    cfg = TokenizerConfig(**json.loads((run / "config.json").read_text())["tokenizer"])
    assert cfg.level == "subword" and cfg.vocabulary_size == 60
    expected = fit_subword(cfg, _csv_texts(tiny_sentiment["train"]))
    assert SubwordTokenizer.from_config(saved).model == expected.model
    everything = _csv_texts(tiny_sentiment["train"]) + ["zebras quickly vexed a judge"] * 9
    assert fit_subword(cfg, everything).model != expected.model  # the check can fail
    vocabulary = (run / "vocabulary.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert vocabulary == expected.get_vocabulary()
    model = runs.load_model(run)  # safe mode
    assert model.get_layer("tokenizer").model == expected.model
    capsys.readouterr()

    # predict, then the same numbers from the exports in a fresh process
    assert cli.main(["predict", str(run), "--format", "json", *TEXTS]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    probs = np.array([[line["probabilities"][k] for k in ("negative", "positive")]
                      for line in lines])
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    fresh = subprocess.run([sys.executable, "-c", FRESH_LOAD, str(run), json.dumps(TEXTS)],
                           cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    loaded = json.loads(fresh.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(loaded["saved_model"], probs, atol=1e-5)
    np.testing.assert_allclose(loaded["load"], probs, atol=1e-5)

    # the reading trace reads pieces
    assert cli.main(["predict", str(run), "--trace", TEXTS[0]]) == 0
    assert "▁food" in capsys.readouterr().out

    # --resume reads the run's own tokenizer back from tokenizer.json (marked here by a
    # changed max_length) rather than learning one again
    saved["max_length"] = 199
    (run / "tokenizer.json").write_text(json.dumps(saved), encoding="utf-8")
    assert _train(tiny_sentiment, run, reports, "--set", "train.epochs=2", resume=True) == 0
    assert "resuming after epoch 1" in capsys.readouterr().out
    tokenizer = runs.load_model(run).get_layer("tokenizer")
    assert tokenizer.max_length == 199 and tokenizer.model == expected.model


def test_sentiment_refuses_char_features_with_subwords(tmp_path, tiny_sentiment, capsys):
    code = _train(tiny_sentiment, tmp_path / "run", tmp_path / "reports",
                  "--set", "chars.features=cnn")
    assert_one_clear_error(code, capsys.readouterr().err, "chars.features",
                           'tokenizer.level = "subword"')
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_language_model_with_subwords(tmp_path, capsys):
    from elman.tasks.lm.config import LMTextConfig
    from elman.tasks.lm.predictor import LMPredictor
    from elman.tasks.lm.vocabulary import learn_subword
    from tests.test_lm_task import TINY, _lines

    files = {}
    for name, offset, count in (("train", 0, 40), ("validation", 1, 8)):
        files[name] = tmp_path / f"{name}.txt"
        files[name].write_text("\n".join(line.capitalize() for line in _lines(offset)[:count])
                               + "\n", encoding="utf-8")
    run, reports = tmp_path / "run", tmp_path / "reports"
    assert cli.main(["train", "lm", "--data", str(files["train"]), "--validation",
                     str(files["validation"]), "--out", str(run), "--reports", str(reports),
                     *TINY, "--set", "text.level=subword", "--set", "text.lowercase=false",
                     "--set", "text.vocabulary_size=40", "--set", "text.algorithm=bpe",
                     "--set", "report.sample_length=12"]) == 0

    # the pieces were learned from the training text alone
    text_cfg = LMTextConfig(**json.loads((run / "config.json").read_text())["text"])
    train_lines = files["train"].read_text(encoding="utf-8").splitlines()
    assert (run / "subword.model").read_bytes() == learn_subword(train_lines, text_cfg)
    metrics = json.loads((reports / "lm" / "run" / "metrics.json").read_text())
    assert metrics["level"] == "subword" and metrics["samples"]
    assert all("▁" not in s["prefix"] + s["continuation"] for s in metrics["samples"])
    capsys.readouterr()

    # generated text is detokenized: pieces joined, ▁ turned into spaces
    assert cli.main(["generate", str(run), "--prefix", "The cat", "--length", "20",
                     "--temperature", "1.0", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["text"].startswith("The cat") and "▁" not in out["text"]
    assert len(out["tokens"]) == 20 and not out["unknown"]
    predictor = LMPredictor(run)
    assert set(predictor.pieces("The cat sees the mat .")) <= set(predictor.vocabulary)
    trace = predictor.trace(["The cat sees the mat ."])[0]
    assert "".join(s["token"] for s in trace["steps"][:-1]).replace("▁", " ").strip() == (
        "The cat sees the mat .")
