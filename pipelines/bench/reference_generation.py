"""Reference generators for the language model, raced against its production generator.

`generate_naive` re-runs the whole growing sequence through the model at every
step (quadratic in the generated length): the plain form of greedy decoding that
`elman.tasks.lm.generation.generate` (state-carrying, one compiled loop, linear)
must match token for token; the LM report checks that on its samples.
`benchmark_generation` times the two side by side, and `benchmark_lm` is the LM
task's row of `elman bench`.
"""

import os
import platform
import time
from pathlib import Path

import numpy as np

from elman.tasks.lm.generation import (check_length, check_prefix, compiled, generate,
                                       mask_padding)

ROOT = Path(__file__).resolve().parents[2]


def _build_naive_step(model_ref):
    import tensorflow as tf

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32)])
    def next_token(sequence):
        logits = model_ref()(sequence, training=False)
        last = mask_padding(tf.cast(logits[:, -1, :], tf.float32))
        return tf.argmax(last, axis=-1, output_type=tf.int32)

    return next_token


def generate_naive(model, prefix_ids, length):
    """Greedy continuation that re-runs the whole growing sequence every step (quadratic).

    The reference form of greedy generation: at each step the full sequence so
    far goes through the model and the argmax of the last position is
    appended. It gives the same tokens as `generate(..., temperature=0)`, only
    slower. The padding id 0 is never generated.

    Args:
        model: `LanguageModel`.
        prefix_ids: int array `[length]` or `[batch, length]`, prefixes of equal
            length without padding (ids >= 1).
        length: int, the number of tokens to generate.

    Returns:
        numpy int32 array `[batch, length]` of generated ids (`[length]` for a
        1-D prefix), prefix not included.

    Example:

    ```python
    assert (generate_naive(model, prefix, 20) == generate(model, prefix, 20)).all()
    ```
    """
    prefix, single = check_prefix(prefix_ids, model.vocabulary_size)
    length = check_length(length)
    next_token = compiled(model, "naive", _build_naive_step)
    sequence = prefix
    for _ in range(length):
        token = next_token(sequence).numpy()
        sequence = np.concatenate([sequence, token[:, None]], axis=1)
    tokens = sequence[:, prefix.shape[1] :]
    return tokens[0] if single else tokens


def _device_description():
    import tensorflow as tf

    gpus = tf.config.list_logical_devices("GPU")
    if gpus:
        return f"GPU × {len(gpus)} ({', '.join(d.name for d in gpus)})"
    return f"CPU ({platform.processor() or platform.machine()}, {os.cpu_count()} cores)"


def _median_time(function, repeats=3):
    """Median wall-clock seconds of `repeats` calls, and the last result."""
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        seconds.append(time.perf_counter() - start)
    return float(np.median(seconds)), result


def benchmark_generation(model, prefix_ids, length=200):
    """Time state-carrying and naive greedy generation side by side in this process.

    Both are compiled and warmed up first, then each is timed three times and
    the median kept; both must give identical tokens.

    Args:
        model: `LanguageModel`.
        prefix_ids: int array `[length]` or `[batch, length]`, prefixes of equal
            length without padding.
        length: int, the number of tokens to generate. Default 200.

    Returns:
        dict with `batch_size`, `prefix_length`, `length`, `seconds_state`,
        `seconds_naive`, `tokens_per_s_state`, `tokens_per_s_naive`, `ratio`
        (state-carrying speed / naive speed), `identical` (True) and `device`.

    Raises:
        AssertionError: the two forms gave different tokens.

    Example:

    ```python
    result = benchmark_generation(model, np.ones((1, 10), "int32"), length=200)
    print(f"{result['ratio']:.0f}× faster")
    ```
    """
    prefix, _ = check_prefix(prefix_ids, model.vocabulary_size)
    length = check_length(length)
    if length < 1:
        raise ValueError(f"Expected length to be an integer >= 1. Received: length={length!r}")
    generate(model, prefix, 2)  # compile
    generate_naive(model, prefix, 2)  # compile
    seconds_state, fast = _median_time(lambda: generate(model, prefix, length))
    seconds_naive, naive = _median_time(lambda: generate_naive(model, prefix, length))
    if not np.array_equal(fast, naive):
        first = int(np.argmax((fast != naive).any(axis=0)))
        raise AssertionError(
            f"state-carrying and naive generation differ, first at generated step {first}"
        )
    generated = prefix.shape[0] * length
    return {
        "batch_size": int(prefix.shape[0]),
        "prefix_length": int(prefix.shape[1]),
        "length": length,
        "seconds_state": seconds_state,
        "seconds_naive": seconds_naive,
        "tokens_per_s_state": generated / seconds_state,
        "tokens_per_s_naive": generated / seconds_naive,
        "ratio": seconds_naive / seconds_state,
        "identical": True,
        "device": _device_description(),
    }


