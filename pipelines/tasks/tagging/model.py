"""The tagging task's model: sentences to id tensors, the SequenceTagger from the config,
and tagging in length-sorted batches with one traced step."""

import weakref

from elman.errors import UserError


def encode(vocab, token_lists, with_chars, tag_lists=None):
    """Ragged id tensors of sentences.

    Args:
        vocab: Vocabularies (its `bigrams` and `shape` add those features).
        token_lists: list of lists of str.
        with_chars: bool, add the char ids [sentences, words, chars].
        tag_lists: list of lists of str (BIO for entity tags, converted to the model's
            `vocab.encoding`), or None.

    Returns:
        (features, targets or None, lengths): features is the ragged word ids, or with
        any other feature a dict {"words", and "chars" [sentences, words, chars],
        "bigrams" [sentences, words, 2] (left, right), "shapes" [sentences, words]}.
    """
    import numpy as np
    import tensorflow as tf

    lengths = np.array([len(t) for t in token_lists], np.int64)
    flat = [vocab.word_id(tok) for tokens in token_lists for tok in tokens]
    words = tf.RaggedTensor.from_row_lengths(np.asarray(flat, np.int32), lengths)
    features = {"words": words}
    if with_chars:
        char_rows = [vocab.char_ids(tok) for tokens in token_lists for tok in tokens]
        char_lengths = np.array([len(r) for r in char_rows], np.int64)
        values = np.fromiter((c for row in char_rows for c in row), np.int32,
                             count=int(char_lengths.sum()))
        features["chars"] = tf.RaggedTensor.from_nested_row_lengths(values,
                                                                    [lengths, char_lengths])
    if vocab.bigrams is not None:
        pairs = [pair for tokens in token_lists for pair in vocab.bigram_ids(tokens)]
        values = np.asarray(pairs, np.int32).reshape(-1, 2)
        features["bigrams"] = tf.RaggedTensor.from_row_lengths(values, lengths)
    if vocab.shape:
        ids = np.asarray([vocab.shape_id(tok) for tokens in token_lists for tok in tokens],
                         np.int32)
        features["shapes"] = tf.RaggedTensor.from_row_lengths(ids, lengths)
    if len(features) == 1:
        features = words
    targets = None
    if tag_lists is not None:
        ids = np.asarray([vocab.tag_id(t) for tags in tag_lists for t in vocab.model_tags(tags)],
                         np.int32)
        targets = tf.RaggedTensor.from_row_lengths(ids, lengths)
    return features, targets, lengths


_TAGGING_FUNCTIONS = {}  # (id(model), feature names) → (weak reference to the model, function)
_RANKS = {"words": 2, "chars": 3, "bigrams": 3, "shapes": 2}  # of each padded feature


def feature_key(features):
    """The feature names of `encode`'s features, as a tuple (for caching traced steps)."""
    return tuple(sorted(features)) if isinstance(features, dict) else ("words",)


def feature_spec(features):
    """The shape-free input signature of padded batches of `encode`'s features."""
    import tensorflow as tf

    def spec(name):
        return tf.TensorSpec((None,) * _RANKS[name], tf.int32, name=name)

    if isinstance(features, dict):
        return {name: spec(name) for name in features}
    return spec("words")


def _tagging_function(model, features):
    """A compiled step that tags one padded batch, traced once for any batch shape.

    `model.predict_on_batch` traces again for each new batch shape (length-sorted
    batches all differ); this function has a shape-free input signature instead.
    """
    import tensorflow as tf

    key = (id(model), feature_key(features))
    cached = _TAGGING_FUNCTIONS.get(key)
    if cached is not None and cached[0]() is model:
        return cached[1]
    function = tf.function(lambda x: model.predict_step((x,)),
                           input_signature=[feature_spec(features)], reduce_retracing=True)
    _TAGGING_FUNCTIONS[key] = (weakref.ref(model), function)
    return function


def predict_tag_ids(model, features, lengths, batch_size=256):
    """Tag ids of every sentence (list of int arrays), in length-sorted batches.

    Args:
        model: a SequenceTagger.
        features: ragged word ids, or a dict of ragged ids (see `encode`).
        lengths: array of int, the number of words of each sentence.
        batch_size: int, sentences per batch. Default 256.
    """
    import numpy as np

    from elman.core.batching import dataset_from_plan, plan_eval

    plan = plan_eval(lengths, batch_size)
    out = [None] * len(lengths)
    step = _tagging_function(model, features)
    for indices, batch in zip(plan, dataset_from_plan(features, None, plan)):
        ids = np.asarray(step(batch))
        for row, index in enumerate(indices):
            out[index] = ids[row, : lengths[index]]
    return out


