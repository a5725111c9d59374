"""`head.distill = a`: the `ensemble` members are teachers, and a student trains on
(1 - a)·label + a·(the teachers' mean probabilities, softened by `distill_temperature`).
The oracles: fractions worked by hand, and the teachers' probabilities recomputed here
from their own checkpoints."""

import csv
import json
import shutil

import keras
import numpy as np
import tensorflow as tf

from elman.core import runs
from elman.tasks.sentiment.model import distilled_targets
from tests.conftest import refused_settings, train_tiny_sentiment

TEXTS = ["the food was great", "the service was slow, but the food was great"]


def test_targets_by_hand():
    # T = 1: half the label, half the teacher
    np.testing.assert_allclose(distilled_targets([[0.8, 0.2], [0.3, 0.7]], [1, 1], 0.5),
                               [[0.4, 0.6], [0.15, 0.85]], atol=1e-7)
    # T = 2: (0.8, 0.2) → (√0.8, √0.2) / (√0.8 + √0.2) = (2/3, 1/3), since √0.8 = 2·√0.2
    np.testing.assert_allclose(distilled_targets([[0.8, 0.2]], [1], 0.5, temperature=2.0),
                               [[1 / 3, 2 / 3]], atol=1e-7)
    # a = 1 keeps the teacher alone; a = 0 the label alone; three classes, T = 1/2 squares
    np.testing.assert_allclose(distilled_targets([[0.5, 0.25, 0.25]], [2], 1.0, 0.5),
                               [[2 / 3, 1 / 6, 1 / 6]], atol=1e-7)
    np.testing.assert_array_equal(distilled_targets([[0.5, 0.25, 0.25]], [2], 0.0),
                                  [[0.0, 0.0, 1.0]])
    # a teacher sure to the last bit still gives a finite target when softened
    assert np.isfinite(distilled_targets([[1.0, 0.0]], [0], 1.0, temperature=3.0)).all()


def _checkpoint_model(folder):
    """The best weights of a classifier trained in `folder` (teacher or student)."""
    ckpt = folder / "checkpoints"
    state = json.loads((ckpt / "state.json").read_text())
    model = keras.saving.load_model(ckpt / state["files"]["model"], safe_mode=True)
    model.load_weights(ckpt / state["files"]["best"])
    return model


def _rows(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_student_learns_the_blended_targets_and_is_the_saved_model(
        tmp_path, tiny_sentiment, monkeypatch, capsys):
    from elman.core import train as train_module

    seen = {}
    original = train_module.fit

    def recording_fit(build, features, targets, *args, **kwargs):
        if args[3].name == "student":  # args: lengths, validation, cfg, run_dir
            seen["targets"] = np.asarray(targets)
            seen["seed"] = args[2].seed
        return original(build, features, targets, *args, **kwargs)

    monkeypatch.setattr(train_module, "fit", recording_fit)
    settings = ("--set", "ensemble=2", "--set", "head.distill=0.75", "--set",
                "head.distill_temperature=2")
    run = train_tiny_sentiment(tmp_path, tiny_sentiment, "distilled", *settings)
    out = capsys.readouterr()
    log = out.out + out.err
    assert "teacher 1 of 2 (seed 1234)" in log and "teacher 2 of 2 (seed 1235)" in log
    assert "the student (seed 1236)" in log
    exported = runs.load_model(run)
    tokenize = exported.get_layer("tokenizer")
    teachers = [_checkpoint_model(run / "members" / str(k)) for k in (1, 2)]

    # the targets, recomputed: the teachers' mean probability on each training text,
    # each row p → p^(1/2) renormalised, then 0.25·label + 0.75·that
    train = _rows(tiny_sentiment["train"])
    labels = sorted({row["label"] for row in train})
    gold = np.array([labels.index(row["label"]) for row in train])
    ids = tokenize(tf.constant([row["text"] for row in train]))
    mean = np.mean([t.predict(ids, verbose=0) for t in teachers], axis=0)
    soft = np.sqrt(mean) / np.sqrt(mean).sum(axis=1, keepdims=True)
    expected = 0.25 * np.eye(len(labels))[gold] + 0.75 * soft
    np.testing.assert_allclose(seen["targets"], expected, atol=1e-5)
    agree = np.mean(mean.argmax(axis=1) == gold)
    assert f"the teachers agree with {agree:.2%} of the training labels" in log
    assert seen["seed"] == 1236  # seed + ensemble

    # the saved model is the student alone, not the teachers' average
    student = _checkpoint_model(run / "student")
    assert isinstance(student.loss, keras.losses.CategoricalCrossentropy)
    probe = tokenize(tf.constant(TEXTS))
    probs = np.asarray(exported.predict(tf.constant(TEXTS), verbose=0))
    np.testing.assert_allclose(probs, student.predict(probe, verbose=0), atol=1e-6)
    assert not np.allclose(probs, np.mean([t.predict(probe, verbose=0) for t in teachers], 0),
                           atol=1e-4)

    # the report's teacher rows, recomputed from the teachers' checkpoints
    metrics = json.loads((tmp_path / "reports" / "sentiment" / "distilled" /
                          "metrics.json").read_text())
    record = metrics["distillation"]
    assert (record["share"], record["temperature"]) == (0.75, 2.0)
    assert [t["seed"] for t in record["teachers"]] == [1234, 1235]
    validation = _rows(tiny_sentiment["validation"])
    val_gold = np.array([labels.index(row["label"]) for row in validation])
    val_ids = tokenize(tf.constant([row["text"] for row in validation]))
    val_probs = [t.predict(val_ids, verbose=0) for t in teachers]
    for row, p in zip(record["teachers"], val_probs):
        assert row["validation_accuracy"] == np.mean(p.argmax(axis=1) == val_gold)
    assert record["teachers_validation_accuracy"] == np.mean(
        np.mean(val_probs, axis=0).argmax(axis=1) == val_gold)
    report = (tmp_path / "reports" / "sentiment" / "distilled" / "report.md").read_text(
        encoding="utf-8")
    assert "## Distillation" in report and "distilled from 2 teacher(s)" in report

    # interrupted before the student began: --resume keeps the teachers and trains the
    # student exactly as the uninterrupted run did
    shutil.rmtree(run / "student")
    train_tiny_sentiment(tmp_path, tiny_sentiment, "distilled", *settings, resume=True)
    np.testing.assert_allclose(runs.load_model(run).predict(tf.constant(TEXTS), verbose=0),
                               probs, atol=1e-6)


def test_the_settings_are_range_checked_and_refused_with_what_they_clash_with(
        tmp_path, capsys):
    for bad in ("-0.1", "1.5"):
        err = refused_settings(tmp_path, capsys, "sentiment", [f"head.distill={bad}"])
        assert "head.distill" in err and "[0, 1]" in err
    err = refused_settings(tmp_path, capsys, "sentiment", ["head.distill_temperature=0"])
    assert "head.distill_temperature" in err and "positive" in err
    for other in ("head.label_smoothing=0.1", "head.drop_hardest=0.1"):
        err = refused_settings(tmp_path, capsys, "sentiment", ["head.distill=0.5", other])
        assert "head.distill" in err and other.split("=")[0] in err
    err = refused_settings(tmp_path, capsys, "sentiment",
                           ["head.distill=0.5", "train.strategy=multi-worker"])
    assert "head.distill" in err and "multi-worker" in err
    assert not (tmp_path / "run").exists()
