"""The training stage: fit with clipping, early stopping, checkpoints and exact resume.

Each completed epoch is committed in three atomic steps: the full model (weights,
optimizer state and dropout seed state) goes to `checkpoints/epoch-NNN.keras`, the
best weights so far to `checkpoints/best-epoch-NNN.weights.h5`, and finally
`checkpoints/state.json` is replaced to point at them. A run killed at any moment
resumes (`--resume`) from the last committed epoch and, with the same seed on the
same machine, ends with the same weights as an uninterrupted run.
"""

import contextvars
import dataclasses
import time
from pathlib import Path

import keras
import numpy as np

from elman.config import length_multiple
from elman.core.batching import dataset_from_plan, plan_stats, plan_training
from elman.core.checkpoints import read_state  # noqa: F401 (public here too)
from elman.core.committer import (  # noqa: F401 (public here too)
    EpochCommitter, _AveragedWeights, average_top, budget_message, seed_variables)
from elman.core.compiled import fit_each_epoch, graph_mode, use_xla
from elman.errors import UserError


_STEPS_PER_EPOCH = contextvars.ContextVar("steps_per_epoch", default=None)


def adam(cfg):
    """The house optimizer for a TrainConfig: Adam (or SGD with momentum, `cfg.optimizer =
    "sgd"`) with clipping, weight decay, decay, EMA.

    With `cfg.lr_decay` ≠ 1 the learning rate is a staircase exponential decay: multiplied
    by `lr_decay` after every epoch (a function of the optimizer's step counter, so a
    resumed run continues on the same schedule). It needs the epoch length, which `fit`
    provides while it builds the model. With `cfg.ema` > 0 the optimizer keeps an
    exponential moving average of the trainable weights (Polyak averaging, momentum
    `cfg.ema`); `fit` evaluates, picks the best epoch and returns the model with the
    averaged weights.
    """
    # the language model's LMTrainConfig has neither setting
    ema = float(getattr(cfg, "ema", 0.0))
    decay = float(getattr(cfg, "lr_decay", 1.0))
    steps = _STEPS_PER_EPOCH.get()
    if not 0.0 <= ema < 1.0:
        raise UserError(f"train.ema must be in [0, 1) (0 disables it); got {ema!r}")
    if not 0.0 < decay <= 1.0:
        raise UserError(f"train.lr_decay must be in (0, 1] (1 disables it); got {decay!r}")
    if ema > 0.0 and not steps:
        raise UserError("train.ema is not supported by this task's training loop (it needs "
                        "the shared fit, which validates with the averaged weights); leave "
                        "it at 0")
    learning_rate = cfg.learning_rate
    if decay != 1.0:
        if not steps:
            raise UserError("train.lr_decay is not supported by this task's training loop; "
                            "leave it at 1")
        learning_rate = keras.optimizers.schedules.ExponentialDecay(
            cfg.learning_rate, decay_steps=steps, decay_rate=decay, staircase=True)
    common = {"global_clipnorm": cfg.clipnorm or None, "weight_decay": cfg.weight_decay or None,
              "use_ema": ema > 0.0, "ema_momentum": ema if ema > 0.0 else 0.99}
    # Keras' update rules in one fused kernel per weight (elman.models.fused_optimizers)
    from elman.models.fused_optimizers import FusedAdam, FusedSGD

    if getattr(cfg, "optimizer", "adam") == "sgd":
        return FusedSGD(learning_rate, momentum=float(cfg.momentum), **common)
    return FusedAdam(learning_rate, **common)


class _EvaluateAveraged(keras.callbacks.Callback):
    """Puts the EMA weights in the model while validation runs."""

    def __init__(self):
        super().__init__()
        self.active = None

    def on_test_begin(self, logs=None):
        self.active = _AveragedWeights(self.model).__enter__()

    def on_test_end(self, logs=None):
        if self.active is not None:
            self.active.__exit__(None, None, None)
            self.active = None


