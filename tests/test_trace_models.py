"""The tagging, translation and language-model traces against independent oracles.

CRF marginals and entity probabilities against enumeration of every tag path (float64);
translation probabilities and attention against the decoder stepped by hand
(`decode_step`); surprisals against the cross-entropy `elman evaluate` computes
(`scoring.score_ids`), and end to end against `elman evaluate` on a trained run.
"""

import itertools
import json
import math

import numpy as np
import pytest

from elman import cli

BIO_TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


def _valid_bio(names):
    previous = "O"
    for name in names:
        if name.startswith("I-") and previous[2:] != name[2:]:
            return False
        previous = name
    return True


def _enumerate_paths(potentials, crf, only_valid_bio):
    """{path: probability} over every (valid) tag path, in float64."""
    transitions = crf.transitions.numpy().astype("float64")
    start = crf.start_scores.numpy().astype("float64")
    end = crf.end_scores.numpy().astype("float64")
    scores = {}
    for path in itertools.product(range(crf.num_tags), repeat=len(potentials)):
        if only_valid_bio and not _valid_bio([BIO_TAGS[t] for t in path]):
            continue
        scores[path] = (start[path[0]] + end[path[-1]]
                        + sum(potentials[i, t] for i, t in enumerate(path))
                        + sum(transitions[a, b] for a, b in zip(path, path[1:])))
    top = max(scores.values())
    weights = {p: math.exp(s - top) for p, s in scores.items()}
    total = sum(weights.values())
    return {p: w / total for p, w in weights.items()}


@pytest.mark.parametrize("constraint", [None, "BIO"])
def test_crf_marginals_sum_to_one_and_equal_enumeration(constraint):
    from elman.models.crf import CRF

    rng = np.random.default_rng(7)
    crf = CRF(5, tag_names=BIO_TAGS, constraint=constraint)
    crf.transitions.assign(rng.normal(size=(5, 5)).astype("float32"))
    crf.start_scores.assign(rng.normal(size=5).astype("float32"))
    crf.end_scores.assign(rng.normal(size=5).astype("float32"))
    lengths = [4, 3, 1]
    potentials = rng.normal(scale=2.0, size=(3, 4, 5)).astype("float32")
    mask = np.arange(4)[None, :] < np.array(lengths)[:, None]
    marginals = np.asarray(crf.marginals(potentials, mask))
    np.testing.assert_allclose(marginals.sum(-1), mask.astype("float32"), atol=1e-5)
    for b, n in enumerate(lengths):
        paths = _enumerate_paths(potentials[b, :n].astype("float64"), crf, constraint == "BIO")
        expected = np.zeros((n, 5))
        for path, p in paths.items():
            expected[np.arange(n), path] += p
        np.testing.assert_allclose(marginals[b, :n], expected, atol=1e-5)


def _tagger(head):
    import keras

    from elman.models.sequence_tagger import SequenceTagger

    keras.utils.set_random_seed(3)
    return SequenceTagger(12, 5, embedding_dim=4, units=4, head=head, tag_names=BIO_TAGS,
                          constraint="BIO" if head == "crf" else None)


@pytest.mark.parametrize("head", ["crf", "softmax"])
def test_tagging_trace_probabilities_and_entity_probability(head):
    import tensorflow as tf

    from elman.tasks.tagging.trace import span_log_probability, tag_trace

    model = _tagger(head)
    sentences = [[3, 4, 5, 6], [7, 2, 9], [11]]
    lengths = np.array([len(s) for s in sentences])
    features = tf.RaggedTensor.from_row_lengths(
        np.concatenate(sentences).astype("int32"), lengths)
    entries = tag_trace(model, features, lengths, batch_size=2)
    for words, entry in zip(sentences, entries):
        potentials = np.asarray(model(np.array([words], "int32")))[0].astype("float64")
        probs = entry["probs"]
        np.testing.assert_allclose(probs.sum(-1), 1.0, atol=1e-5)
        if head == "softmax":
            expected = np.exp(potentials) / np.exp(potentials).sum(-1, keepdims=True)
            np.testing.assert_allclose(probs, expected, atol=1e-5)
            np.testing.assert_array_equal(entry["tags"], potentials.argmax(-1))
            continue
        paths = _enumerate_paths(potentials, model.crf, only_valid_bio=True)
        expected = np.zeros_like(probs, dtype="float64")
        for path, p in paths.items():
            expected[np.arange(len(words)), path] += p
        np.testing.assert_allclose(probs, expected, atol=1e-5)
        assert tuple(entry["tags"]) == max(paths, key=paths.get)  # Viterbi
        for start, end in ((0, len(words)), (len(words) - 1, len(words)), (0, 1)):
            span = tuple(entry["tags"][start:end])
            want = sum(p for path, p in paths.items() if path[start:end] == span)
            got = math.exp(span_log_probability(entry["tags"], start, end, entry["crf"]))
            assert got == pytest.approx(want, abs=1e-5)


def _translator(attention):
    import keras

    from elman.models.seq2seq_translator import Seq2SeqTranslator
    from elman.tasks.translation.config import END, START
    from elman.tasks.translation.translator import Translator
    from elman.text.tokenize import TextTokenizer

    keras.utils.set_random_seed(5)
    source = TextTokenizer(vocabulary=["i", "like", "tea", "you"], level="word")
    target = TextTokenizer(vocabulary=[START, END, "我", "喜欢", "茶", "你"], level="cjk")
    model = Seq2SeqTranslator(6, 8, embedding_dim=6, units=6, attention=attention)
    model((np.ones([1, 2], "int32"), np.ones([1, 2], "int32")))
    decoding = {"max_len_ratio": 1.0, "max_len_offset": 2, "max_len": 6, "batch_size": 2,
                "length_penalty": 0.6}
    return Translator(model, source, target, decoding)


