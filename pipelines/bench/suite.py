"""`elman bench`: speed measured side by side in one process, on this machine.

Rows (all ratios are measured in the same run, on the same data and model size):

1. Training tokens/s (non-padding tokens) of elman's sentiment pipeline (seeded
   length-bucketed batch plans served by tf.data, masks, SentimentClassifier)
   against a reference written the way the common examples do it: every example
   padded to a fixed maxlen of 200 with `keras.utils.pad_sequences`, no bucketing,
   a plain `keras.Sequential` Embedding → Bidirectional(LSTM) → Dense → Dense fed
   NumPy arrays. Same vocabulary, embedding size, units, head, optimizer, batch
   size. Target: ≥ 5×.
2. The share of step time the input pipeline costs: the same compiled train step
   run on pre-materialised batches (model only) and on batches coming through
   the tf.data pipeline (gather + pad + prefetch). Target: ≤ 10%.
3. The recurrent layers' achieved FLOP/s (matmul FLOPs per token: LSTM
   2·4·(in+units)·units per direction, GRU 2·3·(in+units)·units; training ≈ 3×
   forward) against a dense float32 matmul measured in the same run.
4. The decoding and generation ratios of the translation and language-model
   pipelines, and the tagger's speeds (each task module's `benchmark()`).
5. Issue 2's sentiment rows: training tokens/s and prediction sentences/s
   (raw strings through the exported inference model) on the toy and SST-2 data.

Throughputs are steady-state: the first batch of each timed run (tracing) is
excluded, identically for every pipeline. Nothing here is a test: CI only checks
that the bench runs and writes `reports/bench/bench.json`.
"""

import json
import time
from pathlib import Path

from elman.core.data import labels as labels_of
from elman.core.data import texts as texts_of
from elman.bench.timing import (ROOT, batch_clock, dense_matmul_flops, lstm_flops_per_token,
                                machine_facts, small_matmul_flops, steady_rate, warm_up_plan)

MAXLEN = 200  # the reference pipeline's fixed length (the common examples' choice)


# ---------------------------------------------------------------- data

def _resolve(path):
    path = Path(path)
    return path if path.exists() or path.is_absolute() else ROOT / path


def load_sentiment(preset):
    """(config, splits) of a sentiment preset, or (config, None) when its data is absent."""
    import dataclasses

    from elman import config as config_lib
    from elman.core import data as data_stage

    cfg = config_lib.load_config("sentiment", config_lib.preset_path("sentiment", preset))
    data = cfg.data
    paths = {k: getattr(data, k) for k in ("train", "validation", "test") if getattr(data, k)}
    if not all(_resolve(p).is_file() for p in paths.values()):
        return cfg, None
    data = dataclasses.replace(data, **{k: str(_resolve(p)) for k, p in paths.items()})
    cfg = dataclasses.replace(cfg, data=data)
    return cfg, data_stage.load_classification_splits(cfg.data, cfg.train.seed)


def _encode(tokenizer, texts):
    from elman.tasks.sentiment.data import token_ids as _ids

    ids = _ids(tokenizer, texts)
    return ids, ids.row_lengths().numpy()


# ---------------------------------------------------------------- models

def _ours(vocab, embedding_dim, units, hidden, pooling="last", dropout=0.0, head_dropout=0.0,
          cell="lstm"):
    import keras

    from elman.models.sentiment_classifier import SentimentClassifier

    model = SentimentClassifier(vocab, 2, embedding_dim=embedding_dim, cell=cell, units=units,
                                dropout=dropout, pooling=pooling, hidden=hidden,
                                head_dropout=head_dropout, name="elman_sentiment")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    return model


def _reference(vocab, embedding_dim, units, hidden):
    """The common-examples model: fixed-length input, no masking, Sequential."""
    import keras

    model = keras.Sequential([
        keras.Input(shape=(MAXLEN,), dtype="int32"),
        keras.layers.Embedding(vocab, embedding_dim),
        keras.layers.Bidirectional(keras.layers.LSTM(units)),
        keras.layers.Dense(hidden, activation="relu"),
        keras.layers.Dense(2, activation="softmax"),
    ], name="reference")
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    return model


# ---------------------------------------------------------------- rows 1-3

