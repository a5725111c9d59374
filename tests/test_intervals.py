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
    got, units = bleu_interval(hypotheses, references, "13a", False, resamples=60)
    assert len(units) == len(references)
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


def test_paired_difference_equals_rescoring_both_runs_on_each_resample():
    gold, run_a = _random_corpus(7)
    _, run_b = _random_corpus(8)
    run_b = [p[:len(g)] + ["O"] * (len(g) - len(p)) if len(p) < len(g) else p[:len(g)]
             for g, p in zip(gold, run_b)]
    got = intervals.paired_difference(sentence_counts(gold, run_a),
                                      sentence_counts(gold, run_b), "f1", resamples=90, seed=1)
    differences = []
    for rows in _same_draws(len(gold), 90, seed=1):  # the oracle: both corpora rescored whole
        g = [gold[i] for i in rows]
        differences.append(float(evaluate_tagging(g, [run_b[i] for i in rows]).f1)
                           - float(evaluate_tagging(g, [run_a[i] for i in rows]).f1))
    low, high = np.quantile(differences, [0.025, 0.975])
    assert got["low"] == pytest.approx(low, abs=1e-12)
    assert got["high"] == pytest.approx(high, abs=1e-12)
    assert got["b_better"] == pytest.approx(np.mean(np.array(differences) > 0))
    assert got["difference"] == pytest.approx(float(evaluate_tagging(gold, run_b).f1)
                                              - float(evaluate_tagging(gold, run_a).f1))


def test_paired_difference_of_a_run_with_itself_is_zero_and_shapes_must_match():
    units = [[1, 1]] * 20 + [[0, 1]] * 5
    same = intervals.paired_difference(units, units, "accuracy")
    assert same["low"] == same["high"] == same["difference"] == 0.0
    assert same["ties"] == 1.0 and same["b_better"] == 0.0
    with pytest.raises(ValueError, match="one shape"):
        intervals.paired_difference(units, units[:-1], "accuracy")


def _report(folder, correct, split_sha="abc", statistic="accuracy"):
    """A report folder as a run writes it, for `elman compare`: metrics.json and the
    per-text counts (1 = right) of a split of len(correct) texts."""
    import json

    folder.mkdir(parents=True)
    units = [[c, 1] for c in correct]
    intervals.write_units(folder / intervals.UNITS_FILE, units, "accuracy")
    interval = intervals.described(intervals.resampled_interval(units, "accuracy"),
                                   "accuracy", "texts")
    metrics = {"split": "validation", "interval": {**interval, "statistic": statistic,
                                                    "units_file": intervals.UNITS_FILE},
               "reproducibility": {"data_files": [{"split": "validation", "sha256": split_sha}]}}
    (folder / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    return folder


def test_compare_cli_reads_two_reports(tmp_path, capsys):
    import json

    from elman import cli

    rnd = random.Random(0)
    a = [int(rnd.random() < 0.80) for _ in range(400)]
    b = [1 if x else int(rnd.random() < 0.5) for x in a]  # B right wherever A is, and more
    first, second = _report(tmp_path / "a", a), _report(tmp_path / "b", b)
    assert cli.main(["compare", str(first), str(second), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["a"] == pytest.approx(sum(a) / 400) and result["b"] == pytest.approx(sum(b) / 400)
    assert result["low"] > 0 and result["b_better"] > 0.99  # never worse on any text
    assert cli.main(["compare", str(first), str(second)]) == 0
    text = capsys.readouterr().out
    assert "the difference holds beyond the texts drawn" in text and "400 validation texts" in text
    run = tmp_path / "runs" / "a"  # a run folder stands for its report (run.json names it)
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"report_dir": str(first)}), encoding="utf-8")
    assert cli.main(["compare", str(run), str(first)]) == 0
    assert "the two runs score the same on every resample" in capsys.readouterr().out
    swapped = list(a)  # one text more right and one more wrong: a tie that resampling moves
    swapped[a.index(1)], swapped[a.index(0)] = 0, 1
    assert cli.main(["compare", str(first), str(_report(tmp_path / "c", swapped))]) == 0
    assert "the texts drawn alone could give either order" in capsys.readouterr().out


@pytest.mark.parametrize("change, message", [
    ("sha", "scored different validation files"),
    ("length", "scored 400 and 399 texts"),
    ("statistic", "scored different things"),
    ("no units", "holds no per-unit counts"),
    ("bad row", "expected 2 counts"),
])
def test_compare_refuses_reports_that_are_not_paired(tmp_path, capsys, change, message):
    import json

    from elman import cli

    first = _report(tmp_path / "a", [1, 0] * 200)
    second = _report(tmp_path / "b", ([0, 1] * 200)[:399 if change == "length" else 400],
                     split_sha="abd" if change == "sha" else "abc",
                     statistic="f1" if change == "statistic" else "accuracy")
    if change == "statistic":  # an F1 report: its units file has F1's three columns
        intervals.write_units(second / intervals.UNITS_FILE, [[1, 1, 1]] * 400, "f1")
    if change == "no units":
        metrics = json.loads((second / "metrics.json").read_text(encoding="utf-8"))
        del metrics["interval"]
        (second / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    if change == "bad row":
        path = second / intervals.UNITS_FILE
        path.write_text(path.read_text(encoding="utf-8").replace("0\t1\n", "0\tx\n", 1),
                        encoding="utf-8")
    assert cli.main(["compare", str(first), str(second)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    if change == "bad row":
        assert f"{intervals.UNITS_FILE}:2" in err


def test_tagging_split_scores_carry_their_interval_units():
    from elman.tasks.tagging.scoring import score_split

    gold, predicted = _random_corpus(3, sentences=30)
    sentences = [{"tokens": [f"w{i}" for i in range(len(g))], "tags": g, "source": f"f:{k}"}
                 for k, g in enumerate(gold)]
    entities = score_split("validation", sentences, predicted, "BIO")
    assert entities.extra["interval"]["metric"] == "entity F1"
    assert np.sum(entities.extra["interval_units"], axis=0).tolist() == [
        entities.scores[k] for k in ("correct_entities", "predicted_entities", "gold_entities")]
    # tags without a scheme (POS): token accuracy over the sentences, missing tags wrong
    pos = [["NOUN" if t == "O" else "VERB" for t in g] for g in gold]
    guessed = [["NOUN"] * len(p) for p in predicted]
    plain = [{**s, "tags": t} for s, t in zip(sentences, pos)]
    tokens = score_split("validation", plain, guessed, "none")
    units = np.array(tokens.extra["interval_units"])
    right = sum(sum(a == b for a, b in zip(t, p)) for t, p in zip(pos, guessed))
    assert units.sum(axis=0).tolist() == [right, sum(len(t) for t in pos)]
    assert tokens.extra["interval"]["score"] == pytest.approx(tokens.scores["token_accuracy"])
    assert tokens.extra["interval"]["metric"] == "token accuracy"
