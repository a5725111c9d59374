"""`noise.filter = "confident"`: training texts a linear model fitted without them reads
confidently as another label are set aside, listed, and never silently lost."""

import csv
import itertools
import json

import numpy as np
import pytest

from elman.core.label_noise import confident_classes, filter_split, out_of_fold_probabilities
from elman.core.split import Split
from elman.core.data import Example
from elman.errors import UserError
from elman.tasks.sentiment.config import NoiseConfig
from tests.conftest import refused_settings, train_tiny_sentiment, write_csv

GOOD = ["tasty", "quick", "friendly", "fresh", "lovely", "warm", "clean", "cheap"]
BAD = ["stale", "late", "rude", "cold", "greasy", "noisy", "dirty", "bland"]


def test_thresholds_and_confident_classes_by_hand():
    # probabilities in eighths, so every sum and mean below is exact in binary floats
    y = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    probs = np.array([[6, 1, 1], [5, 2, 1], [1, 6, 1],   # labelled 0
                      [1, 6, 1], [2, 4, 2], [4, 3, 1],   # labelled 1
                      [1, 1, 6], [3, 1, 4]]) / 8         # labelled 2
    confident, thresholds = confident_classes(probs, y)
    # t_0 = (6 + 5 + 1) / 24 = 1/2, t_1 = (6 + 4 + 3) / 24 = 13/24, t_2 = (6 + 4) / 16 = 5/8
    np.testing.assert_allclose(thresholds, [1 / 2, 13 / 24, 5 / 8])
    # row 2: only p_1 = 6/8 ≥ 13/24 → class 1, not its label 0
    # row 4: 2/8 < 1/2, 4/8 < 13/24, 2/8 < 5/8 → no class is confident
    # row 5: p_0 = 4/8 meets t_0 = 1/2 exactly (≥), p_1 = 3/8 < 13/24 → class 0
    # row 7: 3/8 < 1/2, 1/8 < 13/24, 4/8 < 5/8 → none
    assert confident.tolist() == [0, 0, 1, 1, -1, 0, 2, -1]


def test_of_several_confident_classes_the_most_probable():
    y = np.array([0, 0, 1, 1, 2, 2])
    probs = np.array([[4, 2, 2], [2, 3, 3], [1, 4, 3], [3, 2, 3], [0, 2, 6], [4, 3, 1]]) / 8
    confident, thresholds = confident_classes(probs, y)
    np.testing.assert_allclose(thresholds, [3 / 8, 3 / 8, 7 / 16])
    # row 5 passes for class 0 (4/8 ≥ 3/8) and class 1 (3/8 ≥ 3/8): the larger, 0
    # row 1: 2/8 < 3/8, 3/8 ≥ 3/8, 3/8 < 7/16 → 1; row 3: 3/8 ≥ 3/8 only for class 0
    assert confident.tolist() == [0, 1, 1, 0, 2, 0]


def test_a_class_no_text_carries_is_never_confident():
    y = np.array([0, 0, 1, 1])
    probs = np.array([[0.2, 0.1, 0.7], [0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.2, 0.7]])
    confident, thresholds = confident_classes(probs, y)
    assert np.isnan(thresholds[2])
    # t_0 = 0.5, t_1 = 0.5: row 0 and row 3 pass for no class they could be read as
    assert confident.tolist() == [-1, 0, 1, -1]


def _texts(words, count, per_text, start=0):
    combos = itertools.islice(itertools.combinations(words, per_text), start, start + count)
    return [" and ".join(c) for c in combos]


def test_out_of_fold_probabilities_never_score_a_text_with_its_own_label():
    # a text of characters no other text has reads as nothing to a model that did not see
    # it: the intercept alone, near the balanced prior; fitted with it, it is its label
    texts = _texts(GOOD, 20, 3) + _texts(BAD, 20, 3) + ["7979797"]
    y = np.array([1] * 20 + [0] * 20 + [1])
    probs = out_of_fold_probabilities(texts, y, 2, folds=5, seed=7)
    assert probs.shape == (41, 2)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert abs(probs[-1, 1] - 0.5) < 0.1
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = TfidfVectorizer(analyzer="char", ngram_range=(1, 3), sublinear_tf=True)
    in_sample = LogisticRegression(C=10, max_iter=2000).fit(vectorizer.fit_transform(texts), y)
    assert in_sample.predict_proba(vectorizer.transform(texts[-1:]))[0, 1] > 0.8
    # the clean texts of each class are read as their class out of fold
    assert np.all(probs[:20, 1] > 0.5) and np.all(probs[20:40, 0] > 0.5)