class _EpochScores(keras.callbacks.Callback):
    """Adds a task's own validation scores (`scores(model)` → {name: float}, computed with
    the weights validation uses: the EMA ones when EMA is on) to each epoch's logs, before
    the committer reads them, so `train.monitor` can name them (e.g. entity F1)."""

    def __init__(self, scores):
        super().__init__()
        self.scores = scores

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        with _AveragedWeights(self.model):
            logs.update({key: float(value) for key, value in self.scores(self.model).items()})


@dataclasses.dataclass
class TrainResult:
    """What training produced."""

    model: object
    history: dict  # metric name → list of per-epoch values
    best_epoch: int  # 1-based
    epochs_run: int
    stopped_early: bool
    seconds: float  # wall time of the epochs run in this process
    tokens_per_second: float  # real (non-padding) training tokens per second
    batching: dict = dataclasses.field(default_factory=dict)  # how batches were formed
    cut_epoch: dict = None  # {epoch, batches, of}: the time budget stopped inside an epoch
    averaged_epochs: list = dataclasses.field(default_factory=list)  # train.average_best:
    # the epochs whose weights were averaged into the returned model, best first
    plateaus: list = dataclasses.field(default_factory=list)  # train.plateau: [epoch, epoch
    # whose weights were restored, the learning rate from then on] for each flat epoch


def fit(build_and_compile, features, targets, lengths, validation, cfg, run_dir,
        resume=False, strategy=None, chief=True, log=print, tensorboard=True,
        custom_objects=None, epoch_scores=None):
    """Trains a model with the house training loop and returns a TrainResult.

    Args:
        build_and_compile: callable returning a freshly built, compiled keras.Model.
        features: tf.RaggedTensor (or tuple of them) of training inputs, one row each.
        targets: training targets (tf.Tensor or tf.RaggedTensor), one row each.
        lengths: list of int, real token count of each training example.
        validation: tf.data.Dataset of padded validation batches.
        cfg: TrainConfig.
        run_dir: Path, the run folder (checkpoints/ and logs/ are written there).
        resume: bool, continue from the last committed epoch.
        strategy: tf.distribute.Strategy to build under, or None.
        chief: bool, whether this process writes files. With a multi-worker strategy
            every worker writes its own run_dir (a temporary one on non-chief workers,
            see elman.core.distributed.worker_dirs) and the epochs run in
            elman.core.multi_worker.fit_epochs instead of model.fit.
        log: callable for progress messages.
        tensorboard: bool, write TensorBoard logs. Default True.
        custom_objects: dict passed to load_model on resume (registered classes
            need none).
        epoch_scores: callable(model) → {name: float} or None: validation scores the
            task computes itself after each epoch (with the averaged weights), logged
            beside Keras' metrics and usable as `train.monitor` (not run under a
            multi-worker strategy, whose workers would each have to decode).
    """
    run_dir = Path(run_dir)
    ckpt_dir = run_dir / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    scope = strategy.scope() if strategy is not None else _null_scope()
    state = read_state(run_dir, log) if resume else None
    if resume and state is None:
        log(f"notice: no epoch of {run_dir} was committed yet; starting it from the beginning "
            "(nothing was lost)")
    with scope:
        if state is not None:
            model = restore_checkpoint(ckpt_dir, state, custom_objects, log)
        else:
            token = _STEPS_PER_EPOCH.set(len(plan_training(lengths, cfg, 0,
                                                           _replicas(strategy))))
            try:
                model = build_and_compile()
            finally:
                _STEPS_PER_EPOCH.reset(token)
            state = {"epoch": 0, "best": None, "best_epoch": 0, "wait": 0, "history": {},
                     "stopped_early": False, "files": {}}
        use_xla(model, cfg, log)
        sharpness_aware(model, cfg)
    from elman.core import runtime

    multi_worker = strategy is not None and runtime.is_multi_worker(strategy)
    runtime.cudnn_report(model, lengths, log)  # says when a setting disables cuDNN
    batching = batching_summary(lengths, cfg, strategy, log)
    start = state["epoch"]
    committer = EpochCommitter(ckpt_dir, state, cfg.monitor, cfg.patience, chief,
                               60.0 * getattr(cfg, "max_minutes", 0.0),
                               cut_inside_epochs=not multi_worker,
                               average_best=getattr(cfg, "average_best", 0),
                               plateau=getattr(cfg, "plateau", 0.0), log=log)
    seconds, tokens = 0.0, 0
    if not (state.get("stopped_early") or start >= cfg.epochs):
        began = time.perf_counter()
        _run_epochs(model, features, targets, lengths, validation, cfg, run_dir, start,
                    committer, strategy if multi_worker else None, chief, tensorboard, log,
                    None if multi_worker else epoch_scores)
        seconds = time.perf_counter() - began
        tokens = int(np.sum(lengths)) * (state["epoch"] - start)
        if committer.cut is not None and committer.cut[2]:  # the part epoch's share only
            tokens -= int(np.sum(lengths) * (1 - committer.cut[1] / committer.cut[2]))
        _after_epochs(committer, state, cfg, ckpt_dir, log)
    if multi_worker and state["files"].get("model"):
        # a plain copy outside the strategy, for prediction and export (each worker reads
        # its own checkpoint: the chief's run folder, or a non-chief's temporary one)
        model = keras.saving.load_model(ckpt_dir / state["files"]["model"], safe_mode=True,
                                        custom_objects=custom_objects)
    if state["files"].get("best"):
        model.load_weights(ckpt_dir / state["files"]["best"])
    averaged = average_top(model, ckpt_dir, state, log)
    graph_mode(model)  # evaluation and reports batch by exact length: one graph serves all
    return TrainResult(model, state["history"], state["best_epoch"], state["epoch"],
                       bool(state.get("stopped_early")), seconds,
                       tokens / seconds if seconds else 0.0, batching, state.get("cut_epoch"),
                       averaged, [list(p) for p in state.get("plateau", [])])