def pipeline_vs_reference(ids, labels, lengths, vocab, rounds, ref_batches, dims, seed=1234,
                          log=print):
    """Row 1 (and the numbers row 3 needs): elman vs the reference, tokens/s."""
    import keras
    import numpy as np
    import tensorflow as tf

    from elman.core.batching import dataset_from_plan, plan_epoch

    embedding_dim, units, hidden, batch = dims
    y = tf.constant(labels, tf.int32)
    ours = _ours(vocab, embedding_dim, units, hidden)
    ref = _reference(vocab, embedding_dim, units, hidden)
    # the reference's input: keras.utils.pad_sequences (pre-padding, pre-truncation)
    padded = keras.utils.pad_sequences(ids.to_list(), maxlen=MAXLEN).astype("int32")
    y_np = np.asarray(labels, "int32")
    rng = np.random.default_rng(seed)
    clipped = np.minimum(lengths, MAXLEN)

    # warm-up: trace both train functions (ours on several lengths: it relaxes shapes)
    ours.fit(dataset_from_plan(ids, y, warm_up_plan(lengths, batch)), epochs=1, verbose=0,
             shuffle=False)
    ref.fit(padded[:2 * batch], y_np[:2 * batch], batch_size=batch, epochs=1, verbose=0)

    ours_rates, ref_rates = [], []
    for r in range(rounds):
        plan = plan_epoch(lengths, batch, seed, r)
        clock = batch_clock()
        ours.fit(dataset_from_plan(ids, y, plan), epochs=1, verbose=0, callbacks=[clock],
                 shuffle=False)
        ours_rates.append(steady_rate(clock, [int(lengths[b].sum()) for b in plan]))
        pick = rng.permutation(len(lengths))[:ref_batches * batch]
        clock = batch_clock()
        ref.fit(padded[pick], y_np[pick], batch_size=batch, epochs=1, verbose=0,
                callbacks=[clock], shuffle=False)
        ref_rates.append(steady_rate(
            clock, [int(clipped[pick[i:i + batch]].sum()) for i in range(0, len(pick), batch)]))
        log(f"  round {r + 1}: elman {ours_rates[-1]:,.0f} tokens/s, reference "
            f"{ref_rates[-1]:,.0f} tokens/s")
    best_ours, best_ref = max(ours_rates), max(ref_rates)
    plan = plan_epoch(lengths, batch, seed, 0)
    positions = sum(len(b) * max(int(lengths[b].max()), 1) for b in plan)
    real_share = float(clipped.sum() / (MAXLEN * len(lengths)))
    return {
        "model": f"Embedding {embedding_dim} -> BiLSTM({units}) -> Dense({hidden}) -> "
                 f"softmax(2), batch {batch}, Adam",
        "elman_params": int(ours.count_params()),
        "reference_params": int(ref.count_params()),
        "elman_tokens_per_s": best_ours,
        "reference_tokens_per_s": best_ref,
        "elman_tokens_per_s_rounds": ours_rates,
        "reference_tokens_per_s_rounds": ref_rates,
        "reference_real_token_share": real_share,
        "elman_real_token_share": float(lengths.sum() / positions),
        "reference_padded_positions_per_s": best_ref / real_share if real_share else 0.0,
        "speedup": best_ours / best_ref if best_ref else 0.0,
        "target": 5.0,
        "meets_target": bool(best_ref and best_ours / best_ref >= 5.0),
        "rounds": rounds,
        "reference_batches_timed": ref_batches,
        "_model": ours,
    }