@pytest.mark.parametrize("attention,beam", [("luong", 0), ("none", 2)])
def test_translation_trace_equals_the_decoder_stepped_by_hand(attention, beam):
    import tensorflow as tf

    from elman.tasks.translation.trace import trace_texts

    translator = _translator(attention)
    texts = ["i like tea", "you", "tea tea i like you"]
    traces = trace_texts(translator, texts, beam=beam, batch_size=2)
    assert [t["translation"] for t in traces] == translator.translate(texts, beam)
    model = translator.model
    for text, trace in zip(texts, traces):
        source = translator.source_tokenizer(tf.constant([text])).numpy().astype("int32")
        assert trace["source_tokens"] == text.split()
        enc, mask, states = model.encode(source)
        previous = translator.start_id
        for step in trace["steps"]:
            log_probs, states, weights = model.decode_step(
                np.array([previous], "int32"), states, enc, mask)
            token = translator.vocabulary.index(step["token"])
            assert step["probability"] == pytest.approx(
                math.exp(float(log_probs[0, token])), abs=1e-5)
            if attention == "none":
                assert step["attention"] is None
            else:
                np.testing.assert_allclose(step["attention"], np.asarray(weights)[0], atol=1e-5)
                assert sum(step["attention"]) == pytest.approx(1.0, abs=1e-5)
            previous = token


def _language_model():
    import keras

    from elman.models.language_model import LanguageModel

    keras.utils.set_random_seed(9)
    model = LanguageModel(10, embedding_dim=4, cell="gru", units=6, num_layers=1,
                          dropout=0.0, stateful=False)
    model.build((None, None))
    return model


@pytest.mark.parametrize("streams", [1, 3])
def test_surprisals_sum_to_the_cross_entropy_evaluate_computes(streams):
    from elman.tasks.lm.scoring import score_ids
    from elman.tasks.lm.trace import stream_trace

    model = _language_model()
    ids = np.random.default_rng(1).integers(1, 10, size=600).astype("int32")
    scored = stream_trace(model, ids, streams, top=3, chunk=64)
    scores = score_ids(model, ids, streams, "word")  # what `elman evaluate` reports
    assert len(scored["log_prob"]) == (len(ids) - 1) // streams * streams
    assert -scored["log_prob"].sum() == pytest.approx(
        scores["cross_entropy"] * len(scored["log_prob"]), rel=1e-5)
    assert scored["fresh"].sum() == streams and scored["top_probs"].shape[1] == 3
    assert (scored["top_ids"] != 0).all()  # padding is never an expected token
    # one position by hand: the whole prefix in one call, from a fresh state
    k = 40 if streams == 1 else (len(ids) - 1) // streams + 7  # second piece: its 8th target
    position = scored["position"][k]
    start = 0 if streams == 1 else (len(ids) - 1) // streams
    logits = np.asarray(model(ids[None, start:position]))[0, -1].astype("float64")
    log_p = logits - logits.max() - np.log(np.exp(logits - logits.max()).sum())
    assert scored["log_prob"][k] == pytest.approx(log_p[ids[position]], abs=1e-4)


@pytest.mark.slow
def test_evaluate_trace_matches_evaluate_on_a_trained_lm(tmp_path, capsys):
    """End to end: the surprisals of `evaluate --trace` sum to the negative log-likelihood
    `evaluate` reports, for a file and for a text traced alone (a file of that line)."""
    from elman import api

    lines = [f"the {a} sees the {b} ." for a in ("cat", "dog", "man") for b in ("ball", "mat")]
    for name in ("train", "test"):
        (tmp_path / f"{name}.txt").write_text("\n".join(lines * 3) + "\n", encoding="utf-8")
    (tmp_path / "one.txt").write_text("the cat sees the zebra .\n", encoding="utf-8")
    run = tmp_path / "run"
    assert cli.main(["train", "lm", "--data", str(tmp_path / "train.txt"), "--validation",
                     str(tmp_path / "test.txt"), "--out", str(run), "--reports",
                     str(tmp_path / "reports"), "--set", "model.units=8", "--set",
                     "model.embedding_dim=4", "--set", "train.epochs=1", "--set",
                     "train.batch_size=2"]) == 0
    predictor = api.load(run)
    for name, traced in (("test.txt", predictor.trace_file(tmp_path / "test.txt")),
                         ("one.txt", predictor.trace(["the cat sees the zebra ."])[0])):
        scores = api.evaluate(run, data=tmp_path / name).scores
        nll = scores["cross_entropy"] * traced["tokens_scored"]
        bits = sum(step["surprisal_bits"] for step in traced["steps"])
        assert bits * math.log(2) == pytest.approx(nll, rel=1e-5)
        assert traced["perplexity"] == pytest.approx(scores["perplexity"], rel=1e-5)
    capsys.readouterr()
    assert cli.main(["evaluate", str(run), "--trace", "--json", "--data",
                     str(tmp_path / "one.txt")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [s["token"] for s in printed["steps"]] == ["the", "cat", "sees", "the", "zebra",
                                                      ".", "<eol>"]
    assert printed["steps"][4]["oov"] and printed["streams"] == 1