def _demo_candidate(demo):
    """(label, model, vocabulary): the trained demo run, or an untrained one of its size."""
    from elman import config as config_lib
    from elman.errors import UserError
    from elman.tasks.lm.data import load_token_stream
    from elman.tasks.lm.model import build_model
    from elman.tasks.lm.predictor import LMPredictor
    from elman.tasks.lm.vocabulary import build_vocabulary

    try:
        predictor = LMPredictor(demo)
        return f"demo model ({demo}, trained)", predictor.model, predictor.vocabulary
    except UserError:
        cfg = config_lib.load_config("lm")
        vocabulary = build_vocabulary(load_token_stream(ROOT / cfg.data.train,
                                                        level=cfg.text.level,
                                                        lowercase=cfg.text.lowercase))
        model = build_model(cfg, len(vocabulary), stateful=False)
        model.build((None, None))
        return ("demo preset size (untrained: runs/lm/demo not found)", model, vocabulary)


def _candidates(quick, demo):
    """(label, model, prefix ids) to race: the demo model, and a realistic size unless quick."""
    from elman import config as config_lib
    from elman.models.language_model import LanguageModel
    from elman.tasks.lm.data import load_token_stream
    from elman.tasks.lm.vocabulary import encode_stream

    cfg = config_lib.load_config("lm")
    label, model, vocabulary = _demo_candidate(demo)
    tokens = load_token_stream(ROOT / "data" / "lm" / "en_valid.txt", level=cfg.text.level,
                               lowercase=cfg.text.lowercase)[:19]
    out = [(label, model, encode_stream(tokens, vocabulary))]
    if not quick:
        big = LanguageModel(10000, embedding_dim=256, units=512, num_layers=2,
                            name="realistic_lm")
        big.build((None, None))
        prefix = np.random.default_rng(0).integers(2, 10000, size=20).astype("int32")
        out.append(("realistic size: 10k ids, emb 256, 2×LSTM(512), random weights",
                    big, prefix))
    return out


def benchmark_lm(quick=False, length=200, log=print, demo_run=None):
    """State-carrying vs naive whole-prefix greedy generation at N = `length`, side by side.

    Quick: the trained demo model (`demo_run`, default `runs/lm/demo` from `make
    demo`; an untrained model of the demo preset's size when it is missing). Full: also a
    realistic-size model (10,000 ids, embedding 256, 2×LSTM(512), random
    weights: speed does not depend on the values). Both generators must give
    identical tokens.

    Args:
        quick: bool, the demo model only.
        length: int, tokens generated per timed call. Default 200.
        log: callable for progress lines.
        demo_run: str or Path, the demo run folder. Default runs/lm/demo.

    Returns:
        dict with `name`, `rows` (one dict per model: model, parameters, prefix,
        length, tokens/s of each, ratio, identical, device), `target_ratio` (20),
        `met` and `markdown` (a table).
    """
    from elman.core import report as rep

    demo = Path(demo_run) if demo_run else Path("runs") / "lm" / "demo"
    rows = []
    for label, model, prefix in _candidates(quick, demo):
        log(f"lm generation benchmark: {label} ...")
        r = benchmark_generation(model, prefix, length=length)
        rows.append({"model": label, "parameters": int(model.count_params()),
                     "prefix_length": r["prefix_length"], "length": r["length"],
                     "tokens_per_s_state": r["tokens_per_s_state"],
                     "tokens_per_s_naive": r["tokens_per_s_naive"], "ratio": r["ratio"],
                     "identical": r["identical"], "device": r["device"]})
    table = rep.md_table(
        ["model", "parameters", "prefix", "N", "state-carrying tokens/s", "naive tokens/s",
         "ratio", "identical tokens", "device"],
        [(r["model"], r["parameters"], r["prefix_length"], r["length"],
          f"{r['tokens_per_s_state']:,.0f}", f"{r['tokens_per_s_naive']:,.1f}",
          f"{r['ratio']:.1f}×", "yes" if r["identical"] else "no", r["device"]) for r in rows])
    return {"name": "lm generation: state-carrying vs naive whole-prefix re-run (greedy, batch 1)",
            "rows": rows, "target_ratio": 20.0,
            "met": all(r["ratio"] >= 20.0 and r["identical"] for r in rows),
            "markdown": table}
