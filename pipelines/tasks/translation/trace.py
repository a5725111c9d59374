"""The translation trace: each output token's probability and the attention over the source.

The sentences are decoded as `translate` decodes them (greedy or beam search); then one
teacher-forced pass of the decoder over each batch's outputs (`Seq2SeqTranslator.
teacher_forced`) gives every output token's probability under the model, given the
source and the tokens before it, and, with attention, the weights over the source
tokens at that step. The end token is a step too: how sure the model was to stop.
"""

import numpy as np

from elman.tasks.translation.config import END


def _forced_function(model):
    """The compiled teacher-forced pass: (source, target in, target out) → (probabilities of
    the target tokens, attention or zeros)."""
    import tensorflow as tf

    cache = model.__dict__.setdefault("_elman_trace", {})
    if "forced" in cache:
        return cache["forced"]
    spec = tf.TensorSpec([None, None], tf.int32)

    @tf.function(input_signature=[spec, spec, spec], reduce_retracing=True)
    def forced(source, target_in, target_out):
        logits, weights = model.teacher_forced(source, target_in, training=False)
        log_probs = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)
        chosen = tf.gather(log_probs, target_out, batch_dims=2)
        if weights is None:
            weights = tf.zeros([tf.shape(source)[0], tf.shape(target_in)[1], 0])
        return tf.exp(chosen), tf.cast(weights, tf.float32)

    cache["forced"] = forced
    return forced


def forced_probabilities(translator, source, output):
    """Per-token probabilities and attention of given outputs for padded source ids.

    Args:
        translator: a `Translator`.
        source: int array [batch, S], padded source ids.
        output: int array [batch, T], the decoded ids (tokens, end, then 0).

    Returns:
        (probabilities [batch, T], attention [batch, T, S] or None).
    """
    output = np.asarray(output, np.int32)
    start = np.full([output.shape[0], 1], translator.start_id, np.int32)
    target_in = np.concatenate([start, output[:, :-1]], axis=1)
    probs, weights = _forced_function(translator.model)(
        np.asarray(source, np.int32), target_in, output)
    weights = np.asarray(weights)
    return np.asarray(probs), (weights if weights.shape[-1] else None)


def trace_texts(translator, texts, beam=0, batch_size=64):
    """The trace of each raw source sentence (see `TranslationPredictor.trace`)."""
    import tensorflow as tf

    from elman.core.batching import plan_eval
    from elman.tasks.translation.translator import ragged_ids

    tok = translator.source_tokenizer
    source = ragged_ids(tok, list(texts))
    source_tokens = [[t.decode("utf-8") for t in row] for row in
                     tok.truncate(tok.split(tf.constant(list(texts)))).to_list()]
    output = translator.translate_ids(source, beam)
    translations = translator.texts(output)
    lengths = source.row_lengths().numpy()
    out = [None] * len(texts)
    for batch in plan_eval(lengths, batch_size):
        dense = tf.gather(source, batch).to_tensor(default_value=0).numpy()
        if dense.shape[1] == 0:
            dense = np.zeros([len(batch), 1], np.int64)
        probs, weights = forced_probabilities(translator, dense, output[batch])
        for row, i in enumerate(batch):
            steps, log_p = [], 0.0
            for t, token_id in enumerate(output[i]):
                if token_id == 0:
                    break
                log_p += float(np.log(max(probs[row, t], 1e-45)))
                steps.append({
                    "token": translator.vocabulary[token_id],
                    "probability": round(float(probs[row, t]), 6),
                    "attention": None if weights is None else
                    [round(float(w), 6) for w in weights[row, t, :lengths[i]]]})
                if token_id == translator.end_id:
                    break
            out[i] = {"text": texts[i], "translation": translations[i],
                      "source_tokens": source_tokens[i], "steps": steps,
                      "log_probability": round(log_p, 6),
                      "beam": int(beam or 0), "ended": bool(steps) and
                      steps[-1]["token"] == END}
    return out
