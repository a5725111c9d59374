"""The bootstrap interval of a split's main score (`elman.core.intervals`), checked
against oracles that do not use it: the binomial law for accuracy, the full tagging
scorer on each resampled corpus for entity F1, and sacrebleu's own corpus BLEU on each
resampled set of pairs."""

import random

import numpy as np
import pytest
from scipy import stats

from elman.core import intervals
from elman.core.evaluate import classification_result
from elman.tasks.tagging.metrics import evaluate_tagging, sentence_counts


def _same_draws(n, resamples, seed=0):
    """The resamples' row indices, drawn as a user of numpy would (one call), for
    resample counts up to one chunk."""
    assert resamples <= intervals.CHUNK
    return np.random.default_rng(seed).integers(0, n, size=(resamples, n))


def test_accuracy_interval_matches_the_binomial_law():
    # resampling n texts of which k are right draws Binomial(n, k/n) right ones, so the
    # percentile interval is the binomial quantiles / n, up to one text's worth
    n, k = 200, 180
    units = [[1, 1]] * k + [[0, 1]] * (n - k)
    got = intervals.resampled_interval(units, intervals.accuracy_of, resamples=20_000)
    low, high = stats.binom.ppf([0.025, 0.975], n, k / n) / n
    assert got["score"] == pytest.approx(0.9)
    assert abs(got["low"] - low) <= 1 / n and abs(got["high"] - high) <= 1 / n
    assert got["units"] == n and got["resamples"] == 20_000 and got["level"] == 0.95


def test_interval_is_seeded_and_degenerate_when_every_text_is_right():
    units = [[1, 1]] * 30 + [[0, 1]] * 10
    first = intervals.resampled_interval(units, intervals.accuracy_of, seed=3)
    assert first == intervals.resampled_interval(units, intervals.accuracy_of, seed=3)
    assert first != intervals.resampled_interval(units, intervals.accuracy_of, seed=4)
    perfect = intervals.resampled_interval([[1, 1]] * 12, intervals.accuracy_of)
    assert perfect["low"] == perfect["high"] == perfect["score"] == 1.0
    assert intervals.resampled_interval([], intervals.accuracy_of) is None


def test_classification_result_carries_the_accuracy_interval():
    rng = np.random.default_rng(5)
    gold = ["pos" if g else "neg" for g in rng.integers(0, 2, 300)]
    probs = rng.dirichlet([1, 1], 300)
    result = classification_result("sentiment", "validation", ["t"] * 300, gold, probs,
                                   ["neg", "pos"])
    interval = result.extra["interval"]
    right = sum(e["correct"] for e in result.examples)
    assert interval["score"] == pytest.approx(right / 300) == result.scores["accuracy"]
    assert interval["low"] < interval["score"] < interval["high"]
    assert (interval["metric"], interval["unit"], interval["units"]) == ("accuracy", "texts", 300)


def _random_corpus(seed, sentences=60):
    rnd = random.Random(seed)
    tags = ["O", "O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    gold, predicted = [], []
    for _ in range(sentences):
        length = rnd.randint(1, 9)
        g = [rnd.choice(tags) for _ in range(length)]
        p = [t if rnd.random() < 0.7 else rnd.choice(tags) for t in g]
        gold.append(g)
        predicted.append(p[:rnd.randint(length - 1, length)] if length > 1 else p)
    return gold, predicted


def test_sentence_counts_add_up_to_the_scorers_totals():
    gold, predicted = _random_corpus(11)
    sums = np.sum(sentence_counts(gold, predicted), axis=0)
    whole = evaluate_tagging(gold, predicted)
    assert sums.tolist() == [whole.correct_entities, whole.predicted_entities,
                             whole.gold_entities]
    assert float(intervals.f1_of(sums)) == pytest.approx(float(whole.f1))


def test_entity_f1_interval_equals_rescoring_each_resampled_corpus():
    gold, predicted = _random_corpus(7)
    resamples = 80
    got = intervals.resampled_interval(sentence_counts(gold, predicted), intervals.f1_of,
                                       resamples=resamples, seed=2)
    # the oracle: the conlleval-style scorer run on every resampled corpus as a whole
    f1s = [float(evaluate_tagging([gold[i] for i in rows], [predicted[i] for i in rows]).f1)
           for rows in _same_draws(len(gold), resamples, seed=2)]
    low, high = np.quantile(f1s, [0.025, 0.975])
    assert got["low"] == pytest.approx(low, abs=1e-12)
    assert got["high"] == pytest.approx(high, abs=1e-12)
    assert got["score"] == pytest.approx(float(evaluate_tagging(gold, predicted).f1))


def test_bleu_interval_equals_sacrebleu_on_each_resampled_set():
    from sacrebleu.metrics import BLEU

    from elman.tasks.translation.scoring import bleu_interval

    rnd = random.Random(4)
    words = "the a cat dog sat ran on under mat house red small".split()
    references = [" ".join(rnd.choice(words) for _ in range(rnd.randint(3, 9)))
                  for _ in range(40)]
    hypotheses = [" ".join(w if rnd.random() < 0.6 else rnd.choice(words)
                           for w in r.split()[:rnd.randint(2, len(r.split()))])
                  for r in references]
    got = bleu_interval(hypotheses, references, "13a", False, resamples=60)
    bleu = BLEU(tokenize="13a", force=True)
    scores = [bleu.corpus_score([hypotheses[i] for i in rows],
                                [[references[i] for i in rows]]).score
              for rows in _same_draws(len(references), 60)]
    low, high = np.quantile(scores, [0.025, 0.975])
    assert got["low"] == pytest.approx(low, abs=1e-9)
    assert got["high"] == pytest.approx(high, abs=1e-9)
    assert got["score"] == pytest.approx(bleu.corpus_score(hypotheses, [references]).score)
    assert (got["metric"], got["unit"]) == ("BLEU", "sentence pairs")


def test_interval_line_reads_the_interval():
    interval = intervals.described({"score": 0.91, "low": 0.8912, "high": 0.9286,
                                    "level": 0.95, "resamples": 1000, "units": 1186,
                                    "seed": 0}, "accuracy", "texts")
    line = intervals.interval_line(interval, "validation")
    assert "the 1,186 validation texts" in line and "1,000 times" in line
    assert "**0.8912** and **0.9286** in 95% of the draws" in line
    bleu = intervals.interval_line({**interval, "score": 31.5, "low": 30.25, "high": 32.75,
                                    "metric": "BLEU"}, "test")
    assert "**30.25** and **32.75**" in bleu
    assert intervals.interval_line(None, "validation") == ""
