"""`train.xla` and `train.length_multiple` (issue 20): XLA-compiled steps on few shapes.

Oracles: padded shapes and values worked out by hand; the XLA step against Keras'
graph-mode step on the same weights and batches (no dropout: XLA draws its random
numbers with another algorithm, so masks differ); two XLA runs of one seed, and an XLA
run stopped after every epoch and resumed, against each other bit for bit.
"""

import inspect
import json

import numpy as np
import pytest
import tensorflow as tf

from elman import config as config_lib
from elman.core.batching import _pad, dataset_from_plan, plan_stats
from elman.errors import UserError


def test_pad_rounds_every_ragged_axis_up_to_the_multiple():
    ids = tf.ragged.constant([[5, 6, 7], [8]])
    dense = _pad(ids, multiple=4).numpy()
    assert dense.tolist() == [[5, 6, 7, 0], [8, 0, 0, 0]]
    assert _pad(ids).numpy().tolist() == [[5, 6, 7], [8, 0, 0]]  # multiple 1: as before
    assert _pad(tf.ragged.constant([[1, 2, 3, 4]]), multiple=4).shape == (1, 4)  # no extra
    empty = tf.ragged.constant([[]], dtype=tf.int32)
    assert _pad(empty).shape == (1, 1) and _pad(empty, multiple=8).shape == (1, 8)
    chars = tf.ragged.constant([[[1, 2], [3, 4, 5]], [[6]]])  # [rows, tokens, chars]
    out = _pad(chars, multiple=4).numpy()
    assert out.shape == (2, 4, 4)
    assert out[0, 1].tolist() == [3, 4, 5, 0] and out[1, 0].tolist() == [6, 0, 0, 0]
    assert out[1, 1:].sum() == 0 and out[0, 2:].sum() == 0


def test_dataset_pads_features_and_targets_alike():
    ids = tf.ragged.constant([[1, 2, 3, 4, 5], [6], [7, 8]])
    tags = tf.ragged.constant([[1, 1, 2, 2, 1], [3], [1, 2]])
    batches = [np.array([0, 1]), np.array([2])]
    got = [(x.numpy(), y.numpy()) for x, y in dataset_from_plan(ids, tags, batches,
                                                                multiple=3)]
    assert got[0][0].tolist() == [[1, 2, 3, 4, 5, 0], [6, 0, 0, 0, 0, 0]]
    assert got[0][1].tolist() == [[1, 1, 2, 2, 1, 0], [3, 0, 0, 0, 0, 0]]
    assert got[1][0].tolist() == [[7, 8, 0]] and got[1][1].tolist() == [[1, 2, 0]]


def test_plan_stats_count_the_rounded_lengths():
    lengths = np.array([5, 1, 2, 9])
    plan = [np.array([0, 1]), np.array([2]), np.array([3])]
    stats = plan_stats(plan, lengths, multiple=4)
    # padded: 2 rows × 8, 1 × 4, 1 × 12
    assert stats["mean_padded_tokens_per_batch"] == pytest.approx((16 + 4 + 12) / 3)
    assert plan_stats(plan, lengths)["mean_padded_tokens_per_batch"] == pytest.approx(
        (10 + 2 + 9) / 3)


def test_the_multiple_follows_the_settings():
    assert config_lib.length_multiple(config_lib.load_config("sentiment").train) == 1
    xla = config_lib.load_config("sentiment", overrides=["train.xla=true"]).train
    assert config_lib.length_multiple(xla) == 4
    both = config_lib.load_config("tagging", overrides=["train.xla=true",
                                                        "train.length_multiple=8"])
    assert config_lib.length_multiple(both.train) == 8
    with pytest.raises(UserError, match="it needs train.strategy"):
        config_lib.load_config("sentiment", overrides=["train.xla=true",
                                                       "train.strategy=mirrored"])
    with pytest.raises(UserError, match="length_multiple"):
        config_lib.load_config("sentiment", overrides=["train.length_multiple=-1"])
    with pytest.raises(UserError, match="steps_per_execution > 1 needs"):
        config_lib.load_config("tagging", overrides=["train.steps_per_execution=4",
                                                     "train.strategy=mirrored"])
    with pytest.raises(UserError, match="steps_per_execution"):
        config_lib.load_config("tagging", overrides=["train.steps_per_execution=0"])


def _iterations(checkpoint):
    """The optimizer's step counter stored in a checkpoint."""
    import keras

    from elman import models

    models.import_all()
    model = keras.saving.load_model(checkpoint, safe_mode=True)
    return int(model.optimizer.iterations.numpy())


def _step_function(model):
    """The tf.function Keras runs for one training step (inside its wrappers)."""
    inner = inspect.getclosurevars(model.train_function).nonlocals["one_step_on_data"]
    return inner.__wrapped__  # under Keras' wrapper that converts optional inputs


