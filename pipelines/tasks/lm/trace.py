"""The language model's trace: each token's surprisal (bits) and the tokens the model
expected there.

A stream of ids is laid out as `evaluate` lays it out (`scoring.eval_dataset`: `streams`
contiguous pieces, chunks of `EVAL_CHUNK` steps, the state carried from chunk to
chunk) and read once by a compiled step that returns, for every target, its
log-probability and the `top` most probable tokens at that position (padding, never a
token, left out of the list). The probabilities are the full softmax that the
cross-entropy uses, so the surprisals of a file, summed, are exactly the negative
log-likelihood `elman evaluate` reports (its cross-entropy times the tokens scored).
A text traced on its own is one stream, read from a fresh state.
"""

import math

import numpy as np

from elman.tasks.lm.generation import compiled
from elman.tasks.lm.scoring import EVAL_CHUNK, exp_nats


def _build_trace(top):
    def build(model_ref):
        import tensorflow as tf

        @tf.function(reduce_retracing=True)
        def trace_step(x, y, states):
            logits, new_states = model_ref()(x, initial_states=states, return_states=True,
                                             training=False)
            log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)
            chosen = tf.gather(log_probs, tf.cast(y, tf.int32), batch_dims=2)
            no_padding = tf.concat([tf.fill([1], -np.inf), tf.zeros([tf.shape(logits)[-1] - 1])],
                                   axis=0)
            best, ids = tf.math.top_k(log_probs + no_padding, k=top)
            return chosen, tf.exp(best), ids, new_states

        return trace_step

    return build


def stream_trace(model, ids, streams=1, top=5, chunk=EVAL_CHUNK):
    """Surprisal and expected tokens of every scored target of a stream.

    Args:
        model: `LanguageModel` (not stateful).
        ids: 1-D int array, the encoded stream (`encode_stream`: an `<eol>` first).
        streams: int, the parallel pieces (`evaluate` uses `train.eval_batch_size`,
            capped by the stream's length). Default 1: the stream read once.
        top: int, expected tokens kept per position. Default 5.
        chunk: int, steps per call. Default `EVAL_CHUNK`.

    Returns:
        dict of arrays in stream order: "position" (the index in `ids` of each scored
        target), "log_prob" (nats), "top_ids" and "top_probs" [N, top], and "fresh"
        (True where the model starts from a zero state: the first target of a piece).
    """
    from elman.tasks.lm.data import make_tbptt_dataset

    ids = np.asarray(ids)
    streams = max(1, min(int(streams), len(ids) - 1))
    top = min(top, model.vocabulary_size - 1)
    step = compiled(model, f"trace{top}", _build_trace(top))
    piece = (len(ids) - 1) // streams
    log_prob = np.zeros([streams, piece], np.float64)
    top_ids = np.zeros([streams, piece, top], np.int64)
    top_probs = np.zeros([streams, piece, top], np.float64)
    states, offset = model.get_initial_states(streams), 0
    for x, y in make_tbptt_dataset(ids, streams, chunk):
        chosen, probs, best, states = step(x, y, states)
        width = int(x.shape[1])
        log_prob[:, offset:offset + width] = np.asarray(chosen)
        top_probs[:, offset:offset + width] = np.asarray(probs)
        top_ids[:, offset:offset + width] = np.asarray(best)
        offset += width
    position = (np.arange(streams)[:, None] * piece + np.arange(piece)[None, :] + 1)
    fresh = np.zeros([streams, piece], bool)
    fresh[:, 0] = True
    return {"position": position.reshape(-1), "log_prob": log_prob.reshape(-1),
            "top_ids": top_ids.reshape(-1, top), "top_probs": top_probs.reshape(-1, top),
            "fresh": fresh.reshape(-1)}


def trace_record(tokens, ids, scored, vocabulary):
    """The JSON-ready trace of a stream.

    Args:
        tokens: list of str, the stream's tokens (`ids` without its leading `<eol>`).
        ids: 1-D int array, the encoded stream.
        scored: dict from `stream_trace`.
        vocabulary: list of str.
    """
    steps = []
    for k, position in enumerate(scored["position"]):
        steps.append({
            "token": tokens[position - 1], "oov": int(ids[position]) == 1,
            "surprisal_bits": round(-scored["log_prob"][k] / math.log(2), 6),
            "probability": round(math.exp(scored["log_prob"][k]), 6),
            "expected": [{"token": vocabulary[int(j)], "probability": round(float(p), 6)}
                         for j, p in zip(scored["top_ids"][k], scored["top_probs"][k])],
            "fresh_state": bool(scored["fresh"][k])})
    nats = -float(np.sum(scored["log_prob"]))
    count = len(steps)
    return {"steps": steps, "tokens_scored": count, "unscored": len(ids) - 1 - count,
            "total_bits": nats / math.log(2), "negative_log_likelihood": nats,
            "cross_entropy": nats / count, "perplexity": exp_nats(nats / count)}
