"""Committing epochs: each epoch's model, the best weights and the state written
atomically, early stopping, the NaN stop, the time budget and the learning rate lowered on
a plateau (`EpochCommitter`); the dropout seed variables a resume restores; the EMA
weights swapped in for validation."""

import math
import os
import time
from pathlib import Path

import keras

from elman.core.checkpoints import commit_epoch
from elman.core.html import write_text_atomic
from elman.errors import UserError


def seed_variables(model):
    """The dropout seed-generator variables of a model (restored on resume from state.json)."""
    # Keras does not save dropout seed-generator states in .keras files (3.15); they are
    # kept in state.json so a resumed run draws the same dropout masks.
    return [v for v in model.variables if v.path.endswith("seed_generator_state")]


class _AveragedWeights:
    """Context manager: the optimizer's EMA weights in the model, the raw ones restored after.

    The raw values are stashed and assigned back exactly (Keras' SwapEMAWeights swaps by
    adding and subtracting, which changes the raw weights by rounding). A no-op when the
    optimizer keeps no average, or before its first step.
    """

    def __init__(self, model):
        optimizer = getattr(model, "optimizer", None)
        averages = getattr(optimizer, "_model_variables_moving_average", None)
        self.pairs = []
        if getattr(optimizer, "use_ema", False) and averages and int(optimizer.iterations) > 0:
            self.pairs = list(zip(optimizer._trainable_variables, averages))
        self.stash = None

    def __enter__(self):
        self.stash = [var.numpy() for var, _ in self.pairs]
        for var, average in self.pairs:
            var.assign(average)
        return self

    def __exit__(self, *exc):
        for (var, _), value in zip(self.pairs, self.stash):
            var.assign(value)
        return False


