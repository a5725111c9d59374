"""Timing helpers shared by `elman bench` and the GPU check: machine facts, a batch
clock, steady-state rates and FLOP counts (no TensorFlow at import time)."""

import os
import platform
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- machine facts

def cpu_model():
    """The CPU's model name (from /proc/cpuinfo on Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_facts():
    """CPU, cores, load, TensorFlow/Keras versions and the device the bench ran on."""
    import keras
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    names = []
    for gpu in gpus:
        try:
            names.append(tf.config.experimental.get_device_details(gpu).get("device_name",
                                                                            gpu.name))
        except (RuntimeError, ValueError):
            names.append(gpu.name)
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu_model": cpu_model(),
        "cpu_cores": os.cpu_count(),
        "cpu_cores_usable": usable,
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()]
        if hasattr(os, "getloadavg") else None,
        "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "device": f"GPU x{len(gpus)} ({', '.join(names)})" if gpus else "CPU",
    }


# ---------------------------------------------------------------- timing helpers

def batch_clock():
    """A Keras callback recording when each training batch ends (`.ends`)."""
    import keras

    class BatchClock(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.ends = []

        def on_train_batch_end(self, batch, logs=None):
            self.ends.append(time.perf_counter())

    return BatchClock()


def warm_up_plan(lengths, batch):
    """Batches that make Keras trace the train step for any batch size and length.

    tf.function with reduce_retracing relaxes a shape after seeing it change, so a
    few full batches of different lengths and one short batch cover every later
    batch; without the short one, an epoch's last (smaller) batch retraces inside
    the timed run.
    """
    from elman.core.batching import plan_epoch

    plan = plan_epoch(lengths, batch, 1, 99)
    return plan[:4] + [plan[4][: max(len(plan[4]) // 2, 1)], plan[5][:1]]


def steady_rate(clock, batch_tokens):
    """Tokens/s over batches 2..N (the first batch holds tracing and set-up)."""
    ends = clock.ends
    if len(ends) < 2:
        return 0.0
    return float(sum(batch_tokens[1:len(ends)]) / (ends[-1] - ends[0]))


def lstm_flops_per_token(input_dim, units, cell="lstm", directions=2):
    """Forward matmul FLOPs per token of one recurrent layer (all directions)."""
    gates = {"lstm": 4, "gru": 3, "rnn": 1}[cell]
    return 2 * gates * (input_dim + units) * units * directions


def dense_matmul_flops(n=1024, repeats=10):
    """FLOP/s of an n×n float32 matmul (best of `repeats` timed calls)."""
    import tensorflow as tf

    a = tf.random.stateless_normal([n, n], seed=[1, 2])
    b = tf.random.stateless_normal([n, n], seed=[3, 4])
    matmul = tf.function(lambda x, y: tf.reduce_sum(tf.matmul(x, y)))
    float(matmul(a, b))
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        float(matmul(a, b))
        best = min(best, time.perf_counter() - began)
    return 2.0 * n ** 3 / best


def small_matmul_flops(rows, inner, cols, repeats=200):
    """FLOP/s of the [rows, inner] × [inner, cols] matmul an LSTM step does, in a loop."""
    import tensorflow as tf

    a = tf.random.stateless_normal([rows, inner], seed=[5, 6])
    b = tf.random.stateless_normal([inner, cols], seed=[7, 8])

    @tf.function
    def chain(x, w):
        total = tf.zeros([], x.dtype)
        for _ in tf.range(repeats):
            total += tf.reduce_sum(tf.matmul(x, w)[:, :1])
        return total

    float(chain(a, b))
    best = float("inf")
    for _ in range(3):
        began = time.perf_counter()
        float(chain(a, b))
        best = min(best, time.perf_counter() - began)
    return 2.0 * rows * inner * cols * repeats / best