def input_pipeline_share(model, ids, labels, lengths, batch, passes, max_batches, seed=1234):
    """Row 2: share of the step time the tf.data pipeline costs.

    The same compiled train step runs on pre-materialised padded batches (model
    only) and on the same batches coming through the pipeline (full step: waiting
    for `next(iterator)` included). Each step is timed on its own, `passes` times
    per path in alternating order, and each batch keeps its fastest time: load
    spikes from other processes on a shared machine fall out, and both paths get
    the same treatment. Also reported: the time the full steps spent blocked in
    `next(iterator)`.
    """
    import numpy as np
    import tensorflow as tf

    from elman.core.batching import dataset_from_plan, plan_epoch

    y = tf.constant(labels, tf.int32)
    plan = plan_epoch(lengths, batch, seed, 7)[:max_batches]
    materialised = list(dataset_from_plan(ids, y, plan))  # padded tensors in memory
    step = tf.function(model.train_step, reduce_retracing=True)

    def finish(logs):
        float(tf.nest.flatten(logs)[0])

    for b in dataset_from_plan(ids, y, warm_up_plan(lengths, batch)):
        finish(step(b))
    for b in materialised:  # one untimed pass: first use of each shape costs extra (oneDNN)
        finish(step(b))
    n = len(plan)
    model_only = np.full([passes, n], np.inf)
    full = np.full([passes, n], np.inf)
    blocked = np.zeros([passes, n])
    startup = []
    for p in range(passes):
        for which in ((0, 1) if p % 2 == 0 else (1, 0)):
            if which == 0:
                for i, b in enumerate(materialised):
                    began = time.perf_counter()
                    finish(step(b))
                    model_only[p, i] = time.perf_counter() - began
            else:
                began = time.perf_counter()
                iterator = iter(dataset_from_plan(ids, y, plan))  # fit builds one per run
                startup.append(time.perf_counter() - began)
                for i in range(n):
                    began = time.perf_counter()
                    b = next(iterator)
                    blocked[p, i] = time.perf_counter() - began
                    finish(step(b))
                    full[p, i] = time.perf_counter() - began
    began = time.perf_counter()
    for _b in dataset_from_plan(ids, y, plan):
        pass
    pipeline_alone = time.perf_counter() - began
    best_model, best_full = model_only.min(axis=0).sum(), full.min(axis=0).sum()
    share = float((best_full - best_model) / best_full) if best_full else 0.0
    return {
        "batches": n,
        "passes": passes,
        "model_only_s": float(best_model),
        "full_step_s": float(best_full),
        "share": share,
        "blocked_in_next_s": float(np.median(blocked, axis=0).sum()),
        "blocked_share": float(np.median(blocked, axis=0).sum() / np.median(full, axis=0).sum()),
        "pipeline_alone_s": pipeline_alone,
        "pipeline_startup_s": float(min(startup)),
        "method": "per-step times, fastest of the passes per batch, summed",
        "target": 0.10,
        "meets_target": bool(share <= 0.10),
    }


def isolated_recurrent_flops(embedding_dim, units, length, batch, repeats):
    """FLOP/s of the BiLSTM alone, forward + backward on a dense batch (no mask)."""
    import keras
    import tensorflow as tf

    layer = keras.layers.Bidirectional(keras.layers.LSTM(units))
    x = tf.random.stateless_normal([batch, length, embedding_dim], seed=[9, 9])
    layer(x)

    @tf.function
    def fwd_bwd(inputs):
        with tf.GradientTape() as tape:
            out = tf.reduce_sum(layer(inputs, training=True))
        grads = tape.gradient(out, layer.trainable_variables)
        return out + tf.add_n([tf.reduce_sum(g) for g in grads])

    float(fwd_bwd(x))
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        float(fwd_bwd(x))
        best = min(best, time.perf_counter() - began)
    flops = 3 * lstm_flops_per_token(embedding_dim, units) * batch * length
    return flops / best


def recurrent_flops(row1, dims, mean_length, quick):
    """Row 3: recurrent FLOP/s (useful and executed) against a dense matmul's FLOP/s."""
    embedding_dim, units, hidden, batch = dims
    per_token = 3 * lstm_flops_per_token(embedding_dim, units)  # training: fwd + bwd
    dense = dense_matmul_flops(1024, 5 if quick else 10)
    step_shape = small_matmul_flops(batch, embedding_dim + units, 4 * units,
                                    100 if quick else 300)
    ours = row1["elman_tokens_per_s"] * per_token
    ref_executed = row1["reference_padded_positions_per_s"] * per_token
    isolated = isolated_recurrent_flops(embedding_dim, units, max(int(round(mean_length)), 2),
                                        batch, 3 if quick else 10)
    return {
        "training_flops_per_token": per_token,
        "formula": "LSTM: 2*4*(in+units)*units per direction per token; x2 directions; "
                   "training = 3x forward",
        "dense_matmul_1024_flops_per_s": dense,
        "lstm_step_matmul_flops_per_s": step_shape,
        "lstm_step_matmul_shape": [batch, embedding_dim + units, 4 * units],
        "elman_recurrent_flops_per_s": ours,
        "reference_executed_flops_per_s": ref_executed,
        "reference_useful_flops_per_s": row1["reference_tokens_per_s"] * per_token,
        "isolated_bilstm_flops_per_s": isolated,
        "isolated_length": max(int(round(mean_length)), 2),
        "ratio": ours / dense if dense else 0.0,
        "reference_executed_ratio": ref_executed / dense if dense else 0.0,
        "isolated_ratio": isolated / dense if dense else 0.0,
    }


# ---------------------------------------------------------------- row 4: tasks

