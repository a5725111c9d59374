"""Checks of the neighbour-word objective's settings (`head.lm_weight`), shared by the
tasks whose models can carry it (sentiment, tagging); no TensorFlow import."""

from elman.errors import UserError


def check_lm_objective(cfg, pooled_states=True):
    """Refuses `head.lm_*` settings the objective cannot train with.

    Args:
        cfg: the task's config, with `head.lm_weight`, `head.lm_words`, `head.lm_hidden`,
            `encoder.bidirectional`, `encoder.merge_mode` and `features.bigrams`. With
            stacked layers the objective reads the first one (above it each direction
            has read the whole sentence, the predicted word too).
        pooled_states: bool, False when the model keeps only the encoder's final states
            (sentiment's `head.pooling = "last"`), which have no state per word.
    """
    head = cfg.head
    if head.lm_weight < 0:
        raise UserError(f"head.lm_weight must be at least 0; got {head.lm_weight}")
    if not head.lm_weight:
        return
    if not pooled_states:
        raise UserError("head.lm_weight needs a state per word: use head.pooling = \"max\", "
                        "\"mean\", \"max-mean\" or \"attention\" (\"last\" keeps the final "
                        "states only)")
    if cfg.encoder.bidirectional and cfg.encoder.merge_mode != "concat":
        raise UserError("head.lm_weight needs encoder.merge_mode = \"concat\": the objective "
                        "reads the forward and backward states apart (got "
                        f"\"{cfg.encoder.merge_mode}\")")
    if cfg.features.bigrams:
        raise UserError("head.lm_weight needs features.bigrams = false: a token's bigrams "
                        "show its neighbours, the words the objective predicts")
    for key, value, low in (("head.lm_words", head.lm_words, 3),
                            ("head.lm_hidden", head.lm_hidden, 1)):
        if not low <= value <= 1_000_000:
            raise UserError(f"{key} must be between {low} and 1,000,000; got {value:,}")
