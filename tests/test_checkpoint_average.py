"""Checkpoint averaging (`train.average_best = k`): the returned weights are the mean of
the weights the k best epochs ended with, ranked by the monitored validation value."""

import dataclasses
import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from elman import config as config_lib
from elman.config import TrainConfig
from elman.core.batching import dataset_from_plan, plan_eval
from elman.core.committer import EpochCommitter
from elman.core.train import adam, fit
from elman.errors import UserError


class EpochEnds(keras.callbacks.Callback):
    """Every weight of the model (trainable or not) at each epoch's end."""

    def __init__(self):
        super().__init__()
        self.weights = []

    def on_epoch_end(self, epoch, logs=None):
        self.weights.append([np.array(w.numpy()) for w in self.model.weights])


def data():
    rng = np.random.default_rng(3)
    rows = [rng.integers(2, 30, size=rng.integers(1, 7)).tolist() for _ in range(40)]
    labels = np.array([int(sum(r) % 3 == 0) for r in rows])
    return tf.ragged.constant(rows, dtype=tf.int64), tf.constant(labels), [len(r) for r in rows]


def builder(cfg):
    def build():
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.layers.Embedding(30, 6, mask_zero=True),
                                  keras.layers.LSTM(5),
                                  keras.layers.Dense(2, activation="softmax")])
        model.compile(adam(cfg), "sparse_categorical_crossentropy", metrics=["accuracy"])
        return model
    return build


def train(tmp_path, monkeypatch, **settings):
    features, labels, lengths = data()
    validation = dataset_from_plan(features, labels, plan_eval(lengths, 16))
    cfg = dataclasses.replace(TrainConfig(), **{
        "epochs": 6, "batch_size": 8, "patience": 99, "learning_rate": 0.05,
        "monitor": "val_loss", "max_minutes": 0.0, **settings})
    recorder = EpochEnds()
    original_fit = keras.Model.fit
    monkeypatch.setattr(keras.Model, "fit", lambda self, *a, callbacks=(), **k: original_fit(
        self, *a, callbacks=[recorder, *callbacks], **k))
    lines = []
    result = fit(builder(cfg), features, labels, lengths, validation, cfg, tmp_path,
                 log=lines.append, tensorboard=False)
    return result, recorder.weights, lines


def test_the_returned_weights_are_the_mean_of_the_k_best_epochs(tmp_path, monkeypatch):
    result, ends, lines = train(tmp_path, monkeypatch, average_best=3)
    losses = result.history["val_loss"]
    assert len(losses) == len(ends) == 6
    # the oracle: the three lowest validation losses, ranked by NumPy, not by the committer
    order = [int(i) + 1 for i in np.argsort(losses, kind="stable")[:3]]
    assert result.averaged_epochs == order
    assert result.best_epoch == order[0]
    for got, *chosen in zip(result.model.weights, *(ends[e - 1] for e in order)):
        np.testing.assert_allclose(got.numpy(), np.mean(chosen, axis=0), rtol=1e-5, atol=1e-7)
    # not vacuous: the mean differs from the best epoch's own weights
    assert not np.allclose(result.model.weights[0].numpy(), ends[order[0] - 1][0])
    assert any("averaged over the 3 best epochs" in line for line in lines)
    state = json.loads((tmp_path / "checkpoints" / "state.json").read_text())
    assert [epoch for _, epoch in state["top"]] == order


@pytest.mark.parametrize("k", [0, 1])
def test_zero_or_one_keeps_the_best_epoch_alone(tmp_path, monkeypatch, k):
    result, ends, _ = train(tmp_path, monkeypatch, average_best=k)
    assert result.averaged_epochs == []
    best = int(np.argmin(result.history["val_loss"]))
    for got, want in zip(result.model.weights, ends[best]):
        np.testing.assert_array_equal(got.numpy(), want)
    assert not list((tmp_path / "checkpoints").glob("top-epoch-*"))