def sharpness_aware(model, cfg):
    """Hands `train.sam` (ρ) to a model whose train_step applies it (elman.models.adversarial);
    a task whose model has no such step refuses it. It is a training setting, not saved
    with the model, so a resumed run gets it here again."""
    rho = float(getattr(cfg, "sam", 0.0))
    if not rho:
        return
    from elman.models.adversarial import AdversarialTraining

    if getattr(cfg, "strategy", "default") == "multi-worker":
        raise UserError("train.sam is not available with train.strategy 'multi-worker': that "
                        "strategy's training loop does not run the model's own step")
    if not isinstance(model, AdversarialTraining):
        raise UserError("train.sam is available for the sentiment and tagging models only "
                        "(their training step applies it); leave it at 0")
    model.sam = rho


def _replicas(strategy):
    return strategy.num_replicas_in_sync if strategy is not None else 1


def batching_summary(lengths, cfg, strategy=None, log=None):
    """How the training batches are formed (`describe_batching`) with epoch 0's plan
    statistics; `log` gets one line about token budgets (and sentences over it)."""
    from elman.core.batching import describe_batching

    info = describe_batching(cfg)
    info.update(plan_stats(plan_training(lengths, cfg, 0, _replicas(strategy)), lengths,
                           length_multiple(cfg)))
    if log is not None and info["mode"] == "tokens":
        over = int(np.sum(np.asarray(lengths) > info["batch_tokens"]))
        log(f"token-budget batches: at most {info['batch_tokens']} padded tokens a batch, "
            f"{info['batches_per_epoch']} batches an epoch, "
            f"{info['mean_examples_per_batch']:.1f} examples a batch on average"
            + (f"; {over} sentence(s) longer than the budget train alone" if over else ""))
    return info


