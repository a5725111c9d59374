"""`elman bench --gpu` (and scripts/gpu_check.sh): is the GPU really used, and how fast?

Checks, in a few minutes on a fresh GPU machine:

1. TensorFlow sees a GPU and places work on it (a matmul's output lives there).
2. cuDNN kernels run: the traced LSTM and GRU graphs contain `CudnnRNN*` ops and
   execute on the GPU, also with a right-padded mask; the generic kernel (the one a
   cuDNN-disabling setting such as recurrent dropout selects) is timed against it.
3. Mixed precision works: float16 (with the LossScaleOptimizer Keras adds in
   compile) and bfloat16 train a few steps to a finite loss, with a float32 output.
4. Training tokens/s on CPU vs GPU for the sentiment and tagging models, through
   elman's own pipeline (bucketed batch plans, masks). The CPU numbers come from a
   child process that sees no GPU (`CUDA_VISIBLE_DEVICES=-1`).

On a machine without a visible GPU it says so ("no GPU visible"), with what it
found (TensorFlow build, nvidia-smi), and exits with code 1.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

SEQ_LEN_CAP = 64  # the sentence lengths are SST-2's (or the toy data's), capped here


def _lengths():
    """Real sentence lengths: SST-2 train if present, else the English toy reviews."""
    import numpy as np

    from elman.bench.timing import ROOT

    sst = ROOT / "../shared/data/sst2/train.txt"
    if sst.is_file():
        lines = [ln.split()[1:] for ln in sst.read_text(encoding="utf-8").splitlines()
                 if ln.strip()]
        source = "SST-2 train"
    else:
        import csv

        with open(ROOT / "data/sentiment/en/train.csv", encoding="utf-8") as handle:
            lines = [row["text"].split() for row in csv.DictReader(handle)]
        source = "toy reviews"
    lengths = np.array([min(max(len(x), 1), SEQ_LEN_CAP) for x in lines], np.int64)
    return lengths, source


def _synthetic(lengths, vocab, seed=0):
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    ids = tf.RaggedTensor.from_row_lengths(rng.integers(2, vocab, int(lengths.sum())),
                                           lengths)
    return ids, rng


def measure_training(kind, lengths, seconds=15.0, batch=32, mixed=None):
    """Training tokens/s of the sentiment or tagging model on this process's device."""
    import keras
    import tensorflow as tf

    from elman.bench.timing import batch_clock, steady_rate, warm_up_plan
    from elman.core.batching import dataset_from_plan, plan_epoch

    keras.mixed_precision.set_global_policy(mixed or "float32")
    keras.utils.set_random_seed(1)
    vocab = 20000
    ids, rng = _synthetic(lengths, vocab)
    if kind == "sentiment":
        from elman.models.sentiment_classifier import SentimentClassifier

        model = SentimentClassifier(vocab, 2, embedding_dim=128, units=128, pooling="max",
                                    dropout=0.5, head_dropout=0.5)
        model.compile(optimizer=keras.optimizers.Adam(1e-3, global_clipnorm=1.0),
                      loss="sparse_categorical_crossentropy")
        y = tf.constant(rng.integers(0, 2, len(lengths)), tf.int32)
        desc = "SentimentClassifier: embedding 128, BiLSTM(128), max pooling, batch 32"
    else:
        from elman.models.sequence_tagger import SequenceTagger

        model = SequenceTagger(vocab, 9, embedding_dim=100, units=100, dropout=0.5)
        model.compile(optimizer=keras.optimizers.Adam(1e-3, global_clipnorm=1.0))
        y = tf.RaggedTensor.from_row_lengths(rng.integers(1, 9, int(lengths.sum())), lengths)
        desc = "SequenceTagger: embedding 100, BiLSTM(100), softmax head, batch 32"
    model.fit(dataset_from_plan(ids, y, warm_up_plan(lengths, batch)), verbose=0, shuffle=False)
    plan = plan_epoch(lengths, batch, 1, 0)
    # time at most `seconds`: size the run from a short probe
    probe = plan[:20]
    clock = batch_clock()
    model.fit(dataset_from_plan(ids, y, probe), verbose=0, callbacks=[clock], shuffle=False)
    rate = max(steady_rate(clock, [int(lengths[b].sum()) for b in probe]), 1.0)
    mean_batch_tokens = float(lengths.mean()) * batch
    count = int(min(len(plan), max(20, seconds * rate / mean_batch_tokens)))
    plan = plan[:count]
    clock = batch_clock()
    began = time.perf_counter()
    model.fit(dataset_from_plan(ids, y, plan), verbose=0, callbacks=[clock], shuffle=False)
    wall = time.perf_counter() - began
    keras.mixed_precision.set_global_policy("float32")
    return {"model": desc, "batches": len(plan), "seconds": round(wall, 2),
            "tokens_per_s": steady_rate(clock, [int(lengths[b].sum()) for b in plan]),
            "precision": mixed or "float32"}


def _graph_op_types(concrete):
    graph_def = concrete.graph.as_graph_def()
    types = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        types.update(node.op for node in function.node_def)
    return types


