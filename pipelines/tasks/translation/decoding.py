"""Decoders for `elman.models.seq2seq_translator.Seq2SeqTranslator`: token ids in, token ids out.

The production decoders are batched and compiled (`tf.function` + `tf.while_loop` +
`TensorArray`), carry the recurrent state forward one step at a time through
`model.decode_step` and keep a per-sentence "finished" flag:

- `greedy_decode`: argmax at every step.
- `beam_search_decode`: beam search with the GNMT length penalty; width 1 equals greedy.

The decoders they are raced against in benchmarks, and the test oracle, live in
`elman.bench.reference_decoding`; they never belong in a pipeline.

Conventions shared by every decoder:

- Output: int32 numpy array `[batch, T]`; each row holds the generated tokens (without
  the start token), the end token when one was produced, then 0 (padding). T is the
  longest row, so it is at most the largest cap.
- The padding id 0 is never predicted (its score is excluded from the argmax / top-k),
  so a 0 in the output always means "after the end".
- Length cap per sentence (tokens generated, the end token included):
  `ceil(max_len_ratio * source_length) + max_len_offset`, where source_length counts the
  non-zero ids, then clipped to `max_len` when `max_len` is given. With
  `max_len_ratio=None` the cap is `max_len` for every sentence. Caps are at least 1.
"""

import numpy as np
import tensorflow as tf

_NEG = -1e9  # "minus infinity" for scores; finite so that sums never give NaN


def _no_padding_row(vocab):
    """Added to log-probabilities so that id 0 (padding) is never predicted."""
    return tf.where(tf.range(vocab) == 0, _NEG, 0.0)


# ----------------------------------------------------------------------------- helpers


def _as_source(source_ids):
    source = np.asarray(source_ids)
    if source.ndim != 2:
        raise ValueError(
            f"Expected source_ids to be 2-D [batch, source_len]. Received shape {source.shape}"
        )
    if source.size and not np.issubdtype(source.dtype, np.integer):
        raise ValueError(f"Expected integer source_ids. Received dtype {source.dtype}")
    return source.astype(np.int32)


def _check_ids(model, start_id, end_id):
    for name, value in (("start_id", start_id), ("end_id", end_id)):
        if not isinstance(value, (int, np.integer)) or not 0 <= value < model.target_vocab_size:
            raise ValueError(
                f"Expected {name} to be an int in [0, {model.target_vocab_size}). "
                f"Received: {name}={value!r}"
            )


def length_caps(source_ids, max_len=None, max_len_ratio=2.0, max_len_offset=5):
    """Per-sentence limits on the number of generated tokens (the end token included).

    Args:
        source_ids: int array `[batch, source_len]`, 0 = padding.
        max_len: int or None, global cap; None for none. Default None.
        max_len_ratio: float or None, cap relative to each source length; None to use
            `max_len` only. Default 2.0.
        max_len_offset: int, added to the relative cap. Default 5.

    Returns:
        int32 numpy array `[batch]`, each `>= 1`.

    Example:

    >>> length_caps(np.array([[4, 5, 0], [6, 0, 0]]), max_len=6).tolist()
    [6, 6]
    """
    source = _as_source(source_ids)
    if max_len is not None and (not isinstance(max_len, (int, np.integer)) or max_len < 1):
        raise ValueError(f"Expected max_len to be a positive int or None. Received: {max_len!r}")
    if max_len_ratio is None:
        if max_len is None:
            raise ValueError("Expected max_len when max_len_ratio=None: nothing caps the length.")
        return np.full([source.shape[0]], max_len, np.int32)
    if not max_len_ratio > 0:
        raise ValueError(f"Expected max_len_ratio > 0 or None. Received: {max_len_ratio!r}")
    if not isinstance(max_len_offset, (int, np.integer)) or max_len_offset < 0:
        raise ValueError(
            f"Expected max_len_offset to be an int >= 0. Received: {max_len_offset!r}"
        )
    lengths = np.count_nonzero(source, axis=1).astype(np.float32)
    caps = np.ceil(np.float32(max_len_ratio) * lengths).astype(np.int64) + max_len_offset
    if max_len is not None:
        caps = np.minimum(caps, max_len)
    return np.maximum(caps, 1).astype(np.int32)