def _planted_split():
    """40 texts of each label; the last 3 "bad" ones are made of good words only."""
    good, bad = _texts(GOOD, 40, 3), _texts(BAD, 37, 3)
    planted = _texts(GOOD, 3, 6, start=5)
    rows = [(t, "good") for t in good] + [(t, "bad") for t in bad + planted]
    items = [Example(t, label, f"train.csv:{i + 2}") for i, (t, label) in enumerate(rows)]
    return Split("train", items, "train.csv"), planted, rows


def test_filter_sets_aside_the_planted_labels_and_lists_each():
    split, planted, rows = _planted_split()
    kept, record = filter_split(split, ["bad", "good"], NoiseConfig(filter="confident"), 1234)
    aside = {r["text"] for r in record.rows}
    assert set(planted) <= aside
    assert len(kept.items) + len(record.rows) == len(split.items)  # nothing lost unlisted
    assert {e.text for e in kept.items}.isdisjoint(aside)
    for r in record.rows:  # where points at the text's own row
        line = int(r["where"].rsplit(":", 1)[1])
        assert rows[line - 2] == (r["text"], r["label"])
        assert r["reads_as"] != r["label"] and r["p_reads_as"] >= record.thresholds[r["reads_as"]]
    assert record.per_label["bad"] == {"texts": 40, "set_aside": sum(
        r["label"] == "bad" for r in record.rows)}
    assert record.summary()["set_aside"] == len(record.rows)


def test_filter_refuses_too_few_texts_of_a_label_for_the_folds():
    split, _, _ = _planted_split()
    few = Split("train", split.items[:3] + split.items[40:], "train.csv")
    with pytest.raises(UserError, match="'good' has 3"):
        filter_split(few, ["bad", "good"], NoiseConfig(filter="confident", folds=5), 1)


def test_filter_refuses_to_set_aside_every_text_of_a_label(monkeypatch):
    # columns: p(bad), p(good); t_bad = (0.1 + 0.2) / 2 = 0.15, t_good = (0.7 + 0.6) / 2 = 0.65
    probs = np.array([[0.1, 0.9], [0.2, 0.8], [0.3, 0.7], [0.4, 0.6]])
    monkeypatch.setattr("elman.core.label_noise.out_of_fold_probabilities",
                        lambda *args, **kwargs: probs)
    labels = ["bad", "bad", "good", "good"]
    items = [Example(f"text {i}", label, f"t.csv:{i + 2}") for i, label in enumerate(labels)]
    # row 0 passes good only; row 1 passes both (0.2 ≥ 0.15, 0.8 ≥ 0.65) and reads as the
    # more probable, good: no "bad" text would be left to learn from
    with pytest.raises(UserError, match="every training text labelled 'bad'"):
        filter_split(Split("train", items, "t.csv"), ["bad", "good"],
                     NoiseConfig(filter="confident", folds=2), 1)


@pytest.mark.parametrize("setting, message", [
    ("noise.folds=1", "at least 2"), ("noise.ngrams=0", "in \\[1, 10\\]"),
    ("noise.c=0", "positive"), ("noise.filter=strict", "noise.filter")])
def test_bad_noise_settings_are_refused(tmp_path, capsys, setting, message):
    import re

    assert re.search(message, refused_settings(tmp_path, capsys, "sentiment", [setting]))


@pytest.mark.slow
def test_a_run_lists_what_it_set_aside_and_trains_on_the_rest(tmp_path):
    _, planted, rows = _planted_split()
    files = {"train": write_csv(tmp_path / "train.csv", rows),
             "validation": write_csv(tmp_path / "validation.csv", rows[:10] + rows[40:50])}
    train_tiny_sentiment(tmp_path, files, "run", "--set", "noise.filter=confident",
                         "--set", "train.epochs=1")
    report = tmp_path / "reports" / "sentiment" / "run"
    metrics = json.loads((report / "metrics.json").read_text())
    with open(report / "label_noise.tsv", encoding="utf-8", newline="") as handle:
        listed = list(csv.DictReader(handle, delimiter="\t"))
    assert set(planted) <= {r["text"] for r in listed}
    assert metrics["label_noise"]["set_aside"] == len(listed)
    assert metrics["data"]["train"]["examples"] == len(rows) - len(listed)
    for r in listed:  # file and line of the training file itself
        path, line = r["where"].rsplit(":", 1)
        assert path.endswith("train.csv") and rows[int(line) - 2][0] == r["text"]
    md = (report / "report.md").read_text(encoding="utf-8")
    assert f"{len(listed)} of the {len(rows)} training texts" in md
