"""Beam search against greedy decoding (issue 17): the time ratio on the same sentences.

`beam_vs_greedy` decodes the same source sentences with the compiled batched
`greedy_decode` and `beam_search_decode` of `elman.tasks.translation.decoding` (the
run's length caps and length penalty), in the same length-sorted batches the
`Translator` uses (`plan_eval`, the run's decoding batch size). Every decoder is warmed
up once (tracing) outside the timings, then timed over all the sentences, best of
`repeats`; the decoders are interleaved within each repeat so that a slow moment of the
machine hits all of them. The translation task's `benchmark()` adds its result to the
`elman bench` row [4]. No TensorFlow import at module level.
"""

import time


def _decode_all(decode, source, batches):
    """Decodes `source` batch by batch; returns the output rows in the input order."""
    import numpy as np

    rows = [None] * source.shape[0]
    for batch in batches:
        part = source[batch]
        width = max(int(np.count_nonzero(part, axis=1).max()), 1)  # the batch's own padding
        for i, row in zip(batch, decode(part[:, :width])):
            rows[i] = row
    out = np.zeros([len(rows), max((len(r) for r in rows), default=0)], np.int32)
    for i, row in enumerate(rows):
        out[i, :len(row)] = row
    return out


def beam_vs_greedy(model, source_ids, start_id, end_id, widths=(4, 8), length_penalty=0.6,
                   repeats=3, batch_size=256, max_len=None, max_len_ratio=2.0,
                   max_len_offset=5, return_ids=False):
    """Sentences/s of greedy decoding and of beam search at each width, and their ratios.

    Args:
        model: a built `Seq2SeqTranslator`.
        source_ids: int array `[batch, source_len]`, 0 = padding (right-padded).
        start_id, end_id: int, the target start and end tokens.
        widths: beam widths to time. Default (4, 8).
        length_penalty: float, the GNMT alpha of beam search (the run's). Default 0.6.
        repeats: int, timed passes over all sentences per decoder (best kept). Default 3.
        batch_size: int, sentences decoded together (the run's). Default 256.
        max_len, max_len_ratio, max_len_offset: the length caps (the run's).
        return_ids: bool, also return {"greedy" or "beam K": decoded ids}.

    Returns:
        dict: sentences, batch_size, repeats, timing, length_penalty,
        `greedy_sentences_per_s`, and per width K `beam_K_sentences_per_s`,
        `beam_K_over_greedy_time` (beam seconds over greedy seconds) and
        `beam_K_mean_output_tokens`; with `return_ids`, (that dict, the ids).
    """
    import numpy as np

    from elman.core.batching import plan_eval
    from elman.tasks.translation.decoding import beam_search_decode, greedy_decode

    source = np.asarray(source_ids, np.int32)
    if source.ndim != 2 or source.shape[0] == 0:
        raise ValueError(f"Expected a non-empty [batch, source_len] array. Received shape "
                         f"{source.shape}")
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"Expected repeats to be a positive int. Received: {repeats!r}")
    caps = dict(max_len=max_len, max_len_ratio=max_len_ratio, max_len_offset=max_len_offset)
    decoders = {"greedy": lambda s: greedy_decode(model, s, start_id, end_id, **caps)}
    for k in widths:
        decoders[f"beam {k}"] = (
            lambda s, k=k: beam_search_decode(model, s, start_id, end_id, beam_width=k,
                                              length_penalty=length_penalty, **caps))
    batches = plan_eval(np.count_nonzero(source, axis=1), batch_size)
    for decode in decoders.values():
        decode(source[:2])  # warm-up: tracing is not timed
    best = {name: float("inf") for name in decoders}
    ids = {}
    for _ in range(repeats):
        for name, decode in decoders.items():
            began = time.perf_counter()
            ids[name] = _decode_all(decode, source, batches)
            best[name] = min(best[name], time.perf_counter() - began)
    n = int(source.shape[0])

    def mean_tokens(out):
        return float(np.count_nonzero(out, axis=1).mean())

    result = {"sentences": n, "batch_size": batch_size, "repeats": repeats,
              "timing": f"best of {repeats} passes over all sentences, after one untimed "
                        "call of each decoder",
              "length_penalty": float(length_penalty),
              "greedy_sentences_per_s": n / best["greedy"],
              "greedy_mean_output_tokens": mean_tokens(ids["greedy"])}
    for k in widths:
        name = f"beam {k}"
        result[f"beam_{k}_sentences_per_s"] = n / best[name]
        result[f"beam_{k}_over_greedy_time"] = best[name] / best["greedy"]
        result[f"beam_{k}_mean_output_tokens"] = mean_tokens(ids[name])
    return (result, ids) if return_ids else result