def test_the_xla_step_is_compiled_and_equals_the_graph_step():
    import keras

    from elman.config import TrainConfig
    from elman.core.compiled import graph_mode, use_xla
    from elman.models.fused_optimizers import FusedAdam
    from elman.models.sentiment_classifier import SentimentClassifier

    def build():
        keras.utils.set_random_seed(3)
        model = SentimentClassifier(40, 2, embedding_dim=8, units=8, num_layers=2,
                                    dropout=0.0, pooling="max", hidden=8, head_dropout=0.0)
        model.compile(optimizer=FusedAdam(1e-2), loss="sparse_categorical_crossentropy")
        return model

    rng = np.random.default_rng(0)
    batches = []
    for length in (5, 8, 3):
        x = rng.integers(2, 40, (6, length)).astype("int32")
        x[0, length - 2:] = 0  # a padded row
        batches.append((x, rng.integers(0, 2, 6).astype("int32")))
    graph, xla = build(), build()
    use_xla(xla, TrainConfig(xla=True), log=lambda *_: None)
    for model in (graph, xla):
        for x, y in batches:
            model.train_on_batch(x, y)
    assert _step_function(xla)._jit_compile is True
    assert not _step_function(graph)._jit_compile
    for a, b in zip(graph.get_weights(), xla.get_weights()):
        np.testing.assert_allclose(a, b, atol=2e-6)
    assert max(float(np.abs(a - b).max()) for a, b in
               zip(build().get_weights(), xla.get_weights())) > 1e-3  # it did train
    graph_mode(xla)
    xla.train_on_batch(*batches[0])
    assert not _step_function(xla)._jit_compile


def test_a_layer_xla_cannot_compile_is_one_clear_error():
    import keras

    from elman.config import TrainConfig
    from elman.core.compiled import use_xla

    class NoXla(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.supports_jit = False

        def call(self, x):
            return x

    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Dense(1)(NoXla()(inputs)))
    with pytest.raises(UserError, match="NoXla"):
        use_xla(model, TrainConfig(xla=True))


def test_sentiment_with_xla_is_deterministic_and_says_so(tiny_sentiment, tmp_path, capsys):
    from elman import cli
    from tests.conftest import TINY_SETTINGS

    args = ["train", "sentiment", "--data", str(tiny_sentiment["train"]),
            "--validation", str(tiny_sentiment["validation"]),
            "--reports", str(tmp_path / "reports"), *TINY_SETTINGS,
            "--set", "train.xla=true", "--set", "encoder.dropout=0.3",
            "--set", "train.steps_per_execution=3"]
    for name in ("a", "b"):
        assert cli.main(args + ["--out", str(tmp_path / name)]) == 0
    log = capsys.readouterr().out
    assert "compiled with XLA" in log
    states = [json.loads((tmp_path / n / "checkpoints" / "state.json").read_text("utf-8"))
              for n in ("a", "b")]
    assert states[0]["history"] == states[1]["history"]
    assert len(states[0]["history"]["loss"]) == 2
    # 60 training rows in batches of 8: 8 steps an epoch, in calls of 3, 3 and 2
    assert _iterations(tmp_path / "a" / "checkpoints" / "epoch-002.keras") == 16
    run = json.loads((tmp_path / "a" / "run.json").read_text(encoding="utf-8"))
    assert run["batching"]["xla"] is True and run["batching"]["length_multiple"] == 4
    assert run["batching"]["steps_per_execution"] == 3
    report = (tmp_path / "reports" / "sentiment" / "a" / "report.md").read_text("utf-8")
    assert "Steps compiled with XLA" in report
    assert "Lengths padded up to a multiple of 4" in report
    assert "3 steps a call" in report


@pytest.mark.slow
def test_tagging_with_xla_resumes_exactly(tmp_path, capsys):
    """CRF and char features under XLA: two epochs in one go, or one per invocation."""
    from tests.test_oracles_runs import straight_then_resumed_tagging

    log = straight_then_resumed_tagging(tmp_path, capsys, "train.xla=true")
    assert "compiled with XLA" in log
    run = json.loads((tmp_path / "resumed" / "run.json").read_text(encoding="utf-8"))
    assert run["batching"]["xla"] is True


def test_several_steps_a_call_keep_the_epochs_apart_and_resume_exactly(tmp_path, capsys):
    """`train.steps_per_execution = 3` on 4 batches an epoch (30 sentences, batches of
    8): calls of 3 and 1 steps, never one reaching into the next epoch's batches, so a
    resumed run (which starts at an epoch boundary) equals a straight one."""
    from tests.test_oracles_runs import straight_then_resumed_tagging

    straight_then_resumed_tagging(tmp_path, capsys, "train.steps_per_execution=3")
    assert _iterations(tmp_path / "straight" / "checkpoints" / "epoch-002.keras") == 8


def test_the_bench_warm_up_holds_every_shape_an_epoch_can_have():
    from elman.bench.rows import xla_shapes
    from elman.core.batching import plan_epoch

    lengths = np.random.default_rng(4).integers(1, 57, size=1_000)
    lengths[:3] = [57, 1, 30]

    def shape(batch):
        longest = int(lengths[batch].max())
        return len(batch), -(-longest // 4) * 4

    warm = [shape(b) for b in xla_shapes(lengths, 32, 4)]
    assert len(warm) == len(set(warm))  # each shape compiled once
    seen = {shape(b) for epoch in range(20) for b in plan_epoch(lengths, 32, 7, epoch)}
    assert seen <= set(warm)
    assert {rows for rows, _ in warm} == {32, 1_000 % 32}
    assert {size for _, size in warm} == set(range(4, 61, 4))
