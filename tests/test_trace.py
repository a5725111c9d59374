"""The sentiment reading trace against independent oracles, the CLI and the report.

Oracles: the classifier run on each prefix on its own (unpadded, batch of one), and the
course's Case C recomputed by `elman.tasks.textbook.cases_rnn.case_c` (float64 Keras
layers) for a unidirectional model holding the course's weights.
"""

import json

import numpy as np
import pytest

from elman import cli
from elman.errors import UserError
from tests.conftest import train_tiny_sentiment

TEXTS = ["服务慢，但味道很好", "the service was slow, but the food was great", "good",
         "bad food", "not bad at all, really"]
VOCAB = ["服", "务", "慢", "，", "但", "味", "道", "很", "好", "the", "service", "was",
         "slow", ",", "but", "food", "great", "good", "bad", "not"]


def _classifiers(cell, pooling, bidirectional, chars, members, seed=0):
    import keras

    from elman.models.sentiment_classifier import SentimentClassifier

    keras.utils.set_random_seed(seed)
    return [SentimentClassifier(len(VOCAB) + 2, 3, embedding_dim=6, cell=cell, units=5,
                                bidirectional=bidirectional, pooling=pooling, hidden=4,
                                dropout=0.0, head_dropout=0.0,
                                char_features="lstm" if chars else "none",
                                char_vocabulary_size=30 if chars else 0, char_units=4,
                                name=f"member_{k}") for k in range(members)]


@pytest.mark.parametrize("cell,pooling,bidirectional,chars,members", [
    ("rnn", "max", True, False, 2),
    ("lstm", "last", True, False, 1),
    ("gru", "attention", True, False, 1),  # the padded steps get no attention weight
    pytest.param("gru", "mean", True, True, 2, marks=pytest.mark.slow),
    pytest.param("lstm", "last", False, True, 1, marks=pytest.mark.slow),
])
def test_batched_prefix_trace_equals_each_prefix_alone(cell, pooling, bidirectional, chars,
                                                       members):
    import tensorflow as tf

    from elman.tasks.sentiment.trace import PrefixTracer
    from elman.text.tokenize import CharIds, TextTokenizer

    tokenizer = TextTokenizer(vocabulary=VOCAB)
    char_layer = CharIds(chars=sorted(set("".join(VOCAB)))[:28]) if chars else None
    classifiers = _classifiers(cell, pooling, bidirectional, chars, members)
    tracer = PrefixTracer(tokenizer, classifiers, ["a", "b", "c"], char_layer, max_rows=12)
    traces = tracer.trace(TEXTS)  # max_rows=12: the texts go through in several batches
    spec = tf.TensorSpec([None, None], tf.int32)
    if chars:
        spec = {"token_ids": spec, "char_ids": tf.TensorSpec([None, None, None], tf.int32)}
    alone_fns = [tf.function(lambda x, c=c: c(x, training=False), input_signature=[spec])
                 for c in classifiers]  # one prefix at a time, unpadded, batch of one
    for text, trace in zip(TEXTS, traces):
        ids = tokenizer(tf.constant([text])).numpy()[0]
        char_ids = char_layer(tf.constant([text])).numpy()[0] if chars else None
        assert trace["tokens"] == [t.decode() for t in
                                   tokenizer.split(tf.constant([text])).to_list()[0]]
        assert len(trace["steps"]) == len(ids)
        for t, step in enumerate(trace["steps"]):
            x = ids[None, :t + 1].astype(np.int32)
            if chars:
                x = {"token_ids": x, "char_ids": char_ids[None, :t + 1].astype(np.int32)}
            alone = np.mean([np.asarray(f(x))[0] for f in alone_fns], axis=0)
            got = np.array([step["probabilities"][k] for k in "abc"])
            np.testing.assert_allclose(got, alone, atol=2e-6)
        assert trace["bidirectional"] is bidirectional
        assert trace["probabilities"] == trace["steps"][-1]["probabilities"]