def _functions(model):
    """Per-model cache of compiled functions and wrapper models (not tracked by Keras)."""
    cache = model.__dict__.get("_elman_decoders")
    if cache is None:
        cache = {}
        object.__setattr__(model, "_elman_decoders", cache)
    return cache


def _pad_to(ids, width):
    out = np.zeros([ids.shape[0], width], np.int32)
    out[:, : ids.shape[1]] = ids
    return out


# ------------------------------------------------------------------------- greedy decode


_SIGNATURE = [
    tf.TensorSpec([None, None], tf.int32, name="source_ids"),
    tf.TensorSpec([None], tf.int32, name="caps"),
    tf.TensorSpec([], tf.int32, name="start_id"),
    tf.TensorSpec([], tf.int32, name="end_id"),
]


def _greedy_function(model, return_attention=False):
    """The compiled greedy loop for `model` (traced once per model and flag)."""
    cache = _functions(model)
    key = ("greedy", bool(return_attention))
    if key in cache:
        return cache[key]

    @tf.function(input_signature=_SIGNATURE, autograph=False)
    def greedy(source_ids, caps, start_id, end_id):
        batch = tf.shape(source_ids)[0]
        t_max = tf.reduce_max(caps)
        enc_outputs, enc_mask, states = model.encode(source_ids, training=False)
        tokens = tf.fill([batch], start_id)
        finished = tf.zeros([batch], tf.bool)
        ids_ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[None])
        attn_ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        no_padding = _no_padding_row(model.target_vocab_size)

        def cond(step, tokens, states, finished, ids_ta, attn_ta):
            return tf.logical_and(step < t_max, tf.logical_not(tf.reduce_all(finished)))

        def body(step, tokens, states, finished, ids_ta, attn_ta):
            log_probs, new_states, weights = model.decode_step(
                tokens, states, enc_outputs, enc_mask
            )
            log_probs = tf.cast(log_probs, tf.float32) + no_padding
            next_ids = tf.argmax(log_probs, axis=-1, output_type=tf.int32)
            next_ids = tf.where(finished, tf.zeros_like(next_ids), next_ids)
            ids_ta = ids_ta.write(step, next_ids)
            if return_attention:
                weights = tf.cast(weights, tf.float32)
                attn_ta = attn_ta.write(
                    step, tf.where(finished[:, None], tf.zeros_like(weights), weights)
                )
            finished = finished | tf.equal(next_ids, end_id) | (step + 1 >= caps)
            return step + 1, next_ids, new_states, finished, ids_ta, attn_ta

        _, _, _, _, ids_ta, attn_ta = tf.while_loop(
            cond, body, (tf.constant(0), tokens, states, finished, ids_ta, attn_ta)
        )
        ids = tf.transpose(ids_ta.stack())  # [B, T]
        if return_attention:
            return ids, tf.transpose(attn_ta.stack(), [1, 0, 2])  # [B, T, S]
        return ids

    cache[key] = greedy
    return greedy