def task_benchmarks(quick, log=print):
    """Calls each registered task's `benchmark(quick)` (tasks without one are skipped)."""
    from elman import tasks
    from elman.tasks.base import Task

    out = {}
    for name in tasks.names():
        task = tasks.get(name)
        if type(task).benchmark is Task.benchmark:
            continue  # sentiment's rows come from sentiment_row above
        log(f"[4] {name}.benchmark(quick={quick}) ...")
        began = time.perf_counter()
        try:
            out[name] = _jsonable(task.benchmark(quick=quick))
        except Exception as err:  # one task's failure must not lose the other rows
            out[name] = {"error": f"{type(err).__name__}: {err}"}
        out[name]["_seconds"] = round(time.perf_counter() - began, 1)
    return out


def sentiment_row(label, cfg, splits, epochs_timed=1, predict_repeats=2, log=print):
    """Training tokens/s and prediction sentences/s of a preset's sentiment model."""
    import keras
    import numpy as np
    import tensorflow as tf

    from elman.core.batching import dataset_from_plan, plan_epoch
    from elman.text.tokenize import fit_char_ids, fit_vocabulary
    from elman.tasks.sentiment.data import token_ids as _ids
    from elman.tasks.sentiment.model import build_inference_model, classifier_from_config

    train = splits["train"]
    tokenizer = fit_vocabulary(cfg.tokenizer, texts_of(train))
    ids, lengths = _encode(tokenizer, texts_of(train))
    chars = None
    if cfg.chars.features != "none":  # one member's speed: an ensemble of N costs N times it
        chars = fit_char_ids(cfg.tokenizer, texts_of(train), cfg.chars.max_word_length)
        ids = {"token_ids": ids, "char_ids": _ids(chars, texts_of(train))}
    names = sorted(set(labels_of(train)))
    y = tf.constant([names.index(v) for v in labels_of(train)], tf.int32)
    e, h = cfg.encoder, cfg.head
    model = classifier_from_config(cfg, tokenizer.vocabulary_size, len(names),
                                   chars.vocabulary_size if chars else 0, name="classifier")
    model.compile(optimizer=keras.optimizers.Adam(cfg.train.learning_rate,
                                                  global_clipnorm=cfg.train.clipnorm or None),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    batch = cfg.train.batch_size
    model.fit(dataset_from_plan(ids, y, warm_up_plan(lengths, batch)), verbose=0, shuffle=False)
    rates = []
    for epoch in range(epochs_timed):
        plan = plan_epoch(lengths, batch, cfg.train.seed, epoch)
        clock = batch_clock()
        model.fit(dataset_from_plan(ids, y, plan), epochs=1, verbose=0, callbacks=[clock],
                  shuffle=False)
        rates.append(steady_rate(clock, [int(lengths[b].sum()) for b in plan]))
    inference = build_inference_model(tokenizer, model, chars)
    texts = texts_of(splits.get("test") or splits["validation"])
    strings = tf.constant(texts)
    inference.predict(strings[:256], batch_size=256, verbose=0)
    best = float("inf")
    for _ in range(predict_repeats):
        began = time.perf_counter()
        inference.predict(strings, batch_size=256, verbose=0)
        best = min(best, time.perf_counter() - began)
    row = {
        "data": label, "train_examples": len(texts_of(train)),
        "mean_tokens": float(np.mean(lengths)),
        "model": f"{e.num_layers}x{'Bi' if e.bidirectional else ''}{e.cell.upper()}({e.units}),"
                 f" embedding {cfg.embedding.dim}, pooling {h.pooling}, batch {batch}"
                 + ("" if chars is None else
                    f", char {cfg.chars.features.upper()}({cfg.chars.units})")
                 + ("" if not cfg.embedding.adversarial else
                    f", adversarial training ε {cfg.embedding.adversarial:g}")
                 + ("" if cfg.ensemble == 1 else f" (one of the {cfg.ensemble} ensemble members)"),
        "train_tokens_per_s": max(rates),
        "predict_sentences": len(texts),
        "predict_sentences_per_s": len(texts) / best,
    }
    log(f"[5] sentiment on {label}: {row['train_tokens_per_s']:,.0f} training tokens/s, "
        f"{row['predict_sentences_per_s']:,.0f} sentences/s predicted")
    return row


# ---------------------------------------------------------------- output

def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        try:
            return value.item()
        except (ValueError, TypeError):
            pass
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _fmt(value):
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if abs(value) >= 1e9:
            return f"{value / 1e9:,.2f} G"
        if abs(value) >= 100:
            return f"{value:,.0f}"
        return f"{value:.3g}"
    return str(value)


_TABLE_SKIP = {"machine", "markdown", "run", "data", "quick"}  # kept in bench.json only


def _flatten(prefix, value, rows):
    if isinstance(value, dict):
        for k, v in value.items():
            if str(k).startswith("_") or str(k) in _TABLE_SKIP:
                continue
            if isinstance(v, str) and len(v) > 80:
                continue
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, rows)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value):
            _flatten(f"{prefix}[{i}]", v, rows)
    else:
        rows.append((prefix, _fmt(value) if not isinstance(value, list)
                     else ", ".join(_fmt(v) for v in value)))


