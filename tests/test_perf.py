"""Speed-related settings: cuDNN eligibility, mixed precision, FLOP counts, the bench."""

import json

import keras
import pytest

from elman.models.sentiment_classifier import SentimentClassifier
from elman.core import runtime
from tests.conftest import run_elman


def _messages(model, lengths=None):
    lines = []
    blocked = runtime.cudnn_report(model, lengths, log=lines.append)
    return blocked, lines


def test_default_models_are_cudnn_eligible_and_say_nothing_on_cpu():
    model = SentimentClassifier(50, 2, embedding_dim=4, units=3, num_layers=2, dropout=0.5)
    blocked, lines = _messages(model, [3, 1, 2])
    assert blocked == {} and lines == []
    assert len(runtime._recurrent_layers(model)) == 4  # 2 layers x 2 directions


@pytest.mark.parametrize("layer, expected", [
    (keras.layers.LSTM(3, recurrent_dropout=0.25), ["recurrent_dropout=0.25"]),
    (keras.layers.LSTM(3, activation="relu"), ["activation='relu'"]),
    (keras.layers.LSTM(3, recurrent_activation="hard_sigmoid"),
     ["recurrent_activation='hard_sigmoid'"]),
    (keras.layers.LSTM(3, unroll=True), ["unroll=True"]),
    (keras.layers.GRU(3, reset_after=False), ["reset_after=False"]),
    (keras.layers.LSTM(3, use_cudnn=False, use_bias=False), ["use_cudnn=False", "use_bias=False"]),
    (keras.layers.LSTM(3, dropout=0.5), []),  # input dropout keeps cuDNN (Keras 3)
    (keras.layers.GRU(3), []),
])
def test_cudnn_blockers_name_each_setting(layer, expected):
    assert runtime.cudnn_blockers(layer) == expected


def test_run_log_names_the_layer_and_the_cost_and_warns_on_empty_rows():
    ids = keras.Input(shape=(None,), dtype="int32")
    x = keras.layers.Embedding(10, 4, mask_zero=True)(ids)
    x = keras.layers.Bidirectional(keras.layers.LSTM(3, recurrent_dropout=0.1,
                                                     name="slow"), name="bi")(x)
    model = keras.Model(ids, keras.layers.Dense(2)(x))
    blocked, lines = _messages(model, [2, 0, 0, 5])
    assert len(blocked) == 2  # forward and backward copies
    assert all("recurrent_dropout=0.1" in line and "cuDNN" in line and "slower" in line
               for line in lines[:2])
    assert "2 training example(s) have no tokens" in lines[2]


def test_simple_rnn_has_no_cudnn_kernel():
    assert "SimpleRNN" in runtime.cudnn_blockers(keras.layers.SimpleRNN(3))[0]


def test_float16_compiles_with_loss_scaling_and_a_float32_output():
    try:
        keras.mixed_precision.set_global_policy("mixed_float16")
        model = SentimentClassifier(20, 2, embedding_dim=4, units=3, hidden=4)
        model.compile(optimizer=keras.optimizers.Adam(1e-3),
                      loss="sparse_categorical_crossentropy")
        assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
        assert model.get_layer("embedding").compute_dtype == "float16"
        assert model.get_layer("embedding").variable_dtype == "float32"
        assert "float32" in str(model.output.dtype)
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
        model = SentimentClassifier(20, 2, embedding_dim=4, units=3, hidden=4)
        model.compile(optimizer=keras.optimizers.Adam(1e-3),
                      loss="sparse_categorical_crossentropy")
        assert not isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    finally:
        keras.mixed_precision.set_global_policy("float32")


def test_flop_counts_per_token():
    from elman.bench.timing import lstm_flops_per_token

    # in 3, units 2: 4 gates x (3 + 2) inputs x 2 units multiply-adds = 40, x2 FLOPs
    assert lstm_flops_per_token(3, 2, "lstm", directions=1) == 80
    assert lstm_flops_per_token(3, 2, "gru", directions=2) == 2 * 60
    assert lstm_flops_per_token(128, 64) == 2 * 2 * 4 * 192 * 64


@pytest.mark.slow
def test_gpu_check_reports_no_gpu_on_a_cpu_machine(tmp_path):
    import tensorflow as tf

    if tf.config.list_physical_devices("GPU"):
        pytest.skip("this machine has a GPU")
    done = run_elman(["bench", "--gpu", "--out", tmp_path], timeout=300)
    assert done.returncode == 1
    assert "no GPU visible" in done.stdout
    assert json.loads((tmp_path / "gpu_check.json").read_text())["gpu_visible"] is False


@pytest.mark.slow
def test_quick_bench_writes_bench_json(tmp_path):
    done = run_elman(["bench", "--quick", "--out", tmp_path], timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads((tmp_path / "bench.json").read_text())
    for key in ("machine", "data", "pipeline_vs_reference", "input_pipeline",
                "recurrent_flops", "tasks", "sentiment"):
        assert key in result, key
    assert result["quick"] is True and result["data"]["name"] == "toy-en"
    for key in ("cpu_model", "cpu_cores", "tensorflow", "device"):
        assert result["machine"][key]
    row = result["pipeline_vs_reference"]
    assert row["elman_tokens_per_s"] > 0 and row["reference_tokens_per_s"] > 0
    assert row["speedup"] == pytest.approx(row["elman_tokens_per_s"] /
                                           row["reference_tokens_per_s"])
    assert 0 < row["reference_real_token_share"] < 1
    assert "share" in result["input_pipeline"]
    flops = result["recurrent_flops"]
    assert flops["ratio"] == pytest.approx(flops["elman_recurrent_flops_per_s"] /
                                           flops["dense_matmul_1024_flops_per_s"])
    assert set(result["tasks"]) == {"tagging", "translation", "lm"}
    assert [r["data"] for r in result["sentiment"]] == ["toy-en"]
    assert result["sentiment"][0]["predict_sentences_per_s"] > 0
    trace = result["trace"]["default"]  # issue 18: at most one extra pass per text
    assert 0 < trace["trace_forward_passes"] <= trace["texts"]
    assert trace["trace_sentences_per_s"] > 0 and trace["predict_sentences_per_s"] > 0
    assert "[1] speedup" in done.stdout and "bench.json" in done.stdout
    assert "[7] sentiment trace vs plain prediction (default)" in done.stdout
    tok = result["tokenizers"]  # issue 17: same sentences for the three tokenizers
    assert {r["sentences_seen"] for r in tok["tokenizers"].values()} == {tok["sentences"]}
    assert "[8] tokenizer sentences/s in the graph" in done.stdout
    beams = result["tasks"]["translation"]["beam_vs_greedy"]
    assert beams["sentences"] == result["tasks"]["translation"]["sentences"]
    assert beams["beam_8_over_greedy_time"] == pytest.approx(
        beams["greedy_sentences_per_s"] / beams["beam_8_sentences_per_s"])
    assert "[4] translation: beam_vs_greedy.beam_4_over_greedy_time" in done.stdout