def greedy_decode(
    model,
    source_ids,
    start_id,
    end_id,
    max_len=None,
    max_len_ratio=2.0,
    max_len_offset=5,
    return_attention=False,
):
    """Batched greedy decoding, compiled once per model (`tf.function` + `tf.while_loop`).

    Feeds each sentence its own previous prediction, carries the decoder state, stops a
    sentence at `end_id` or at its length cap (see the module docstring), pads after it,
    and stops the loop when every sentence is finished. The function has an input
    signature, so new batch sizes and lengths do not retrace it.

    Args:
        model: a built `Seq2SeqTranslator`.
        source_ids: int array `[batch, source_len]`, 0 = padding.
        start_id: int, the target start token.
        end_id: int, the target end token.
        max_len: int or None, global cap on generated tokens. Default None.
        max_len_ratio: float or None, per-sentence cap relative to the source length.
            Default 2.0.
        max_len_offset: int, added to the relative cap. Default 5.
        return_attention: bool, also return the attention weights `[batch, T, source_len]`
            (0 after a sentence has finished); needs a model with attention. Default False.

    Returns:
        int32 array `[batch, T]`, or `(ids, attention_weights)` with `return_attention`.

    Example:

    >>> ids = greedy_decode(model, source_ids, start_id=2, end_id=3)
    """
    source = _as_source(source_ids)
    _check_ids(model, start_id, end_id)
    if return_attention and model.attention == "none":
        raise ValueError("Expected a model with attention for return_attention=True.")
    caps = length_caps(source, max_len, max_len_ratio, max_len_offset)
    if source.shape[0] == 0:
        empty = np.zeros([0, 0], np.int32)
        return (empty, np.zeros([0, 0, source.shape[1]], np.float32)) if return_attention else empty
    outputs = _greedy_function(model, return_attention)(
        tf.constant(source), tf.constant(caps), tf.constant(start_id, tf.int32),
        tf.constant(end_id, tf.int32),
    )
    if return_attention:
        return outputs[0].numpy(), outputs[1].numpy()
    return outputs.numpy()


# ---------------------------------------------------------------------------- beam search


def _beam_function(model, beam_width):
    cache = _functions(model)
    key = ("beam", beam_width)
    if key in cache:
        return cache[key]
    k = beam_width
    vocab = model.target_vocab_size

    @tf.function(
        input_signature=_SIGNATURE + [tf.TensorSpec([], tf.float32, name="length_penalty")],
        autograph=False,
    )
    def beam(source_ids, caps, start_id, end_id, alpha):
        batch = tf.shape(source_ids)[0]
        t_max = tf.reduce_max(caps)
        enc_outputs, enc_mask, states = model.encode(source_ids, training=False)

        def tile(x):  # [B, ...] -> [B*K, ...], row b*K + j is beam j of sentence b
            return tf.repeat(x, k, axis=0)

        enc_outputs, enc_mask = tile(enc_outputs), tile(enc_mask)
        states = tf.nest.map_structure(tile, states)
        # Only beam 0 is alive at the start, so the first step expands one hypothesis.
        scores = tf.tile(tf.constant([[0.0] + [_NEG] * (k - 1)]), [batch, 1])  # [B, K]
        lengths = tf.zeros([batch, k], tf.int32)
        finished = tf.zeros([batch, k], tf.bool)
        seqs = tf.zeros([batch, k, t_max], tf.int32)
        tokens = tf.fill([batch * k], start_id)
        # A finished hypothesis can only be extended by padding, at no cost.
        pad_row = tf.where(tf.range(vocab) == 0, 0.0, _NEG)  # [V]
        no_padding = _no_padding_row(vocab)  # [V]
        offsets = tf.range(batch)[:, None] * k  # [B, 1]

        def penalty(lengths):
            return tf.pow((5.0 + tf.cast(lengths, tf.float32)) / 6.0, alpha)

        def cond(step, tokens, states, scores, lengths, finished, seqs):
            return tf.logical_and(step < t_max, tf.logical_not(tf.reduce_all(finished)))

        def body(step, tokens, states, scores, lengths, finished, seqs):
            log_probs, new_states, _ = model.decode_step(tokens, states, enc_outputs, enc_mask)
            log_probs = tf.cast(log_probs, tf.float32) + no_padding
            log_probs = tf.reshape(log_probs, [batch, k, vocab])
            log_probs = tf.where(finished[:, :, None], pad_row[None, None, :], log_probs)
            total = scores[:, :, None] + log_probs  # [B, K, V]
            new_lengths = lengths + tf.cast(tf.logical_not(finished), tf.int32)  # [B, K]
            ranked = total / penalty(new_lengths)[:, :, None]
            _, top = tf.math.top_k(tf.reshape(ranked, [batch, k * vocab]), k=k)  # [B, K]
            parent = top // vocab
            next_ids = top % vocab
            scores = tf.gather(tf.reshape(total, [batch, k * vocab]), top, batch_dims=1)
            lengths = tf.gather(new_lengths, parent, batch_dims=1)
            was_finished = tf.gather(finished, parent, batch_dims=1)
            seqs = tf.gather(seqs, parent, batch_dims=1)
            seqs += next_ids[:, :, None] * tf.one_hot(step, t_max, dtype=tf.int32)[None, None]
            finished = was_finished | tf.equal(next_ids, end_id) | (step + 1 >= caps[:, None])
            flat_parent = tf.reshape(parent + offsets, [-1])
            states = tf.nest.map_structure(lambda s: tf.gather(s, flat_parent), new_states)
            return step + 1, tf.reshape(next_ids, [-1]), states, scores, lengths, finished, seqs

        _, _, _, scores, lengths, _, seqs = tf.while_loop(
            cond, body, (tf.constant(0), tokens, states, scores, lengths, finished, seqs)
        )
        best = tf.argmax(scores / penalty(lengths), axis=-1, output_type=tf.int32)
        width = tf.reduce_max(tf.gather(lengths, best, batch_dims=1))  # other beams ran longer
        return tf.gather(seqs, best, batch_dims=1)[:, :width]

    cache[key] = beam
    return beam