def table(result):
    """The terminal table: the headline rows, then every task's numbers."""
    rows = []
    m = result["machine"]
    rows.append(("machine", f"{m['cpu_model']}, {m['cpu_cores']} cores "
                            f"(load {m['load_average_at_start']}), {m['device']}, "
                            f"TF {m['tensorflow']}"))
    d = result["data"]
    rows.append(("data", f"{d['name']} ({d['examples']} train sentences, mean "
                         f"{d['mean_tokens']:.1f} tokens; {d['note']})"))
    p = result["pipeline_vs_reference"]
    rows.append(("[1] model", p["model"]))
    rows.append(("[1] elman training tokens/s", _fmt(p["elman_tokens_per_s"])))
    rows.append(("[1] reference training tokens/s (real tokens)",
                 _fmt(p["reference_tokens_per_s"]) +
                 f"  ({100 * p['reference_real_token_share']:.1f}% of its positions are real; "
                 f"elman's bucketed batches: {100 * p['elman_real_token_share']:.1f}%)"))
    rows.append(("[1] speedup (target >= 5x)",
                 f"{p['speedup']:.2f}x  {'meets' if p['meets_target'] else 'MISSES'} target"))
    s = result["input_pipeline"]
    rows.append(("[2] input pipeline share of step time (target <= 10%)",
                 f"{100 * s['share']:.1f}%{' (below the timing noise)' if s['share'] < 0 else ''}"
                 f"  {'meets' if s['meets_target'] else 'MISSES'} target "
                 f"(model only {s['model_only_s']:.2f} s vs full {s['full_step_s']:.2f} s, "
                 f"{s['batches']} batches, best of {s['passes']})"))
    rows.append(("[2] time blocked waiting for the next batch",
                 f"{100 * s['blocked_share']:.1f}% of the full steps (pipeline alone "
                 f"{s['pipeline_alone_s']:.2f} s, start-up {s['pipeline_startup_s']:.2f} s)"))
    f = result["recurrent_flops"]
    rows.append(("[3] dense matmul 1024^3 FLOP/s", _fmt(f["dense_matmul_1024_flops_per_s"])))
    rows.append(("[3] LSTM-step matmul " + "x".join(map(str, f["lstm_step_matmul_shape"])) +
                 " FLOP/s", _fmt(f["lstm_step_matmul_flops_per_s"])))
    rows.append(("[3] elman recurrent FLOP/s (useful) / dense",
                 f"{_fmt(f['elman_recurrent_flops_per_s'])} / dense = {f['ratio']:.3f}"))
    rows.append(("[3] reference recurrent FLOP/s (executed, padding included) / dense",
                 f"{_fmt(f['reference_executed_flops_per_s'])} / dense = "
                 f"{f['reference_executed_ratio']:.3f}"))
    rows.append(("[3] BiLSTM alone, fwd+bwd, length "
                 f"{f['isolated_length']} / dense",
                 f"{_fmt(f['isolated_bilstm_flops_per_s'])} / dense = "
                 f"{f['isolated_ratio']:.3f}"))
    for name, values in result["tasks"].items():
        flat = []
        _flatten("", values, flat)
        for key, value in flat:
            rows.append((f"[4] {name}: {key}", value))
    for row in result["sentiment"]:
        rows.append((f"[5] sentiment {row['data']}: training tokens/s",
                     _fmt(row["train_tokens_per_s"]) + f"  ({row['model']})"))
        rows.append((f"[5] sentiment {row['data']}: prediction sentences/s",
                     _fmt(row["predict_sentences_per_s"]) +
                     f"  ({row['predict_sentences']} raw sentences, batch 256)"))
    for name, reason in result.get("skipped", {}).items():
        rows.append((f"skipped: {name}", reason))
    width = max(len(r[0]) for r in rows)
    lines = [f"{a.ljust(width)}  {b}" for a, b in rows]
    return "\n".join(["elman bench" + (" (quick)" if result["quick"] else ""),
                      "-" * min(width + 40, 120)] + lines)