def check_cudnn():
    """Whether LSTM/GRU trace to cuDNN ops and run on the GPU; cuDNN vs generic speed."""
    import keras
    import numpy as np
    import tensorflow as tf

    out = {}
    x = tf.random.stateless_normal([64, 50, 128], seed=[1, 1])
    lengths = np.random.default_rng(0).integers(1, 51, 64)
    mask = tf.sequence_mask(lengths, 50)  # right padding
    for name, cls in (("lstm", keras.layers.LSTM), ("gru", keras.layers.GRU)):
        timings = {}
        for variant, kwargs in (("cudnn", {}), ("generic", {"use_cudnn": False})):
            layer = cls(128, return_sequences=True, **kwargs)
            layer(x[:2], mask=mask[:2])

            @tf.function
            def train_like(inputs, m, layer=layer):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(layer(inputs, mask=m))
                return loss, tape.gradient(loss, layer.trainable_variables)

            concrete = train_like.get_concrete_function(x, mask)
            ops = sorted(t for t in _graph_op_types(concrete) if "Cudnn" in t)
            loss, _ = train_like(x, mask)
            float(loss)
            began = time.perf_counter()
            for _ in range(20):
                loss, _ = train_like(x, mask)
            float(loss)
            timings[variant] = (time.perf_counter() - began) / 20
            if variant == "cudnn":
                out[name] = {"cudnn_ops_in_graph": ops, "output_device": loss.device,
                             "masked_right_padded_ok": bool(np.isfinite(float(loss)))}
        out[name]["step_ms_cudnn"] = 1000 * timings["cudnn"]
        out[name]["step_ms_generic"] = 1000 * timings["generic"]
        out[name]["generic_over_cudnn"] = timings["generic"] / timings["cudnn"]
        out[name]["ok"] = bool(out[name]["cudnn_ops_in_graph"]) and \
            "GPU" in out[name]["output_device"].upper()
    return out


def check_mixed_precision():
    """float16 and bfloat16: optimizer wrapping, output dtype, a few finite steps."""
    import keras
    import numpy as np
    import tensorflow as tf

    from elman.models.sentiment_classifier import SentimentClassifier

    out = {}
    rng = np.random.default_rng(0)
    x = tf.constant(np.where(np.arange(40)[None, :] < rng.integers(5, 41, 256)[:, None],
                             rng.integers(2, 1000, (256, 40)), 0), tf.int32)
    y = tf.constant(rng.integers(0, 2, 256), tf.int32)
    for precision in ("float16", "bfloat16"):
        keras.mixed_precision.set_global_policy("mixed_" + precision)
        try:
            model = SentimentClassifier(1000, 2, embedding_dim=64, units=64)
            model.compile(optimizer=keras.optimizers.Adam(1e-3),
                          loss="sparse_categorical_crossentropy")
            history = model.fit(x, y, batch_size=32, epochs=2, verbose=0)
            loss = history.history["loss"][-1]
            out[precision] = {
                "compute_dtype": model.get_layer("embedding").compute_dtype,
                "output_dtype": str(model.output.dtype),
                "optimizer": type(model.optimizer).__name__,
                "final_loss": float(loss),
                "ok": bool(np.isfinite(loss)) and "float32" in str(model.output.dtype) and (
                    precision != "float16" or type(model.optimizer).__name__ ==
                    "LossScaleOptimizer"),
            }
        except Exception as err:  # report, do not stop the other checks
            out[precision] = {"ok": False, "error": f"{type(err).__name__}: {err}"}
        finally:
            keras.mixed_precision.set_global_policy("float32")
    return out


def environment():
    """What this machine offers: TensorFlow build, GPUs, nvidia-smi."""
    import tensorflow as tf

    info = {"tensorflow": tf.__version__, "built_with_cuda": tf.test.is_built_with_cuda()}
    try:
        build = tf.sysconfig.get_build_info()
        info["cuda_version"] = build.get("cuda_version")
        info["cudnn_version"] = build.get("cudnn_version")
    except AttributeError:
        pass
    gpus = tf.config.list_physical_devices("GPU")
    info["gpus"] = []
    for gpu in gpus:
        try:
            details = tf.config.experimental.get_device_details(gpu)
        except (RuntimeError, ValueError):
            details = {}
        info["gpus"].append({"name": gpu.name, **{k: str(v) for k, v in details.items()}})
    smi = shutil.which("nvidia-smi")
    info["nvidia_smi"] = None
    if smi:
        try:
            done = subprocess.run([smi, "--query-gpu=name,driver_version,memory.total",
                                   "--format=csv,noheader"], capture_output=True, text=True,
                                  timeout=20)
            info["nvidia_smi"] = (done.stdout or done.stderr).strip()
        except (OSError, subprocess.TimeoutExpired) as err:
            info["nvidia_smi"] = f"failed: {err}"
    return info