def restore_checkpoint(ckpt_dir, state, custom_objects=None, log=print):
    """The model of the last committed epoch, with its dropout seed states (safe mode)."""
    from elman import models

    models.import_all()  # registers elman's layers for the checkpoint's config
    model = keras.saving.load_model(ckpt_dir / state["files"]["model"], safe_mode=True,
                                    custom_objects=custom_objects)
    seeds = seed_variables(model)
    if len(seeds) != len(state.get("seed_states", [])):
        raise UserError("the checkpoint does not match this model (dropout layers "
                        "differ); start a new run", path=ckpt_dir)
    for variable, value in zip(seeds, state["seed_states"]):
        variable.assign(value)
    log(f"resuming after epoch {state['epoch']} from {ckpt_dir / state['files']['model']}")
    return model


def _run_epochs(model, features, targets, lengths, validation, cfg, run_dir, start,
                committer, multi_worker_strategy, chief, tensorboard, log,
                epoch_scores=None):
    """Runs epochs start..cfg.epochs (model.fit, or the multi-worker loop)."""
    replicas = _replicas(getattr(model, "_distribute_strategy", None))  # built under it
    plans = [plan_training(lengths, cfg, e, replicas) for e in range(start, cfg.epochs)]
    steps = len(plans[0])
    multiple = length_multiple(cfg)
    epoch_callbacks = [_EvaluateAveraged(), committer]  # also run by fit_epochs
    if epoch_scores is not None:
        epoch_callbacks.insert(1, _EpochScores(epoch_scores))
    callbacks = list(epoch_callbacks)
    if tensorboard and chief:
        callbacks.append(keras.callbacks.TensorBoard(log_dir=str(run_dir / "logs" / "tb"),
                                                     write_graph=False))
    if getattr(cfg, "steps_per_execution", 1) > 1 and multi_worker_strategy is None:
        fit_each_epoch(model, (dataset_from_plan(features, targets, p, multiple=multiple)
                               for p in plans), start, cfg, validation, callbacks)
        return
    dataset = dataset_from_plan(features, targets, [b for p in plans for b in p],
                                multiple=multiple)
    if multi_worker_strategy is not None:  # model.fit is broken there (Keras 3)
        from elman.core.multi_worker import fit_epochs

        fit_epochs(model, multi_worker_strategy, dataset, steps, start, cfg.epochs, validation,
                   epoch_callbacks, log, run_dir / "logs" / "tb" if tensorboard else None)
    else:
        _build_before_fit(model, dataset)
        model.fit(dataset, epochs=cfg.epochs, initial_epoch=start, steps_per_epoch=steps,
                  validation_data=validation, callbacks=callbacks, shuffle=False,
                  verbose=progress_mode())


def _build_before_fit(model, dataset):
    """Builds a model made under a MirroredStrategy of several replicas before `fit`.

    Keras 3 builds a model's metrics before `fit` and `evaluate` by averaging their first
    batch over the replicas (`Trainer._maybe_symbolic_build`), which fails ("Inputs to
    operation AddN of type AddN must have the same size and shape") when that batch does
    not split evenly: an odd global batch on two devices, a partial batch planned first,
    a small validation set. The model is built here on the first global batch instead,
    and Keras' averaging is skipped for it; later uneven batches train as usual.
    """
    strategy = getattr(model, "_distribute_strategy", None)
    if strategy is None or strategy.num_replicas_in_sync < 2:
        return
    with strategy.scope():
        model._symbolic_build(data_batch=next(iter(dataset.take(1))))
    object.__setattr__(model, "_maybe_symbolic_build", lambda iterator=None, data_batch=None: None)


def _after_epochs(committer, state, cfg, ckpt_dir, log):
    """Says why training stopped short: the time budget, or a NaN loss (a UserError)."""
    message = budget_message(committer, state, cfg)
    if message:
        log(message)

    if committer.nan_at is not None:
        epoch, batch = committer.nan_at
        raise UserError(f"training stopped: the loss became NaN at epoch {epoch}, batch "
                        f"{batch}; lower train.learning_rate or keep train.clipnorm on "
                        f"(the last good epoch is kept in {ckpt_dir})")


class _null_scope:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def progress_mode():
    """Keras' progress mode: a live bar on a terminal, one line per epoch elsewhere."""
    import sys

    return 1 if sys.stdout is not None and sys.stdout.isatty() else 2
