"""The one end-to-end smoke run in the default path: train, report, predict, export."""

import json
import sys

import numpy as np

from elman import cli
from tests.conftest import ROOT, TINY_SETTINGS, run_elman

FRESH_LOAD = r"""
import json, sys, os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np, tensorflow as tf, keras
import elman.text.tokenize
import elman.models.sentiment_classifier
import elman.models.encoders
texts = json.loads(sys.argv[2])
model = keras.saving.load_model(sys.argv[1] + "/model.keras", safe_mode=True)
a = np.asarray(model.predict(tf.constant(texts), verbose=0))
served = tf.saved_model.load(sys.argv[1] + "/saved_model")
b = np.asarray(served.serve(tf.constant(texts)))
print(json.dumps({"keras": a.tolist(), "saved_model": b.tolist()}))
"""


def test_train_report_predict_and_export(tmp_path, tiny_sentiment, capsys):
    run, reports = tmp_path / "run", tmp_path / "reports"
    code = cli.main(["train", "sentiment", "--data", str(tiny_sentiment["train"]),
                     "--validation", str(tiny_sentiment["validation"]),
                     "--test", str(tiny_sentiment["test"]), "--out", str(run),
                     "--reports", str(reports), *TINY_SETTINGS])
    assert code == 0
    report = reports / "sentiment" / "run"
    for name in ("report.md", "report.html", "metrics.json", "predictions.tsv",
                 "learning_curves.png", "confusion_test.png", "roc_test.png"):
        assert (report / name).is_file(), name
    metrics_text = (report / "metrics.json").read_text()
    metrics = json.loads(metrics_text)
    assert list(metrics) == sorted(metrics)
    assert metrics["split"] == "test" and 0.0 <= metrics["scores"]["accuracy"] <= 1.0
    predictions = (report / "predictions.tsv").read_text(encoding="utf-8").splitlines()
    assert len(predictions) == 1 + metrics["scores"]["examples"]
    # the accuracy in the report agrees with the per-example rows
    header = predictions[0].split("\t")
    correct = [row.split("\t")[header.index("correct")] == "True" for row in predictions[1:]]
    assert metrics["scores"]["accuracy"] == sum(correct) / len(correct)
    html = (report / "report.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in html and "Reproducibility" in html
    assert "sentiment" in (reports / "index.md").read_text(encoding="utf-8")
    for name in ("config.toml", "config.json", "vocabulary.txt", "model.keras", "run.json"):
        assert (run / name).is_file(), name
    capsys.readouterr()

    texts = ["the food was great", "服务太慢", "the service was slow, but the food was great"]
    assert cli.main(["predict", str(run), "--format", "json", *texts]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["text"] for line in lines] == texts
    probs = np.array([[line["probabilities"][k] for k in ("negative", "positive")]
                      for line in lines])
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    assert [line["label"] for line in lines] == [
        ("negative", "positive")[int(p.argmax())] for p in probs]

    # a fresh process loads both exports with safe mode on and gets the same numbers
    fresh = __import__("subprocess").run(
        [sys.executable, "-c", FRESH_LOAD, str(run), json.dumps(texts)], cwd=ROOT,
        capture_output=True, text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr[-2000:]
    loaded = json.loads(fresh.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(loaded["keras"], probs, atol=1e-5)
    np.testing.assert_allclose(loaded["saved_model"], probs, atol=1e-5)

    # stdin, one text per line: one output line per input line (blank for blank)
    result = run_elman(["predict", run], stdin="the food was great\n\n服务太慢\n")
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert lines[1] == "" and len(lines) == 3
    assert [line.split("\t")[2] for line in (lines[0], lines[2])] == [
        "the food was great", "服务太慢"]

    assert cli.main(["evaluate", str(run), "--data", str(tiny_sentiment["test"]), "--json"]) == 0
    captured = capsys.readouterr()
    scores = json.loads(captured.out)  # --json: stdout is the JSON alone
    assert "accuracy" in captured.err  # the summary line goes to stderr
    assert scores["accuracy"] == metrics["scores"]["accuracy"]
