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
   pipelines, and the tagger's speeds (each task module's `benchmark()`); for
   translation also beam search (widths 4 and 8) against greedy decoding on the same
   sentences (`elman.bench.beam_speed`, issue 17).
5. Issue 2's sentiment rows: training tokens/s and prediction sentences/s
   (raw strings through the exported inference model) on the toy and SST-2 data.
8. Tokenizer sentences/s in the graph (issue 17): the word-level tokenizer against
   SentencePiece unigram and BPE, fitted on and timed on the same English sentences
   (`elman.bench.tokenizer_speed`; tatoeba's English side, or the toy pairs' in quick
   mode or when tatoeba is absent).

Throughputs are steady-state: the first batch of each timed run (tracing) is
excluded, identically for every pipeline. Nothing here is a test: CI only checks
that the bench runs and writes `reports/bench/bench.json`.
"""

import json
import time
from pathlib import Path

from elman.core.data import labels as labels_of
from elman.core.data import texts as texts_of
from elman.bench.output import _jsonable, table
from elman.bench.rows import (input_pipeline_share, pipeline_vs_reference,
                              recurrent_flops)
from elman.bench.timing import ROOT, batch_clock, machine_facts, steady_rate, warm_up_plan


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
    import numpy as np
    import tensorflow as tf

    from elman.core.batching import dataset_from_plan, plan_epoch
    from elman.models.fused_optimizers import FusedAdam
    from elman.text.tokenize import fit_char_ids, fit_vocabulary
    from elman.tasks.sentiment.data import token_ids as _ids
    from elman.tasks.sentiment.model import (bigram_pairs, build_inference_model,
                                             classifier_from_config)

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
                                   chars.vocabulary_size if chars else 0, name="classifier",
                                   bigram_pairs=bigram_pairs(cfg, ids, tokenizer.vocabulary_size))
    model.compile(optimizer=FusedAdam(cfg.train.learning_rate,
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


def _bench_data(quick, result, log):
    """The sentences rows 1-3 run on (SST-2 when present, else the toy data), encoded."""
    import dataclasses

    import numpy as np

    from elman.text.tokenize import fit_vocabulary

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

    return ids, y, lengths, tokenizer, (toy_cfg, toy), (sst_cfg, sst)


def run_bench(args):
    """`elman bench [--quick] [--gpu] [--out DIR]`; returns the exit code."""
    if getattr(args, "out", None) is not None:
        from elman.core.runs import check_writable

        check_writable(args.out, "--out")  # before any work: a file there, or no access
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

    result = {"quick": quick, "machine": machine_facts(), "skipped": {}}
    ids, y, lengths, tokenizer, (toy_cfg, toy), (sst_cfg, sst) = _bench_data(quick, result, log)

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
    if getattr(args, "core", False):
        result["core_only"] = True
        return _write(result, began, out_dir)
    result["tasks"] = task_benchmarks(quick, log)
    rows = []
    if toy is not None:
        rows.append(sentiment_row("toy-en", toy_cfg, toy, 1, 1 if quick else 3, log))
    if sst is not None:
        rows.append(sentiment_row("sst2", sst_cfg, sst, 1, 3, log))
    elif not quick:
        result["skipped"]["sentiment sst2 rows"] = "../shared/data/sst2 not found"
    result["sentiment"] = rows
    from elman.bench.trace import trace_vs_predict  # issue 18: the trace's cost

    log("[7] reading trace vs plain prediction ...")
    result["trace"] = trace_vs_predict(quick=quick, log=log)
    from elman.bench.tokenizer_speed import bench_section as tokenizer_section

    log("[8] tokenizer speed in the graph ...")
    result["tokenizers"] = tokenizer_section(quick, result["skipped"], log)
    if not quick:  # issue 14: `elman serve` under load, batching on vs off, side by side
        from elman.bench import load as load_bench

        log("[6] serving load test ...")
        result["serving"] = load_bench.bench_section(log=log)
    return _write(result, began, out_dir)


def _write(result, began, out_dir):
    """bench.json and bench.txt in out_dir, the table printed; returns 0."""
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