def _replace_atomic(save, tmp, path):
    """Saves through `tmp` and renames it to `path`; a failed save leaves no `tmp`."""
    try:
        save(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _save_model_atomic(model, path):
    _replace_atomic(model.save, Path(str(path) + ".tmp.keras"), path)


def _save_weights_atomic(model, path):
    _replace_atomic(model.save_weights,
                    Path(str(path).replace(".weights.h5", ".tmp.weights.h5")), path)


class EpochCommitter(keras.callbacks.Callback):
    """Commits every epoch, tracks the best, stops early and on a NaN loss.

    The time budget (`max_seconds`) ends training at an epoch's end when the next epoch
    would end past it. An epoch that runs past the budget by a tenth of it (at least
    `CUT_GRACE_SECONDS`) is cut there: Keras validates the part epoch and it commits
    like a whole one, so a corpus whose single epoch outlasts the budget still stops
    near it. Whole epochs are preferred (a cut leaves part of the data unseen that
    epoch), hence the grace.
    """

    CUT_GRACE_SECONDS = 60.0

    def __init__(self, ckpt_dir, state, monitor, patience, chief=True, max_seconds=0.0,
                 cut_inside_epochs=True, average_best=0, plateau=0.0, log=print):
        super().__init__()
        self.plateau = float(plateau)  # train.plateau: the rate's factor after a flat epoch
        self.log = log
        self.average_best = int(average_best)  # k > 1: the k best epochs' weights are kept
        self.ckpt_dir = Path(ckpt_dir)
        self.state = state
        self.monitor = monitor
        self.patience = patience
        self.chief = chief
        self.nan_at = None
        self.max_seconds = max_seconds  # time budget of this process's epochs; 0: none
        self.began = self.epoch_began = time.perf_counter()
        self.out_of_time = False
        # an epoch far past the budget (a very large corpus) stops inside itself; not
        # under several workers, whose steps must match
        self.cut_inside_epochs = cut_inside_epochs
        self.cut = None  # (epoch, batches trained, batches in the epoch) of such a stop

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch_began = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and not math.isfinite(float(loss)):
            self.nan_at = (self.state["epoch"] + 1, batch + 1)
            self.model.stop_training = True
        elif (self.max_seconds and self.cut_inside_epochs and not self.model.stop_training
              and time.perf_counter() - self.began > self.max_seconds + max(
                  self.CUT_GRACE_SECONDS, 0.1 * self.max_seconds)):
            self.cut = (self.state["epoch"] + 1, batch + 1, (self.params or {}).get("steps"))
            self.out_of_time = True
            self.model.stop_training = True  # Keras still validates; the epoch commits

    def on_epoch_end(self, epoch, logs=None):
        if self.nan_at is not None:
            return
        logs = {k: float(v) for k, v in (logs or {}).items()}
        state = self.state
        for key, value in logs.items():
            state["history"].setdefault(key, []).append(value)
        value = logs.get(self.monitor)
        if value is None:
            raise UserError(f"train.monitor '{self.monitor}' is not a logged metric; "
                            f"choose one of {', '.join(sorted(logs))}")
        higher = self.monitor.endswith(("accuracy", "f1", "auc"))
        improved = state["best"] is None or (
            value > state["best"] if higher else value < state["best"])
        state["epoch"] = epoch + 1
        old = dict(state.get("files", {}))
        files = {"model": f"epoch-{epoch + 1:03d}.keras", "best": old.get("best")}
        if improved:
            state["best"], state["best_epoch"], state["wait"] = value, epoch + 1, 0
            files["best"] = f"best-epoch-{epoch + 1:03d}.weights.h5"
        else:
            state["wait"] += 1
        entered = self._rank(state, value, epoch + 1, higher)
        files.update({f"top{i + 1}": _top_name(e) for i, (_, e) in enumerate(state["top"])})
        state["files"] = files
        if self.plateau:
            self._plateau(state, improved, files)
        state["seed_states"] = [v.numpy().tolist() for v in seed_variables(self.model)]
        if self.cut is not None and self.cut[0] == epoch + 1:
            state["cut_epoch"] = dict(zip(("epoch", "batches", "of"), self.cut))
        if state["wait"] >= self.patience:
            state["stopped_early"] = True
            self.model.stop_training = True
        now = time.perf_counter()
        if self.max_seconds and now - self.began + (now - self.epoch_began) > self.max_seconds:
            self.out_of_time = True  # the next epoch would end past the budget
            self.model.stop_training = True
        if self.chief:
            _save_model_atomic(self.model, self.ckpt_dir / files["model"])
            if improved:  # the weights validation saw: the EMA ones when EMA is on
                with _AveragedWeights(self.model):
                    _save_weights_atomic(self.model, self.ckpt_dir / files["best"])
            if entered:
                with _AveragedWeights(self.model):
                    _save_weights_atomic(self.model, self.ckpt_dir / _top_name(epoch + 1))
            commit_epoch(self.ckpt_dir, state, files)
            lines = [",".join(["epoch"] + sorted(state["history"]))]
            for i in range(state["epoch"]):
                lines.append(",".join([str(i + 1)] + [
                    repr(state["history"][k][i]) if i < len(state["history"][k]) else ""
                    for k in sorted(state["history"])]))
            write_text_atomic(self.ckpt_dir.parent / "logs" / "training.csv",
                              "\n".join(lines) + "\n")

    def _plateau(self, state, improved, files):
        """`train.plateau`: the learning rate the epoch trained with goes into the history;
        after an epoch that did not improve the monitor, the best epoch's weights go back
        into the model and the rate is multiplied by `plateau` (the optimizer's moment
        estimates carry on). Done before the epoch's model is saved, so a resumed run
        continues from the restored weights at the lowered rate."""
        optimizer = self.model.optimizer
        rate = float(keras.ops.convert_to_numpy(optimizer.learning_rate))
        state["history"].setdefault("learning_rate", []).append(rate)
        if improved or not files.get("best"):
            return
        self.model.load_weights(self.ckpt_dir / files["best"])
        optimizer.learning_rate = rate * self.plateau
        lowered = float(keras.ops.convert_to_numpy(optimizer.learning_rate))
        state.setdefault("plateau", []).append([state["epoch"], state["best_epoch"], lowered])
        self.log(f"epoch {state['epoch']}: no gain in {self.monitor}; the weights of epoch "
                 f"{state['best_epoch']} restored and the learning rate lowered from "
                 f"{rate:.3g} to {lowered:.3g} (train.plateau)")

    def _rank(self, state, value, epoch, higher):
        """Puts the epoch among the `average_best` best ones (state["top"]: [value, epoch]
        pairs, best first; a tie goes to the earlier epoch); True when it entered them."""
        top = [list(pair) for pair in state.get("top", [])]
        if self.average_best < 2:
            state["top"] = []
            return False
        top.append([value, epoch])
        top.sort(key=lambda pair: (-pair[0] if higher else pair[0], pair[1]))
        state["top"] = top[:self.average_best]
        return [value, epoch] in state["top"]


def _top_name(epoch):
    return f"top-epoch-{epoch:03d}.weights.h5"


def average_top(model, ckpt_dir, state, log=print):
    """Puts the mean of the kept best epochs' weights (`train.average_best`) in the model
    and returns their epochs, best first; [] when fewer than two were kept. Floating
    weights are averaged in float64; any others are the best epoch's."""
    import numpy as np

    epochs = [epoch for _, epoch in state.get("top", [])]
    if len(epochs) < 2:
        return []
    total = None
    for epoch in epochs:
        model.load_weights(Path(ckpt_dir) / _top_name(epoch))
        values = [np.asarray(w.numpy()) for w in model.weights]
        if total is None:
            total = [v.astype(np.float64) if np.issubdtype(v.dtype, np.floating) else v
                     for v in values]
        else:
            total = [t + v if np.issubdtype(v.dtype, np.floating) else t
                     for t, v in zip(total, values)]
    for weight, value in zip(model.weights, total):
        if np.issubdtype(value.dtype, np.floating):
            value = (value / len(epochs)).astype(weight.dtype)
        weight.assign(value)
    log(f"weights averaged over the {len(epochs)} best epochs ({', '.join(map(str, epochs))}; "
        f"train.average_best)")
    return epochs


def budget_message(committer, state, cfg):
    """The line that says the time budget stopped training, or None."""
    if committer.cut is not None:
        epoch, done, steps = committer.cut
        return (f"stopped inside epoch {epoch}, after {done}"
                + (f" of {steps}" if steps else "") + " batches: "
                f"train.max_minutes={cfg.max_minutes:g} was overrun; that part epoch was "
                f"validated and kept (--resume continues with epoch {epoch + 1})")
    if committer.out_of_time and state["epoch"] < cfg.epochs:
        return (f"stopped after epoch {state['epoch']}: the next epoch would pass "
                f"train.max_minutes={cfg.max_minutes:g} (--resume continues)")
    return None
