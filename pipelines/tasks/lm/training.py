"""The language model's own training loop: stateful truncated BPTT with the house
guarantees (`elman.core.train.EpochCommitter`: atomic commits, best weights, early
stopping, NaN stop, time budget, exact resume)."""

import math
import time
from pathlib import Path

from elman.errors import UserError
from elman.tasks.lm.scoring import exp_nats

MONITOR = "val_perplexity"  # early stopping and the best checkpoint watch this


def _perplexity_callback(val_dataset, committer):
    import keras

    from elman.tasks.lm.generation import mean_cross_entropy

    class ValidationPerplexity(keras.callbacks.Callback):
        """Adds perplexity (exp of the running loss) and the exact validation scores to the logs.

        Validation carries the state through the whole validation text and weights
        every token equally; it runs before the epoch is committed. A non-finite
        validation loss stops training like a NaN training loss does.
        """

        def on_epoch_end(self, epoch, logs=None):
            if logs is None or committer.nan_at is not None:
                return
            if "loss" in logs:
                logs["perplexity"] = exp_nats(float(logs["loss"]))
            nats = mean_cross_entropy(self.model, val_dataset, carry_states=True)
            if not math.isfinite(nats):
                committer.nan_at = (epoch + 1, "validation")
                self.model.stop_training = True
                return
            logs["val_loss"] = nats
            logs["val_perplexity"] = exp_nats(nats)

    return ValidationPerplexity()


def _start(build_and_compile, ckpt_dir, resume, log):
    """The model and committed state to train from: a new model, or the last commit."""
    from elman.core.train import read_state, restore_checkpoint

    state = read_state(ckpt_dir.parent, log) if resume else None
    if resume and state is None:
        log(f"notice: no epoch of {ckpt_dir.parent} was committed yet; starting it from the "
            "beginning (nothing was lost)")
    if state is None:
        return build_and_compile(), {"epoch": 0, "best": None, "best_epoch": 0, "wait": 0,
                                     "history": {}, "stopped_early": False, "files": {}}
    return restore_checkpoint(ckpt_dir, state, log=log), state


def _train_epochs(model, state, train_dataset, val_dataset, cfg, run_dir, log, tensorboard):
    """Runs the remaining epochs; returns the seconds they took."""
    import keras

    from elman.core.train import EpochCommitter, budget_message, progress_mode

    ckpt_dir = run_dir / "checkpoints"
    start = state["epoch"]
    committer = EpochCommitter(ckpt_dir, state, MONITOR, cfg.patience,
                               max_seconds=60.0 * cfg.max_minutes)
    callbacks = [_perplexity_callback(val_dataset, committer), committer]
    if tensorboard:
        callbacks.append(keras.callbacks.TensorBoard(log_dir=str(run_dir / "logs" / "tb"),
                                                     write_graph=False))
    began = time.perf_counter()
    model.fit(train_dataset, epochs=cfg.epochs, initial_epoch=start, callbacks=callbacks,
              shuffle=False, verbose=progress_mode())
    seconds = time.perf_counter() - began
    message = budget_message(committer, state, cfg)
    if message:
        log(message)
    if committer.nan_at is not None:
        epoch, batch = committer.nan_at
        where = "on the validation text" if batch == "validation" else f"batch {batch}"
        raise UserError(f"training stopped: the loss became NaN at epoch {epoch}, {where}; "
                        "lower train.learning_rate or keep train.clipnorm on "
                        f"(the last good epoch is kept in {ckpt_dir})")
    return seconds


def fit_tbptt(build_and_compile, train_dataset, val_dataset, train_tokens, cfg, run_dir,
              resume=False, log=print, tensorboard=True):
    """Stateful TBPTT training with the house guarantees; returns a `TrainResult`.

    Same commit protocol as `elman.core.train.fit` (its epoch committer):
    each epoch's model, the best weights by validation perplexity and
    `checkpoints/state.json` are written atomically, `logs/training.csv` is
    rewritten, early stopping after `cfg.patience` epochs without improvement,
    a NaN loss stops training with a clear message, `cfg.max_minutes` stops before
    an epoch that would end past the budget, and `resume` continues from
    the last committed epoch (with the dropout seed states restored, so the
    result equals an uninterrupted run). The data come in the same order each
    epoch (consecutive chunks carry the state), so nothing else needs restoring.

    Args:
        build_and_compile: callable returning a new compiled stateful `LanguageModel`.
        train_dataset: `tf.data.Dataset` from `make_tbptt_dataset`.
        val_dataset: `tf.data.Dataset` of consecutive validation chunks.
        train_tokens: int, tokens predicted per training epoch (for tokens/s).
        cfg: LMTrainConfig.
        run_dir: Path, the run folder.
        resume: bool, continue from the last committed epoch. Default False.
        log: callable for progress messages. Default print.
        tensorboard: bool, write TensorBoard logs under logs/tb. Default True.
    """
    from elman.core import runtime
    from elman.core.train import TrainResult

    run_dir = Path(run_dir)
    ckpt_dir = run_dir / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    model, state = _start(build_and_compile, ckpt_dir, resume, log)
    runtime.cudnn_report(model, None, log)  # says when a setting disables cuDNN
    start = state["epoch"]
    seconds, tokens = 0.0, 0
    if not (state.get("stopped_early") or start >= cfg.epochs):
        seconds = _train_epochs(model, state, train_dataset, val_dataset, cfg, run_dir, log,
                                tensorboard)
        tokens = train_tokens * (state["epoch"] - start)
        cut = state.get("cut_epoch")
        if cut and cut["epoch"] > start and cut.get("of"):  # cut in this process: its share
            tokens -= int(train_tokens * (1 - cut["batches"] / cut["of"]))
    if state["files"].get("best"):
        model.load_weights(ckpt_dir / state["files"]["best"])
    return TrainResult(model, state["history"], state["best_epoch"], state["epoch"],
                       bool(state.get("stopped_early")), seconds,
                       tokens / seconds if seconds else 0.0, cut_epoch=state.get("cut_epoch"))
