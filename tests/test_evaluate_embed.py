from fractions import Fraction

import numpy as np
import pytest

from elman.errors import UserError
from elman.core.embed import read_pretrained
from elman.core.evaluate import classification_result


def test_classification_scores_by_hand():
    gold = ["pos", "pos", "pos", "neg", "neg"]
    # predictions: pos, neg, pos, neg, pos
    probs = np.array([[0.1, 0.9], [0.8, 0.2], [0.4, 0.6], [0.7, 0.3], [0.45, 0.55]])
    r = classification_result("sentiment", "test", list("abcde"), gold, probs, ["neg", "pos"])
    assert r.scores["accuracy"] == pytest.approx(float(Fraction(3, 5)))
    # pos: P = 2/3, R = 2/3, F1 = 2/3; neg: P = 1/2, R = 1/2, F1 = 1/2
    rows = {row["class"]: row for row in r.per_class}
    assert rows["pos"]["precision"] == pytest.approx(2 / 3)
    assert rows["neg"]["recall"] == pytest.approx(1 / 2)
    assert r.scores["macro_f1"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert r.extra["confusion"] == [[1, 1], [1, 2]]
    # AUC by counting: positive scores .9 .2 .6 vs negative .3 .55 → pairs won:
    # .9>both (2), .2>none (0), .6>both (2) → 4 of 6
    assert r.scores["roc_auc"] == pytest.approx(4 / 6)
    assert [e["correct"] for e in r.examples] == [True, False, True, True, False]


def test_pretrained_vectors_glove_and_word2vec(tmp_path):
    vocab = ["", "[UNK]", "good", "bad", "paris", "zzz"]
    glove = tmp_path / "g.txt"
    glove.write_text("good 1 2\nPARIS 3 4\nbad 5 6\nother 7 8\n", encoding="utf-8")
    matrix, cov = read_pretrained(glove, vocab, dim=2)
    assert matrix[2].tolist() == [1, 2] and matrix[3].tolist() == [5, 6]
    assert matrix[4].tolist() == [3, 4]  # found after lower-casing
    assert matrix[0].tolist() == [0, 0]
    assert (cov.found, cov.vocabulary, cov.found_lowercased) == (3, 4, 1)
    assert cov.share == 3 / 4
    w2v = tmp_path / "w.txt"
    w2v.write_text("2 2\ngood 1 2\nbad 5 6\n", encoding="utf-8")
    assert read_pretrained(w2v, vocab, dim=2)[1].found == 2
    with pytest.raises(UserError, match="dimensions but embedding.dim is 3"):
        read_pretrained(w2v, vocab, dim=3)
    glove.write_text("good 1 2\nbad 5\n", encoding="utf-8")
    with pytest.raises(UserError, match="expected 2 numbers") as info:
        read_pretrained(glove, vocab, dim=2)
    assert info.value.line == 2
