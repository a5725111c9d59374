"""Language-model scores: perplexity, cross-entropy and bits per character of a token
stream, the state carried through the whole text; and each split's token counts."""

import math

from elman.text.splitters import EOL_TOKEN

EVAL_CHUNK = 256  # steps per call when scoring; the state is carried, so only speed depends on it


def exp_nats(nats):
    """Perplexity from nats; inf beyond float32's range (TensorBoard logs float32)."""
    return math.exp(nats) if nats < 88.0 else math.inf


def eval_dataset(ids, batch_size):
    """Consecutive chunks of `ids` in at most `batch_size` streams, for scoring.

    Args:
        ids: 1-D int array, the encoded stream.
        batch_size: int, the scoring streams (capped by the stream's length).
    """
    from elman.tasks.lm.data import make_tbptt_dataset

    return make_tbptt_dataset(ids, max(1, min(batch_size, len(ids) - 1)), EVAL_CHUNK)


def score_ids(model, ids, batch_size, level):
    """The scores of one encoded stream.

    Args:
        model: `LanguageModel`.
        ids: 1-D int array from `encode_stream`.
        batch_size: int, the scoring streams (`train.eval_batch_size`).
        level: str, "word" or "character" (character adds bits per character).

    Returns:
        dict with cross_entropy (nats), perplexity, tokens (scored) and, at character
        level, bits_per_character.
    """
    from elman.tasks.lm.generation import mean_cross_entropy

    nats = mean_cross_entropy(model, eval_dataset(ids, batch_size), carry_states=True)
    scores = {"cross_entropy": nats, "perplexity": exp_nats(nats),
              "tokens": int(len(ids) - 1)}
    if level == "character":
        scores["bits_per_character"] = nats / math.log(2)
    return scores


def split_stats(split, tokens, vocabulary):
    """Lines, tokens, `<eol>`s, distinct and out-of-vocabulary tokens of one split.

    Args:
        split: `Split` of lines (its counts hold the non-blank "lines").
        tokens: list of str, the split's token stream.
        vocabulary: list of str.
    """
    known = set(vocabulary[2:])
    oov = sum(1 for t in tokens if t not in known)
    return {"lines": split.counts["lines"], "tokens": len(tokens),
            "eol_tokens": sum(1 for t in tokens if t == EOL_TOKEN),
            "distinct": len(set(tokens)), "oov": oov,
            "oov_rate": oov / len(tokens) if tokens else 0.0}
