"""The tagging trace: every token's tag probabilities and each entity's probability.

One compiled forward pass per length-sorted batch gives the tags and their
probabilities together. The softmax head's probabilities are its softmax; the CRF
head's are the marginals from the forward–backward algorithm (`CRF.marginals`,
computed in the graph): the probability, summed over every tag path, that a token
carries each tag. The tags shown are the model's own prediction (the argmax, or the
Viterbi path), so a CRF can show a tag that is not its token's most probable one.

An entity's probability is that of its tags on its span: for a CRF, the exact
probability that tokens s..e carry exactly B-X, I-X, ..., I-X (B-X, I-X, ..., E-X, or
S-X, for a model trained on BIOES tags), summed over every path through them, from the
forward and backward scores; for the softmax head, whose
tags are independent, the product of the tokens' probabilities of those tags.
"""

import weakref

import numpy as np

_FUNCTIONS = {}  # (id(model), feature names) → (weak reference to the model, function)


def _trace_function(model, features):
    """The compiled step: one padded batch → tags, probabilities (and CRF scores)."""
    import keras
    import tensorflow as tf

    from elman.tasks.tagging.model import feature_key, feature_spec

    key = (id(model), feature_key(features))
    cached = _FUNCTIONS.get(key)
    if cached is not None and cached[0]() is model:
        return cached[1]
    spec = feature_spec(features)

    def step(x):
        potentials = model(x, training=False)
        mask = tf.not_equal(x["words"] if isinstance(x, dict) else x, 0)
        tags = model.decode(potentials, mask)
        if model.head == "crf":
            alpha, beta, log_z = model.crf.forward_backward(potentials, mask)
            probs = model.crf.marginals(potentials, mask)
            return tags, probs, potentials, alpha, beta, log_z
        probs = keras.ops.softmax(keras.ops.cast(potentials, "float32"), axis=-1)
        return tags, probs

    function = tf.function(step, input_signature=[spec], reduce_retracing=True)
    _FUNCTIONS[key] = (weakref.ref(model), function)
    return function


def span_log_probability(tags, start, end, crf_scores=None, probs=None):
    """The log-probability that tokens start..end-1 carry exactly `tags[start:end]`.

    Args:
        tags: int array [L], the tag ids.
        start, end: int, the span (end exclusive).
        crf_scores: dict with "potentials", "alpha", "beta" [L, T], "log_z" (float) and
            "transitions" [T, T] (constraint penalties included), for a CRF; or None.
        probs: float array [L, T], the per-token probabilities (softmax head).
    """
    if crf_scores is None:
        return float(sum(np.log(max(probs[t, tags[t]], 1e-45)) for t in range(start, end)))
    c = crf_scores
    score = c["alpha"][start, tags[start]] + c["beta"][end - 1, tags[end - 1]] - c["log_z"]
    for t in range(start + 1, end):
        score += c["transitions"][tags[t - 1], tags[t]] + c["potentials"][t, tags[t]]
    return float(score)


def tag_trace(model, features, lengths, batch_size=256):
    """Tags, probabilities and (CRF) scores of every sentence, in length-sorted batches.

    Args:
        model: a SequenceTagger.
        features: ragged word ids, or a dict of ragged ids (see `model.encode`).
        lengths: array of int, each sentence's number of words.
        batch_size: int, sentences per batch.

    Returns:
        list of dicts, one per sentence: "tags" (int array [L]), "probs" ([L, T]) and,
        for a CRF, "crf" (the scores `span_log_probability` reads).
    """
    from elman.core.batching import dataset_from_plan, plan_eval

    transitions = None
    if model.head == "crf":
        transitions = np.asarray(model.crf._scores()[0], np.float64)
    plan = plan_eval(lengths, batch_size)
    out = [None] * len(lengths)
    step = _trace_function(model, features)
    for indices, batch in zip(plan, dataset_from_plan(features, None, plan)):
        result = [np.asarray(v) for v in step(batch)]
        for row, index in enumerate(indices):
            n = lengths[index]
            entry = {"tags": result[0][row, :n], "probs": result[1][row, :n]}
            if model.head == "crf":
                entry["crf"] = {"potentials": result[2][row, :n].astype(np.float64),
                                "alpha": result[3][row, :n].astype(np.float64),
                                "beta": result[4][row, :n].astype(np.float64),
                                "log_z": float(result[5][row]), "transitions": transitions}
            out[index] = entry
    return out


def sentence_trace(text, tokens, entry, vocab, output_tags, entities):
    """The JSON-ready trace of one sentence.

    Args:
        text: str, the raw text.
        tokens: list of str.
        entry: one item of `tag_trace`.
        vocab: the run's Vocabularies (the model's tag names: BIO, or BIOES).
        output_tags: list of str, the predicted tags in the run's scheme.
        entities: list of entity dicts ({type, start, end, text}), or [].
    """
    tags, probs = entry["tags"], entry["probs"]
    steps = []
    for t, token in enumerate(tokens):
        steps.append({"token": token, "tag": output_tags[t], "model_tag": vocab.tags[tags[t]],
                      "probability": round(float(probs[t, tags[t]]), 6),
                      "probabilities": {name: round(float(p), 6)
                                        for name, p in zip(vocab.tags, probs[t])}})
    scored = []
    for entity in entities:
        log_p = span_log_probability(tags, entity["start"], entity["end"], entry.get("crf"),
                                     probs)
        scored.append({**entity, "probability": round(float(np.exp(log_p)), 6)})
    return {"text": text, "tokens": list(tokens), "tags": list(output_tags), "steps": steps,
            "entities": scored,
            "probability_source": "CRF marginals" if "crf" in entry else "softmax",
            "entity_probability": ("the CRF probability of the span's tags" if "crf" in entry
                                   else "the product of the span's tag probabilities")}