def run_bench(args):
    """`elman bench [--quick] [--gpu] [--out DIR]`; returns the exit code."""
    if getattr(args, "gpu", False):
        from elman.bench import gpu_check

        return gpu_check.main(out_dir=getattr(args, "out", None))
    quick = bool(getattr(args, "quick", False))
    out_dir = Path(getattr(args, "out", None) or "reports/bench")
    log = print
    began = time.perf_counter()

    from elman.config import TrainConfig
    from elman.core import runtime

    runtime.configure(TrainConfig(), log=log)  # threads, seeds, determinism: as in training
    import numpy as np

    from elman.text.tokenize import fit_vocabulary

    result = {"quick": quick, "machine": machine_facts(), "skipped": {}}
    toy_cfg, toy = load_sentiment("default")
    sst_cfg, sst = (None, None) if quick else load_sentiment("sst2")
    if sst is not None:
        cfg, splits, name = sst_cfg, sst, "sst2"
        note = f"SST-2 from {sst_cfg.data.train}"
    else:
        cfg, splits, name = toy_cfg, toy, "toy-en"
        note = ("toy data (--quick)" if quick else
                "toy data: ../shared/data/sst2 is not present, so SST-2 lengths are not used")
        if not quick:
            result["skipped"]["sst2"] = "../shared/data/sst2 not found; rows use the toy data"
    texts, labels = texts_of(splits["train"]), labels_of(splits["train"])
    import dataclasses

    tok_cfg = dataclasses.replace(cfg.tokenizer, max_length=10_000)  # no truncation
    tokenizer = fit_vocabulary(tok_cfg, texts)
    ids, lengths = _encode(tokenizer, texts)
    names = sorted(set(labels))
    y = [names.index(v) for v in labels]
    result["data"] = {"name": name, "note": note, "examples": len(texts),
                      "mean_tokens": float(np.mean(lengths)),
                      "max_tokens": int(np.max(lengths)),
                      "vocabulary": tokenizer.vocabulary_size}
    log(f"bench on {name}: {len(texts)} sentences, mean {np.mean(lengths):.1f} tokens")

    dims = (128, 64, 64, 32)  # embedding, units, hidden, batch: the keras-io recipe's sizes
    log("[1] elman pipeline vs the fixed-length reference ...")
    row1 = pipeline_vs_reference(ids, y, lengths, tokenizer.vocabulary_size,
                                 rounds=1 if quick else 2, ref_batches=6 if quick else 30,
                                 dims=dims, log=log)
    model = row1.pop("_model")
    result["pipeline_vs_reference"] = row1
    log("[2] input pipeline share ...")
    result["input_pipeline"] = input_pipeline_share(
        model, ids, y, lengths, dims[3], passes=2 if quick else 3,
        max_batches=24 if quick else 100)
    log("[3] FLOP/s ...")
    result["recurrent_flops"] = recurrent_flops(row1, dims, float(np.mean(lengths)), quick)
    result["tasks"] = task_benchmarks(quick, log)
    rows = []
    if toy is not None:
        rows.append(sentiment_row("toy-en", toy_cfg, toy, 1, 1 if quick else 3, log))
    if sst is not None:
        rows.append(sentiment_row("sst2", sst_cfg, sst, 1, 3, log))
    elif not quick:
        result["skipped"]["sentiment sst2 rows"] = "../shared/data/sst2 not found"
    result["sentiment"] = rows
    if not quick:  # issue 14: `elman serve` under load, batching on vs off, side by side
        from elman.bench import load as load_bench

        log("[6] serving load test ...")
        result["serving"] = load_bench.bench_section(log=log)
    result["seconds"] = round(time.perf_counter() - began, 1)
    result = _jsonable(result)
    out_dir.mkdir(parents=True, exist_ok=True)
    from elman.core.html import write_text_atomic

    write_text_atomic(out_dir / "bench.json", json.dumps(result, indent=1, sort_keys=True) + "\n")
    text = table(result)
    if "serving" in result:
        from elman.bench.load import table as load_table

        text += "\n\n[6] " + load_table(result["serving"])
    write_text_atomic(out_dir / "bench.txt", text + "\n")
    print()
    print(text)
    print(f"\nwrote {out_dir / 'bench.json'} ({result['seconds']} s)")
    return 0
