"""Fewer, larger calls into TensorFlow: XLA-compiled steps (`train.xla`) and several
steps a call (`train.steps_per_execution`). See docs/speed.md."""

from elman.errors import UserError


def use_xla(model, cfg, log=print):
    """Compiles the model's train, test and predict steps with XLA when `cfg.xla` is on.

    Keras turns XLA off whenever op determinism is enabled (which every elman run
    enables), because not every op has a deterministic XLA version; on the CPU
    XLA's programs are deterministic (`tests/test_xla.py` checks two runs of one seed
    for equal weights), so elman sets the flag itself, after Keras' other check that
    every layer supports XLA. Programs are compiled per batch shape on first use.
    """
    if not getattr(cfg, "xla", False):
        return
    unsupported = sorted({type(layer).__name__ for layer in model._flatten_layers()
                          if not layer.supports_jit})
    if unsupported:
        raise UserError(f"train.xla: these layers cannot be compiled with XLA: "
                        f"{', '.join(unsupported)}; set train.xla = false")
    model._jit_compile = True  # Keras' setter refuses it under op determinism
    model.train_function = model.test_function = model.predict_function = None
    log("train.xla: the training and validation steps are compiled with XLA, once per "
        "batch shape")


def graph_mode(model):
    """Turns `use_xla` off again (a no-op for a model that never had it on)."""
    if getattr(model, "_jit_compile", None):
        model._jit_compile = False
        model.train_function = model.test_function = model.predict_function = None


def fit_each_epoch(model, datasets, start, cfg, validation, callbacks):
    """Trains epochs start, start + 1, ... with `cfg.steps_per_execution` steps a call,
    one `fit` per epoch on that epoch's dataset alone (`datasets`, an iterable of one per
    epoch): on one dataset holding every epoch, Keras' last call of an epoch would take the next
    epoch's first batches, and `--resume`, which starts at an epoch boundary, would
    differ from a straight run."""
    from elman.core.train import progress_mode

    model.steps_per_execution = cfg.steps_per_execution
    for epoch, dataset in enumerate(datasets, start=start):
        model.fit(dataset, epochs=epoch + 1, initial_epoch=epoch, validation_data=validation,
                  callbacks=callbacks, shuffle=False, verbose=progress_mode())
        if model.stop_training:
            break