def test_unidirectional_trace_with_the_course_weights_equals_case_c():
    """Case C: h_t = tanh(x_t + 0.5 h_{t-1}), p = σ(2 h_t), as a SentimentClassifier."""
    from elman.models.sentiment_classifier import SentimentClassifier
    from elman.tasks.sentiment.trace import PrefixTracer
    from elman.tasks.textbook.cases_rnn import case_c
    from elman.tasks.textbook.plots import case_c_probabilities
    from elman.text.tokenize import TextTokenizer

    C = case_c()
    tokenizer = TextTokenizer(vocabulary=C["tokens"], level="word")
    model = SentimentClassifier(len(C["tokens"]) + 2, 2, embedding_dim=1, cell="rnn", units=1,
                                bidirectional=False, dropout=0.0, pooling="last", hidden=0,
                                head_dropout=0.0)
    model.get_layer("embedding").set_weights([np.array([[0.0], [0.0]] + [[x] for x in C["x"]])])
    model.get_layer("encoder").recurrent_layers[0].set_weights(
        [np.array([[1.0]]), np.array([[0.5]]), np.array([0.0])])
    # softmax([0, 2h]) = [1 - σ(2h), σ(2h)]: the course's sigmoid head on two classes
    model.get_layer("probabilities").set_weights([np.array([[0.0, 2.0]]), np.zeros(2)])
    trace = PrefixTracer(tokenizer, [model], ["negative", "positive"]).trace(
        [" ".join(C["tokens"])])[0]
    assert trace["tokens"] == C["tokens"] and not trace["bidirectional"]
    got = [s["probabilities"]["positive"] for s in trace["steps"]]
    np.testing.assert_allclose(got, case_c_probabilities(C), atol=2e-6)
    np.testing.assert_allclose(got[-1], C["p"], atol=2e-6)
    # 0.5 after 服务 (a tie goes to the first label), negative after 慢, positive from 但 on
    assert [s["label"] for s in trace["steps"]] == ["negative", "negative", "positive",
                                                    "positive"]


