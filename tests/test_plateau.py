"""The learning rate lowered on a plateau (`train.plateau = f`): after an epoch that does
not improve the monitor, the best epoch's weights go back into the model and the rate is
multiplied by f. The oracles are the weights recorded at every epoch's end and start, and
the best epochs ranked by NumPy from the logged validation losses."""

import dataclasses
import json

import keras
import numpy as np
import pytest

from elman import config as config_lib
from elman.config import TrainConfig
from elman.core.batching import dataset_from_plan, plan_eval
from elman.core.train import fit
from tests.conftest import refused_settings
from tests.test_checkpoint_average import EpochEnds, builder, data

RATE = 0.4  # large enough that the validation loss rises at some epochs


class EpochStarts(keras.callbacks.Callback):
    """Every weight and the optimizer's learning rate at each epoch's start."""

    def __init__(self):
        super().__init__()
        self.weights, self.rates = [], []

    def on_epoch_begin(self, epoch, logs=None):
        self.weights.append([np.array(w.numpy()) for w in self.model.weights])
        self.rates.append(float(np.asarray(self.model.optimizer.learning_rate)))


def train(run_dir, monkeypatch, resume=False, **settings):
    features, labels, lengths = data()
    validation = dataset_from_plan(features, labels, plan_eval(lengths, 16))
    cfg = dataclasses.replace(TrainConfig(), **{
        "epochs": 8, "batch_size": 8, "patience": 99, "learning_rate": RATE,
        "monitor": "val_loss", "max_minutes": 0.0, "plateau": 0.5, **settings})
    ends, starts = EpochEnds(), EpochStarts()
    original_fit = keras.Model.fit
    monkeypatch.setattr(keras.Model, "fit", lambda self, *a, callbacks=(), **k: original_fit(
        self, *a, callbacks=[ends, *callbacks, starts], **k))
    lines = []
    result = fit(builder(cfg), features, labels, lengths, validation, cfg, run_dir,
                 resume=resume, log=lines.append, tensorboard=False)
    return result, ends.weights, starts, lines


def flat_epochs(values, higher=True):
    """1-based epochs whose validation value does not beat every earlier one (a tie does
    not), each with the best epoch before it (the oracle, by hand from the logged values)."""
    flat, best = [], None
    for epoch, value in enumerate(values, 1):
        if best is None or (value > values[best - 1] if higher else value < values[best - 1]):
            best = epoch
        else:
            flat.append((epoch, best))
    return flat


def test_a_flat_epoch_restores_the_best_weights_and_halves_the_rate(tmp_path, monkeypatch):
    result, ends, starts, lines = train(tmp_path, monkeypatch)
    losses = result.history["val_loss"]
    flat = flat_epochs(losses, higher=False)
    # the test needs flat epochs that restore a later epoch than the first, and gains after
    assert len(flat) >= 2 and flat[0][1] > 1 and flat[-1][0] < 8, losses
    assert len(ends) == len(starts.weights) == 8
    # the rate of each epoch: RATE halved once per flat epoch before it
    expected = [RATE * 0.5 ** sum(1 for e, _ in flat if e < epoch) for epoch in range(1, 9)]
    np.testing.assert_allclose(starts.rates, expected, rtol=1e-6)
    np.testing.assert_allclose(result.history["learning_rate"], expected, rtol=1e-6)
    for epoch in range(1, 8):  # what epoch + 1 starts from
        restored = dict(flat).get(epoch)
        source = ends[(restored or epoch) - 1]
        for got, want in zip(starts.weights[epoch], source):
            np.testing.assert_array_equal(got, want)
    # not vacuous: the flat epoch's own weights differ from the restored ones
    epoch, best = flat[0]
    assert not np.array_equal(ends[epoch - 1][0], ends[best - 1][0])
    assert result.plateaus == [[e, b, pytest.approx(RATE * 0.5 ** (i + 1))]
                               for i, (e, b) in enumerate(flat)]
    assert any(f"the weights of epoch {best} restored" in line for line in lines)


def test_without_it_the_rate_stays_and_no_weights_are_restored(tmp_path, monkeypatch):
    result, ends, starts, _ = train(tmp_path, monkeypatch, plateau=0.0)
    assert starts.rates == [pytest.approx(RATE)] * 8
    assert "learning_rate" not in result.history and result.plateaus == []
    for epoch in range(1, 8):
        for got, want in zip(starts.weights[epoch], ends[epoch - 1]):
            np.testing.assert_array_equal(got, want)


def test_a_resumed_run_continues_at_the_lowered_rate(tmp_path, monkeypatch):
    whole, _, _, _ = train(tmp_path / "whole", monkeypatch)
    flat = flat_epochs(whole.history["val_loss"], higher=False)
    split = next(e for e, _ in flat)  # stop right after the first flat epoch
    train(tmp_path / "split", monkeypatch, epochs=split)
    resumed, _, starts, _ = train(tmp_path / "split", monkeypatch, resume=True)
    assert starts.rates[0] == pytest.approx(RATE * 0.5)  # the first epoch after the stop
    assert sorted(resumed.history) == sorted(whole.history)
    for key, values in whole.history.items():
        assert resumed.history[key] == pytest.approx(values, rel=1e-6), key
    assert resumed.plateaus == whole.plateaus
    for got, want in zip(resumed.model.weights, whole.model.weights):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
    state = json.loads((tmp_path / "split" / "checkpoints" / "state.json").read_text())
    assert [p[0] for p in state["plateau"]] == [e for e, _ in flat]


def test_the_setting_is_range_checked_and_refused_with_what_it_clashes_with(tmp_path, capsys):
    assert config_lib.load_config("tagging", None, ["train.plateau=0.5"]).train.plateau == 0.5
    for bad in ("-0.1", "1", "1.5"):
        err = refused_settings(tmp_path, capsys, "sentiment", [f"train.plateau={bad}"])
        assert "train.plateau" in err and "[0, 1)" in err
    for other in ("train.lr_decay=0.9", "train.ema=0.99", "train.strategy=multi-worker"):
        err = refused_settings(tmp_path, capsys, "sentiment", ["train.plateau=0.5", other])
        assert f"train.{other.split('.')[1].split('=')[0]}" in err
        assert "cannot be combined" in err
    assert not (tmp_path / "run").exists()


def test_a_sentiment_run_reports_the_lowered_rate(tmp_path, tiny_sentiment):
    from tests.conftest import train_tiny_sentiment

    train_tiny_sentiment(tmp_path, tiny_sentiment, "run", "--set", "train.epochs=5",
                         "--set", "train.patience=9", "--set", "train.plateau=0.5",
                         "--set", "train.monitor=val_accuracy")
    report = tmp_path / "reports" / "sentiment" / "run"
    metrics = json.loads((report / "metrics.json").read_text())
    flat = flat_epochs(metrics["history"]["val_accuracy"])
    assert [p["epoch"] for p in metrics.get("plateaus", [])] == [e for e, _ in flat]
    rate = metrics["history"]["learning_rate"][0]
    assert metrics["history"]["learning_rate"] == pytest.approx(
        [rate * 0.5 ** sum(1 for e, _ in flat if e < epoch) for epoch in range(1, 6)])
    md = (report / "report.md").read_text(encoding="utf-8")
    if flat:
        assert "the learning rate lowered after epoch" in md
    else:
        assert "train.plateau" not in md
