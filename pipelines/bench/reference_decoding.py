"""Reference decoders for `elman.models.seq2seq_translator.Seq2SeqTranslator`, raced
against the compiled ones of `elman.tasks.translation.decoding` (and a test oracle).

They exist to be compared with the production decoders (`benchmark_decoders`) or to
check them; they never belong in a pipeline:

- `per_sentence_predict_decode`: the common tutorial loop, one sentence at a time, one
  `keras.Model.predict` call per step.
- `eager_batched_decode`: the greedy loop of `greedy_decode` as a plain Python loop.
- `reference_stepwise_decode`: unbatched, reruns the full teacher-forced model on the
  growing prefix (an independent path: whole-sequence layers, no cells, no padding).

They follow the conventions of `elman.tasks.translation.decoding` (output shape,
padding, length caps).
"""

import math
import os
import platform
import time

import keras
import numpy as np
import tensorflow as tf

from elman.tasks.translation.decoding import (_as_source, _check_ids, _functions, _pad_to,
                                              greedy_decode, length_caps)

def _tutorial_models(model):
    """Functional encoder and one-step decoder models sharing `model`'s layers."""
    cache = _functions(model)
    if "tutorial" in cache:
        return cache["tutorial"]
    source = keras.Input(shape=(None,), dtype="int32", name="source_ids")
    enc_outputs, enc_mask, states = model.encode(source)
    encoder = keras.Model(
        source, [enc_outputs, enc_mask] + [s for layer in states for s in layer],
        name="tutorial_encoder",
    )
    token = keras.Input(shape=(), dtype="int32", name="token_ids")
    state_inputs = [
        [keras.Input(shape=(model.units,), name=f"state_{i}_{name}") for name in model.state_names]
        for i in range(model.num_layers)
    ]
    enc_in = keras.Input(shape=(None, enc_outputs.shape[-1]), name="enc_outputs")
    mask_in = keras.Input(shape=(None,), dtype="bool", name="enc_mask")
    log_probs, new_states, _ = model.decode_step(token, state_inputs, enc_in, mask_in)
    step = keras.Model(
        [token] + [s for layer in state_inputs for s in layer] + [enc_in, mask_in],
        [log_probs] + [s for layer in new_states for s in layer],
        name="tutorial_decoder_step",
    )
    cache["tutorial"] = (encoder, step)
    return encoder, step


def per_sentence_predict_decode(
    model, source_ids, start_id, end_id, max_len=None, max_len_ratio=2.0, max_len_offset=5
):
    """The common tutorial decoder: one sentence at a time, one `Model.predict` per step.

    An encoder model and a one-step decoder model are built from `model`'s layers (so
    the weights are the same); for each sentence the encoder is `predict`-ed once and the
    step model once per generated token, with the states passed in and out as numpy
    arrays. Slow on purpose: it is the baseline of `benchmark_decoders`.

    Args:
        model: a built `Seq2SeqTranslator`.
        source_ids: int array `[batch, source_len]`, 0 = padding.
        start_id: int, the target start token.
        end_id: int, the target end token.
        max_len: int or None, global cap on generated tokens. Default None.
        max_len_ratio: float or None, per-sentence cap relative to the source length.
            Default 2.0.
        max_len_offset: int, added to the relative cap. Default 5.

    Returns:
        int32 array `[batch, T]`, as `greedy_decode`.

    Example:

    >>> ids = per_sentence_predict_decode(model, source_ids[:8], start_id=2, end_id=3)
    """
    source = _as_source(source_ids)
    _check_ids(model, start_id, end_id)
    caps = length_caps(source, max_len, max_len_ratio, max_len_offset)
    encoder, step = _tutorial_models(model)
    rows = []
    for i in range(source.shape[0]):
        enc_outputs, enc_mask, *states = encoder.predict(source[i : i + 1], verbose=0)
        token, out = start_id, []
        while len(out) < caps[i]:
            log_probs, *states = step.predict(
                [np.array([token], np.int32)] + states + [enc_outputs, enc_mask], verbose=0
            )
            token = int(np.argmax(log_probs[0, 1:])) + 1  # never padding
            out.append(token)
            if token == end_id:
                break
        rows.append(out)
    return _rows_to_array(rows)