def test_a_resumed_run_averages_what_an_uninterrupted_one_does(tmp_path, monkeypatch):
    whole, _, _ = train(tmp_path / "whole", monkeypatch, average_best=4)
    train(tmp_path / "split", monkeypatch, average_best=4, epochs=3)
    features, labels, lengths = data()
    validation = dataset_from_plan(features, labels, plan_eval(lengths, 16))
    cfg = dataclasses.replace(TrainConfig(), epochs=6, batch_size=8, patience=99,
                              learning_rate=0.05, monitor="val_loss", max_minutes=0.0,
                              average_best=4)
    resumed = fit(builder(cfg), features, labels, lengths, validation, cfg,
                  tmp_path / "split", resume=True, log=lambda m: None, tensorboard=False)
    assert resumed.averaged_epochs == whole.averaged_epochs
    for got, want in zip(resumed.model.weights, whole.model.weights):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
    # files of epochs that left the four best (and were not in the last two commits) go
    kept = sorted(p.name for p in (tmp_path / "split" / "checkpoints").glob("top-epoch-*"))
    assert len(kept) <= 5


class _Stub:
    stop_training = False
    variables = []


def ranked(values, k, monitor):
    """Feeds the committer a sequence of validation values; returns state["top"]."""
    state = {"epoch": 0, "best": None, "best_epoch": 0, "wait": 0, "history": {},
             "files": {}}
    committer = EpochCommitter("unused", state, monitor, patience=99, chief=False,
                               average_best=k)
    committer.set_model(_Stub())
    for epoch, value in enumerate(values):
        committer.on_epoch_end(epoch, {monitor: value})
    return state["top"], state["files"]


def test_ranking_by_hand():
    # accuracy: higher is better; of the two 0.5s the earlier epoch ranks first
    top, files = ranked([0.3, 0.5, 0.4, 0.7, 0.5, 0.1], 3, "val_accuracy")
    assert top == [[0.7, 4], [0.5, 2], [0.5, 5]]
    assert {files[f"top{i}"] for i in (1, 2, 3)} == {
        "top-epoch-004.weights.h5", "top-epoch-002.weights.h5", "top-epoch-005.weights.h5"}
    # at the boundary a later equal value does not enter
    assert ranked([0.6, 0.5, 0.5], 2, "val_f1")[0] == [[0.6, 1], [0.5, 2]]
    # loss: lower is better
    top, _ = ranked([0.9, 0.2, 0.4, 0.3], 2, "val_loss")
    assert top == [[0.2, 2], [0.3, 4]]


def test_the_setting_is_range_checked():
    assert config_lib.load_config("sentiment", None,
                                  ["train.average_best=5"]).train.average_best == 5
    for bad in ("train.average_best=-1", "train.average_best=101"):
        with pytest.raises(UserError, match="average_best"):
            config_lib.load_config("sentiment", None, [bad])


@pytest.mark.slow
def test_a_sentiment_run_reports_the_averaged_epochs(tmp_path, tiny_sentiment):
    from tests.conftest import train_tiny_sentiment

    train_tiny_sentiment(tmp_path, tiny_sentiment, "run", "--set", "train.epochs=4",
                         "--set", "train.patience=9", "--set", "train.average_best=2",
                         "--set", "train.monitor=val_loss")
    report = tmp_path / "reports" / "sentiment" / "run"
    metrics = json.loads((report / "metrics.json").read_text())
    history = metrics["history"]["val_loss"]
    averaged = metrics["averaged_epochs"]
    assert len(averaged) == 2 and averaged[0] == metrics["best_epoch"]
    assert sorted(averaged) == sorted(int(i) + 1 for i in np.argsort(history, kind="stable")[:2])
    md = (report / "report.md").read_text(encoding="utf-8")
    assert f"the weights are the mean of epochs {averaged[0]}, {averaged[1]}" in md