def _cpu_child(seconds):
    """Runs the CPU measurements in a child process that sees no GPU."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="-1", TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, "-m", "elman.bench.gpu_check", "--cpu-child",
                           str(seconds)], capture_output=True, text=True, env=env,
                          timeout=600, cwd=str(Path(__file__).resolve().parents[2]))
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"error": (done.stderr or done.stdout)[-2000:]}


def main(out_dir=None, seconds=15.0):
    """The GPU check; returns 0 when every check passed, 1 otherwise (or without a GPU)."""
    began = time.perf_counter()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    out_dir = Path(out_dir or "reports/bench")
    out_dir.mkdir(parents=True, exist_ok=True)
    env = environment()
    result = {"environment": env}
    print(f"TensorFlow {env['tensorflow']} (built with CUDA: {env['built_with_cuda']}, "
          f"CUDA {env.get('cuda_version')}, cuDNN {env.get('cudnn_version')})")
    print(f"nvidia-smi: {env['nvidia_smi'] or 'not found'}")
    if not env["gpus"]:
        hint = ("TensorFlow was built without CUDA: install the GPU build with "
                "`pip install .[gpu]` (tensorflow[and-cuda])" if not env["built_with_cuda"]
                else "the driver or the CUDA libraries are missing: `pip install .[gpu]` "
                     "installs the CUDA/cuDNN wheels; check `nvidia-smi` and "
                     "CUDA_VISIBLE_DEVICES")
        print(f"no GPU visible: TensorFlow sees only the CPU; {hint}")
        result.update({"gpu_visible": False, "ok": False})
        (out_dir / "gpu_check.json").write_text(json.dumps(result, indent=1, sort_keys=True))
        return 1
    result["gpu_visible"] = True
    print("GPUs: " + ", ".join(g.get("device_name", g["name"]) for g in env["gpus"]))
    with tf.device("/GPU:0"):
        product = tf.matmul(tf.ones([256, 256]), tf.ones([256, 256]))
    result["placement"] = {"matmul_device": product.device,
                           "ok": "GPU" in product.device.upper()}
    print(f"[1] work placed on: {product.device}")
    result["cudnn"] = check_cudnn()
    for name, row in result["cudnn"].items():
        print(f"[2] {name.upper()}: cuDNN ops {row['cudnn_ops_in_graph'] or 'NONE'} on "
              f"{row['output_device']}; step {row['step_ms_cudnn']:.1f} ms with cuDNN vs "
              f"{row['step_ms_generic']:.1f} ms generic ({row['generic_over_cudnn']:.1f}x: the "
              "cost of a setting that disables cuDNN)")
    result["mixed_precision"] = check_mixed_precision()
    for name, row in result["mixed_precision"].items():
        print(f"[3] mixed {name}: " + (
            f"{row['optimizer']}, compute {row['compute_dtype']}, output {row['output_dtype']},"
            f" loss {row['final_loss']:.4f}" if "error" not in row else row["error"]) +
            ("  ok" if row["ok"] else "  FAILED"))
    lengths, source = _lengths()
    result["speed"] = {"lengths": source, "gpu": {}, "gpu_mixed_float16": {}}
    for kind in ("sentiment", "tagging"):
        result["speed"]["gpu"][kind] = measure_training(kind, lengths, seconds)
        result["speed"]["gpu_mixed_float16"][kind] = measure_training(kind, lengths, seconds,
                                                                      mixed="mixed_float16")
    result["speed"]["cpu"] = _cpu_child(seconds)
    for kind in ("sentiment", "tagging"):
        gpu = result["speed"]["gpu"][kind]["tokens_per_s"]
        f16 = result["speed"]["gpu_mixed_float16"][kind]["tokens_per_s"]
        cpu = result["speed"]["cpu"].get(kind, {}).get("tokens_per_s")
        print(f"[4] {kind} training tokens/s ({source} lengths): CPU "
              f"{cpu if cpu is None else f'{cpu:,.0f}'}, GPU {gpu:,.0f}, GPU mixed float16 "
              f"{f16:,.0f}" + (f"; GPU/CPU {gpu / cpu:.1f}x" if cpu else ""))
        result["speed"][f"{kind}_gpu_over_cpu"] = gpu / cpu if cpu else None
    result["ok"] = bool(result["placement"]["ok"] and
                        all(r["ok"] for r in result["cudnn"].values()) and
                        all(r["ok"] for r in result["mixed_precision"].values()))
    result["seconds"] = round(time.perf_counter() - began, 1)
    (out_dir / "gpu_check.json").write_text(json.dumps(result, indent=1, sort_keys=True,
                                                       default=str))
    print(f"GPU check {'passed' if result['ok'] else 'FAILED'} in {result['seconds']} s; "
          f"wrote {out_dir / 'gpu_check.json'}")
    return 0 if result["ok"] else 1


def _cpu_child_main(seconds):
    import tensorflow as tf

    assert not tf.config.list_physical_devices("GPU")
    lengths, _ = _lengths()
    print(json.dumps({kind: measure_training(kind, lengths, seconds)
                      for kind in ("sentiment", "tagging")}))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--cpu-child":
        _cpu_child_main(float(sys.argv[2]))
    else:
        sys.exit(main())