def eager_batched_decode(
    model, source_ids, start_id, end_id, max_len=None, max_len_ratio=2.0, max_len_offset=5
):
    """The batched greedy loop of `greedy_decode` as a plain Python loop in eager mode.

    Args:
        model: a built `Seq2SeqTranslator`.
        source_ids: int array `[batch, source_len]`, 0 = padding.
        start_id: int, the target start token.
        end_id: int, the target end token.
        max_len: int or None, global cap on generated tokens. Default None.
        max_len_ratio: float or None, per-sentence cap relative to the source length.
            Default 2.0.
        max_len_offset: int, added to the relative cap. Default 5.

    Returns:
        int32 array `[batch, T]`, as `greedy_decode`.

    Example:

    >>> ids = eager_batched_decode(model, source_ids, start_id=2, end_id=3)
    """
    source = _as_source(source_ids)
    _check_ids(model, start_id, end_id)
    caps = length_caps(source, max_len, max_len_ratio, max_len_offset)
    batch = source.shape[0]
    if batch == 0:
        return np.zeros([0, 0], np.int32)
    enc_outputs, enc_mask, states = model.encode(tf.constant(source), training=False)
    tokens = np.full([batch], start_id, np.int32)
    finished = np.zeros([batch], bool)
    columns = []
    for step in range(int(caps.max())):
        log_probs, states, _ = model.decode_step(
            tf.constant(tokens), states, enc_outputs, enc_mask
        )
        tokens = np.argmax(log_probs.numpy()[:, 1:], axis=-1).astype(np.int32) + 1
        tokens[finished] = 0
        columns.append(tokens)
        finished |= (tokens == end_id) | (step + 1 >= caps)
        if finished.all():
            break
    return np.stack(columns, axis=1)


def reference_stepwise_decode(
    model, source_ids, start_id, end_id, max_len=None, max_len_ratio=2.0, max_len_offset=5
):
    """Test oracle: unbatched greedy decoding by rerunning the whole model on the prefix.

    For each sentence (padding removed) and each step, runs the teacher-forced
    `model((source, prefix))` and takes the argmax at the last position. It shares no
    code with the step-wise decoders (`encode`/`decode_step`, cells, caching), so an
    agreement is evidence that they are right. Quadratic in length: tests only.

    Args:
        model: a built `Seq2SeqTranslator`.
        source_ids: int array `[batch, source_len]`, 0 = padding.
        start_id: int, the target start token.
        end_id: int, the target end token.
        max_len: int or None, global cap on generated tokens. Default None.
        max_len_ratio: float or None, per-sentence cap relative to the source length.
            Default 2.0.
        max_len_offset: int, added to the relative cap. Default 5.

    Returns:
        int32 array `[batch, T]`, as `greedy_decode`.

    Example:

    >>> ids = reference_stepwise_decode(model, source_ids[:4], start_id=2, end_id=3)
    """
    source = _as_source(source_ids)
    _check_ids(model, start_id, end_id)
    caps = length_caps(source, max_len, max_len_ratio, max_len_offset)
    rows = []
    for i in range(source.shape[0]):
        tokens = source[i][source[i] != 0]
        sentence = (tokens if tokens.size else np.zeros([1], np.int32))[None, :]
        prefix, out = [start_id], []
        while len(out) < caps[i]:
            logits = model((sentence, np.array([prefix], np.int32)), training=False)
            token = int(np.argmax(np.asarray(logits)[0, -1, 1:])) + 1  # never padding
            out.append(token)
            prefix.append(token)
            if token == end_id:
                break
        rows.append(out)
    return _rows_to_array(rows)


def _rows_to_array(rows):
    width = max((len(r) for r in rows), default=0)
    ids = np.zeros([len(rows), width], np.int32)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
    return ids


# ------------------------------------------------------------------------------ benchmark


def _first_mismatch(a, b):
    width = max(a.shape[1], b.shape[1])
    a, b = _pad_to(a, width), _pad_to(b, width)
    rows = np.nonzero((a != b).any(axis=1))[0]
    return None if rows.size == 0 else (int(rows[0]), a[rows[0]].tolist(), b[rows[0]].tolist())


def best_time(fn, model, inputs, start_id, end_id, caps, times):
    """Runs a decoder `times` times; returns (the best wall-clock seconds, its output).

    Args:
        fn: a decoder `fn(model, inputs, start_id, end_id, **caps)`.
        model: a built `Seq2SeqTranslator`.
        inputs: int array `[batch, source_len]`.
        start_id, end_id: int, the target start and end tokens.
        caps: dict of the length-cap keyword arguments.
        times: int, the number of timed runs.
    """
    best, result = math.inf, None
    for _ in range(times):
        start = time.perf_counter()
        result = fn(model, inputs, start_id, end_id, **caps)
        best = min(best, time.perf_counter() - start)
    return best, result


