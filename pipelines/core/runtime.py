"""Run-time set-up: seeds and op determinism, threads, devices, precision, strategy."""

import os
import random

from elman.errors import UserError


def configure(train_cfg, log=print):
    """Seeds everything, enables op determinism and picks the distribution strategy.

    Must run before any model is built. Returns the `tf.distribute.Strategy` to build
    and compile models under (the default strategy unless one was asked for).

    Strategies: "mirrored" replicates the model on every local GPU (on a machine
    without GPUs, on every logical CPU device: one unless the process configured
    more); "multi-worker" is `tf.distribute.MultiWorkerMirroredStrategy` over the
    cluster in TF_CONFIG. `train.batch_size` is always the *global* batch: each step
    takes one batch of that many examples and splits it across the replicas
    (batch_size / replicas examples each), so the same config gives the same number
    of steps per epoch and the same learning-rate meaning on any number of devices.
    """
    import keras
    import tensorflow as tf

    threads = train_cfg.threads or os.cpu_count() or 1
    try:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
    except RuntimeError:
        pass  # already initialised in this process; the first setting stays
    strategy = None
    if train_cfg.strategy == "multi-worker":
        # created first: the collective ops must be set up before TensorFlow runs anything
        strategy = multi_worker_strategy()
    random.seed(train_cfg.seed)
    keras.utils.set_random_seed(train_cfg.seed)
    tf.config.experimental.enable_op_determinism()
    gpus = tf.config.list_physical_devices("GPU")
    if train_cfg.mixed_precision != "none":
        if not gpus:
            log(f"warning: mixed precision {train_cfg.mixed_precision} on a CPU is no faster "
                "(and GRU in float16 is far slower); use it on GPUs")
        # Keras keeps variables in float32 and computes in the low precision; the output
        # layers of elman's models are float32, and compile() wraps the optimizer in a
        # LossScaleOptimizer (dynamic loss scaling) for float16 by itself.
        keras.mixed_precision.set_global_policy("mixed_" + train_cfg.mixed_precision)
    else:
        keras.mixed_precision.set_global_policy("float32")
    if train_cfg.strategy == "mirrored":
        if gpus:
            strategy = tf.distribute.MirroredStrategy()  # every visible GPU
        else:
            cpus = [d.name for d in tf.config.list_logical_devices("CPU")]
            strategy = tf.distribute.MirroredStrategy(cpus)
    elif strategy is None:
        strategy = tf.distribute.get_strategy()
    if train_cfg.strategy != "default":
        replicas = strategy.num_replicas_in_sync
        log(f"strategy {train_cfg.strategy}: {replicas} replica(s); global batch "
            f"{train_cfg.batch_size} = about {train_cfg.batch_size / replicas:g} examples "
            "per replica per step")
    return strategy


def multi_worker_strategy():
    """MultiWorkerMirroredStrategy from TF_CONFIG (ring all-reduce on CPUs, NCCL on GPUs)."""
    import tensorflow as tf

    from elman.core.distributed import read_tf_config

    if read_tf_config() is None:
        raise UserError("--strategy multi-worker needs the TF_CONFIG environment variable "
                        "(cluster and task) in every worker")
    impl = tf.distribute.experimental.CommunicationImplementation
    gpus = tf.config.list_physical_devices("GPU")
    options = tf.distribute.experimental.CommunicationOptions(
        implementation=impl.NCCL if gpus else impl.RING)
    return tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)


def is_multi_worker(strategy):
    """Whether `strategy` spans several processes (needs elman's own training loop)."""
    import tensorflow as tf

    return isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy)


def _recurrent_layers(model):
    """Every LSTM/GRU/SimpleRNN layer inside `model` (Bidirectional wrappers unpacked)."""
    import keras

    found, seen = [], set()

    def visit(layer):
        if id(layer) in seen:
            return
        seen.add(id(layer))
        if isinstance(layer, keras.layers.Bidirectional):
            visit(layer.forward_layer)
            visit(layer.backward_layer)
            return
        if isinstance(layer, keras.layers.RNN):
            found.append(layer)
        for child in getattr(layer, "_layers", []) or []:
            visit(child)
        for value in vars(layer).values():  # layers kept in lists (e.g. RecurrentEncoder)
            if isinstance(value, keras.layers.Layer) and value is not layer:
                visit(value)
            elif isinstance(value, (list, tuple)):
                for item in value:
                    if isinstance(item, keras.layers.Layer):
                        visit(item)

    visit(model)
    return found


def cudnn_blockers(layer):
    """Why a recurrent layer cannot use the fused cuDNN kernel (empty list: it can).

    Mirrors the rules of Keras 3's TensorFlow backend: LSTM and GRU run on cuDNN when
    activation is tanh, recurrent_activation sigmoid, recurrent_dropout 0, unroll off,
    use_bias on (and reset_after on for GRU). Input dropout does not matter.
    """
    import keras

    if not isinstance(layer, (keras.layers.LSTM, keras.layers.GRU)):
        return ["SimpleRNN has no cuDNN kernel (use cell = \"lstm\" or \"gru\")"]
    cell = layer.cell
    reasons = []
    if getattr(layer, "use_cudnn", "auto") is False:
        reasons.append("use_cudnn=False")
    if cell.recurrent_dropout:
        reasons.append(f"recurrent_dropout={cell.recurrent_dropout:g}")
    if keras.activations.serialize(cell.activation) != "tanh":
        reasons.append(f"activation={keras.activations.serialize(cell.activation)!r}")
    if keras.activations.serialize(cell.recurrent_activation) != "sigmoid":
        reasons.append("recurrent_activation="
                       f"{keras.activations.serialize(cell.recurrent_activation)!r}")
    if layer.unroll:
        reasons.append("unroll=True")
    if not cell.use_bias:
        reasons.append("use_bias=False")
    if isinstance(layer, keras.layers.GRU) and not cell.reset_after:
        reasons.append("reset_after=False")
    return reasons


CUDNN_COST = ("on a GPU such a layer runs the generic step-by-step kernel instead of the "
              "fused cuDNN one, typically several times slower per step (`elman bench --gpu` "
              "measures the ratio on your GPU); on a CPU it makes no difference")


def cudnn_report(model, lengths=None, log=print):
    """Logs the settings that keep recurrent layers off the cuDNN kernels, and the cost.

    Says nothing when every recurrent layer is eligible (the default settings are);
    on a GPU it then confirms eligibility in one line.

    Args:
        model: keras.Model to inspect.
        lengths: optional list of int, real token counts of the training examples:
            empty examples become fully masked rows, which Keras' cuDNN path rejects.
        log: callable for messages.

    Returns:
        dict layer path → list of reasons, for the layers that are not eligible.
    """
    import numpy as np
    import tensorflow as tf

    layers = _recurrent_layers(model)
    blocked = {}
    for layer in layers:
        reasons = cudnn_blockers(layer)
        if reasons:
            blocked[layer.path] = reasons
    for path, reasons in blocked.items():
        log(f"note: cuDNN disabled for {path} ({', '.join(reasons)}): {CUDNN_COST}")
    on_gpu = bool(tf.config.list_logical_devices("GPU"))
    if lengths is not None and len(lengths) and int(np.min(lengths)) == 0:
        empty = int(np.sum(np.asarray(lengths) == 0))
        log(f"warning: {empty} training example(s) have no tokens; a fully masked row "
            "stops Keras' cuDNN kernel with an error on a GPU (drop or fix those rows)")
    if layers and not blocked and on_gpu:
        log(f"cuDNN: all {len(layers)} recurrent layers are eligible (right padding, "
            "masks from token id 0)")
    return blocked


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
