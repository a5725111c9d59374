"""`elman bench`'s trace row: the sentiment reading trace against plain prediction.

The same model (the preset's, untrained: speed does not depend on the weights) on the
same texts, side by side in one process: plain prediction is the saved inference
model's `predict` (raw strings in, batches of 256); the trace is
`elman.tasks.sentiment.trace.PrefixTracer`, which runs every prefix of a text in one
masked batch (several texts' prefixes share a batch). Reported: sentences/s of each,
the forward passes each made, and the latency of one text as `elman predict` sees it.
No TensorFlow import at module level.
"""

import time


def _best(function, repeats):
    """The best wall time of `repeats` calls (after one warm-up call)."""
    function()
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        function()
        best = min(best, time.perf_counter() - began)
    return best


def trace_row(preset="default", repeats=3, log=print):
    """One preset's trace-vs-plain numbers (see `trace_vs_predict`)."""
    import numpy as np
    import tensorflow as tf

    from elman.bench.suite import load_sentiment
    from elman.core import data as data_stage
    from elman.tasks.sentiment.data import token_ids
    from elman.tasks.sentiment.model import (bigram_pairs, build_inference_model,
                                             classifier_from_config)
    from elman.tasks.sentiment.trace import PrefixTracer
    from elman.text.tokenize import fit_char_ids, fit_vocabulary

    cfg, splits = load_sentiment(preset)
    if splits is None:
        return None
    train = data_stage.texts(splits["train"])
    texts = data_stage.texts(splits.get("test") or splits["validation"])
    labels = sorted(set(data_stage.labels(splits["train"])))
    tokenizer = fit_vocabulary(cfg.tokenizer, train)
    chars = (fit_char_ids(cfg.tokenizer, train, cfg.chars.max_word_length)
             if cfg.chars.features != "none" else None)
    pairs = (bigram_pairs(cfg, token_ids(tokenizer, train), tokenizer.vocabulary_size)
             if cfg.features.bigrams else None)  # tokenize train only when needed
    model = classifier_from_config(cfg, tokenizer.vocabulary_size, len(labels),
                                   chars.vocabulary_size if chars else 0, name="classifier",
                                   bigram_pairs=pairs)
    inference = build_inference_model(tokenizer, model, chars)
    tracer = PrefixTracer(tokenizer, [model], labels, chars)
    strings = tf.constant(texts)
    lengths = tokenizer.ragged_ids(strings).row_lengths().numpy()
    plain = _best(lambda: inference.predict(strings, batch_size=256, verbose=0), repeats)
    traced = _best(lambda: tracer.trace(texts), repeats)
    one = texts[int(np.argsort(lengths)[len(lengths) // 2])]  # a text of median length
    one_plain = _best(lambda: inference.predict(tf.constant([one]), verbose=0), repeats)
    one_trace = _best(lambda: tracer.trace([one]), repeats)
    row = {"data": f"{preset} preset ({cfg.data.test or cfg.data.validation})",
           "texts": len(texts), "mean_tokens": float(np.mean(lengths)),
           "prefix_rows": int(np.sum(np.maximum(lengths, 1))),
           "predict_sentences_per_s": len(texts) / plain,
           "trace_sentences_per_s": len(texts) / traced,
           "trace_over_predict_time": traced / plain,
           "predict_forward_passes": -(-len(texts) // 256),
           "trace_forward_passes": len(tracer._groups(list(lengths))),
           "one_text_tokens": int(lengths[int(np.argsort(lengths)[len(lengths) // 2])]),
           "one_text_predict_ms": 1000 * one_plain, "one_text_trace_ms": 1000 * one_trace}
    log(f"[trace] {preset}: trace {row['trace_sentences_per_s']:,.0f} sentences/s, plain "
        f"prediction {row['predict_sentences_per_s']:,.0f} sentences/s; one text "
        f"{row['one_text_trace_ms']:.1f} ms traced vs {row['one_text_predict_ms']:.1f} ms")
    return row


def trace_vs_predict(quick=False, log=print):
    """The reading trace against plain prediction, on the toy sentiment data.

    Args:
        quick: bool, the English toy preset only, one timed repeat.
        log: callable for progress lines.

    Returns:
        dict {preset: row}; each row holds predict_sentences_per_s,
        trace_sentences_per_s, trace_over_predict_time, the forward passes each made
        (the trace: at most one per text, usually far fewer since texts share batches),
        prefix_rows (the rows the trace ran) and one text's latency in ms.
    """
    out = {}
    for preset in ("default",) if quick else ("default", "zh"):
        row = trace_row(preset, repeats=1 if quick else 3, log=log)
        if row is not None:
            out[preset] = row
    return out


def table_rows(result):
    """(name, value) rows for `elman bench`'s terminal table."""
    rows = []
    for preset, r in result.items():
        rows.append((f"[7] sentiment trace vs plain prediction ({preset}), sentences/s",
                     f"{r['trace_sentences_per_s']:,.0f} vs {r['predict_sentences_per_s']:,.0f}"
                     f" ({r['trace_forward_passes']} vs {r['predict_forward_passes']} "
                     f"forward passes, {r['prefix_rows']} prefix rows for {r['texts']} texts)"))
        rows.append((f"[7] one text of {r['one_text_tokens']} tokens ({preset}): trace vs "
                     "predict", f"{r['one_text_trace_ms']:.1f} ms vs "
                     f"{r['one_text_predict_ms']:.1f} ms"))
    return rows