def _check_agreement(compiled, others):
    """Raises RuntimeError when another decoder's output differs from the compiled one's
    (on the rows it decoded)."""
    for name, other in others.items():
        mismatch = _first_mismatch(compiled[: other.shape[0]], other)
        if mismatch is not None:
            row, want, got = mismatch
            raise RuntimeError(
                f"{name} disagrees with greedy_decode on sentence {row}: {got} != {want}"
            )


def _machine():
    """The platform, processor, CPU count and TensorFlow devices of this run."""
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "devices": [d.device_type for d in tf.config.list_logical_devices()],
    }


def benchmark_decoders(model, source_ids, start_id, end_id, repeats=3, per_sentence_limit=16,
                       max_len=None, max_len_ratio=2.0, max_len_offset=5):
    """Runs the three greedy decoders side by side on the same inputs and compares speed.

    Each decoder is warmed up once (tracing, building the wrapper models), then timed:
    `greedy_decode` and `eager_batched_decode` on the whole batch (best of `repeats`),
    `per_sentence_predict_decode` once on the first `per_sentence_limit` sentences only
    (its sentences/s is measured on that subset and extrapolates to the batch: the loop
    is per sentence, so its cost is linear in the number of sentences). All outputs must
    be identical (the per-sentence subset against the same rows of the compiled output).

    Args:
        model: a built `Seq2SeqTranslator`.
        source_ids: int array `[batch, source_len]`, 0 = padding.
        start_id: int, the target start token.
        end_id: int, the target end token.
        repeats: int, timed runs of the batched decoders (the best is kept). Default 3.
        per_sentence_limit: int or None, sentences given to the per-sentence decoder;
            None for all. Default 16.
        max_len: int or None, global cap on generated tokens. Default None.
        max_len_ratio: float or None, per-sentence cap relative to the source length.
            Default 2.0.
        max_len_offset: int, added to the relative cap. Default 5.

    Returns:
        dict: `sentences`, `per_sentence_sentences`, `generated_tokens`, sentences/s of
        each decoder (`compiled_sentences_per_s`, `eager_sentences_per_s`,
        `per_sentence_predict_sentences_per_s`), the ratios `compiled_over_per_sentence`
        and `compiled_over_eager`, and `machine` (platform, CPU count, TF devices).

    Raises:
        RuntimeError: when two decoders disagree on any token.

    Example:

    >>> result = benchmark_decoders(model, source_ids[:256], start_id=2, end_id=3)
    >>> result["compiled_over_eager"] > 1
    True
    """
    source = _as_source(source_ids)
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"Expected repeats to be a positive int. Received: {repeats!r}")
    caps = dict(max_len=max_len, max_len_ratio=max_len_ratio, max_len_offset=max_len_offset)
    n_subset = source.shape[0] if per_sentence_limit is None else min(
        per_sentence_limit, source.shape[0]
    )
    subset = source[:n_subset]

    # Warm-up: tracing and wrapper models are built once, outside the timings.
    greedy_decode(model, source[:2], start_id, end_id, **caps)
    eager_batched_decode(model, source[:2], start_id, end_id, **caps)
    per_sentence_predict_decode(model, source[:1], start_id, end_id, **caps)

    ids = (start_id, end_id)
    t_compiled, compiled = best_time(greedy_decode, model, source, *ids, caps, repeats)
    t_eager, eager = best_time(eager_batched_decode, model, source, *ids, caps, repeats)
    t_predict, predicted = best_time(per_sentence_predict_decode, model, subset, *ids, caps, 1)
    _check_agreement(compiled, {"eager_batched_decode": eager,
                                "per_sentence_predict_decode": predicted})

    compiled_rate = source.shape[0] / t_compiled
    eager_rate = source.shape[0] / t_eager
    predict_rate = n_subset / t_predict
    return {
        "sentences": int(source.shape[0]),
        "per_sentence_sentences": int(n_subset),
        "generated_tokens": int(np.count_nonzero(compiled)),
        "compiled_sentences_per_s": compiled_rate,
        "eager_sentences_per_s": eager_rate,
        "per_sentence_predict_sentences_per_s": predict_rate,
        "compiled_over_per_sentence": compiled_rate / predict_rate,
        "compiled_over_eager": compiled_rate / eager_rate,
        "machine": _machine(),
    }