def _constraint(cfg, vocab):
    if cfg.head.type != "crf" or cfg.head.constraint == "none":
        return None
    if cfg.head.constraint != "auto" and not vocab.entity:
        raise UserError(f"head.constraint = \"{cfg.head.constraint}\" needs entity tags (O, "
                        "B-X, I-X); these tags are free labels: use head.constraint = "
                        "\"auto\" or \"none\"")
    return vocab.encoding if vocab.entity else None


def build_model(cfg, vocab):
    """A compiled SequenceTagger for the config and vocabularies.

    Args:
        cfg: TaggingConfig.
        vocab: `elman.tasks.tagging.vocab.Vocabularies`.
    """
    import keras

    from elman.core.train import adam
    from elman.models.sequence_tagger import SequenceTagger
    from elman.tasks.tagging.features import SHAPES

    chars, features = cfg.chars.features, cfg.features
    if features.bigrams != (vocab.bigrams is not None) or features.shape != vocab.shape:
        raise UserError("the run's vocabularies (tagging.json) were built with other "
                        "token features than features.bigrams / features.shape say; "
                        "start a new run to change them")
    model = SequenceTagger(
        len(vocab.words), len(vocab.tags), embedding_dim=cfg.embedding.dim,
        cell=cfg.encoder.cell, units=cfg.encoder.units, num_layers=cfg.encoder.num_layers,
        bidirectional=cfg.encoder.bidirectional, dropout=cfg.encoder.dropout,
        recurrent_dropout=cfg.encoder.recurrent_dropout,
        head=cfg.head.type, char_features=chars,
        char_vocabulary_size=len(vocab.chars) if chars != "none" else None,
        char_embedding_dim=cfg.chars.embedding_dim, char_units=cfg.chars.units,
        tag_names=vocab.tags, constraint=_constraint(cfg, vocab),
        embedding_trainable=cfg.embedding.trainable, word_dropout=cfg.embedding.word_dropout,
        bigram_vocabulary_size=len(vocab.bigrams) if features.bigrams else None,
        bigram_embedding_dim=features.bigram_dim,
        shape_vocabulary_size=len(SHAPES) if features.shape else None,
        shape_embedding_dim=features.shape_dim, adversarial=cfg.embedding.adversarial,
        lm_weight=cfg.head.lm_weight, lm_words=cfg.head.lm_words,
        lm_hidden=cfg.head.lm_hidden, name="sequence_tagger")
    model.compile(
        optimizer=adam(cfg.train),
        metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")])
    return model


def describe_model(cfg, params=None):
    """The model in one line ("word embedding 50 + char BiLSTM(25) → ..."), with the
    parameter count when `params` is given.

    Args:
        cfg: TaggingConfig.
        params: int or None, the model's parameter count.
    """
    enc = cfg.encoder
    chars = "no char features" if cfg.chars.features == "none" else (
        f"char {'BiLSTM' if cfg.chars.features == 'lstm' else 'CNN'}({cfg.chars.units})")
    extra = (f" + bigrams 2×{cfg.features.bigram_dim}" if cfg.features.bigrams else "") + (
        f" + shape {cfg.features.shape_dim}" if cfg.features.shape else "")
    text = (f"word embedding {cfg.embedding.dim} + {chars}{extra} → {enc.num_layers}×"
            f"{'Bi' if enc.bidirectional else ''}{enc.cell.upper()}({enc.units}) → "
            f"{cfg.head.type.upper() if cfg.head.type == 'crf' else 'softmax'}"
            f"{' over BIOES tags' if cfg.head.tags == 'BIOES' else ''}")
    if cfg.embedding.adversarial:
        text += f", adversarial training ε {cfg.embedding.adversarial:g}"
    if cfg.train.sam:
        text += f", sharpness-aware minimisation ρ {cfg.train.sam:g}"
    if cfg.head.lm_weight:
        text += (f", neighbour-word objective {cfg.head.lm_weight:g} (at most "
                 f"{cfg.head.lm_words:,} classes)")
    return text + (f", {params:,} parameters" if params is not None else "")