def beam_search_decode(
    model,
    source_ids,
    start_id,
    end_id,
    beam_width=4,
    length_penalty=0.6,
    max_len=None,
    max_len_ratio=2.0,
    max_len_offset=5,
):
    """Batched beam search, compiled once per model and beam width.

    Hypotheses are ranked by `log P / ((5 + length) / 6) ** length_penalty` (GNMT), where
    length counts generated tokens including the end token; a hypothesis that produced
    the end token or reached its sentence's cap is finished and kept (extended with
    padding at no cost). The search stops when all beams of all sentences are finished
    (no early stopping on score bounds); the best-ranked beam is returned, and T is the
    longest returned hypothesis. `beam_width=1` gives exactly `greedy_decode`. Attention
    weights are not returned (use `greedy_decode` for heatmaps).

    Args:
        model: a built `Seq2SeqTranslator`.
        source_ids: int array `[batch, source_len]`, 0 = padding.
        start_id: int, the target start token.
        end_id: int, the target end token.
        beam_width: int, hypotheses kept per sentence, at most the target vocabulary
            size. Default 4.
        length_penalty: float >= 0, GNMT alpha; 0 ranks by plain log-probability.
            Default 0.6.
        max_len: int or None, global cap on generated tokens. Default None.
        max_len_ratio: float or None, per-sentence cap relative to the source length.
            Default 2.0.
        max_len_offset: int, added to the relative cap. Default 5.

    Returns:
        int32 array `[batch, T]`.

    Example:

    >>> ids = beam_search_decode(model, source_ids, start_id=2, end_id=3, beam_width=4)
    """
    source = _as_source(source_ids)
    _check_ids(model, start_id, end_id)
    if (
        not isinstance(beam_width, (int, np.integer))
        or not 1 <= beam_width <= model.target_vocab_size
    ):
        raise ValueError(
            f"Expected beam_width to be an int in [1, {model.target_vocab_size}]. "
            f"Received: beam_width={beam_width!r}"
        )
    if not length_penalty >= 0:
        raise ValueError(f"Expected length_penalty >= 0. Received: {length_penalty!r}")
    caps = length_caps(source, max_len, max_len_ratio, max_len_offset)
    if source.shape[0] == 0:
        return np.zeros([0, 0], np.int32)
    ids = _beam_function(model, int(beam_width))(
        tf.constant(source), tf.constant(caps), tf.constant(start_id, tf.int32),
        tf.constant(end_id, tf.int32), tf.constant(length_penalty, tf.float32),
    )
    return ids.numpy()
