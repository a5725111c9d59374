"""Run-time set-up: seeds and op determinism, threads, devices, precision, strategy."""

import os
import random

from pipelines.errors import UserError


def configure(train_cfg, log=print):
    """Seeds everything, enables op determinism and picks the distribution strategy.

    Must run before any model is built. Returns the `tf.distribute.Strategy` to build
    and compile models under (the default strategy unless one was asked for).
    """
    import keras
    import tensorflow as tf

    threads = train_cfg.threads or os.cpu_count() or 1
    try:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
    except RuntimeError:
        pass  # already initialised in this process; the first setting stays
    random.seed(train_cfg.seed)
    keras.utils.set_random_seed(train_cfg.seed)
    tf.config.experimental.enable_op_determinism()
    gpus = tf.config.list_physical_devices("GPU")
    if train_cfg.mixed_precision != "none":
        if not gpus:
            log(f"warning: mixed precision {train_cfg.mixed_precision} on a CPU is no faster "
                "(and GRU in float16 is far slower); use it on GPUs")
        keras.mixed_precision.set_global_policy("mixed_" + train_cfg.mixed_precision)
    else:
        keras.mixed_precision.set_global_policy("float32")
    if train_cfg.strategy == "mirrored":
        strategy = tf.distribute.MirroredStrategy()
    elif train_cfg.strategy == "multi-worker":
        if "TF_CONFIG" not in os.environ:
            raise UserError("--strategy multi-worker needs the TF_CONFIG environment variable "
                            "(cluster and task) in every worker")
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
    else:
        strategy = tf.distribute.get_strategy()
    return strategy


def device_summary(train_cfg, strategy=None):
    """Describes where the run computes, for the report's reproducibility block."""
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    return {
        "device": f"GPU x{len(gpus)}" if gpus else "CPU",
        "gpus": [g.name for g in gpus],
        "cpu_count": os.cpu_count(),
        "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
        "mixed_precision": train_cfg.mixed_precision,
        "strategy": train_cfg.strategy,
        "replicas": strategy.num_replicas_in_sync if strategy is not None else 1,
        "op_determinism": True,
    }