def test_case_c_plot_and_report_line(tmp_path):
    from elman.tasks.textbook.cases_rnn import case_c
    from elman.tasks.textbook.plots import plot_case_c
    from elman.tasks.textbook.report import _case_c

    C = case_c()
    plot_case_c(C, tmp_path / "case_c_trace.png")
    assert (tmp_path / "case_c_trace.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = "\n".join(_case_c(C, {}))
    assert "![Case C reading trace](case_c_trace.png)" in text and "慢 0.179" in text


def test_a_task_without_a_trace_says_so(tmp_path):
    from elman.tasks.base import Predictor

    predictor = Predictor.__new__(Predictor)
    predictor.task = "custom"
    with pytest.raises(UserError, match="this task has no trace"):
        predictor.trace(["text"])


def test_trace_table_widths_count_wide_chars():
    from elman.core.trace import bar, display_width, table

    assert display_width("服务a") == 5 and bar(1.0, 4) == "████" and bar(0.0) == ""
    lines = table(["t", "token", "p"], [["1", "服务", "0.5"], ["10", "ab", "0.25"]],
                  right=(0, 2)).splitlines()
    assert len({display_width(line) for line in lines}) == 1


def test_cli_predict_trace_and_report(tmp_path, tiny_sentiment, capsys):
    """Train a tiny run; `predict --trace` ends on `predict`'s answer; the report plots."""
    run = train_tiny_sentiment(tmp_path, tiny_sentiment, "run")
    capsys.readouterr()
    text = "the service was slow, but the food was great"
    assert cli.main(["predict", str(run), "--format", "json", text]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert cli.main(["predict", str(run), "--trace", "--format", "json", text, "服务慢"]) == 0
    traces = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(traces) == 2 and len(traces[0]["steps"]) == 10
    for label, p in plain["probabilities"].items():
        assert traces[0]["steps"][-1]["probabilities"][label] == pytest.approx(p, abs=1e-5)
    assert traces[0]["label"] == plain["label"]
    assert cli.main(["predict", str(run), "--trace", text]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == text and "token" in out and f"→ {plain['label']}" in out
    assert cli.main(["predict", str(run), "--trace", "--format", "conll", text]) == 2
    assert cli.main(["evaluate", str(run), "--trace"]) == 2
    assert "language-model runs" in capsys.readouterr().err
    report_dir = tmp_path / "reports" / "sentiment" / "run"
    report = (report_dir / "report.md").read_text(encoding="utf-8")
    assert "## Reading traces" in report
    assert (report_dir / "trace_contrast.png").is_file()


def test_each_task_formats_its_trace_as_a_table():
    """The terminal tables, from hand-made traces (no model needed)."""
    from elman.tasks.lm.predictor import LMPredictor
    from elman.tasks.tagging.predictor import TaggingPredictor
    from elman.tasks.translation.predictor import TranslationPredictor

    tagging = {"text": "Mary sings", "probability_source": "CRF marginals",
               "entity_probability": "the CRF probability of the span's tags",
               "steps": [{"token": "Mary", "tag": "B-PER", "model_tag": "B-PER",
                          "probability": 0.9, "probabilities": {"O": 0.1, "B-PER": 0.9}},
                         {"token": "sings", "tag": "O", "model_tag": "O", "probability": 1.0,
                          "probabilities": {"O": 1.0, "B-PER": 0.0}}],
               "entities": [{"type": "PER", "start": 0, "end": 1, "text": "Mary",
                             "probability": 0.9}]}
    text = TaggingPredictor.__new__(TaggingPredictor).format_trace(tagging)
    assert "B-PER  0.9000" in text and "O 0.100" in text and "p = 0.9000\t(token 1)" in text
    translation = {"text": "i like tea", "translation": "我喜欢茶", "ended": True,
                   "source_tokens": ["i", "like", "tea"], "log_probability": -0.1,
                   "steps": [{"token": "我", "probability": 0.95, "attention": [0.8, 0.1, 0.1]},
                             {"token": "</s>", "probability": 0.9, "attention": [0.2, 0.2, 0.6]}]}
    text = TranslationPredictor.__new__(TranslationPredictor).format_trace(translation)
    assert text.splitlines()[0] == "i like tea → 我喜欢茶" and "i 0.80" in text
    assert "tea 0.60" in text and "length cap" not in text
    lm = {"data": "f.txt", "streams": 2, "unscored": 1, "tokens_scored": 2, "total_bits": 3.0,
          "negative_log_likelihood": 2.0794, "cross_entropy": 1.0397, "perplexity": 2.83,
          "steps": [{"token": "a", "oov": False, "surprisal_bits": 1.0, "probability": 0.5,
                     "expected": [{"token": "a", "probability": 0.5}], "fresh_state": True},
                    {"token": "<eol>", "oov": True, "surprisal_bits": 2.0, "probability": 0.25,
                     "expected": [{"token": "b", "probability": 0.7}], "fresh_state": True}]}
    text = LMPredictor.__new__(LMPredictor).format_trace(lm)
    assert "↺ <eol> (unknown)" in text and "3.00 bits over 2 tokens" in text
    assert "2 parallel pieces" in text and "last 1 tokens are not scored" in text


@pytest.mark.parametrize("chars", [False, True])
def test_attention_weights_in_the_trace_by_numpy(chars):
    """With attention pooling each step carries its token's weight in the whole text: a
    softmax over the text's tokens of u · tanh(W h_t + b), recomputed here with numpy from
    the encoder's outputs, averaged over an ensemble's two members."""
    import keras
    import tensorflow as tf

    from elman.tasks.sentiment.trace import PrefixTracer
    from elman.text.tokenize import CharIds, TextTokenizer

    tokenizer = TextTokenizer(vocabulary=VOCAB)
    char_layer = CharIds(chars=sorted(set("".join(VOCAB)))[:28]) if chars else None
    classifiers = _classifiers("gru", "attention", True, chars, 2)
    tracer = PrefixTracer(tokenizer, classifiers, ["a", "b", "c"], char_layer)
    traces = tracer.trace(TEXTS)
    if not chars:  # 300 texts go through in chunks of 256 and come back in order
        ids = [[3, 4, 5], [6, 7]] * 150
        many = tracer.attention(ids)
        assert len(many) == 300
        for got, row in zip(many, ids):
            np.testing.assert_allclose(got, tracer.attention([row])[0], atol=2e-6)
    for text, trace in zip(TEXTS, traces):
        ids = tokenizer(tf.constant([text])).numpy()[:, :len(trace["tokens"])]
        x = ids if not chars else {"token_ids": ids,
                                   "char_ids": char_layer(tf.constant([text])).numpy()}
        expected = []
        for member in classifiers:
            pooling = member.get_layer("pooling")
            encoder = keras.Model(member.input, member.get_layer("encoder").output)
            h = np.asarray(encoder(x))[0].astype(np.float64)
            w, b, u = (np.asarray(v, np.float64) for v in pooling.get_weights())
            scores = np.tanh(h @ w + b) @ u
            expected.append(np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum())
        got = np.array([step["attention"] for step in trace["steps"]])
        np.testing.assert_allclose(got, np.mean(expected, axis=0), atol=2e-6)
        assert got.sum() == pytest.approx(1.0, abs=1e-5)


def test_no_attention_column_without_attention_pooling():
    from elman.tasks.sentiment.trace import PrefixTracer
    from elman.text.tokenize import TextTokenizer

    tracer = PrefixTracer(TextTokenizer(vocabulary=VOCAB), _classifiers("lstm", "max", True,
                                                                        False, 1), ["a", "b", "c"])
    assert tracer.attention([[2, 3]]) is None
    assert all("attention" not in step for step in tracer.trace(TEXTS[:1])[0]["steps"])
