"""Tagging metrics: hand-computed conlleval scores, seqeval cross-check, error analysis."""

import random
import warnings
from fractions import Fraction

import pytest
from seqeval.metrics import accuracy_score, f1_score, precision_score, recall_score
from seqeval.metrics.sequence_labeling import precision_recall_fscore_support

from elman.tasks.tagging.metrics import entity_errors, evaluate_tagging

GOLD = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "I-ORG", "I-ORG", "O", "B-PER"]]
PRED = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "I-ORG", "O", "O", "I-PER"]]


def test_hand_computed_scores():
    scores = evaluate_tagging(GOLD, PRED)
    # Gold: PER(0,2) LOC(3,4) | ORG(0,3) PER(4,5). Predicted: PER(0,2) ORG(3,4) |
    # ORG(0,2) PER(4,5), the I-PER after O starting an entity as in conlleval.
    assert (scores.gold_entities, scores.predicted_entities, scores.correct_entities) == (4, 4, 2)
    assert (scores.precision, scores.recall, scores.f1) == (Fraction(1, 2),) * 3
    assert scores.per_type["PER"] == {"precision": 1, "recall": 1, "f1": 1,
                                      "gold": 2, "predicted": 2, "correct": 2}
    assert scores.per_type["LOC"] == {"precision": 0, "recall": 0, "f1": 0,
                                      "gold": 1, "predicted": 0, "correct": 0}
    assert scores.per_type["ORG"] == {"precision": 0, "recall": 0, "f1": 0,
                                      "gold": 1, "predicted": 2, "correct": 0}
    assert (scores.tokens, scores.correct_tokens) == (9, 6)
    assert scores.token_accuracy == Fraction(2, 3)
    assert scores.per_tag_accuracy == {
        "B-LOC": 0, "B-ORG": 1, "B-PER": Fraction(1, 2), "I-ORG": Fraction(1, 2),
        "I-PER": 1, "O": 1}
    assert scores.per_tag_support == {"B-LOC": 1, "B-ORG": 1, "B-PER": 2, "I-ORG": 2,
                                      "I-PER": 1, "O": 2}
    assert scores.confusion["I-ORG"] == {"I-ORG": 1, "O": 1}
    assert scores.missing_predictions == 0 and scores.sentences == 2
    plain = scores.as_dict()
    assert plain["f1"] == 0.5 and plain["per_type"]["PER"]["f1"] == 1.0


def test_f1_is_harmonic_mean():
    gold = [["B-PER", "O", "B-LOC", "O"]]
    pred = [["B-PER", "B-LOC", "I-LOC", "B-ORG"]]
    scores = evaluate_tagging(gold, pred)
    assert (scores.precision, scores.recall, scores.f1) == (
        Fraction(1, 3), Fraction(1, 2), Fraction(2, 5))


def test_missing_predictions_are_errors_not_dropped():
    scores = evaluate_tagging([["B-PER", "O", "O"]], [["O", "B-LOC"]])
    assert scores.tokens == 3 and scores.correct_tokens == 0
    assert scores.missing_predictions == 1
    assert scores.confusion["O"] == {"B-LOC": 1, None: 1}
    assert (scores.precision, scores.recall, scores.f1) == (0, 0, 0)
    with pytest.raises(ValueError, match="as many predicted sentences"):
        evaluate_tagging([["O"]], [])
    with pytest.raises(ValueError, match="Sentence 0: 2 predicted tags for 1 gold"):
        evaluate_tagging([["O"]], [["O", "O"]])


def test_empty_corpus():
    scores = evaluate_tagging([], [])
    assert scores.f1 == 0 and scores.token_accuracy == 0 and scores.per_type == {}


def test_entity_errors():
    tokens = [["John", "Smith", "in", "Paris"], ["Acme", "Corp", "Inc", "and", "Bob"]]
    report = entity_errors(GOLD, PRED, tokens)
    assert report[0]["correct"] == 1 and report[1]["correct"] == 1
    assert report[0]["wrong_type"] == [{
        "gold": {"type": "LOC", "start": 3, "end": 4, "text": "Paris"},
        "predicted": {"type": "ORG", "start": 3, "end": 4, "text": "Paris"}}]
    assert report[1]["wrong_boundary"] == [{
        "gold": {"type": "ORG", "start": 0, "end": 3, "text": "Acme Corp Inc"},
        "predicted": {"type": "ORG", "start": 0, "end": 2, "text": "Acme Corp"}}]
    assert report[0]["missed"] == report[0]["spurious"] == report[1]["missed"] == []

    report = entity_errors([["B-PER", "O", "O", "B-LOC", "I-LOC"]],
                           [["O", "O", "B-ORG", "B-PER", "I-PER"]])
    assert report == [{
        "sentence": 0, "correct": 0,
        "missed": [{"type": "PER", "start": 0, "end": 1}],
        "spurious": [{"type": "ORG", "start": 2, "end": 3}],
        "wrong_type": [{"gold": {"type": "LOC", "start": 3, "end": 5},
                        "predicted": {"type": "PER", "start": 3, "end": 5}}],
        "wrong_boundary": [],
    }]


def test_matches_seqeval_on_random_ill_formed_sequences():
    rng = random.Random(1234)
    labels = ["O", "O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-MISC", "I-MISC"]
    gold, pred = [], []
    for _ in range(400):
        length = rng.randint(1, 12)
        gold.append([rng.choice(labels) for _ in range(length)])
        # Predictions: mostly the gold tag, sometimes any tag (often ill-formed).
        pred.append([g if rng.random() < 0.6 else rng.choice(labels) for g in gold[-1]])
    scores = evaluate_tagging(gold, pred)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert float(scores.precision) == pytest.approx(precision_score(gold, pred), abs=1e-12)
        assert float(scores.recall) == pytest.approx(recall_score(gold, pred), abs=1e-12)
        assert float(scores.f1) == pytest.approx(f1_score(gold, pred), abs=1e-12)
        assert float(scores.token_accuracy) == pytest.approx(accuracy_score(gold, pred))
        p, r, f, support = precision_recall_fscore_support(gold, pred, average=None)
    types = sorted(scores.per_type)
    assert types == ["LOC", "MISC", "PER"]
    for i, type_ in enumerate(types):
        row = scores.per_type[type_]
        assert float(row["precision"]) == pytest.approx(p[i], abs=1e-12)
        assert float(row["recall"]) == pytest.approx(r[i], abs=1e-12)
        assert float(row["f1"]) == pytest.approx(f[i], abs=1e-12)
        assert row["gold"] == support[i]
    assert 0 < scores.f1 < 1
